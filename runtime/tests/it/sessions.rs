//! Bounds on legacy HTTP sessions: at the limit only idle sessions make room, sessions in use are
//! never closed for a newcomer (`initialize` gets 503 instead), and idle sessions expire.

use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;

/// Sleeps for a second, then answers `{}`.
#[mcp_rpc("test/nap", group = "sessions")]
async fn nap() -> Result<Value, McpError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(json!({}))
}

async fn serve(config: HttpConfig) -> HttpTestServer {
    let server = Server::builder("sessions", "1").groups(["sessions"]).build().expect("builds");
    HttpTestServer::start(server, config).await.expect("a loopback port")
}

fn post(url: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
    let mut rb = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        rb = rb.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
    }
    rb
}

/// `initialize`: the session id, or the HTTP status and JSON-RPC error code of the refusal.
async fn initialize(url: &str) -> Result<String, (u16, Value)> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } });
    let resp = post(url, None, body).send().await.expect("sent");
    let status = resp.status().as_u16();
    match resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned) {
        Some(id) => Ok(id),
        None => Err((status, resp.json::<Value>().await.expect("JSON")["error"]["code"].clone())),
    }
}

/// HTTP status of a `ping` on `session`.
async fn ping(url: &str, session: &str) -> u16 {
    let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" });
    post(url, Some(session), body).send().await.expect("sent").status().as_u16()
}

/// Opens the session's GET stream and keeps it open while the returned stream lives.
async fn listen(url: &str, session: &str) -> impl futures::Stream {
    let resp = reqwest::Client::new()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.bytes_stream().boxed();
    // The server counts the stream once its task runs; a keep-alive comment proves it does.
    let first = tokio::time::timeout(Duration::from_secs(5), body.next()).await;
    assert!(matches!(first, Ok(Some(Ok(_)))), "the stream is live");
    body
}

#[tokio::test]
async fn at_the_limit_only_idle_sessions_make_room() {
    let config = HttpConfig::default().max_sessions(2).keep_alive(Duration::from_millis(20));
    let http = serve(config).await;
    let url = http.url();
    let a = initialize(&url).await.expect("a");
    let b = initialize(&url).await.expect("b");
    let _a_stream = listen(&url, &a).await;
    // A third session displaces the idle one, not the one with an open stream.
    let c = initialize(&url).await.expect("c");
    assert_eq!(ping(&url, &a).await, 200);
    assert_eq!(ping(&url, &b).await, 404);
    assert_eq!(ping(&url, &c).await, 200);
    // With every session in use, a newcomer is refused and nobody is closed.
    let _c_stream = listen(&url, &c).await;
    assert_eq!(initialize(&url).await.expect_err("full"), (503, json!(-32603)));
    assert_eq!(ping(&url, &a).await, 200);
    assert_eq!(ping(&url, &c).await, 200);
}

#[tokio::test]
async fn idle_sessions_expire() {
    // Seconds, not milliseconds: on a loaded machine the ping right after `initialize` must
    // still find the session.
    let config = HttpConfig::default().session_idle_timeout(Duration::from_secs(2));
    let http = serve(config).await;
    let url = http.url();
    let a = initialize(&url).await.expect("a");
    assert_eq!(ping(&url, &a).await, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(ping(&url, &a).await, 404);
}

/// A client that gives up on a request before its JSON answer leaves the session in use only
/// while that request lasts: its registration used to stay behind when the connection closed,
/// so the session counted as busy forever, never expired and was never displaced (with enough
/// such sessions every `initialize` got 503).
#[tokio::test]
async fn a_request_whose_client_left_does_not_keep_its_session_busy() {
    let http = serve(HttpConfig::default().max_sessions(1)).await;
    let url = http.url();
    let a = initialize(&url).await.expect("a");
    let call = json!({ "jsonrpc": "2.0", "id": 3, "method": "test/nap", "params": {} });
    // The client closes its connection while the tool runs (before any byte of the answer).
    let gave_up = post(&url, Some(&a), call).timeout(Duration::from_millis(200)).send().await;
    assert!(gave_up.is_err(), "the client timed out: {gave_up:?}");
    // Once the request is over (dropped with the connection, or finished), `a` is idle and a
    // newcomer displaces it. An upper bound for liveness, not a timing requirement.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let b = loop {
        match initialize(&url).await {
            Ok(b) => break b,
            Err(refused) if tokio::time::Instant::now() < deadline => {
                assert_eq!(refused, (503, json!(-32603)));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(refused) => panic!("session a stays busy after its client left: {refused:?}"),
        }
    };
    assert_eq!(ping(&url, &a).await, 404);
    assert_eq!(ping(&url, &b).await, 200);
}

/// Says it started, then never answers on its own: only its cancellation ends it.
#[mcp_rpc("test/hang", group = "sessions")]
async fn hang() -> Result<Value, McpError> {
    HANG_STARTED.notify_one();
    std::future::pending().await
}

static HANG_STARTED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// A running request keeps its session busy until `notifications/cancelled` ends it: the
/// request is answered `-32603` "request cancelled" and its session is idle again.
#[tokio::test]
async fn a_cancelled_request_answers_request_cancelled_and_frees_its_session() {
    let http = serve(HttpConfig::default().max_sessions(1)).await;
    let url = http.url();
    let a = initialize(&url).await.expect("a");
    let call = json!({ "jsonrpc": "2.0", "id": 7, "method": "test/hang", "params": {} });
    let running = tokio::spawn(post(&url, Some(&a), call).timeout(Duration::from_secs(20)).send());
    tokio::time::timeout(Duration::from_secs(20), HANG_STARTED.notified()).await.expect("the handler runs");
    assert_eq!(initialize(&url).await.expect_err("a is busy"), (503, json!(-32603)));
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 7 } });
    assert_eq!(post(&url, Some(&a), cancel).send().await.expect("sent").status().as_u16(), 202);
    let answer: Value = running.await.expect("no panic").expect("answered").json().await.expect("JSON");
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert_eq!(answer["error"]["message"], "request cancelled", "{answer}");
    let b = initialize(&url).await.expect("a is idle again and makes room");
    assert_eq!(ping(&url, &a).await, 404);
    assert_eq!(ping(&url, &b).await, 200);
}
