//! The generated shims at run time: requests go through the real server and stdio framing
//! (`switchyard::testing`), so decoding, extractors, template variables, conversions, typed
//! RPCs and the filter pipeline (raw, typed and alternate-result filters) are exercised as a
//! client would see them.
//!
//! JSON values are built with the runtime's re-exported `serde_json`, because this crate
//! deliberately does not depend on `serde_json`: the trybuild cases share its dependencies and
//! must prove that generated code needs nothing but `switchyard`.

use std::sync::{Arc, Mutex};
use switchyard::__private::serde_json::json;
use switchyard::ResourceRequest;
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use switchyard::{AltNext, Alternate, CompletionRequest, FromRequestContext, GetPromptParams};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
    times: Option<usize>,
}

struct Prefix {
    text: &'static str,
}

/// The JSON-RPC method, through a custom extractor.
struct Method(String);

impl FromRequestContext for Method {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(Method(ctx.method().to_owned()))
    }
}

/// Echoes the text with the configured prefix.
#[mcp_tool(group = "roundtrip")]
async fn echo(prefix: State<Prefix>, args: EchoArgs, #[extract] method: Method) -> Result<String, ToolError> {
    if args.text.is_empty() {
        return Err(ToolError::new("nothing to echo"));
    }
    Ok(format!("{}{} via {}", prefix.text, args.text.repeat(args.times.unwrap_or(1)), method.0))
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: i64,
}

#[derive(serde::Deserialize)]
struct Numbers {
    values: Vec<i64>,
}

/// Adds numbers.
#[mcp_tool(
    name = "math.sum",
    group = "roundtrip",
    input_schema = r#"{"type":"object","properties":{"values":{"type":"array","items":{"type":"integer"}}}}"#
)]
async fn sum(numbers: Numbers) -> Json<Sum> {
    Json(Sum { total: numbers.values.iter().sum() })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    name: String,
}

/// Greets someone.
#[mcp_prompt(group = "roundtrip")]
async fn greet(args: GreetArgs) -> String {
    format!("Hello, {}!", args.name)
}

/// An item.
#[mcp_resource(uri = "items://{shelf}/{id}", mime_type = "text/plain", group = "roundtrip")]
async fn item(id: u32, shelf: String, req: ResourceRequest) -> String {
    format!("{shelf}#{id} at {}", req.uri)
}

#[mcp_completion(prompt = "greet", argument = "name", group = "roundtrip")]
async fn names(req: CompletionRequest) -> Vec<String> {
    ["alice", "albert", "bob"].iter().filter(|n| n.starts_with(&req.argument.value)).map(|n| n.to_string()).collect()
}

fn client() -> TestClient {
    let server = Server::builder("roundtrip", "0")
        .groups(["roundtrip"])
        .state(Prefix { text: "> " })
        .build()
        .expect("server builds");
    TestClient::modern(server)
}

#[tokio::test]
async fn tool_decodes_params_and_builds_extractors() {
    let client = client();
    let reply = client.call_tool("echo", json!({"text": "hi", "times": 2})).await;
    assert_eq!(reply.result()["content"][0]["text"], "> hihi via tools/call");
    assert!(reply.result().get("isError").is_none_or(|e| e == false));
}

#[tokio::test]
async fn tool_errors_and_bad_params() {
    let client = client();
    let reply = client.call_tool("echo", json!({"text": ""})).await;
    assert_eq!(reply.result()["isError"], true);
    assert_eq!(reply.result()["content"][0]["text"], "nothing to echo");

    // Arguments the tool cannot take are a tool error the model can correct, naming the field.
    let reply = client.call_tool("echo", json!({"times": 1})).await;
    assert_eq!(reply.result()["isError"], true);
    assert_eq!(reply.result()["content"][0]["text"], "Invalid arguments for tool `echo`: missing field `text`");
}

#[tokio::test]
async fn raw_schema_tool_returns_structured_content() {
    let client = client();
    let reply = client.call_tool("math.sum", json!({"values": [1, 2, 39]})).await;
    assert_eq!(reply.result()["structuredContent"], json!({"total": 42}));
}

#[tokio::test]
async fn prompt_decodes_string_arguments() {
    let client = client();
    let reply = client.request("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(reply.result()["messages"][0]["content"]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn template_variables_are_bound_by_name() {
    let client = client();
    let reply = client.request("resources/read", json!({"uri": "items://top/7"})).await;
    let contents = &reply.result()["contents"][0];
    assert_eq!(contents["text"], "top#7 at items://top/7");
    assert_eq!(contents["mimeType"], "text/plain");

    let reply = client.request("resources/read", json!({"uri": "items://top/seven"})).await;
    assert_eq!(reply.error_code(), Some(-32602), "`seven` is no u32");
}

#[tokio::test]
async fn completion_receives_the_request() {
    let client = client();
    let reply = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "al"}}),
        )
        .await;
    assert_eq!(reply.result()["completion"]["values"], json!(["alice", "albert"]));
}

// Typed RPCs (`#[mcp_rpc]`) and filters (`#[mcp_filter]`), in groups of their own.

#[derive(serde::Deserialize)]
struct SumParams {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize)]
struct SumResult {
    sum: i64,
}

#[mcp_rpc("acme/sum", group = "rpc")]
async fn rpc_sum(params: SumParams) -> Result<SumResult, McpError> {
    Ok(SumResult { sum: params.a + params.b })
}

#[derive(serde::Serialize)]
struct Pong {
    via: String,
}

/// No params; extractors only.
#[mcp_rpc("acme/pong", group = "rpc")]
async fn rpc_pong(#[extract] method: Method, _cancel: CancellationToken) -> Result<Pong, McpError> {
    Ok(Pong { via: method.0 })
}

#[mcp_rpc("io.example/ext/op", extension = "io.example/ext", routing_name = "target", group = "rpc")]
async fn rpc_ext(params: SumParams) -> Result<SumResult, McpError> {
    Ok(SumResult { sum: params.a * params.b })
}

fn rpc_server() -> Server {
    Server::builder("rpc", "0")
        .groups(["rpc"])
        .extension_capability("io.example/ext", switchyard::__private::serde_json::json!({}))
        .build()
        .expect("server builds")
}

/// The result without the era's `_meta` envelope.
fn without_meta(result: &switchyard::__private::serde_json::Value) -> switchyard::__private::serde_json::Value {
    let mut result = result.clone();
    if let Some(object) = result.as_object_mut() {
        object.remove("_meta");
    }
    result
}

#[tokio::test]
async fn rpc_answers_on_the_modern_wire() {
    let client = TestClient::modern(rpc_server());
    let reply = client.request("acme/sum", json!({"a": 1, "b": 2})).await;
    assert_eq!(without_meta(reply.result()), json!({"sum": 3, "resultType": "complete"}));

    let reply = client.request("acme/pong", json!({"ignored": true})).await;
    assert_eq!(reply.result()["via"], "acme/pong", "without params any object decodes");
}

#[tokio::test]
async fn rpc_bad_params_are_invalid_params() {
    let client = TestClient::modern(rpc_server());
    let reply = client.request("acme/sum", json!({"a": 1})).await;
    assert_eq!(reply.error_code(), Some(-32602));
    let message = reply.error()["message"].as_str().unwrap_or_default();
    assert!(message.contains("missing field `b`"), "{message}");

    let reply = client.request("acme/sum", json!({"a": "one", "b": 2})).await;
    assert_eq!(reply.error_code(), Some(-32602));
}

#[tokio::test]
async fn rpc_on_a_legacy_session_has_no_result_type() {
    let client = TestClient::legacy(rpc_server(), "2025-11-25").await.expect("initialize");
    let reply = client.raw_request("acme/sum", json!({"a": 1, "b": 2})).await;
    assert_eq!(reply.result(), &json!({"sum": 3}));
}

#[tokio::test]
async fn extension_rpc_needs_the_declared_extension() {
    let client = TestClient::modern(rpc_server());
    let reply = client.request("io.example/ext/op", json!({"a": 2, "b": 3})).await;
    assert_eq!(reply.error_code(), Some(-32021));
    assert_eq!(reply.error()["data"]["requiredCapabilities"], json!({"extensions": {"io.example/ext": {}}}));

    let client = TestClient::modern(rpc_server()).with_capabilities(json!({"extensions": {"io.example/ext": {}}}));
    let reply = client.request("io.example/ext/op", json!({"a": 2, "b": 3})).await;
    assert_eq!(reply.result()["sum"], 6);
    assert_eq!(rpc_server().routing_field("io.example/ext/op"), Some("target"));

    let legacy = TestClient::legacy(rpc_server(), "2025-11-25").await.expect("initialize");
    let reply = legacy.raw_request("io.example/ext/op", json!({"a": 2, "b": 3})).await;
    assert_eq!(reply.error_code(), Some(-32601), "extension methods are modern-only by default");
}

type Log = Arc<Mutex<Vec<String>>>;

/// What the filters of the `pipeline` groups saw, per server: the server's state holds one
/// clone, the test the other.
#[derive(Clone, Default)]
struct Trace {
    steps: Log,
    methods: Log,
}

fn read(log: &Log) -> Vec<String> {
    log.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn step(ctx: &RequestContext, step: &str) {
    if let Some(trace) = ctx.state::<Trace>() {
        trace.steps.lock().unwrap_or_else(|e| e.into_inner()).push(step.to_owned());
    }
}

#[mcp_filter(order = 2, group = "pipeline")]
async fn r2(req: RawRequest, next: RawNext) -> RawResponse {
    let ctx = req.ctx.clone();
    step(&ctx, "r2>");
    let out = next.run(req).await;
    step(&ctx, "<r2");
    out
}

#[mcp_filter(order = 1, group = "pipeline")]
async fn r1(req: RawRequest, next: RawNext) -> RawResponse {
    let ctx = req.ctx.clone();
    if let Some(trace) = ctx.state::<Trace>() {
        trace.methods.lock().unwrap_or_else(|e| e.into_inner()).push(ctx.method().to_owned());
    }
    step(&ctx, "r1>");
    let out = next.run(req).await;
    step(&ctx, "<r1");
    out
}

/// Short-circuits every request of its group, between `r2` and the method.
#[mcp_filter(order = 3, group = "pipeline-deny")]
async fn deny(req: RawRequest, _next: RawNext) -> RawResponse {
    step(&req.ctx, "deny");
    Err(McpError::missing_capability("this server needs the auth extension", json!({"extensions": {"acme/auth": {}}})))
}

#[mcp_rpc("acme/traced", group = "pipeline")]
async fn traced(params: SumParams, trace: State<Trace>) -> Result<SumResult, McpError> {
    trace.steps.lock().unwrap_or_else(|e| e.into_inner()).push("handler".to_owned());
    Ok(SumResult { sum: params.a + params.b })
}

#[mcp_filter(rpc = traced, order = 2, group = "pipeline")]
async fn t2(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    let ctx = req.ctx.clone();
    step(&ctx, "t2>");
    let out = next.run(req).await;
    step(&ctx, "<t2");
    out
}

/// Doubles `a` on the way in and adds 100 on the way out: typed filters see and change typed
/// values.
#[mcp_filter(rpc = traced, order = 1, group = "pipeline")]
async fn t1(mut req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    let ctx = req.ctx.clone();
    step(&ctx, "t1>");
    req.params.a *= 2;
    let out = next.run(req).await.map(|r| SumResult { sum: r.sum + 100 });
    step(&ctx, "<t1");
    out
}

/// Lists nothing useful; makes `tools/list` a served method of the pipeline group.
#[mcp_tool(group = "pipeline")]
async fn pipeline_noop() -> &'static str {
    ""
}

fn pipeline_server(groups: &[&str]) -> (TestClient, Trace) {
    let trace = Trace::default();
    let server = Server::builder("pipeline", "0")
        .groups(groups.iter().copied())
        .state(trace.clone())
        .build()
        .expect("server builds");
    (TestClient::modern(server), trace)
}

#[tokio::test]
async fn raw_filters_wrap_typed_filters_wrap_the_handler() {
    let (client, trace) = pipeline_server(&["pipeline"]);
    let reply = client.request("acme/traced", json!({"a": 1, "b": 2})).await;
    assert_eq!(reply.result()["sum"], 104, "t1 doubled `a` and added 100");
    assert_eq!(read(&trace.steps), ["r1>", "r2>", "t1>", "t2>", "handler", "<t2", "<t1", "<r2", "<r1"]);
}

#[tokio::test]
async fn short_circuiting_raw_filter_stops_the_chain() {
    let (client, trace) = pipeline_server(&["pipeline", "pipeline-deny"]);
    let reply = client.request("acme/traced", json!({"a": 1, "b": 2})).await;
    assert_eq!(reply.error_code(), Some(-32021));
    assert_eq!(reply.error()["data"]["requiredCapabilities"], json!({"extensions": {"acme/auth": {}}}));
    assert_eq!(read(&trace.steps), ["r1>", "r2>", "deny", "<r2", "<r1"], "no typed filter, no handler");
}

#[tokio::test]
async fn raw_filters_see_builtin_methods() {
    let (client, trace) = pipeline_server(&["pipeline"]);
    let reply = client.request("tools/list", json!({})).await;
    assert_eq!(reply.result()["tools"][0]["name"], "pipeline_noop");
    assert_eq!(read(&trace.methods), ["tools/list"]);
    assert_eq!(read(&trace.steps), ["r1>", "r2>", "<r2", "<r1"]);
}

// Alternate-result filters (`#[mcp_filter(alternate, rpc = ..)]`), in groups of their own.

/// Renders normally unless its alternate filter answers instead.
#[mcp_prompt(group = "alt-prompt")]
async fn special() -> String {
    "the ordinary special".to_owned()
}

/// Always rendered normally.
#[mcp_prompt(group = "alt-prompt")]
async fn plain() -> String {
    "the ordinary plain".to_owned()
}

/// Answers `special` with a result of its own shape; delegates every other prompt.
#[mcp_filter(alternate, rpc = switchyard::methods::PromptsGet, group = "alt-prompt")]
async fn custom_special(
    req: TypedRequest<GetPromptParams>,
    next: AltNext<GetPromptParams, GetPromptResult>,
) -> Result<Alternate<GetPromptResult>, McpError> {
    if req.params.name == "special" {
        return Ok(Alternate::Other(json!({"resultType": "custom", "x": 1})));
    }
    next.run(req).await
}

#[tokio::test]
async fn alternate_filter_answers_prompts_get_with_its_own_result() {
    let server = Server::builder("alt", "0").groups(["alt-prompt"]).build().expect("server builds");
    let client = TestClient::modern(server);

    let reply = client.request("prompts/get", json!({"name": "special"})).await;
    assert_eq!(without_meta(reply.result()), json!({"resultType": "custom", "x": 1}));

    let reply = client.request("prompts/get", json!({"name": "plain"})).await;
    assert_eq!(reply.result()["messages"][0]["content"]["text"], "the ordinary plain");
    assert_eq!(reply.result()["resultType"], "complete");
}

#[mcp_rpc("acme/alt", group = "alt-rpc")]
async fn alt_sum(params: SumParams, trace: State<Trace>) -> Result<SumResult, McpError> {
    trace.steps.lock().unwrap_or_else(|e| e.into_inner()).push("handler".to_owned());
    Ok(SumResult { sum: params.a + params.b })
}

/// A typed filter with a far lower `order` than the alternate filters: it still runs inside
/// them.
#[mcp_filter(rpc = alt_sum, order = -100, group = "alt-rpc")]
async fn alt_typed(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    let ctx = req.ctx.clone();
    step(&ctx, "t>");
    let out = next.run(req).await;
    step(&ctx, "<t");
    out
}

/// The outer alternate filter: a negative `a` gets a task instead of a sum.
#[mcp_filter(alternate, rpc = alt_sum, order = 10, group = "alt-rpc")]
async fn alt_outer(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    let ctx = req.ctx.clone();
    step(&ctx, "a10>");
    if req.params.a < 0 {
        return Ok(Alternate::Other(json!({"resultType": "task", "task": {"taskId": "t-1"}})));
    }
    let out = next.run(req).await;
    step(&ctx, "<a10");
    out
}

/// The inner alternate filter: changes an ordinary result on its way out.
#[mcp_filter(alternate = true, rpc = alt_sum, order = 20, group = "alt-rpc")]
async fn alt_inner(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    let ctx = req.ctx.clone();
    step(&ctx, "a20>");
    let out = match next.run(req).await? {
        Alternate::Ordinary(r) => Alternate::Ordinary(SumResult { sum: r.sum + 1000 }),
        other => other,
    };
    step(&ctx, "<a20");
    Ok(out)
}

fn alt_rpc_server() -> (TestClient, Trace) {
    let trace = Trace::default();
    let server = Server::builder("alt-rpc", "0").groups(["alt-rpc"]).state(trace.clone()).build().expect("builds");
    (TestClient::modern(server), trace)
}

#[tokio::test]
async fn alternate_filters_wrap_typed_filters_whatever_their_order() {
    let (client, trace) = alt_rpc_server();
    let reply = client.request("acme/alt", json!({"a": 1, "b": 2})).await;
    assert_eq!(without_meta(reply.result()), json!({"sum": 1003, "resultType": "complete"}));
    assert_eq!(read(&trace.steps), ["a10>", "a20>", "t>", "handler", "<t", "<a20", "<a10"]);
}

#[tokio::test]
async fn alternate_filter_on_an_rpc_answers_with_its_own_result() {
    let (client, trace) = alt_rpc_server();
    let reply = client.request("acme/alt", json!({"a": -1, "b": 2})).await;
    assert_eq!(without_meta(reply.result()), json!({"resultType": "task", "task": {"taskId": "t-1"}}));
    assert_eq!(read(&trace.steps), ["a10>"], "no inner filter, no handler");
}
