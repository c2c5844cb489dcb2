//! C22 in-process: a replacement listen handler (`ServerBuilder::replace_listen`) owns its
//! stream; gating, raw filters, cancellation, shutdown and result shaping still apply.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::subscriptions::{Event, ListenEnd, ListenLimits, ListenStream};
use switchyard::testing::HttpTestServer;
use switchyard::testing::TestClient;
use switchyard::transport::http::HttpConfig;

const SID: &str = "io.modelcontextprotocol/subscriptionId";

/// Gives the servers something to list.
#[mcp_tool(group = "c22")]
async fn noop() -> Result<String, ToolError> {
    Ok(String::new())
}

/// Refuses listen requests whose filter names `deny` (C18).
#[mcp_filter(group = "c22", order = 1)]
async fn deny_listen(req: RawRequest, next: RawNext) -> RawResponse {
    if req.ctx.method() == "subscriptions/listen"
        && req.params.get("notifications").and_then(|n| n.get("deny")).is_some()
    {
        return Err(McpError::invalid_request("listen denied by a raw filter"));
    }
    next.run(req).await
}

/// Counts handler runs and notices when a handler's future is dropped.
#[derive(Default)]
struct Probe {
    runs: AtomicUsize,
    dropped: AtomicBool,
}

struct DropFlag(Arc<Probe>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

/// A server whose handler acks what was asked, forwards published tools changes as
/// `notifications/acme/tools` and ends with a result carrying `_meta.reason` on shutdown.
fn server(probe: Arc<Probe>) -> Server {
    builder(probe).build().expect("builds")
}

/// The builder of [`server`].
fn builder(probe: Arc<Probe>) -> switchyard::ServerBuilder {
    Server::builder("c22", "1").groups(["c22"]).replace_listen(move |_ctx: RequestContext, stream: ListenStream| {
        let probe = probe.clone();
        async move {
            probe.runs.fetch_add(1, Ordering::SeqCst);
            let _flag = DropFlag(probe.clone());
            let mut events = stream.events();
            stream.acknowledge(stream.requested().clone()).await;
            assert!(!stream.send("notifications/acme/bad", json!([1])).await, "non-object params are refused");
            loop {
                tokio::select! {
                    end = stream.ended() => {
                        assert_eq!(end, ListenEnd::Shutdown, "the client's end drops this future instead");
                        return Ok(json!({ "_meta": { "reason": "shutdown" } }));
                    }
                    next = futures::StreamExt::next(&mut events) => match next {
                        Some(Ok(Event::ToolsListChanged)) => {
                            stream.send("notifications/acme/tools", json!({ "_meta": { "keep": 1 } })).await;
                        }
                        Some(Ok(_)) => {}
                        Some(Err(_)) | None => return Ok(stream.result()),
                    },
                }
            }
        }
    })
}

fn listen_line(id: Value, filter: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": filter,
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } })
    .to_string()
}

async fn wait_for(client: &TestClient, what: impl Fn(&Value) -> bool) -> Value {
    client
        .wait_for_notification(what, Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("no matching message in {:?}", client.notifications()))
}

async fn eventually(what: impl Fn() -> bool) -> bool {
    for _ in 0..500 {
        if what() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn the_handler_owns_the_stream_and_its_result_is_completed() {
    let probe = Arc::new(Probe::default());
    let server = server(probe.clone());
    let client = TestClient::modern(server.clone());
    let listen =
        client.send_and_wait(json!("s"), listen_line(json!("s"), json!({ "toolsListChanged": true, "x-own": [1] })));
    let drive = async {
        let ack = wait_for(&client, |m| m["method"] == "notifications/subscriptions/acknowledged").await;
        assert_eq!(ack["params"]["notifications"], json!({ "toolsListChanged": true, "x-own": [1] }));
        assert_eq!(ack["params"]["_meta"][SID], "s");
        // The handler routes published events itself; nothing is fanned out for it.
        server.publisher().tools_list_changed();
        let own = wait_for(&client, |m| m["method"] == "notifications/acme/tools").await;
        assert_eq!(own["params"]["_meta"], json!({ "keep": 1, SID: "s" }));
        assert_eq!(server.open_subscriptions(), 0, "replacement streams are not tracked by the built-in registry");
        // On shutdown its own result is sent, with resultType and the subscription id added.
        server.shutdown();
    };
    let (reply, ()) = tokio::join!(listen, drive);
    assert_eq!(reply.result()["_meta"]["reason"], "shutdown");
    assert_eq!(reply.result()["_meta"][SID], "s");
    assert_eq!(reply.result()["resultType"], "complete");
    assert!(
        client.notifications().iter().all(|m| m["method"] != "notifications/tools/list_changed"),
        "no automatic frame: {:?}",
        client.notifications()
    );
}

#[tokio::test]
async fn raw_filters_and_filter_checks_run_before_the_handler() {
    let probe = Arc::new(Probe::default());
    let client = TestClient::modern(server(probe.clone()));
    let r = client.send_and_wait(json!(1), listen_line(json!(1), json!({ "deny": true }))).await;
    assert_eq!(r.error_code(), Some(-32600), "{:?}", r.response);
    let r = client.send_and_wait(json!(2), listen_line(json!(2), json!({ "toolsListChanged": "yes" }))).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
    let r = client.send_and_wait(json!(3), listen_line(json!(3), json!(null))).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
    assert_eq!(probe.runs.load(Ordering::SeqCst), 0, "the handler never ran");
    assert!(
        client.notifications().iter().all(|m| m["method"] != "notifications/subscriptions/acknowledged"),
        "no ack: {:?}",
        client.notifications()
    );
}

#[tokio::test]
async fn legacy_sessions_get_method_not_found() {
    let probe = Arc::new(Probe::default());
    let client = TestClient::legacy(server(probe.clone()), "2025-11-25").await.expect("initialized");
    let r = client.request("subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } })).await;
    assert_eq!(r.error_code(), Some(-32601), "{:?}", r.response);
    assert_eq!(probe.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn stdio_cancellation_drops_the_handler_without_an_answer() {
    let probe = Arc::new(Probe::default());
    let client = TestClient::modern(server(probe.clone()));
    client.send_line(&listen_line(json!(4), json!({}))).await;
    wait_for(&client, |m| m["method"] == "notifications/subscriptions/acknowledged").await;
    assert!(!probe.dropped.load(Ordering::SeqCst));
    client.notify("notifications/cancelled", json!({ "requestId": 4 })).await;
    assert!(eventually(|| probe.dropped.load(Ordering::SeqCst)).await, "the handler's future is dropped");
    // The connection still serves requests, and nothing was answered for id 4.
    let r = client.request("tools/list", json!({})).await;
    assert!(r.response.get("result").is_some(), "{:?}", r.response);
    assert!(client.notifications().iter().all(|m| m["id"] != 4), "{:?}", client.notifications());
}

/// Replacement subscriptions hold listen-limit slots like built-in ones: refused before the
/// handler runs while the connection is full, and given back when the client cancels one.
#[tokio::test]
async fn the_listen_limits_count_replacement_subscriptions_too() {
    let probe = Arc::new(Probe::default());
    let server =
        builder(probe.clone()).listen_limits(ListenLimits::default().per_connection(1)).build().expect("builds");
    let client = TestClient::modern(server);
    client.send_line(&listen_line(json!(1), json!({}))).await;
    wait_for(&client, |m| m["method"] == "notifications/subscriptions/acknowledged").await;
    let r = client.send_and_wait(json!(2), listen_line(json!(2), json!({}))).await;
    assert_eq!(r.error_code(), Some(-32603), "{:?}", r.response);
    assert_eq!(r.error()["data"], json!({ "reason": "listenLimit", "limit": 1, "scope": "connection" }));
    assert_eq!(probe.runs.load(Ordering::SeqCst), 1, "the refused one never reached the handler");
    client.notify("notifications/cancelled", json!({ "requestId": 1 })).await;
    assert!(eventually(|| probe.dropped.load(Ordering::SeqCst)).await, "the first handler is dropped");
    let mut acked = false;
    for id in 3..200 {
        let line = listen_line(json!(id), json!({}));
        client.send_line(&line).await;
        let is_ack = move |m: &Value| {
            m["method"] == "notifications/subscriptions/acknowledged" && m["params"]["_meta"][SID] == id
        };
        let refused = move |m: &Value| m["id"] == id && m.get("error").is_some();
        let m = wait_for(&client, move |m| is_ack(m) || refused(m)).await;
        if is_ack(&m) {
            acked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(acked, "the cancelled subscription's slot came back");
}

async fn serve_http(server: Server, config: HttpConfig) -> HttpTestServer {
    HttpTestServer::start(server, config).await.expect("a loopback port")
}

async fn post_listen(url: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen_line(json!(5), json!({ "toolsListChanged": true })))
        .send()
        .await
        .expect("sent")
}

#[tokio::test]
async fn closing_the_http_response_drops_the_handler() {
    let probe = Arc::new(Probe::default());
    let http = serve_http(server(probe.clone()), HttpConfig::default()).await;
    let url = http.url();
    let mut resp = post_listen(&url).await;
    let mut text = String::new();
    while !text.contains("acknowledged") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), resp.chunk()).await.expect("in time");
        text.push_str(&String::from_utf8_lossy(&chunk.expect("readable").expect("a chunk")));
    }
    assert!(!probe.dropped.load(Ordering::SeqCst));
    drop(resp);
    assert!(eventually(|| probe.dropped.load(Ordering::SeqCst)).await, "the handler's future is dropped");
}

#[tokio::test]
async fn a_json_only_http_endpoint_refuses_listen() {
    let probe = Arc::new(Probe::default());
    let http = serve_http(server(probe.clone()), HttpConfig::default().streaming(false)).await;
    let url = http.url();
    let resp = post_listen(&url).await;
    let body: Value = resp.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], -32601, "{body}");
    assert_eq!(probe.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_handler_that_ignores_shutdown_is_ended_with_the_standard_result() {
    let server = Server::builder("c22-stuck", "1")
        .groups(["c22"])
        .replace_listen(|_ctx, stream: ListenStream| async move {
            stream.acknowledge(serde_json::Map::new()).await;
            std::future::pending::<Result<Value, McpError>>().await
        })
        .build()
        .expect("builds");
    let client = TestClient::modern(server.clone());
    let listen = client.send_and_wait(json!(6), listen_line(json!(6), json!({})));
    let drive = async {
        wait_for(&client, |m| m["method"] == "notifications/subscriptions/acknowledged").await;
        server.shutdown();
    };
    let (reply, ()) = tokio::join!(listen, drive);
    assert_eq!(reply.result()["_meta"][SID], 6, "{:?}", reply.response);
}

#[tokio::test]
async fn a_handler_error_is_the_listen_error() {
    let server = Server::builder("c22-err", "1")
        .groups(["c22"])
        .replace_listen(|_ctx, _stream| async { Err(McpError::invalid_params("no such filter here")) })
        .build()
        .expect("builds");
    let client = TestClient::modern(server);
    let r = client.send_and_wait(json!(7), listen_line(json!(7), json!({}))).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
}
