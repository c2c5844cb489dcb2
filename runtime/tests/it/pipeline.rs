//! Start-up checks of the pipeline and the routing-name header check of typed RPCs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::testing::TestClient;
use switchyard::transport::http::HttpConfig;
use switchyard::{BuildError, RawFilter, methods::ToolsCall};

/// A tool.
#[mcp_tool(group = "a13")]
async fn plain() -> Result<String, ToolError> {
    Ok("from the tool".to_owned())
}

/// An ordinary tools/call filter in its own group.
#[mcp_filter(rpc = ToolsCall, group = "a13f")]
async fn ordinary(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    next.run(req).await
}

#[tokio::test]
async fn a13_a_replacement_handler_cannot_be_combined_with_tools_call_filters() {
    let replaced = Server::builder("r", "1")
        .groups(["a13"])
        .replace_tools_call(|_ctx, p| async move {
            Ok(CallToolResult::success(vec![Content::text(format!("replaced {}", p.name))]))
        })
        .build()
        .expect("no filters: builds");
    let r = TestClient::modern(replaced).call_tool("plain", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "replaced plain");
    // A replacement (a proxy) answers with an alternate result through the control signal.
    let forwarding = Server::builder("r", "1")
        .groups(["a13"])
        .replace_tools_call(|_ctx, _p| async move {
            Err(McpError::alternate_result(json!({ "resultType": "task", "taskId": "t9", "status": "working" })))
        })
        .build()
        .expect("builds");
    let r = TestClient::modern(forwarding).call_tool("plain", json!({})).await;
    assert_eq!(r.result()["resultType"], "task", "{}", r.response);
    assert_eq!(r.result()["taskId"], "t9", "{}", r.response);
    let err = Server::builder("r", "1")
        .groups(["a13", "a13f"])
        .replace_tools_call(|_ctx, _p| async move { Ok(CallToolResult::default()) })
        .build()
        .expect_err("filters would be skipped");
    let text = err.to_string();
    assert!(text.contains("pipeline.rs") && text.contains("tools/call"), "{text}");
}

#[derive(Deserialize, JsonSchema)]
struct Id {
    id: String,
}

#[derive(Serialize, JsonSchema)]
struct Echoed {
    id: String,
}

/// Two RPCs with one method, in different groups.
#[mcp_rpc("acme/dup", group = "dup1")]
async fn dup_one(p: Id) -> Result<Echoed, McpError> {
    Ok(Echoed { id: p.id })
}

#[mcp_rpc("acme/dup", group = "dup2")]
async fn dup_two(p: Id) -> Result<Echoed, McpError> {
    Ok(Echoed { id: p.id })
}

/// A typed filter whose method lives in another group.
#[mcp_filter(rpc = dup_one, group = "orphan")]
async fn orphan(req: TypedRequest<Id>, next: Next<Id, Echoed>) -> Result<Echoed, McpError> {
    next.run(req).await
}

#[tokio::test]
async fn b6_method_collisions_and_orphan_filters_fail_the_build() {
    match Server::builder("d", "1").groups(["dup1", "dup2"]).build() {
        Err(BuildError::Duplicate { kind: "method", name, first, second }) => {
            assert_eq!(name, "acme/dup");
            assert_ne!(first, second);
        }
        other => panic!("expected a duplicate method, got {other:?}"),
    }
    let err = Server::builder("o", "1").groups(["orphan"]).build().expect_err("nobody serves acme/dup");
    assert!(err.to_string().contains("no registered method serves"), "{err}");
    assert!(Server::builder("ok", "1").groups(["dup1", "orphan"]).build().is_ok());
}

/// A typed filter whose method (`acme/job`, group `routing`) is not served either.
#[mcp_filter(rpc = job, group = "orphan2")]
async fn orphan_two(req: TypedRequest<Id>, next: Next<Id, Echoed>) -> Result<Echoed, McpError> {
    next.run(req).await
}

/// Every pipeline problem is reported by one `build()`, with the duplicate methods of the same
/// build, not only the first one found.
#[tokio::test]
async fn b6_every_pipeline_problem_is_reported_at_once() {
    let err = Server::builder("o", "1").groups(["orphan", "orphan2", "dup2"]).build().expect_err("two orphans");
    let orphans: Vec<String> = err
        .problems()
        .iter()
        .filter(|p| p.to_string().contains("which no registered method serves"))
        .map(ToString::to_string)
        .collect();
    assert_eq!(orphans.len(), 1, "dup2 serves acme/dup, so only acme/job's filter is an orphan: {err}");
    let err = Server::builder("o", "1").groups(["orphan", "orphan2"]).build().expect_err("two orphans");
    assert_eq!(err.problems().len(), 2, "{err}");
    assert!(err.to_string().starts_with("2 problems:"), "{err}");
    for name in ["orphan", "orphan_two"] {
        assert!(err.problems().iter().any(|p| p.to_string().contains(name)), "{name} in {err}");
    }
}

/// The shim of the hand-written registrations below, which `build()` refuses before any call.
fn never_called(
    _ctx: RequestContext,
    _params: switchyard::__private::ErasedValue,
) -> switchyard::registry::BoxFuture<Result<switchyard::__private::ErasedValue, McpError>> {
    Box::pin(async { Err(McpError::internal("never called")) })
}

/// An `RpcRegistration` written by hand, as a crate without the macro (or built by an older
/// one) could submit it: the names the macro refuses must fail `build()` as well.
macro_rules! hand_written_rpc {
    ($method:literal, $extension:expr, $group:literal) => {
        inventory::submit! {
            switchyard::__private::RpcRegistration {
                method: $method,
                group: $group,
                routing_name: None,
                extension: $extension,
                required_capabilities: None,
                eras: switchyard::__private::Eras::Both,
                decode: switchyard::__private::decode_erased::<Id>,
                encode: switchyard::__private::encode_erased::<Echoed>,
                params_type: std::any::TypeId::of::<Id>,
                result_type: std::any::TypeId::of::<Echoed>,
                roles: &[],
                scopes: &[],
                handler: never_called,
                state: &[],
                site: switchyard::__private::Site {
                    module_path: module_path!(),
                    file: file!(),
                    line: line!(),
                    function: $group,
                },
            }
        }
    };
}

hand_written_rpc!("tools/call", Some("io.modelcontextprotocol/tasks"), "hand_core");
hand_written_rpc!("tasks/get", None, "hand_namespace");
hand_written_rpc!("tasks/get", Some("acme/x"), "hand_vendor_extension");
hand_written_rpc!("acme/x", Some("acme"), "hand_malformed_extension");
hand_written_rpc!("resources/directory/read", Some("io.modelcontextprotocol/skills"), "hand_official");

fn never_granted(
    _ctx: RequestContext,
    _requested: serde_json::Value,
) -> switchyard::registry::BoxFuture<Result<Option<serde_json::Value>, McpError>> {
    Box::pin(async { Err(McpError::internal("never called")) })
}

inventory::submit! {
    switchyard::__private::SubscriptionFieldRegistration {
        key: "toolsListChanged",
        extension: None,
        group: "hand_listen_key",
        handler: never_granted,
        state: &[],
        site: switchyard::__private::Site {
            module_path: module_path!(),
            file: file!(),
            line: line!(),
            function: "hand_listen_key",
        },
    }
}

/// A subscription field on a key the runtime answers itself fails `build()`, as the macro
/// refuses it at compile time.
#[test]
fn build_refuses_a_subscription_field_on_a_built_in_listen_key() {
    let err = Server::builder("v", "1").groups(["hand_listen_key"]).build().expect_err("a built-in key");
    assert!(err.to_string().contains("toolsListChanged"), "{err}");
    assert!(err.to_string().contains("the runtime answers this listen key itself"), "{err}");
}

#[tokio::test]
async fn build_refuses_the_rpc_names_the_macro_refuses() {
    let refused = |group: &str| {
        let err = Server::builder("v", "1").groups([group]).build().expect_err(group);
        assert_eq!(err.problems().len(), 1, "{err}");
        err.to_string()
    };
    let err = refused("hand_core");
    assert!(err.contains("`tools/call` is a method of MCP itself, which no extension may take"), "{err}");
    let err = refused("hand_namespace");
    assert!(err.contains("`tasks/get` is in MCP's `tasks/` namespace"), "{err}");
    assert!(err.contains("`extension = \"io.modelcontextprotocol/...\"`"), "{err}");
    let err = refused("hand_vendor_extension");
    assert!(err.contains("`acme/x` is not one of them"), "{err}");
    let err = refused("hand_malformed_extension");
    assert!(err.contains("its extension \"acme\" is not an extension identifier"), "{err}");
    let server = Server::builder("v", "1").groups(["hand_official"]).build();
    assert!(server.is_ok(), "an official extension's method in an MCP namespace builds: {:?}", server.err());
}

/// An RPC whose `taskId` the Mcp-Name header mirrors.
#[mcp_rpc("acme/job", routing_name = "id", group = "routing")]
async fn job(p: Id) -> Result<Echoed, McpError> {
    Ok(Echoed { id: p.id })
}

#[tokio::test]
async fn b10_the_routing_name_is_checked_against_mcp_name() {
    let server = Server::builder("b10", "1").groups(["routing"]).build().expect("builds");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
    let url = http.url();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "acme/job", "params": { "id": "B", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } });
    let post = |name: &str| {
        reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "acme/job")
            .header("mcp-name", name.to_owned())
            .body(body.to_string())
            .send()
    };
    let resp = post("A").await.expect("sent");
    assert_eq!(resp.status().as_u16(), 400);
    let v: Value = resp.json().await.expect("JSON");
    assert_eq!(v["error"]["code"], -32020);
    let resp = post("B").await.expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let v: Value = resp.json().await.expect("JSON");
    assert_eq!(v["result"]["id"], "B");
}

/// Reports progress twice, then answers.
#[mcp_tool(group = "a16")]
async fn progressing(progress: Progress) -> Result<String, ToolError> {
    progress.report(1.0, Some(2.0), None).await;
    progress.report(2.0, Some(2.0), None).await;
    Ok("done".to_owned())
}

struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl switchyard::context::MessageFilter for Recorder {
    fn incoming(&self, message: &Value) -> bool {
        let method = message["method"].as_str().unwrap_or("(response)").to_owned();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(method);
        true
    }

    fn outgoing(&self, message: Value) -> Vec<Value> {
        if message["method"] == "notifications/progress" {
            return Vec::new();
        }
        if message.get("result").is_some() {
            let note = json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": { "level": "info", "data": "injected" } });
            return vec![note, message];
        }
        vec![message]
    }
}

#[tokio::test]
async fn a16_message_filters_see_every_message_and_may_drop_or_inject() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let server =
        Server::builder("a16", "1").groups(["a16"]).message_filter(Recorder(seen.clone())).build().expect("builds");
    let client = TestClient::modern(server);
    client.notify("notifications/cancelled", json!({ "requestId": 999 })).await;
    let r = client
        .request("tools/call", json!({ "name": "progressing", "arguments": {}, "_meta": { "progressToken": "p" } }))
        .await;
    assert_eq!(r.result()["content"][0]["text"], "done");
    assert!(r.notifications.iter().all(|n| n["method"] != "notifications/progress"), "{:?}", r.notifications);
    assert!(r.notifications.iter().any(|n| n["params"]["data"] == "injected"), "{:?}", r.notifications);
    let seen = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert_eq!(seen, ["notifications/cancelled", "tools/call"]);
}

#[tokio::test]
async fn e12_a_json_only_transport_advertises_no_streams_and_refuses_listen() {
    let server = Server::builder("e12", "1").groups(["a16"]).build().expect("builds");
    let config = HttpConfig::default().streaming(false);
    let http = HttpTestServer::start(server, config).await.expect("a loopback port");
    let url = http.url();
    let post = |method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": "p" });
        let mut rb = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method.to_owned());
        if let Some(n) = params.get("name").and_then(Value::as_str) {
            rb = rb.header("mcp-name", n.to_owned());
        }
        rb.body(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string()).send()
    };
    let v: Value = post("server/discover", json!({})).await.expect("sent").json().await.expect("JSON");
    assert_eq!(v["result"]["capabilities"]["tools"], json!({}), "{v}");
    let resp =
        post("subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } })).await.expect("sent");
    assert_eq!(resp.status().as_u16(), 404);
    let v: Value = resp.json().await.expect("JSON");
    assert_eq!(v["error"]["code"], -32601);
    let resp = post("tools/call", json!({ "name": "progressing", "arguments": {} })).await.expect("sent");
    assert!(resp.headers()["content-type"].to_str().is_ok_and(|t| t.starts_with("application/json")));
    let v: Value = resp.json().await.expect("JSON");
    assert_eq!(v["result"]["content"][0]["text"], "done");
}

/// Tags every outgoing listen event, so the test sees that the filter got it whole.
struct TagListenEvents;

impl switchyard::context::MessageFilter for TagListenEvents {
    fn outgoing(&self, mut message: Value) -> Vec<Value> {
        if message["method"] == "notifications/tools/list_changed" {
            message["params"]["seenBy"] = json!(message["params"]["_meta"].clone());
        }
        vec![message]
    }
}

/// Listen events are encoded once for all subscribers, except where an outgoing message
/// filter must see each one as a `Value`: it then gets the complete, tagged notification.
#[tokio::test]
async fn a16_listen_events_pass_through_message_filters_whole() {
    let server =
        Server::builder("a16-listen", "1").groups(["a16"]).message_filter(TagListenEvents).build().expect("builds");
    let client = TestClient::modern(server.clone());
    let listen = json!({ "jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true },
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } });
    client.send_line(&listen.to_string()).await;
    let wait = |method: &'static str| {
        let client = &client;
        async move {
            client
                .wait_for_notification(|m| m["method"] == method, std::time::Duration::from_secs(5))
                .await
                .unwrap_or_else(|| panic!("no {method} in {:?}", client.notifications()))
        }
    };
    wait("notifications/subscriptions/acknowledged").await;
    server.publisher().tools_list_changed();
    let event = wait("notifications/tools/list_changed").await;
    let tag = json!({ "io.modelcontextprotocol/subscriptionId": 41 });
    assert_eq!(event["params"]["_meta"], tag);
    assert_eq!(event["params"]["seenBy"], tag, "the filter saw the tagged event: {event}");
}

/// The request's `_meta` as its context shows it to the tool.
#[mcp_tool(group = "meta-seen")]
async fn meta_seen(ctx: RequestContext) -> Result<String, McpError> {
    Ok(Value::Object(ctx.meta().clone()).to_string())
}

/// Answers the client info its context reports.
#[mcp_tool(group = "meta-seen")]
async fn client_seen(ctx: RequestContext) -> Result<String, McpError> {
    Ok(ctx.client_info().cloned().unwrap_or(Value::Null).to_string())
}

/// What the raw filter of group `meta-raw` found in `params._meta`.
static RAW_META: std::sync::Mutex<Option<Value>> = std::sync::Mutex::new(None);

#[mcp_filter(group = "meta-raw")]
async fn meta_raw(req: RawRequest, next: RawNext) -> RawResponse {
    *RAW_META.lock().unwrap_or_else(|e| e.into_inner()) = req.params.get("_meta").cloned();
    next.run(req).await
}

/// Without raw filters the pipeline moves `_meta` out of the params into the context rather
/// than copying it: the tool must see the same `_meta` either way, and a raw filter must still
/// find it in `params`, on both eras.
#[tokio::test]
async fn the_context_shows_the_sent_meta_with_and_without_raw_filters() {
    let sent = json!({ "progressToken": "p-1", "acme/tag": { "nested": [1, "two"] } });
    for groups in [&["meta-seen"][..], &["meta-seen", "meta-raw"][..]] {
        let server = || Server::builder("meta", "1").groups(groups.iter().copied()).build().expect("builds");
        let modern = TestClient::modern(server());
        let legacy = TestClient::legacy(server(), "2025-11-25").await.expect("initialized");
        for (era, client) in [("modern", &modern), ("legacy", &legacy)] {
            *RAW_META.lock().unwrap_or_else(|e| e.into_inner()) = None;
            let r = client.request("tools/call", json!({ "name": "meta_seen", "arguments": {}, "_meta": sent })).await;
            let text = r.result()["content"][0]["text"].as_str().unwrap_or_default().to_owned();
            let seen: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{era} {groups:?}: {e}: {text:?}"));
            let mut expected = sent.as_object().cloned().unwrap_or_default();
            if era == "modern" {
                // The test client adds the required envelope; it is part of what was sent.
                for key in ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"] {
                    assert!(seen.get(key).is_some(), "{era} {groups:?}: {key} missing in {seen}");
                    expected.insert(key.to_owned(), seen[key].clone());
                }
                expected.insert(
                    "io.modelcontextprotocol/clientInfo".to_owned(),
                    seen["io.modelcontextprotocol/clientInfo"].clone(),
                );
            }
            assert_eq!(seen, Value::Object(expected), "{era} {groups:?}");
            let raw = RAW_META.lock().unwrap_or_else(|e| e.into_inner()).take();
            if groups.contains(&"meta-raw") {
                assert_eq!(raw.as_ref(), Some(&seen), "{era}: the raw filter sees params._meta");
            } else {
                assert_eq!(raw, None, "{era}: no raw filter ran");
            }
            // The client's info, from `_meta` (modern) or `initialize` (legacy).
            let r = client.request("tools/call", json!({ "name": "client_seen", "arguments": {} })).await;
            let info = r.result()["content"][0]["text"].as_str().unwrap_or_default().to_owned();
            let info: Value = serde_json::from_str(&info).unwrap_or_else(|e| panic!("{era} {groups:?}: {e}: {info:?}"));
            assert_eq!(info, json!({ "name": "switchyard-test-client", "version": "0" }), "{era} {groups:?}");
        }
    }
}

/// Appends its mark to the trail, then passes the request on.
#[mcp_filter(order = 5, group = "value-order")]
async fn marks_five(req: RawRequest, next: RawNext) -> RawResponse {
    req.ctx.extensions().get_or_insert_with(Trail::default).push("fn@5");
    next.run(req).await
}

/// The order in which raw filters saw one request.
#[derive(Default, Clone)]
struct Trail(std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>);

impl Trail {
    fn push(&self, mark: &'static str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(mark);
    }
}

/// A raw filter value with state of its own: counts requests and refuses from the `limit`th on.
struct Countdown {
    mark: &'static str,
    seen: std::sync::atomic::AtomicUsize,
    limit: usize,
}

impl RawFilter for Countdown {
    fn filter(&self, req: RawRequest, next: RawNext) -> switchyard::registry::BoxFuture<RawResponse> {
        req.ctx.extensions().get_or_insert_with(Trail::default).push(self.mark);
        let n = self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let refuse = n >= self.limit && req.ctx.method() == "tools/call";
        Box::pin(async move {
            if refuse {
                return Err(McpError::invalid_request(format!("request {n}: over the limit")));
            }
            next.run(req).await
        })
    }
}

#[mcp_tool(group = "value-order")]
/// Reports the raw filters that ran before it, outermost first.
async fn trail(ctx: RequestContext) -> Result<String, ToolError> {
    let trail = ctx.extensions().get::<Trail>().map(|t| t.0.lock().unwrap_or_else(|e| e.into_inner()).join(","));
    Ok(trail.unwrap_or_default())
}

/// Raw filter values sit in one chain with the `#[mcp_filter]` functions, by `order`, may hold
/// state, and may answer in the request's place.
#[tokio::test]
async fn raw_filter_values_share_the_chain_with_filter_functions() {
    let server = Server::builder("values", "1")
        .groups(["value-order"])
        .raw_filter(10, Countdown { mark: "value@10", seen: Default::default(), limit: 3 })
        .raw_filter(1, |req: RawRequest, next: RawNext| async move {
            req.ctx.extensions().get_or_insert_with(Trail::default).push("closure@1");
            next.run(req).await
        })
        .build()
        .expect("builds");
    let client = TestClient::modern(server);
    for _ in 0..2 {
        let r = client.call_tool("trail", json!({})).await;
        assert_eq!(r.result()["content"][0]["text"], "closure@1,fn@5,value@10", "{r:?}");
    }
    let refused = client.call_tool("trail", json!({})).await;
    assert_eq!(refused.error_code(), Some(-32600), "{refused:?}");
    assert!(refused.error()["message"].as_str().unwrap_or_default().contains("request 3"), "{refused:?}");
    // The value holds its count across requests, and other methods still pass.
    assert!(client.request("tools/list", json!({})).await.result()["tools"].is_array());
}
