//! The legacy (2025-11-25) session wire over Streamable HTTP, beside the modern one on the same
//! endpoint of the `everything` example.

use crate::common::*;
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
    let message = r.last()["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("2026-07-28 method") && message.contains("2025-11-25"), "{message}");
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
        c.post(&srv.url)
            .header("content-type", "application/json")
            .header("mcp-session-id", "not-a-session")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
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
            .header("content-type", "application/json")
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
    // The default drain keeps serving 5 s (`--drain-grace`) before it stops.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(status) = srv.child.try_wait().expect("wait") {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the server did not exit on SIGTERM");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The JSON-RPC error body (`id` null) of a refused GET or DELETE on the legacy wire.
fn refusal(message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": message } })
}

/// Asserts a JSON error reply of `status` with `body` and no `Allow`.
fn assert_refused(r: &Bare, status: u16, body: &Value, what: &str) {
    assert_eq!(
        (r.status, r.allow.as_deref(), r.content_type.as_deref()),
        (status, None, Some("application/json")),
        "{what}"
    );
    assert_eq!(&r.json(), body, "{what}");
}

#[tokio::test]
async fn get_and_delete_without_a_session_id_are_400() {
    let srv = HttpServer::start("everything");
    let c = client();
    let body = refusal("missing Mcp-Session-Id: send initialize first");
    for method in ["GET", "DELETE"] {
        for headers in [
            &[][..],
            &[("accept", "text/event-stream")],
            &[("mcp-protocol-version", "2025-11-25")],
            &[("mcp-protocol-version", "2025-06-18")],
            &[("mcp-protocol-version", "2025-03-26")],
        ] {
            assert_refused(&bare(&c, method, &srv.url, headers).await, 400, &body, &format!("{method} {headers:?}"));
        }
    }
}

#[tokio::test]
async fn get_and_delete_of_an_unknown_session_are_404() {
    let srv = HttpServer::start("everything");
    let c = client();
    let body = refusal("unknown or expired Mcp-Session-Id; initialize again, without an Mcp-Session-Id header");
    for method in ["GET", "DELETE"] {
        for headers in [
            &[("mcp-session-id", "anything")][..],
            &[("mcp-session-id", "anything"), ("mcp-protocol-version", "2025-11-25")],
        ] {
            assert_refused(&bare(&c, method, &srv.url, headers).await, 404, &body, &format!("{method} {headers:?}"));
        }
    }
}

#[tokio::test]
async fn get_and_delete_naming_another_version_than_the_sessions_are_400() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    let body = refusal(r#"MCP-Protocol-Version "2025-06-18" is not this session's version "2025-11-25""#);
    for method in ["GET", "DELETE"] {
        let r = bare(&c, method, &srv.url, &[("mcp-session-id", &s.id), ("mcp-protocol-version", "2025-06-18")]).await;
        assert_refused(&r, 400, &body, method);
    }
    assert_eq!(s.request(1, "ping", json!({})).await.last()["result"], json!({}), "the session lives");
    let r = bare(&c, "DELETE", &srv.url, &[("mcp-session-id", &s.id), ("mcp-protocol-version", "2025-11-25")]).await;
    assert_eq!((r.status, r.content_type.as_deref(), r.body.as_str()), (200, None, ""), "ended, no body");
    let r = bare(&c, "DELETE", &srv.url, &[("mcp-session-id", &s.id), ("mcp-protocol-version", "2025-11-25")]).await;
    assert_refused(
        &r,
        404,
        &refusal("unknown or expired Mcp-Session-Id; initialize again, without an Mcp-Session-Id header"),
        "deleted",
    );
}

/// 2025-11-25 transports: an unsupported `MCP-Protocol-Version` MUST be a 400. A 405 would tell
/// the client that DELETE is not allowed, and its session would linger.
#[tokio::test]
async fn get_and_delete_naming_an_unknown_version_are_400() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    for version in ["banana", ""] {
        let body = refusal(&format!(
            "unsupported MCP-Protocol-Version {version:?}: use a version this server supports \
             (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26)"
        ));
        for method in ["GET", "DELETE"] {
            let r = bare(&c, method, &srv.url, &[("mcp-session-id", &s.id), ("mcp-protocol-version", version)]).await;
            assert_refused(&r, 400, &body, method);
        }
    }
    assert_eq!(s.request(1, "ping", json!({})).await.last()["result"], json!({}), "the session lives");
}

#[tokio::test]
async fn other_methods_in_a_session_are_405_allow_get_post_delete() {
    let srv = HttpServer::start("everything");
    let c = client();
    let s = open(&c, &srv.url).await;
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let r = bare(&c, method, &srv.url, &[("mcp-session-id", &s.id), ("mcp-protocol-version", "2025-11-25")]).await;
        assert_eq!((r.status, r.allow.as_deref(), r.body.as_str()), (405, Some("GET, POST, DELETE"), ""), "{method}");
    }
    assert_eq!(s.request(1, "ping", json!({})).await.last()["result"], json!({}), "the session lives");
}

#[tokio::test]
async fn without_streaming_the_session_stream_is_405_allow_post_delete() {
    use switchyard::transport::http::HttpConfig;
    let server = switchyard::Server::builder("allow-test", "1").build().expect("builds");
    let config = HttpConfig::default().streaming(false);
    let http = switchyard::testing::HttpTestServer::start(server, config).await.expect("a loopback port");
    let url = http.url();
    let c = client();
    let s = open_on(&c, &url).await;
    let in_session = [("mcp-session-id", s.as_str()), ("mcp-protocol-version", "2025-11-25")];
    for method in ["GET", "PUT"] {
        let r = bare(&c, method, &url, &in_session).await;
        assert_eq!((r.status, r.allow.as_deref(), r.body.as_str()), (405, Some("POST, DELETE"), ""), "{method}");
    }
    let r = bare(&c, "GET", &url, &[("mcp-session-id", &s), ("mcp-protocol-version", MODERN)]).await;
    assert_eq!((r.status, r.allow.as_deref(), r.body.as_str()), (405, Some("POST"), ""), "the modern wire");
    let r = bare(&c, "DELETE", &url, &in_session).await;
    assert_eq!((r.status, r.body.as_str()), (200, ""), "DELETE still ends the session");
}

/// `initialize` on any server (the `everything` checks of [`open`] left out); the session id.
async fn open_on(c: &reqwest::Client, url: &str) -> String {
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "wire-test", "version": "0" } } });
    let r = send(c.post(url).header("content-type", "application/json").body(init.to_string())).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("session id").to_owned()
}
