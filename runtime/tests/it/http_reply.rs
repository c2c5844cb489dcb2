//! The shape of an HTTP reply: JSON unless the request emits a message before its result, in
//! both eras, also when the handler takes no `RequestContext` (its notifier is then dropped
//! before the result, which used to switch the reply to SSE).

use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;

/// Waits a moment without holding its context, then answers `{"napped": true}`.
#[mcp_rpc("test/nap", group = "reply")]
async fn nap() -> Result<Value, McpError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(json!({ "napped": true }))
}

async fn serve() -> HttpTestServer {
    let server = Server::builder("reply", "1").groups(["reply"]).build().expect("builds");
    HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port")
}

fn post(url: &str, body: Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
}

/// Content type and body of a reply.
async fn answer(rb: reqwest::RequestBuilder) -> (String, String) {
    let resp = rb.send().await.expect("sent");
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    (ct, resp.text().await.expect("body"))
}

#[tokio::test]
async fn a_handler_without_a_context_answers_json_on_the_stateless_wire() {
    let http = serve().await;
    let url = http.url();
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {} });
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "test/nap", "params": { "_meta": meta } });
    let rb = post(&url, body).header("mcp-protocol-version", "2026-07-28").header("mcp-method", "test/nap");
    let (ct, text) = answer(rb).await;
    assert_eq!(ct, "application/json", "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["result"]["napped"], true, "{v}");
}

#[tokio::test]
async fn a_handler_without_a_context_answers_json_in_a_legacy_session() {
    let http = serve().await;
    let url = http.url();
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } });
    let resp = post(&url, init).send().await.expect("sent");
    let session = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session").to_owned();
    let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "test/nap" });
    let rb = post(&url, body).header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    let (ct, text) = answer(rb).await;
    assert_eq!(ct, "application/json", "{text}");
    let v: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(v["result"]["napped"], true, "{v}");
}
