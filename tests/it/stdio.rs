//! The stdio transport of the `everything` example as a real child process: framing, both
//! eras, cancellation, malformed input and EOF.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Lines<BufReader<ChildStdout>>,
}

impl Proc {
    fn start() -> Proc {
        let mut child = stdio_child("everything", &[]);
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Proc { child, stdin, out }
    }

    async fn send(&mut self, msg: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(msg.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.out.next_line())
            .await
            .expect("a message within 10 s")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carries only JSON lines ({e}): {line}"))
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let mut params = params;
        params["_meta"] = meta(json!({}));
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()).await;
        loop {
            let m = self.next().await;
            if m["id"] == id {
                return m;
            }
        }
    }
}

#[tokio::test]
async fn modern_requests_are_answered_one_line_each() {
    let mut p = Proc::start();
    let r = p.request(1, "tools/call", json!({ "name": "test_simple_text" })).await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["content"][0]["type"], "text");
    let r = p.request(2, "server/discover", json!({})).await;
    assert!(r["result"]["supportedVersions"].is_array());
}

#[tokio::test]
async fn malformed_lines_get_errors_and_the_process_goes_on() {
    let mut p = Proc::start();
    p.send("{oops").await;
    assert_eq!(p.next().await["error"]["code"], -32700);
    p.send(r#"{"jsonrpc":"2.0","id":"x","method":7}"#).await;
    let m = p.next().await;
    assert_eq!((m["error"]["code"].clone(), m["id"].clone()), (json!(-32600), json!("x")));
    p.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#).await;
    assert_eq!(p.next().await["error"]["code"], -32602, "a modern request without _meta");
    let r = p.request(6, "tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn progress_notifications_come_before_the_response() {
    let mut p = Proc::start();
    let mut params = json!({ "name": "test_tool_with_progress", "arguments": {} });
    let mut m = meta(json!({}));
    m["progressToken"] = json!(77);
    params["_meta"] = m;
    p.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }).to_string()).await;
    let mut seen = 0;
    loop {
        let m = p.next().await;
        if m["method"] == "notifications/progress" {
            assert_eq!(m["params"]["progressToken"], 77);
            seen += 1;
        } else {
            assert_eq!(m["id"], 1);
            break;
        }
    }
    assert!(seen >= 3);
}

#[tokio::test]
async fn cancellation_suppresses_the_response() {
    let mut p = Proc::start();
    let call = |id: i64| {
        let mut m = meta(json!({}));
        m["progressToken"] = json!(id);
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "test_tool_with_progress", "arguments": {}, "_meta": m } })
        .to_string()
    };
    p.send(&call(1)).await;
    // The first progress report proves the request is running.
    let first = p.next().await;
    assert_eq!(first["method"], "notifications/progress");
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}"#).await;
    let r = p.request(2, "tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
    // Give the cancelled call time to have finished had it not been cancelled.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = p.request(3, "server/discover", json!({})).await;
    assert!(r["result"].is_object());
    // Nothing with id 1 arrived in between: request() skips only non-matching messages, so check
    // explicitly by draining what is left with a short timeout.
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_millis(200), p.out.next_line()).await {
        let m: Value = serde_json::from_str(&line).expect("JSON");
        assert_ne!(m["id"], 1, "a cancelled request must not be answered: {m}");
    }
}

#[tokio::test]
async fn eof_lets_received_requests_answer_then_exits_zero() {
    let mut p = Proc::start();
    let mut m = meta(json!({}));
    m["progressToken"] = json!("t");
    p.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_tool_with_progress", "arguments": {}, "_meta": m } })
        .to_string(),
    )
    .await;
    drop(p.stdin.take());
    let mut answered = false;
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(5), p.out.next_line()).await {
        let m: Value = serde_json::from_str(&line).expect("JSON");
        answered |= m["id"] == 1 && m["result"]["resultType"] == "complete";
    }
    assert!(answered, "a request received before EOF is answered within the grace period");
    let status =
        tokio::time::timeout(Duration::from_secs(5), p.child.wait()).await.expect("exits promptly").expect("status");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn eof_cancels_slow_work_after_the_grace_period() {
    let mut child = stdio_child("fixture", &[]);
    let mut stdin = child.stdin.take().expect("stdin");
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "slow", "arguments": { "seconds": 60 }, "_meta": meta(json!({})) } });
    stdin.write_all(format!("{call}\n").as_bytes()).await.expect("write");
    drop(stdin);
    let started = std::time::Instant::now();
    let out =
        tokio::time::timeout(Duration::from_secs(10), child.wait_with_output()).await.expect("exits").expect("output");
    assert!(out.status.success(), "{:?}", out.status);
    assert!(started.elapsed() < Duration::from_secs(8), "exits soon after the grace period");
    assert!(out.stdout.is_empty(), "a cancelled request is not answered: {}", String::from_utf8_lossy(&out.stdout));
}

#[tokio::test]
async fn bad_bytes_and_overlong_lines_do_not_end_the_session() {
    let mut p = Proc::start();
    let stdin = p.stdin.as_mut().expect("stdin");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}\n")
        .await
        .expect("write");
    assert_eq!(p.next().await["error"]["code"], -32700);
    let long = format!("{{\"pad\":\"{}\"}}", "x".repeat(17 * 1024 * 1024));
    p.send(&long).await;
    let m = p.next().await;
    assert_eq!(m["error"]["code"], -32700);
    assert!(m["error"]["message"].as_str().is_some_and(|s| s.contains("longer than")));
    // A malformed notification gets no answer: the next line is the answer to the next request.
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#).await;
    let r = p.request(2, "tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn meta_values_are_validated() {
    let mut p = Proc::start();
    let mut m = meta(json!({ "sampling": false }));
    p.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_missing_capability", "arguments": {}, "_meta": m.clone() } })
        .to_string(),
    )
    .await;
    assert_eq!(p.next().await["error"]["code"], -32021, "a capability must be an object to count");
    m["io.modelcontextprotocol/clientCapabilities"] = json!({});
    m["progressToken"] = json!({ "evil": [1, 2] });
    p.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": { "_meta": m } }).to_string()).await;
    assert_eq!(p.next().await["error"]["code"], -32602);
    p.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    let r = p.next().await;
    assert_eq!(r["error"]["code"], -32022);
    // E6: the versions server/discover advertises (legacy ones through `initialize`).
    assert_eq!(r["error"]["data"]["supported"][0], MODERN);
    assert!(r["error"]["message"].as_str().is_some_and(|m| m.contains("initialize")), "{r}");
    let r = p.request(4, "tools/list", json!({ "cursor": "bzEwMDAwMDA" })).await;
    assert_eq!(r["error"]["code"], -32602, "a cursor past the end is invalid");
}

#[tokio::test]
async fn a_legacy_handshake_switches_the_process_to_sessions() {
    let mut p = Proc::start();
    p.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#).await;
    let r = p.next().await;
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    assert_eq!(p.next().await, json!({ "jsonrpc": "2.0", "id": 1, "result": {} }));
    p.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    let r = p.next().await;
    assert!(r["result"]["tools"].is_array() && r["result"].get("resultType").is_none());
    // From now on the process is legacy
    // (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions):
    // the 2026-07-28 envelope is refused.
    let r = p.request(3, "tools/list", json!({})).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
}

#[tokio::test]
async fn protocol_errors_carry_the_standard_codes() {
    let mut p = Proc::start();
    assert_eq!(p.request(1, "unknown/method", json!({})).await["error"]["code"], -32601);
    assert_eq!(p.request(2, "ping", json!({})).await["error"]["code"], -32601, "ping is legacy-only");
    assert_eq!(p.request(3, "tools/call", json!({ "name": "nope" })).await["error"]["code"], -32602);
    let r = p.request(4, "tools/call", json!({ "name": "test_missing_capability" })).await;
    assert_eq!(r["error"]["code"], -32021);
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({ "sampling": {} }));
    let r = p.request(5, "resources/read", json!({ "uri": "test://missing" })).await;
    assert_eq!(
        (r["error"]["code"].clone(), r["error"]["data"]["uri"].clone()),
        (json!(-32602), json!("test://missing"))
    );
    p.send(r#"{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    let r = p.next().await;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "1999-01-01");
    let r = p.request(7, "tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
}

#[tokio::test]
async fn eof_ends_a_legacy_session_too() {
    // The session-wide notification task once held stdout open after EOF, so a process that
    // had been initialized never exited.
    let mut p = Proc::start();
    p.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#).await;
    assert!(p.next().await["result"].is_object());
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    drop(p.stdin.take());
    let status =
        tokio::time::timeout(Duration::from_secs(10), p.child.wait()).await.expect("exits after EOF").expect("status");
    assert!(status.success(), "{status:?}");
}

/// Issue #13, item 5: what may come before `initialize` answers without choosing the era.
mod before_initialize {
    use super::*;

    fn ping(id: Value) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "method": "ping" })
    }

    fn pong(id: Value) -> Option<Value> {
        Some(json!({ "jsonrpc": "2.0", "id": id, "result": {} }))
    }

    fn initialize(version: &str) -> Value {
        json!({ "jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } })
    }

    const WAIT: Duration = Duration::from_secs(10);

    /// The lines that may precede `initialize`: pings (answered `{}`), a cancellation, a
    /// response, a stray `notifications/initialized` and a malformed line.
    async fn preamble(p: &mut StdioPeer) {
        p.write(&[ping(json!(0))]).await;
        assert_eq!(p.next(WAIT).await, pong(json!(0)), "a ping as the very first line");
        p.write(&[
            json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 0 } }),
            json!({ "jsonrpc": "2.0", "id": "x", "result": {} }),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
            ping(json!("again")),
        ])
        .await;
        assert_eq!(p.next(WAIT).await, pong(json!("again")), "notifications and responses get no answer");
        p.write(&[json!({ "jsonrpc": "2.0", "id": 1, "method": 7 })]).await;
        assert_eq!(p.next(WAIT).await.expect("an error")["error"]["code"], -32600);
    }

    #[tokio::test]
    async fn a_first_line_ping_is_answered_and_any_legacy_revision_can_follow() {
        for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
            let mut p = StdioPeer::start("everything", &[]);
            preamble(&mut p).await;
            p.write(&[initialize(version)]).await;
            let r = p.next(WAIT).await.expect("the initialize result");
            assert_eq!(r["result"]["protocolVersion"], version, "{r}");
            p.write(&[json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), ping(json!(11))]).await;
            assert_eq!(p.next(WAIT).await, pong(json!(11)), "{version}");
            // Now legacy for good: the 2026-07-28 envelope is refused.
            p.write(&[
                json!({ "jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": { "_meta": meta(json!({})) } }),
            ])
            .await;
            assert_eq!(p.next(WAIT).await.expect("an error")["error"]["code"], -32600, "{version}");
        }
    }

    #[tokio::test]
    async fn a_first_line_ping_leaves_the_stateless_wire_open() {
        let mut p = StdioPeer::start("everything", &[]);
        preamble(&mut p).await;
        p.write(&[
            json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": { "_meta": meta(json!({})) } }),
        ])
        .await;
        let r = p.next(WAIT).await.expect("the listing");
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        // 2026-07-28 removed ping: with its envelope it is unknown, before initialize too.
        p.write(&[json!({ "jsonrpc": "2.0", "id": 3, "method": "ping", "params": { "_meta": meta(json!({})) } })])
            .await;
        assert_eq!(p.next(WAIT).await.expect("an error")["error"]["code"], -32601);
        // Other legacy requests still need initialize (they are stateless requests without `_meta`).
        p.write(&[json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" })]).await;
        assert_eq!(p.next(WAIT).await.expect("an error")["error"]["code"], -32602);
        // ... and the process may still begin a session.
        p.write(&[initialize("2025-11-25")]).await;
        assert_eq!(p.next(WAIT).await.expect("the initialize result")["result"]["protocolVersion"], "2025-11-25");
    }

    #[tokio::test]
    async fn a_ping_before_initialize_runs_through_the_filters() {
        let mut p = StdioPeer::start("fixture", &[]);
        p.write(&[ping(json!(0))]).await;
        let r = p.next(WAIT).await.expect("the ping's answer");
        assert_eq!(r["id"], 0, "{r}");
        assert_eq!(r["result"]["_meta"]["dev.switchyard.fixture/trace"], json!([">r1", ">r2", "<r2", "<r1"]), "{r}");
    }
}
