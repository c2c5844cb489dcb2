//! Client input (issue #6) on every path, black-box against the `fixture` server's `ask_name`:
//! input-required results and `requestState` on the 2026-07-28 wire, and real server→client
//! `elicitation/create` requests on legacy sessions, over stdio and Streamable HTTP.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn answer(name: &str) -> Value {
    json!({ "name": { "action": "accept", "content": { "name": name } } })
}

fn ask_name(extra: Value, caps: Value) -> Value {
    let mut params = json!({ "name": "ask_name", "_meta": meta(caps) });
    if let Some(extra) = extra.as_object() {
        for (k, v) in extra {
            params[k] = v.clone();
        }
    }
    params
}

/// Checks round 1 of `ask_name` and returns its `requestState`.
fn check_round_one(result: &Value) -> String {
    assert_eq!(result["resultType"], "input_required", "{result}");
    let req = &result["inputRequests"]["name"];
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["requestedSchema"]["properties"]["name"]["type"], "string");
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none(), "never cacheable: {result}");
    result["requestState"].as_str().expect("a requestState").to_owned()
}

/// stdio on a `fixture` process: one JSON line per message.
struct Stdio {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    out: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Stdio {
    fn start() -> Stdio {
        let mut child = stdio_child("fixture", &[]);
        let stdin = child.stdin.take().expect("stdin");
        let out = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Stdio { _child: child, stdin, out }
    }

    async fn send(&mut self, msg: Value) {
        self.stdin.write_all(format!("{msg}\n").as_bytes()).await.expect("write");
        self.stdin.flush().await.expect("flush");
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.out.next_line())
            .await
            .expect("a message within 10 s")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON line")
    }

    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
        let msg = self.next().await;
        assert_eq!(msg["id"], id, "{msg}");
        msg
    }
}

#[tokio::test]
async fn ask_name_takes_two_rounds_on_the_modern_wire_over_stdio() {
    let mut p = Stdio::start();
    let caps = json!({ "elicitation": {} });
    let r1 = p.call(1, "tools/call", ask_name(json!({}), caps.clone())).await;
    let state = check_round_one(&r1["result"]);
    let r2 = p
        .call(2, "tools/call", ask_name(json!({ "inputResponses": answer("Ada"), "requestState": state }), caps))
        .await;
    assert_eq!(r2["result"]["resultType"], "complete", "{r2}");
    assert_eq!(r2["result"]["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn ask_name_takes_two_rounds_on_the_modern_wire_over_http() {
    let srv = HttpServer::start("fixture");
    let c = client();
    let caps = json!({ "elicitation": {} });
    let r1 = send(modern(&c, &srv.url, json!(1), "tools/call", ask_name(json!({}), caps.clone()))).await;
    assert_eq!(r1.status, 200);
    assert!(
        r1.messages
            .iter()
            .all(|m| m.get("method").is_none_or(|m| m.as_str().is_some_and(|m| m.starts_with("notifications/")))),
        "no server→client request on a modern stream (E10): {:?}",
        r1.messages
    );
    let state = check_round_one(&r1.last()["result"]);
    // Extra keys are ignored; the answer may come without the state too.
    let mut responses = answer("Grace");
    responses["unexpected"] = json!({ "action": "cancel" });
    let retry = ask_name(json!({ "inputResponses": responses, "requestState": state }), caps);
    let r2 = send(modern(&c, &srv.url, json!(2), "tools/call", retry)).await;
    assert_eq!(r2.last()["result"]["content"][0]["text"], "Hello, Grace!", "{:?}", r2.messages);
}

#[tokio::test]
async fn missing_and_malformed_answers() {
    let mut p = Stdio::start();
    let caps = json!({ "elicitation": {} });
    let wrong_key = ask_name(json!({ "inputResponses": { "other": { "action": "accept" } } }), caps.clone());
    let r = p.call(1, "tools/call", wrong_key).await;
    check_round_one(&r["result"]);
    let malformed = ask_name(json!({ "inputResponses": { "name": 12345 } }), caps.clone());
    let r = p.call(2, "tools/call", malformed).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let not_an_object = ask_name(json!({ "inputResponses": "yes" }), caps);
    let r = p.call(3, "tools/call", not_an_object).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn tampered_and_replayed_state_is_rejected_before_the_tool_runs() {
    let srv = HttpServer::start("fixture");
    let c = client();
    let caps = json!({ "elicitation": {} });
    let r1 = send(modern(&c, &srv.url, json!(1), "tools/call", ask_name(json!({}), caps.clone()))).await;
    let state = check_round_one(&r1.last()["result"]);
    let reset = send(modern(&c, &srv.url, json!(2), "fixture/reset", json!({}))).await;
    assert!(reset.last().get("result").is_some(), "{:?}", reset.messages);

    let tampered =
        ask_name(json!({ "inputResponses": answer("Eve"), "requestState": format!("{state}-TAMPERED") }), caps.clone());
    let r = send(modern(&c, &srv.url, json!(3), "tools/call", tampered)).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.messages);

    let mut replay = json!({ "name": "echo", "arguments": { "text": "hi" }, "requestState": state,
        "inputResponses": answer("Eve"), "_meta": meta(caps.clone()) });
    let r = send(modern(&c, &srv.url, json!(4), "tools/call", replay.clone())).await;
    assert_eq!(r.error_code(), Some(-32602), "state replayed for another tool: {:?}", r.messages);
    // The same state with other arguments for the same tool is rejected too.
    replay["name"] = json!("ask_name");
    replay["arguments"] = json!({ "extra": 1 });
    let r = send(modern(&c, &srv.url, json!(5), "tools/call", replay)).await;
    assert_eq!(r.error_code(), Some(-32602), "state replayed with other arguments: {:?}", r.messages);

    let counters = send(modern(&c, &srv.url, json!(6), "fixture/counters", json!({}))).await;
    let counts = &counters.last()["result"]["counts"];
    assert!(counts.get("tool:ask_name").is_none() && counts.get("tool:echo").is_none(), "no tool ran: {counts}");
}

#[tokio::test]
async fn an_undeclared_capability_is_minus_32021() {
    let srv = HttpServer::start("fixture");
    let c = client();
    let r = send(modern(&c, &srv.url, json!(1), "tools/call", ask_name(json!({}), json!({ "sampling": {} })))).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), Some(-32021), "{:?}", r.messages);
    assert_eq!(r.last()["error"]["data"]["requiredCapabilities"], json!({ "elicitation": {} }));
}

#[tokio::test]
async fn a_legacy_stdio_session_gets_a_real_elicitation_request() {
    let mut p = Stdio::start();
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "wire-test", "version": "0" } });
    let r = p.call(0, "initialize", init).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    p.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
    p.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "ask_name" } })).await;
    let req = p.next().await;
    assert_eq!(req["method"], "elicitation/create", "{req}");
    assert_eq!(req["params"]["requestedSchema"]["properties"]["name"]["type"], "string");
    let id = req["id"].clone();
    assert!(id.is_string() || id.is_number(), "a server→client request has an id: {req}");
    p.send(json!({ "jsonrpc": "2.0", "id": id, "result": { "action": "accept", "content": { "name": "Lin" } } })).await;
    let done = p.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Lin!");
    assert!(done["result"].get("resultType").is_none(), "legacy results carry no resultType: {done}");
}

#[tokio::test]
async fn a_legacy_session_without_elicitation_gets_minus_32021() {
    let mut p = Stdio::start();
    let init = json!({ "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "wire-test", "version": "0" } });
    p.call(0, "initialize", init).await;
    let r = p.call(1, "tools/call", json!({ "name": "ask_name" })).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
}

#[tokio::test]
async fn a_legacy_http_session_gets_a_real_elicitation_request_on_the_post_stream() {
    let srv = HttpServer::start("fixture");
    let c = client();
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "wire-test", "version": "0" } } });
    let r = send(c.post(&srv.url).header("content-type", "application/json").body(init.to_string())).await;
    let session = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("session id").to_owned();
    let post = |body: Value| {
        c.post(&srv.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session.clone())
            .body(body.to_string())
    };
    let r = send(post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))).await;
    assert_eq!(r.status, 202);

    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "ask_name" } });
    let resp = post(call).send().await.expect("sent");
    assert!(resp.headers()["content-type"].to_str().unwrap_or_default().starts_with("text/event-stream"));
    let mut stream = Sse { resp, buf: String::new(), events: std::collections::VecDeque::new() };
    let req = stream.next().await;
    assert_eq!(req["method"], "elicitation/create", "{req}");
    let answer =
        json!({ "jsonrpc": "2.0", "id": req["id"], "result": { "action": "accept", "content": { "name": "Kay" } } });
    let r = send(post(answer)).await;
    assert_eq!(r.status, 202);
    let done = stream.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Kay!");
}

/// Reads an SSE response event by event while it stays open.
struct Sse {
    resp: reqwest::Response,
    buf: String,
    events: std::collections::VecDeque<Value>,
}

impl Sse {
    async fn next(&mut self) -> Value {
        loop {
            if let Some(v) = self.events.pop_front() {
                return v;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.resp.chunk())
                .await
                .expect("an event within 10 s")
                .expect("readable")
                .expect("the stream stays open");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                for data in event.lines().filter_map(|l| l.strip_prefix("data:")) {
                    if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
                        self.events.push_back(v);
                    }
                }
            }
        }
    }
}
