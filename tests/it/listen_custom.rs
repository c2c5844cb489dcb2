//! C22: a full-replacement listen handler (`examples/fixture --custom-listen`), over stdio and
//! Streamable HTTP. The handler acknowledges, sends one tagged `tools/list_changed` of its own
//! and nothing more: run-time tool changes must not add automatic frames to its streams, while
//! the same steps against the default fixture do (the control), and legacy requests get -32601.

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

const SID: &str = "io.modelcontextprotocol/subscriptionId";
const LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The fixture over stdio, with a request helper that adds the modern `_meta`.
struct Stdio(StdioPeer);

impl std::ops::Deref for Stdio {
    type Target = StdioPeer;
    fn deref(&self) -> &StdioPeer {
        &self.0
    }
}

impl std::ops::DerefMut for Stdio {
    fn deref_mut(&mut self) -> &mut StdioPeer {
        &mut self.0
    }
}

impl Stdio {
    fn start(args: &[&str]) -> Stdio {
        Stdio(StdioPeer::start("fixture", args))
    }

    async fn line(&mut self, msg: Value) {
        self.0.write(&[msg]).await;
    }

    async fn send(&mut self, id: Value, method: &str, mut params: Value) {
        params["_meta"] = meta(json!({}));
        self.line(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
    }
}

fn toggle(enabled: bool) -> Value {
    json!({ "name": "toggle_tool", "arguments": { "name": "echo", "enabled": enabled } })
}

fn list_changed_tags(frames: &[Value]) -> Vec<Value> {
    frames.iter().filter(|f| f["method"] == LIST_CHANGED).map(|f| f["params"]["_meta"][SID].clone()).collect()
}

/// Opens listen 1 on stdio, returns its first frames (the ack, then the custom handler's own
/// event when `custom`), toggles a tool off and on, and returns every frame seen afterwards.
async fn stdio_frames_after_toggle(s: &mut Stdio, custom: bool) -> Vec<Value> {
    s.send(json!(1), "subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } })).await;
    let ack = s.next(Duration::from_secs(10)).await.expect("the ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"][SID], 1);
    assert_eq!(ack["params"]["notifications"], json!({ "toolsListChanged": true }));
    if custom {
        let own = s.next(Duration::from_secs(10)).await.expect("the handler's own event");
        assert_eq!(own["method"], LIST_CHANGED, "{own}");
        assert_eq!(own["params"]["_meta"][SID], 1);
    }
    // One after the other, so the tool ends up enabled again.
    let mut seen = Vec::new();
    for (id, enabled) in [(2, false), (3, true)] {
        s.send(json!(id), "tools/call", toggle(enabled)).await;
        loop {
            let m = s.next(Duration::from_secs(10)).await.expect("the toggle's answer");
            let done = m["id"] == id && m.get("method").is_none();
            seen.push(m);
            if done {
                break;
            }
        }
    }
    seen.extend(s.drain(Duration::from_millis(1000)).await);
    seen
}

#[tokio::test]
async fn c22_stdio_custom_handler_owns_the_stream() {
    // Control: the built-in handler delivers the changes toggle_tool publishes.
    let mut plain = Stdio::start(&[]);
    let frames = stdio_frames_after_toggle(&mut plain, false).await;
    assert!(!list_changed_tags(&frames).is_empty(), "the built-in handler fans out: {frames:?}");

    let mut s = Stdio::start(&["--custom-listen"]);
    let frames = stdio_frames_after_toggle(&mut s, true).await;
    let answered: Vec<&Value> = frames.iter().filter(|f| f.get("method").is_none()).map(|f| &f["id"]).collect();
    assert_eq!(answered, [&json!(2), &json!(3)], "both toggles answered: {frames:?}");
    assert!(list_changed_tags(&frames).is_empty(), "no automatic list_changed on a custom stream: {frames:?}");

    // A second subscription, cancelled by the client: no answer for it, and the first one goes on.
    s.send(json!("c"), "subscriptions/listen", json!({ "notifications": { "promptsListChanged": true } })).await;
    let first = s.drain(Duration::from_millis(800)).await;
    assert_eq!(first.len(), 2, "ack and the handler's event: {first:?}");
    assert!(first.iter().all(|f| f["params"]["_meta"][SID] == "c"), "{first:?}");
    s.line(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "c" } })).await;
    let after = s.drain(Duration::from_millis(800)).await;
    assert!(after.is_empty(), "nothing for a cancelled subscription: {after:?}");

    // Graceful shutdown: the handler's result for the open subscription, then cancelled.
    let pid = s.child.id().expect("running").to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let result = s.next(Duration::from_secs(10)).await.expect("the listen result");
    assert_eq!(result["id"], 1, "{result}");
    assert_eq!(result["result"]["_meta"][SID], 1);
    assert_eq!(result["result"]["resultType"], "complete");
    let cancelled = s.next(Duration::from_secs(10)).await.expect("notifications/cancelled");
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], 1);
}

#[tokio::test]
async fn c22_stdio_legacy_listen_is_method_not_found() {
    let mut s = Stdio::start(&["--custom-listen"]);
    s.line(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }))
        .await;
    assert_eq!(s.next(Duration::from_secs(10)).await.expect("initialized")["id"], 0);
    s.line(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await;
    s.line(json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": { "notifications": { "toolsListChanged": true } } }))
        .await;
    let r = s.next(Duration::from_secs(10)).await.expect("an answer");
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

/// Reads SSE frames from `body` into `frames` until `want` are there or `wait` passes.
async fn read_frames<B: AsRef<[u8]>>(
    body: &mut (impl futures::Stream<Item = reqwest::Result<B>> + Unpin),
    buf: &mut String,
    frames: &mut Vec<Value>,
    want: usize,
    wait: Duration,
) {
    let deadline = tokio::time::Instant::now() + wait;
    while frames.len() < want {
        let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, body.next()).await else { return };
        buf.push_str(&String::from_utf8_lossy(chunk.as_ref()));
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            frames.extend(
                event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .filter_map(|d| serde_json::from_str(d.trim()).ok()),
            );
        }
    }
}

/// Opens listen 7 over HTTP, checks its first frames, toggles a tool off and on on separate
/// requests and returns the frames that follow within one second.
async fn http_frames_after_toggle(url: &str, custom: bool) -> Vec<Value> {
    let c = client();
    let resp =
        modern(&c, url, json!(7), "subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } }))
            .send()
            .await
            .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let mut body = resp.bytes_stream();
    let (mut buf, mut frames) = (String::new(), Vec::new());
    let first = if custom { 2 } else { 1 };
    read_frames(&mut body, &mut buf, &mut frames, first, Duration::from_secs(10)).await;
    assert_eq!(frames.len(), first, "{frames:?}");
    assert_eq!(frames[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(frames[0]["params"]["_meta"][SID], 7);
    if custom {
        assert_eq!(frames[1]["method"], LIST_CHANGED);
        assert_eq!(frames[1]["params"]["_meta"][SID], 7);
    }
    for enabled in [false, true] {
        let r = send(modern(&client(), url, json!(8), "tools/call", toggle(enabled))).await;
        let text = r.last()["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text.starts_with("echo "), "{:?}", r.messages);
    }
    let mut after = Vec::new();
    read_frames(&mut body, &mut buf, &mut after, usize::MAX, Duration::from_millis(1000)).await;
    after
}

#[tokio::test]
async fn c22_http_custom_handler_owns_the_stream() {
    let plain = HttpServer::start("fixture");
    let frames = http_frames_after_toggle(&plain.url, false).await;
    assert!(!list_changed_tags(&frames).is_empty(), "the built-in handler fans out: {frames:?}");

    let s = HttpServer::start_with("fixture", &["--custom-listen"]);
    let frames = http_frames_after_toggle(&s.url, true).await;
    assert!(frames.is_empty(), "no automatic list_changed on a custom stream: {frames:?}");
}

#[tokio::test]
async fn c22_http_shutdown_delivers_the_handlers_result() {
    let mut s = HttpServer::start_with("fixture", &["--custom-listen"]);
    let c = client();
    let resp = modern(&c, &s.url, json!("L"), "subscriptions/listen", json!({ "notifications": {} }))
        .send()
        .await
        .expect("sent");
    let mut body = resp.bytes_stream();
    let (mut buf, mut frames) = (String::new(), Vec::new());
    read_frames(&mut body, &mut buf, &mut frames, 2, Duration::from_secs(10)).await;
    assert_eq!(frames.len(), 2, "{frames:?}");
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    read_frames(&mut body, &mut buf, &mut frames, 3, Duration::from_secs(10)).await;
    let last = frames.last().expect("frames");
    assert_eq!(last["id"], "L", "{frames:?}");
    assert_eq!(last["result"]["_meta"][SID], "L");
    assert_eq!(last["result"]["resultType"], "complete");
    let status = s.child.wait().expect("exits");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn c22_http_legacy_listen_is_method_not_found() {
    let s = HttpServer::start_with("fixture", &["--custom-listen"]);
    let c = client();
    let post = |body: Value| c.post(&s.url).header("content-type", "application/json").body(body.to_string());
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let r = send(post(init).header("accept", "application/json, text/event-stream")).await;
    let session = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session").to_owned();
    let listen = json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": { "notifications": { "toolsListChanged": true } } });
    let r = send(
        post(listen)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session),
    )
    .await;
    assert_eq!(r.error_code(), Some(-32601), "{:?}", r.messages);
}
