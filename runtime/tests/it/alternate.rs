//! The alternate-result seam and short-circuits, over the in-memory stdio transport: A1 (the
//! primitive is matched before any filter), A11 (an alternate filter that answers skips everything
//! inside it), A14 (alternate filters on `prompts/get`), B5 (a raw filter answers an error),
//! B8 (era and capability gating of extension RPCs), B9 (a custom RPC takes an alternate result).
//!
//! Each test builds its server from its own registration groups, so the filters of one test never
//! run in another.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchyard::methods::{PromptsGet, ToolsCall};
use switchyard::prelude::*;
use switchyard::testing::TestClient;

fn modern(groups: &[&str]) -> TestClient {
    let server = Server::builder("alt", "1").groups(groups.iter().copied()).build().expect("builds");
    TestClient::modern(server)
}

/// The result without `_meta` (the modern wire adds `serverInfo` there).
fn body(result: &Value) -> Value {
    let mut r = result.clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("_meta");
    }
    r
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

// ---- A1 ------------------------------------------------------------------------------------

static A1_SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn a1_record(who: &str, ctx: &RequestContext) {
    let name = ctx.matched_primitive().unwrap_or("(none)").to_owned();
    A1_SEEN.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{who}:{name}"));
}

/// Echoes `text`.
#[mcp_tool(name = "echo", group = "a1")]
async fn a1_echo(p: Text) -> Result<String, ToolError> {
    Ok(p.text)
}

/// Records the matched tool, then renames the call: the matched record must not follow.
#[mcp_filter(alternate, rpc = ToolsCall, group = "a1")]
async fn a1_alt(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    a1_record("alt", &req.ctx);
    next.run(req).await
}

#[mcp_filter(rpc = ToolsCall, group = "a1")]
async fn a1_ord(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    a1_record("ord", &req.ctx);
    next.run(req).await
}

#[tokio::test]
async fn a1_both_filter_families_see_the_tool_matched_before_them() {
    let client = modern(&["a1"]);
    let r = client.call_tool("echo", json!({ "text": "hi" })).await;
    assert_eq!(r.result()["content"], json!([{ "type": "text", "text": "hi" }]));
    let seen = A1_SEEN.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(seen, ["alt:echo", "ord:echo"]);
}

// ---- A11 -----------------------------------------------------------------------------------

static A11_ORD: AtomicUsize = AtomicUsize::new(0);
static A11_TOOL: AtomicUsize = AtomicUsize::new(0);

/// Echoes `text`, counting its runs.
#[mcp_tool(name = "echo", group = "a11")]
async fn a11_echo(p: Text) -> Result<String, ToolError> {
    A11_TOOL.fetch_add(1, Ordering::SeqCst);
    Ok(p.text)
}

/// Answers `echo` itself; lets every other tool through.
#[mcp_filter(alternate, rpc = ToolsCall, group = "a11")]
async fn a11_short(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    if req.params.name == "echo" {
        return Ok(Alternate::Ordinary(CallToolResult::success(vec![Content::text("short")])));
    }
    next.run(req).await
}

#[mcp_filter(rpc = ToolsCall, group = "a11")]
async fn a11_ord(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    A11_ORD.fetch_add(1, Ordering::SeqCst);
    next.run(req).await
}

#[tokio::test]
async fn a11_an_alternate_filter_that_answers_skips_ordinary_filters_and_the_tool() {
    let client = modern(&["a11"]);
    let r = client.call_tool("echo", json!({ "text": "hi" })).await;
    assert_eq!(r.result()["content"][0]["text"], "short");
    assert_eq!(r.result()["resultType"], "complete");
    assert_eq!(A11_ORD.load(Ordering::SeqCst), 0);
    assert_eq!(A11_TOOL.load(Ordering::SeqCst), 0);
}

// ---- A14 -----------------------------------------------------------------------------------

/// The prompt the alternate filters wrap.
#[mcp_prompt(name = "p1", group = "a14")]
async fn a14_p1() -> Result<String, McpError> {
    Ok("p1".to_owned())
}

/// Answers every `prompts/get` with a body of its own shape.
#[mcp_filter(alternate, rpc = PromptsGet, group = "a14custom")]
async fn a14_custom(
    _req: TypedRequest<GetPromptParams>,
    _next: AltNext<GetPromptParams, GetPromptResult>,
) -> Result<Alternate<GetPromptResult>, McpError> {
    Ok(Alternate::Other(json!({ "resultType": "custom", "x": 1 })))
}

/// Only delegates.
#[mcp_filter(alternate, rpc = PromptsGet, group = "a14pass")]
async fn a14_pass(
    req: TypedRequest<GetPromptParams>,
    next: AltNext<GetPromptParams, GetPromptResult>,
) -> Result<Alternate<GetPromptResult>, McpError> {
    next.run(req).await
}

#[tokio::test]
async fn a14_alternate_filters_work_on_prompts_get() {
    let custom = modern(&["a14", "a14custom"]);
    let r = custom.request("prompts/get", json!({ "name": "p1" })).await;
    assert_eq!(body(r.result()), json!({ "resultType": "custom", "x": 1 }));

    let pass = modern(&["a14", "a14pass"]);
    let r = pass.request("prompts/get", json!({ "name": "p1" })).await;
    assert_eq!(r.result()["resultType"], "complete");
    assert_eq!(r.result()["messages"][0]["content"]["text"], "p1");
    assert!(r.result().get("x").is_none());

    // Legacy sessions get the alternate as it is too (it is the filter's own shape).
    let legacy = TestClient::legacy(
        Server::builder("alt", "1").groups(["a14", "a14custom"]).build().expect("builds"),
        "2025-11-25",
    )
    .await
    .expect("initialized");
    let r = legacy.request("prompts/get", json!({ "name": "p1" })).await;
    assert_eq!(r.result()["x"], 1);
}

// ---- B5 ------------------------------------------------------------------------------------

static B5_TYPED: AtomicUsize = AtomicUsize::new(0);
static B5_HANDLER: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Sum {
    sum: i64,
}

/// Adds.
#[mcp_rpc("acme/add", group = "b5")]
async fn b5_add(p: Pair) -> Result<Sum, McpError> {
    B5_HANDLER.fetch_add(1, Ordering::SeqCst);
    Ok(Sum { sum: p.a + p.b })
}

#[mcp_filter(rpc = b5_add, group = "b5")]
async fn b5_typed(req: TypedRequest<Pair>, next: Next<Pair, Sum>) -> Result<Sum, McpError> {
    B5_TYPED.fetch_add(1, Ordering::SeqCst);
    next.run(req).await
}

/// Rejects every `acme/*` request before routing.
#[mcp_filter(group = "b5")]
async fn b5_gate(req: RawRequest, next: RawNext) -> RawResponse {
    if req.ctx.method().starts_with("acme/") {
        return Err(McpError::missing_capability(
            "acme methods are switched off on this server",
            json!({ "extensions": { "acme/x": {} } }),
        ));
    }
    next.run(req).await
}

#[tokio::test]
async fn b5_a_raw_filter_answers_without_typed_filters_or_the_handler() {
    let client = modern(&["b5"]);
    let id = client.next_id();
    let r = client.request("acme/add", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(r.response["id"], id);
    assert_eq!(r.error_code(), Some(-32021));
    assert_eq!(B5_TYPED.load(Ordering::SeqCst), 0);
    assert_eq!(B5_HANDLER.load(Ordering::SeqCst), 0);
    // The connection stays usable: a method the gate lets through still answers.
    let r = client.request("server/discover", json!({})).await;
    assert!(r.result()["supportedVersions"].is_array(), "{:?}", r.response);
}

// ---- B8 ------------------------------------------------------------------------------------

/// An extension method (2026-07-28 only, for clients declaring `io.example/ext`).
#[mcp_rpc("io.example/ext/get", extension = "io.example/ext", group = "b8")]
async fn b8_get(p: Pair) -> Result<Sum, McpError> {
    Ok(Sum { sum: p.a + p.b })
}

/// B8: an extension's RPC is served only while the server declares the extension (else
/// `-32601`), only to 2026-07-28 requests by default, and only to clients that declare it too
/// (`-32021` with `data.requiredCapabilities`).
#[tokio::test]
async fn b8_extension_rpcs_are_gated_by_declaration_era_and_capability() {
    let undeclared = Server::builder("b8", "1").groups(["b8"]).build().expect("builds");
    let client = TestClient::modern(undeclared).with_capabilities(json!({ "extensions": { "io.example/ext": {} } }));
    let r = client.request("io.example/ext/get", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(r.error_code(), Some(-32601), "{:?}", r.response);

    let server = || {
        Server::builder("b8", "1")
            .groups(["b8"])
            .extension_capability("io.example/ext", json!({}))
            .build()
            .expect("builds")
    };
    let legacy = TestClient::legacy(server(), "2025-11-25").await.expect("initialized");
    let r = legacy.request("io.example/ext/get", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(r.error_code(), Some(-32601), "{:?}", r.response);

    let without = TestClient::modern(server());
    let r = without.request("io.example/ext/get", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(r.error_code(), Some(-32021), "{:?}", r.response);
    assert_eq!(r.error()["data"]["requiredCapabilities"], json!({ "extensions": { "io.example/ext": {} } }));

    let with = TestClient::modern(server()).with_capabilities(json!({ "extensions": { "io.example/ext": {} } }));
    let r = with.request("io.example/ext/get", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(r.result()["sum"], 3);
    let r = with.request("io.example/ext/get", json!({ "a": "one" })).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
}

// ---- B9 ------------------------------------------------------------------------------------

/// Adds.
#[mcp_rpc("acme/sum9", group = "b9")]
async fn b9_sum(p: Pair) -> Result<Sum, McpError> {
    Ok(Sum { sum: p.a + p.b })
}

/// Turns large sums into a task-shaped alternate.
#[mcp_filter(alternate, rpc = b9_sum, group = "b9")]
async fn b9_alt(req: TypedRequest<Pair>, next: AltNext<Pair, Sum>) -> Result<Alternate<Sum>, McpError> {
    if req.params.a > 100 {
        return Ok(Alternate::Other(json!({
            "resultType": "task", "taskId": "t1", "status": "working",
            "createdAt": "2026-08-01T12:00:00Z", "lastUpdatedAt": "2026-08-01T12:00:00Z", "ttlMs": 1000,
        })));
    }
    next.run(req).await
}

#[tokio::test]
async fn b9_custom_rpcs_take_alternate_results_in_their_own_shape() {
    let client = modern(&["b9"]);
    let r = client.request("acme/sum9", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(body(r.result()), json!({ "sum": 3, "resultType": "complete" }));
    let r = client.request("acme/sum9", json!({ "a": 101, "b": 2 })).await;
    assert_eq!(
        body(r.result()),
        json!({
            "resultType": "task", "taskId": "t1", "status": "working",
            "createdAt": "2026-08-01T12:00:00Z", "lastUpdatedAt": "2026-08-01T12:00:00Z", "ttlMs": 1000,
        })
    );
}

// ---- Control signals -----------------------------------------------------------------------

fn signalled() -> Value {
    json!({ "resultType": "task", "taskId": "t2", "status": "working" })
}

static SIG_SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn sig_record(what: String) {
    SIG_SEEN.lock().unwrap_or_else(|e| e.into_inner()).push(what);
}

/// Ends with an alternate result from inside the tool.
#[mcp_tool(name = "late", group = "sig")]
async fn sig_late() -> Result<String, McpError> {
    Err(McpError::alternate_result(signalled()))
}

/// The same, in a group without filters.
#[mcp_tool(name = "late", group = "sig_bare")]
async fn sig_bare_late() -> Result<String, McpError> {
    Err(McpError::alternate_result(signalled()))
}

/// A typed filter sees the signal as an error with no data; it rebuilds it for `rebuild`.
#[mcp_filter(rpc = ToolsCall, group = "sig")]
async fn sig_ord(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    let rebuild = req.params.arguments.contains_key("rebuild");
    match next.run(req).await {
        Err(e) if rebuild => Err(McpError::new(e.code(), e.message())),
        Err(e) => {
            sig_record(format!("ord:{}:{:?}", e.as_alternate_result().is_some(), e.data()));
            Err(e.with_data(json!({ "edited": true })))
        }
        ok => ok,
    }
}

/// An alternate filter receives the signal as an ordinary success.
#[mcp_filter(alternate, rpc = ToolsCall, group = "sig")]
async fn sig_alt(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    let outcome = next.run(req).await;
    sig_record(match &outcome {
        Ok(Alternate::Other(v)) => format!("alt:other:{}", v["taskId"]),
        Ok(Alternate::Ordinary(_)) => "alt:ordinary".into(),
        Err(e) => format!("alt:err:{}", e.code().0),
    });
    outcome
}

#[tokio::test]
async fn an_alternate_result_signalled_by_a_tool_reaches_alternate_filters_as_ok() {
    let client = modern(&["sig"]);
    let r = client.call_tool("late", json!({})).await;
    assert_eq!(body(r.result()), signalled(), "{}", r.response);
    let seen = SIG_SEEN.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // Editing the data on the way out neither forges nor loses the signal.
    assert_eq!(seen, ["ord:true:None", "alt:other:\"t2\""]);

    // A filter that rebuilds the error drops the signal: the client gets the plain -32603,
    // and nothing of the signalled result.
    let r = client.call_tool("late", json!({ "rebuild": true })).await;
    assert_eq!(r.error_code(), Some(-32603), "{}", r.response);
    assert!(r.error().get("data").is_none(), "{}", r.response);
    assert!(!r.response.to_string().contains("t2"), "{}", r.response);
}

#[tokio::test]
async fn an_alternate_result_is_answered_without_any_filter() {
    let client = modern(&["sig_bare"]);
    let r = client.call_tool("late", json!({})).await;
    assert_eq!(body(r.result()), signalled(), "{}", r.response);
}
