//! JSON-RPC batches (issue #13, item 4), over stdio and Streamable HTTP: a session that
//! negotiated 2025-03-26 receives them
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>); later revisions
//! and the 2026-07-28 wire refuse them with one `-32600`.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

/// The batch of the issue: a tool call and a listing.
fn call_and_list() -> Value {
    json!([
        { "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "echo", "arguments": { "text": "b1" } } },
        { "jsonrpc": "2.0", "id": 3, "method": "tools/list" },
    ])
}

/// Malformed entries, a batched `initialize`, a malformed notification and a ping.
fn mixed() -> Value {
    json!([
        1,
        { "jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } },
        { "jsonrpc": "2.0", "method": "notifications/cancelled", "params": 3 },
        { "jsonrpc": "1.0", "id": "v", "method": "ping" },
        { "jsonrpc": "2.0", "id": 5, "method": "ping" },
    ])
}

/// The answer to [`mixed`] on the `everything` example (no filters there touch results).
fn mixed_answer() -> Value {
    json!([
        { "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": "expected a JSON object" } },
        { "jsonrpc": "2.0", "id": 4, "error": { "code": -32600, "message": "initialize must not be part of a JSON-RPC batch" } },
        { "jsonrpc": "2.0", "id": "v", "error": { "code": -32600, "message": "\"jsonrpc\" must be \"2.0\"" } },
        { "jsonrpc": "2.0", "id": 5, "result": {} },
    ])
}

fn refused(message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32600, "message": message } })
}

fn not_in(version: &str) -> Value {
    refused(&format!("batches are not supported in protocol version {version}: send one message at a time"))
}

fn pings(n: usize) -> Value {
    Value::Array((0..n).map(|i| json!({ "jsonrpc": "2.0", "id": i, "method": "ping" })).collect())
}

/// Asserts the answer to [`call_and_list`]: one array, the call's then the listing's response.
fn assert_call_and_list(answer: &Value) {
    let entries = answer.as_array().unwrap_or_else(|| panic!("one array: {answer}"));
    assert_eq!(entries.len(), 2, "{answer}");
    assert_eq!(entries[0]["id"], 2, "{answer}");
    assert_eq!(entries[0]["result"]["content"], json!([{ "type": "text", "text": "b1" }]), "{answer}");
    assert_eq!(entries[1]["id"], 3, "{answer}");
    let tools = entries[1]["result"]["tools"].as_array().expect("a tool list");
    assert!(tools.iter().any(|t| t["name"] == "echo"), "{answer}");
    // Legacy results: nothing of the 2026-07-28 envelope.
    assert!(entries.iter().all(|e| e["result"].get("resultType").is_none()), "{answer}");
}

fn initialize(version: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "batch-test", "version": "0" } } })
}

// ---------------------------------------------------------------- stdio

/// `example --stdio` after `initialize` with `version` and `notifications/initialized`.
async fn stdio_session(example: &str, version: &str) -> StdioPeer {
    let mut p = StdioPeer::start(example, &[]);
    p.write(&[initialize(version)]).await;
    let r = p.next(WAIT).await.expect("the initialize result");
    assert_eq!(r["result"]["protocolVersion"], version, "{r}");
    p.write(&[json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })]).await;
    p
}

#[tokio::test]
async fn stdio_a_2025_03_26_session_answers_a_batch_with_one_array() {
    let mut p = stdio_session("fixture", "2025-03-26").await;
    p.write(&[call_and_list()]).await;
    assert_call_and_list(&p.next(WAIT).await.expect("the batch answer"));
    assert_eq!(p.drain(Duration::from_millis(300)).await, Vec::<Value>::new(), "one line for the batch");
}

#[tokio::test]
async fn stdio_a_batch_without_requests_gets_no_line() {
    let mut p = stdio_session("everything", "2025-03-26").await;
    p.write(&[json!([
        { "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 99 } },
        { "jsonrpc": "2.0", "id": "s1", "result": {} },
        { "jsonrpc": "2.0", "method": "notifications/roots/list_changed" },
    ])])
    .await;
    p.write(&[json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" })]).await;
    assert_eq!(p.next(WAIT).await, Some(json!({ "jsonrpc": "2.0", "id": 7, "result": {} })));
}

#[tokio::test]
async fn stdio_bad_entries_and_a_batched_initialize_get_their_own_errors() {
    let mut p = stdio_session("everything", "2025-03-26").await;
    p.write(&[mixed()]).await;
    assert_eq!(p.next(WAIT).await, Some(mixed_answer()));
    // The session is still the one negotiated first.
    p.write(&[json!({ "jsonrpc": "2.0", "id": 6, "method": "ping" })]).await;
    assert_eq!(p.next(WAIT).await, Some(json!({ "jsonrpc": "2.0", "id": 6, "result": {} })));
}

#[tokio::test]
async fn stdio_an_empty_or_oversized_batch_is_one_invalid_request() {
    let mut p = stdio_session("everything", "2025-03-26").await;
    p.write(&[json!([])]).await;
    assert_eq!(p.next(WAIT).await, Some(refused("an empty batch is not a request")));
    p.write(&[pings(65)]).await;
    assert_eq!(
        p.next(WAIT).await,
        Some(refused("a batch of 65 messages is more than the 64 this server takes at once"))
    );
    p.write(&[pings(64)]).await;
    let answer = p.next(WAIT).await.expect("the batch answer");
    let ids: Vec<Value> = answer.as_array().expect("an array").iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, (0..64).map(|i| json!(i)).collect::<Vec<_>>(), "every answer, in batch order");
}

#[tokio::test]
async fn stdio_a_cancelled_batch_entry_is_left_out_of_the_answer() {
    let mut p = stdio_session("fixture", "2025-03-26").await;
    p.write(&[json!([
        { "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": { "name": "slow", "arguments": { "seconds": 30 } } },
        { "jsonrpc": "2.0", "id": "fast", "method": "tools/call", "params": { "name": "echo", "arguments": { "text": "f" } } },
    ])])
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    p.write(&[json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "slow" } })])
        .await;
    let answer = p.next(WAIT).await.expect("the batch answer");
    let entries = answer.as_array().unwrap_or_else(|| panic!("one array: {answer}"));
    assert_eq!(entries.len(), 1, "{answer}");
    assert_eq!(entries[0]["id"], "fast", "{answer}");
}

#[tokio::test]
async fn stdio_later_revisions_and_the_modern_wire_refuse_batches() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut p = stdio_session("fixture", version).await;
        p.write(&[call_and_list()]).await;
        assert_eq!(p.next(WAIT).await, Some(not_in(version)), "{version}");
    }
    // Before (or without) initialize the process serves 2026-07-28, which has no batches.
    let mut p = StdioPeer::start("fixture", &[]);
    let mut modern = call_and_list();
    for entry in modern.as_array_mut().expect("an array") {
        entry["params"] = json!({ "_meta": meta(json!({})) });
    }
    p.write(&[modern]).await;
    assert_eq!(
        p.next(WAIT).await,
        Some(refused("batches are not supported before an initialize that negotiates protocol version 2025-03-26"))
    );
    // Nothing of the batch ran, and the process can still choose its era.
    p.write(&[initialize("2025-03-26")]).await;
    assert_eq!(p.next(WAIT).await.expect("the initialize result")["result"]["protocolVersion"], "2025-03-26");
}

// ---------------------------------------------------------------- HTTP

/// A legacy session over HTTP (as a 2025-03-26 client: no `MCP-Protocol-Version` header).
struct HttpSession {
    c: reqwest::Client,
    url: String,
    id: String,
}

impl HttpSession {
    async fn open(url: &str, version: &str) -> HttpSession {
        let c = client();
        let r = send(
            c.post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(initialize(version).to_string()),
        )
        .await;
        assert_eq!(r.status, 200, "{:?}", r.messages);
        assert_eq!(r.last()["result"]["protocolVersion"], version);
        let id = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id").to_owned();
        let s = HttpSession { c, url: url.to_owned(), id };
        let r = s.post(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), None).await;
        assert_eq!(r.status, 202);
        s
    }

    /// POSTs `body` in the session, with `MCP-Protocol-Version: version` when given.
    async fn post(&self, body: &Value, version: Option<&str>) -> Reply {
        let mut rb = self
            .c
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id);
        if let Some(v) = version {
            rb = rb.header("mcp-protocol-version", v);
        }
        send(rb.body(body.to_string())).await
    }
}

/// Asserts a JSON reply of `status` whose body is exactly `body`.
fn assert_json(r: &Reply, status: u16, body: &Value) {
    assert_eq!((r.status, r.content_type.as_str()), (status, "application/json"), "{:?}", r.messages);
    assert_eq!(r.messages, vec![body.clone()]);
}

#[tokio::test]
async fn http_a_2025_03_26_session_answers_a_batch_with_one_json_array() {
    let srv = HttpServer::start("fixture");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    let r = s.post(&call_and_list(), None).await;
    assert_eq!((r.status, r.content_type.as_str()), (200, "application/json"), "{:?}", r.messages);
    assert_eq!(r.messages.len(), 1, "one body");
    assert_call_and_list(&r.messages[0]);
    // The same with the version header, which 2025-03-26 clients need not send.
    let r = s.post(&call_and_list(), Some("2025-03-26")).await;
    assert_call_and_list(r.last());
}

#[tokio::test]
async fn http_a_batch_without_requests_is_202_with_no_body() {
    let srv = HttpServer::start("everything");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    let r = s
        .post(
            &json!([
                { "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 99 } },
                { "jsonrpc": "2.0", "id": "s1", "result": {} },
            ]),
            None,
        )
        .await;
    assert_eq!((r.status, r.messages.len()), (202, 0), "{:?}", r.messages);
}

#[tokio::test]
async fn http_bad_entries_and_a_batched_initialize_get_their_own_errors() {
    let srv = HttpServer::start("everything");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    assert_json(&s.post(&mixed(), None).await, 200, &mixed_answer());
}

#[tokio::test]
async fn http_an_empty_or_oversized_batch_is_400_with_one_invalid_request() {
    let srv = HttpServer::start("everything");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    assert_json(&s.post(&json!([]), None).await, 400, &refused("an empty batch is not a request"));
    assert_json(
        &s.post(&pings(65), None).await,
        400,
        &refused("a batch of 65 messages is more than the 64 this server takes at once"),
    );
    let r = s.post(&pings(64), None).await;
    let ids: Vec<Value> = r.last().as_array().expect("an array").iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, (0..64).map(|i| json!(i)).collect::<Vec<_>>(), "every answer, in batch order");
}

#[tokio::test]
async fn http_a_batch_whose_request_notifies_is_answered_on_an_sse_stream() {
    let srv = HttpServer::start("everything");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    let r = s
        .post(
            &json!([
                { "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "test_tool_with_logging", "arguments": {} } },
                { "jsonrpc": "2.0", "id": 2, "method": "ping" },
            ]),
            None,
        )
        .await;
    assert!(r.content_type.starts_with("text/event-stream"), "{} {:?}", r.content_type, r.messages);
    let logs = r.messages.iter().filter(|m| m["method"] == "notifications/message").count();
    assert!(logs >= 3, "{:?}", r.messages);
    let answered: Vec<&Value> = r.messages.iter().filter(|m| m.get("method").is_none()).collect();
    assert_eq!(answered.len(), 2, "one response per request: {:?}", r.messages);
    assert!(answered.iter().any(|m| m["id"] == 1 && m["result"]["content"].is_array()), "{:?}", r.messages);
    assert!(answered.iter().any(|m| **m == json!({ "jsonrpc": "2.0", "id": 2, "result": {} })), "{:?}", r.messages);
}

#[tokio::test]
async fn http_later_revisions_the_modern_wire_and_no_session_refuse_batches() {
    let srv = HttpServer::start("fixture");
    for version in ["2025-06-18", "2025-11-25"] {
        let s = HttpSession::open(&srv.url, version).await;
        assert_json(&s.post(&call_and_list(), Some(version)).await, 400, &not_in(version));
        assert_json(&s.post(&call_and_list(), None).await, 400, &not_in(version));
    }
    let c = client();
    let modern = send(
        c.post(&srv.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", MODERN)
            .body(call_and_list().to_string()),
    )
    .await;
    assert_json(&modern, 400, &not_in(MODERN));
    let sessionless = send(
        c.post(&srv.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(call_and_list().to_string()),
    )
    .await;
    assert_json(
        &sessionless,
        400,
        &refused("batches are not supported before an initialize that negotiates protocol version 2025-03-26"),
    );
    // A batched initialize creates no session either.
    let init = send(
        c.post(&srv.url).header("content-type", "application/json").body(json!([initialize("2025-03-26")]).to_string()),
    )
    .await;
    assert_eq!(init.status, 400, "{:?}", init.messages);
    assert!(init.headers.get("mcp-session-id").is_none());
}

/// Two requests of one batch with one id could not be told apart in the answer, nor cancelled
/// each on its own: the second gets its own `-32600`, as on stdio.
#[tokio::test]
async fn http_a_repeated_id_in_a_batch_is_an_invalid_request() {
    let srv = HttpServer::start("everything");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    let r = s
        .post(
            &json!([
                { "jsonrpc": "2.0", "id": 5, "method": "ping" },
                { "jsonrpc": "2.0", "id": 5, "method": "tools/list" },
            ]),
            None,
        )
        .await;
    assert_json(
        &r,
        200,
        &json!([
            { "jsonrpc": "2.0", "id": 5, "result": {} },
            { "jsonrpc": "2.0", "id": 5, "error": { "code": -32600, "message": "request id 5 is already in flight" } },
        ]),
    );
}

/// The SSE priming event (empty `data`) came with 2025-11-25 (SEP-1699); a 2025-03-26 client
/// parses every `data:` line as JSON, so its streams start with the first real message.
#[tokio::test]
async fn http_a_2025_03_26_stream_has_no_priming_event() {
    let srv = HttpServer::start("everything");
    let s = HttpSession::open(&srv.url, "2025-03-26").await;
    let batch = json!([
        { "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "test_tool_with_logging", "arguments": {} } },
    ]);
    let resp =
        s.c.post(&s.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &s.id)
            .body(batch.to_string())
            .send()
            .await
            .expect("sent");
    let body = resp.text().await.expect("body");
    let data: Vec<&str> = body.lines().filter_map(|l| l.strip_prefix("data:")).collect();
    assert!(!data.is_empty(), "{body}");
    for d in data {
        assert!(serde_json::from_str::<Value>(d.trim()).is_ok(), "every data line is JSON: {body}");
    }
}
