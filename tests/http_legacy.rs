//! The legacy (2025-11-25) session wire over Streamable HTTP, beside the modern one on the same
//! endpoint of the `everything` example.

mod common;

use common::*;
use serde_json::{Value, json};

struct Session<'a> {
    c: &'a reqwest::Client,
    url: &'a str,
    id: String,
}

impl Session<'_> {
    fn post(&self, body: Value) -> reqwest::RequestBuilder {
        self.c
            .post(self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", self.id.clone())
            .body(body.to_string())
    }

    async fn request(&self, id: i64, method: &str, params: Value) -> Reply {
        send(self.post(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))).await
    }
}

async fn open<'a>(c: &'a reqwest::Client, url: &'a str) -> Session<'a> {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": { "sampling": {}, "elicitation": {} },
        "clientInfo": { "name": "wire-test", "version": "0" } } });
    let r = send(c.post(url).header("content-type", "application/json").body(init.to_string())).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let result = &r.last()["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "switchyard-everything");
    assert!(result.get("resultType").is_none());
    let id = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("session id").to_owned();
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let s = Session { c, url, id };
    let r = send(s.post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))).await;
    assert_eq!(r.status, 202);
    s
}

#[tokio::test]
async fn a_session_serves_the_legacy_methods() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    let r = s.request(1, "ping", json!({})).await;
    assert_eq!(r.last()["result"], json!({}));
    let r = s.request(2, "logging/setLevel", json!({ "level": "debug" })).await;
    assert_eq!(r.last()["result"], json!({}));
    let r = s.request(3, "resources/subscribe", json!({ "uri": "test://watched-resource" })).await;
    assert_eq!(r.last()["result"], json!({}));
    let r = s.request(4, "tools/list", json!({})).await;
    let result = &r.last()["result"];
    assert!(result["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(result.get("ttlMs").is_none() && result.get("resultType").is_none());
    let r = s.request(5, "tools/call", json!({ "name": "test_tool_with_logging", "arguments": {} })).await;
    let logs = r.messages.iter().filter(|m| m["method"] == "notifications/message").count();
    assert!(logs >= 3, "{:?}", r.messages);
    let r = s.request(6, "server/discover", json!({})).await;
    assert_eq!(r.error_code(), Some(-32601));
}

#[tokio::test]
async fn modern_requests_are_served_beside_a_legacy_session() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    let r = send(modern(&c, &srv.url, json!(1), "tools/list", json!({}))).await;
    assert_eq!(r.last()["result"]["resultType"], "complete");
    let r = s.request(2, "tools/list", json!({})).await;
    assert!(r.last()["result"].get("resultType").is_none());
}

#[tokio::test]
async fn delete_ends_the_session_and_later_posts_get_404() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    let r = send(c.delete(&srv.url).header("mcp-session-id", s.id.clone())).await;
    assert_eq!(r.status, 200);
    let r = s.request(1, "ping", json!({})).await;
    assert_eq!(r.status, 404);
    let r = send(
        c.post(&srv.url).header("mcp-session-id", "not-a-session").body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
    )
    .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_legacy_request_without_a_session_is_400() {
    let srv = HttpServer::start("everything");
    let r = send(
        client()
            .post(&srv.url)
            .header("mcp-protocol-version", "2025-11-25")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.last()["id"], 1);
}

#[tokio::test]
async fn get_opens_the_session_stream() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    let resp = c
        .get(&srv.url)
        .header("mcp-session-id", s.id.clone())
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("GET sent");
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers()["content-type"].to_str().is_ok_and(|t| t.starts_with("text/event-stream")));
}

#[tokio::test]
async fn a_stream_closed_mid_call_resumes_with_last_event_id() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    let resp = s
        .post(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "test_reconnection", "arguments": {} } }))
        .send()
        .await
        .expect("POST sent");
    assert!(resp.headers()["content-type"].to_str().is_ok_and(|t| t.starts_with("text/event-stream")));
    let body = resp.text().await.expect("the server ends the stream");
    let first_id = body.lines().find_map(|l| l.strip_prefix("id: ")).expect("a priming event id").to_owned();
    assert!(body.contains("retry: "), "{body}");
    assert!(!body.contains("\"result\""), "the result must not come on the closed stream: {body}");
    let resumed = c
        .get(&srv.url)
        .header("mcp-session-id", s.id.clone())
        .header("last-event-id", first_id)
        .send()
        .await
        .expect("GET sent");
    assert_eq!(resumed.status().as_u16(), 200);
    let body = resumed.text().await.expect("the resumed stream ends after the result");
    let result: Value = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .find(|m: &Value| m["id"] == 1)
        .expect("the result on the resumed stream");
    assert_eq!(result["result"]["content"][0]["text"], "Reconnection test completed");
}

#[tokio::test]
async fn sigterm_shuts_the_server_down_cleanly() {
    let mut srv = HttpServer::start("everything");
    let pid = srv.child.id().to_string();
    let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
    assert!(killed.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        if let Some(status) = srv.child.try_wait().expect("wait") {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the server did not exit on SIGTERM");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
