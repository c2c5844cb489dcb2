//! `Content-Type` and `Accept` on both eras of the `everything` example: a body that is not
//! declared `application/json` is 415 before anything runs (browsers send `text/plain` and form
//! encodings cross-site without a preflight), an `Accept` that allows neither JSON nor SSE is
//! 406, and a client that reads only JSON gets one JSON body.

use crate::common::*;
use serde_json::{Value, json};

fn tool_call(id: i64, name: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": {}, "_meta": meta(json!({})) } })
}

/// A stateless `tools/call` of `name` with the modern headers, `content_type` (none when
/// `None`) and `accept`.
fn modern_post(
    c: &reqwest::Client,
    url: &str,
    name: &str,
    content_type: Option<&str>,
    accept: &str,
) -> reqwest::RequestBuilder {
    let mut rb = c
        .post(url)
        .header("accept", accept)
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", name);
    if let Some(ct) = content_type {
        rb = rb.header("content-type", ct);
    }
    rb.body(tool_call(1, name).to_string())
}

const BOTH: &str = "application/json, text/event-stream";

fn assert_refused(r: &Reply, status: u16, says: &str) {
    assert_eq!(r.status, status, "{:?}", r.messages);
    assert_eq!(r.error_code(), Some(-32600), "{:?}", r.messages);
    assert_eq!(r.last()["id"], Value::Null);
    let message = r.last()["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{message}");
    assert!(r.headers.get("mcp-session-id").is_none(), "no session was created");
}

#[tokio::test]
async fn a_stateless_request_must_be_declared_json() {
    let srv = HttpServer::start("everything");
    let c = client();
    for ct in [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/json; charset=iso-8859-1"),
        None,
    ] {
        let r = send(modern_post(&c, &srv.url, "test_simple_text", ct, BOTH)).await;
        assert_refused(&r, 415, "Content-Type: application/json");
    }
    for ct in ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON"] {
        let r = send(modern_post(&c, &srv.url, "test_simple_text", Some(ct), BOTH)).await;
        assert_eq!(r.status, 200, "{ct}: {:?}", r.messages);
        assert!(r.last()["result"]["content"].is_array(), "{ct}: {:?}", r.messages);
    }
}

#[tokio::test]
async fn a_legacy_initialize_or_request_must_be_declared_json() {
    let srv = HttpServer::start("everything");
    let c = client();
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "wire-test", "version": "0" } } });
    let post = |ct: Option<&'static str>, body: String| {
        let mut rb = c.post(&srv.url).header("accept", BOTH);
        if let Some(ct) = ct {
            rb = rb.header("content-type", ct);
        }
        rb.body(body)
    };
    for ct in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let r = send(post(ct, init.to_string())).await;
        assert_refused(&r, 415, "Content-Type: application/json");
    }
    let r = send(post(Some("application/json"), init.to_string())).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let session = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session").to_owned();
    let in_session = |ct: &'static str, accept: &'static str| {
        c.post(&srv.url)
            .header("content-type", ct)
            .header("accept", accept)
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session.clone())
            .body(
                json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "test_simple_text", "arguments": {} } })
                .to_string(),
            )
    };
    assert_refused(&send(in_session("text/plain", BOTH)).await, 415, "Content-Type: application/json");
    assert_refused(&send(in_session("application/json", "text/html")).await, 406, "Accept");
    let r = send(in_session("application/json", BOTH)).await;
    assert_eq!(r.status, 200, "the session is still usable: {:?}", r.messages);
    // The session stream is SSE: a GET that reads only JSON is 406, one that reads SSE opens.
    let get = |accept: &'static str| {
        c.get(&srv.url)
            .header("accept", accept)
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session.clone())
    };
    let refused = get("application/json").send().await.expect("sent");
    assert_eq!(refused.status(), 406);
    let opened = get("text/event-stream").send().await.expect("sent");
    assert_eq!(opened.status(), 200);
    assert!(
        opened
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
    );
}

#[tokio::test]
async fn an_accept_that_allows_neither_json_nor_sse_is_406() {
    let srv = HttpServer::start("everything");
    let c = client();
    for accept in ["text/html", "image/png, text/plain", "application/json;q=0, text/event-stream;q=0"] {
        let r = send(modern_post(&c, &srv.url, "test_simple_text", Some("application/json"), accept)).await;
        assert_refused(&r, 406, "Accept");
    }
    for accept in ["*/*", "application/*", "text/event-stream", BOTH] {
        let r = send(modern_post(&c, &srv.url, "test_simple_text", Some("application/json"), accept)).await;
        assert_eq!(r.status, 200, "{accept}: {:?}", r.messages);
    }
}

#[tokio::test]
async fn a_client_that_reads_only_json_gets_one_json_body() {
    let srv = HttpServer::start("everything");
    let c = client();
    // With SSE allowed, progress comes first on a stream.
    let mut call = tool_call(1, "test_tool_with_progress");
    call["params"]["_meta"]["progressToken"] = json!("p");
    let post = |accept: &'static str| {
        c.post(&srv.url)
            .header("content-type", "application/json")
            .header("accept", accept)
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "test_tool_with_progress")
            .body(call.to_string())
    };
    let streamed = send(post(BOTH)).await;
    assert!(streamed.content_type.starts_with("text/event-stream"), "{}", streamed.content_type);
    assert!(streamed.messages.iter().any(|m| m["method"] == "notifications/progress"));
    let json_only = send(post("application/json")).await;
    assert_eq!(json_only.status, 200);
    assert!(json_only.content_type.starts_with("application/json"), "{}", json_only.content_type);
    assert_eq!(json_only.messages.len(), 1);
    assert!(json_only.last()["result"]["content"].is_array(), "{:?}", json_only.messages);
}
