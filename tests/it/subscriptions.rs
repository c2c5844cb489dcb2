//! subscriptions/listen and the publisher (requirements group (c)) against `examples/fixture`,
//! over stdio and Streamable HTTP.

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const SID: &str = "io.modelcontextprotocol/subscriptionId";

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

    async fn send(&mut self, id: Value, method: &str, mut params: Value) {
        params["_meta"] = meta(json!({}));
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let line = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    }

    /// The next message within `wait`, if any.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.out.next_line()).await.ok()?.ok()??;
        Some(serde_json::from_str(&line).expect("JSON"))
    }

    /// Messages until the response with `id` (inclusive).
    async fn until_response(&mut self, id: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.next(Duration::from_secs(10)).await.expect("a message");
            let done = m["id"] == id && m.get("method").is_none();
            seen.push(m);
            if done {
                return seen;
            }
        }
    }
}

#[tokio::test]
async fn c3_a_filter_is_required_and_typed() {
    let mut s = Stdio::start();
    s.send(json!(5), "subscriptions/listen", json!({})).await;
    assert_eq!(s.next(Duration::from_secs(10)).await.expect("answer")["error"]["code"], -32602);
    s.send(json!(6), "subscriptions/listen", json!({ "notifications": { "toolsListChanged": "yes" } })).await;
    assert_eq!(s.next(Duration::from_secs(10)).await.expect("answer")["error"]["code"], -32602);
}

#[tokio::test]
async fn c4_c5_c10_c11_acks_tags_and_independent_subscriptions_on_stdio() {
    let mut s = Stdio::start();
    s.send(
        json!("s-1"),
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true, "bogus": true } }),
    )
    .await;
    let ack = s.next(Duration::from_secs(10)).await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({ "toolsListChanged": true }));
    assert_eq!(ack["params"]["_meta"][SID], "s-1");
    s.send(
        json!(42),
        "subscriptions/listen",
        json!({ "notifications": {
        "toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["file:///a"] } }),
    )
    .await;
    let ack = s.next(Duration::from_secs(10)).await.expect("ack");
    assert_eq!(ack["params"]["_meta"][SID], 42, "the id keeps its JSON type");
    assert_eq!(ack["params"]["notifications"]["resourceSubscriptions"], json!(["file:///a"]));
    // C10: one tools change reaches both, each tagged with its own id.
    s.send(json!(1), "tools/call", json!({ "name": "test_trigger_tool_change", "arguments": {} })).await;
    let seen = s.until_response(1).await;
    let mut tags: Vec<Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .map(|m| m["params"]["_meta"][SID].clone())
        .collect();
    // Delivery may trail the trigger's response; collect briefly.
    while tags.len() < 2 {
        let m = s.next(Duration::from_secs(5)).await.expect("a list_changed frame");
        if m["method"] == "notifications/tools/list_changed" {
            tags.push(m["params"]["_meta"][SID].clone());
        }
    }
    tags.sort_by_key(|v| v.to_string());
    assert_eq!(tags, [json!("s-1"), json!(42)]);
    // C8: resources/updated only for the listed URI.
    s.send(json!(2), "tools/call", json!({ "name": "touch", "arguments": { "uri": "file:///b" } })).await;
    s.send(json!(3), "tools/call", json!({ "name": "touch", "arguments": { "uri": "file:///a" } })).await;
    let mut updated = Vec::new();
    while let Some(m) = s.next(Duration::from_millis(800)).await {
        if m["method"] == "notifications/resources/updated" {
            updated.push(m["params"].clone());
        }
    }
    assert_eq!(updated, [json!({ "uri": "file:///a", "_meta": { SID: 42 } })]);
    // C11: cancelling one subscription ends only that one, without a response.
    s.notify("notifications/cancelled", json!({ "requestId": 42 })).await;
    s.send(json!(4), "tools/call", json!({ "name": "test_trigger_tool_change", "arguments": {} })).await;
    let mut after = Vec::new();
    while let Some(m) = s.next(Duration::from_millis(800)).await {
        after.push(m);
    }
    assert!(after.iter().all(|m| m["id"] != 42), "no response for a cancelled subscription: {after:?}");
    let tags: Vec<&Value> = after
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .map(|m| &m["params"]["_meta"][SID])
        .collect();
    assert_eq!(tags, [&json!("s-1")]);
}

/// Opens a listen stream over HTTP and returns the frames that arrive within `wait` after
/// `during` ran (on separate requests).
async fn http_listen(url: &str, filter: Value, during: impl AsyncFnOnce(), wait: Duration) -> Vec<Value> {
    let c = client();
    let resp = modern(&c, url, json!(7), "subscriptions/listen", json!({ "notifications": filter }))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers()["content-type"].to_str().is_ok_and(|t| t.starts_with("text/event-stream")));
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut frames = Vec::new();
    // The ack comes first.
    while frames.is_empty() {
        let chunk = tokio::time::timeout(Duration::from_secs(10), body.next())
            .await
            .expect("the ack")
            .expect("a chunk")
            .expect("bytes");
        buf.push_str(&String::from_utf8_lossy(&chunk));
        take_frames(&mut buf, &mut frames);
    }
    during().await;
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, body.next()).await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        take_frames(&mut buf, &mut frames);
    }
    frames
}

fn take_frames(buf: &mut String, frames: &mut Vec<Value>) {
    while let Some(end) = buf.find("\n\n") {
        let event: String = buf.drain(..end + 2).collect();
        for line in event.lines() {
            if let Some(d) = line.strip_prefix("data:")
                && let Ok(v) = serde_json::from_str(d.trim())
            {
                frames.push(v);
            }
        }
    }
}

#[tokio::test]
async fn c4_c7_http_streams_get_the_ack_first_and_only_what_they_asked_for() {
    let s = HttpServer::start("fixture");
    let trigger = async |tool: &str| {
        send(modern(&client(), &s.url, json!(99), "tools/call", json!({ "name": tool, "arguments": {} }))).await;
    };
    let frames = http_listen(
        &s.url,
        json!({ "toolsListChanged": true }),
        async || trigger("test_trigger_tool_change").await,
        Duration::from_millis(800),
    )
    .await;
    assert_eq!(frames[0]["method"], "notifications/subscriptions/acknowledged");
    assert!(frames.iter().all(|f| f["params"]["_meta"][SID] == 7), "{frames:?}");
    assert!(frames.iter().any(|f| f["method"] == "notifications/tools/list_changed"), "{frames:?}");
    let frames = http_listen(
        &s.url,
        json!({ "promptsListChanged": true }),
        async || trigger("test_trigger_tool_change").await,
        Duration::from_millis(1500),
    )
    .await;
    assert!(frames.iter().all(|f| f["method"] != "notifications/tools/list_changed"), "{frames:?}");
}

#[tokio::test]
async fn c2_discover_advertises_what_listen_delivers() {
    let s = HttpServer::start("fixture");
    let r = send(modern(&client(), &s.url, json!(1), "server/discover", json!({}))).await;
    let caps = &r.last()["result"]["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["prompts"]["listChanged"], true);
    assert_eq!(caps["resources"]["listChanged"], true);
    assert_eq!(caps["resources"]["subscribe"], true);
}

fn sigterm(pid: Option<u32>) {
    let pid = pid.expect("a running process").to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
}

#[tokio::test]
async fn c12_shutdown_ends_subscriptions_with_their_result_then_cancelled_on_stdio() {
    let mut s = Stdio::start();
    s.send(json!(9), "subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } })).await;
    assert_eq!(
        s.next(Duration::from_secs(10)).await.expect("ack")["method"],
        "notifications/subscriptions/acknowledged"
    );
    sigterm(s._child.id());
    let result = s.next(Duration::from_secs(5)).await.expect("the listen result");
    assert_eq!(result["id"], 9);
    assert_eq!(result["result"]["_meta"][SID], 9);
    assert_eq!(result["result"]["resultType"], "complete");
    let cancelled = s.next(Duration::from_secs(5)).await.expect("notifications/cancelled");
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], 9);
    let status = tokio::time::timeout(Duration::from_secs(5), s._child.wait()).await.expect("exits").expect("status");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn c12_shutdown_ends_http_listen_streams_with_their_result() {
    let s = HttpServer::start("fixture");
    let pid = s.child.id();
    let frames =
        http_listen(&s.url, json!({ "toolsListChanged": true }), async || sigterm(Some(pid)), Duration::from_secs(5))
            .await;
    let last = frames.last().expect("frames");
    assert_eq!(last["id"], 7, "{frames:?}");
    assert_eq!(last["result"]["_meta"][SID], 7);
}

#[tokio::test]
async fn c13_legacy_sessions_get_session_wide_notifications_without_ids() {
    let mut s = Stdio::start();
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///a"}}"#,
    ] {
        s.stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    }
    let init = s.next(Duration::from_secs(10)).await.expect("initialize result");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    let subscribed = s.next(Duration::from_secs(10)).await.expect("subscribe result");
    assert!(subscribed["result"].is_object() && subscribed.get("error").is_none(), "{subscribed}");
    for (id, tool, args) in [
        (2, "touch", json!({ "uri": "file:///b" })),
        (3, "touch", json!({ "uri": "file:///a" })),
        (4, "test_trigger_tool_change", json!({})),
    ] {
        let call = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": args } });
        s.stdin.write_all(format!("{call}\n").as_bytes()).await.expect("write");
    }
    // Until the three answers and both notifications are in (a loaded machine may take
    // seconds), then a short quiet spell for anything that should not come.
    let mut notes = Vec::new();
    let mut answered = 0;
    let complete = |notes: &[Value], answered: usize| {
        answered == 3
            && notes.iter().any(|n| n["method"] == "notifications/resources/updated")
            && notes.iter().any(|n| n["method"] == "notifications/tools/list_changed")
    };
    while !complete(&notes, answered) {
        let Some(m) = s.next(Duration::from_secs(10)).await else { break };
        if m.get("method").is_some() {
            notes.push(m);
        } else {
            answered += 1;
        }
    }
    while let Some(m) = s.next(Duration::from_millis(300)).await {
        if m.get("method").is_some() {
            notes.push(m);
        }
    }
    let updated: Vec<&Value> = notes.iter().filter(|n| n["method"] == "notifications/resources/updated").collect();
    assert_eq!(updated.len(), 1, "{notes:?}");
    assert_eq!(updated[0]["params"], json!({ "uri": "file:///a" }), "no subscription id on legacy");
    assert!(
        notes.iter().any(|n| n["method"] == "notifications/tools/list_changed" && n["params"].get("_meta").is_none())
    );
}

/// A modern `tools/call` whose `_meta` also carries `extra` (e.g. `logLevel`, `progressToken`).
fn call_with_meta(url: &str, id: i64, tool: &str, extra: Value) -> reqwest::RequestBuilder {
    let mut m = meta(json!({}));
    for (k, v) in extra.as_object().into_iter().flatten() {
        m[k] = v.clone();
    }
    modern(&client(), url, json!(id), "tools/call", json!({ "name": tool, "arguments": {}, "_meta": m }))
}

fn methods(frames: &[Value]) -> Vec<&str> {
    frames.iter().filter_map(|f| f["method"].as_str()).collect()
}

#[tokio::test]
async fn c9_progress_and_log_messages_stay_on_the_request_stream() {
    let s = HttpServer::start("everything");
    let logs = std::sync::Mutex::new(Vec::new());
    let listen_frames = http_listen(
        &s.url,
        json!({ "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true }),
        async || {
            let log = send(call_with_meta(
                &s.url,
                1,
                "test_logging_tool",
                json!({ "io.modelcontextprotocol/logLevel": "debug" }),
            ))
            .await;
            let progress =
                send(call_with_meta(&s.url, 2, "test_tool_with_progress", json!({ "progressToken": "c9" }))).await;
            logs.lock().unwrap_or_else(|e| e.into_inner()).push((log.messages, progress.messages));
        },
        Duration::from_millis(800),
    )
    .await;
    let (log, progress) = logs.lock().unwrap_or_else(|e| e.into_inner()).pop().expect("both calls ran");
    // Where they belong: on the calls' own streams, before their results.
    assert!(methods(&log).contains(&"notifications/message"), "{log:?}");
    assert!(log.last().is_some_and(|m| m["id"] == 1 && m.get("result").is_some()), "{log:?}");
    assert!(methods(&progress).contains(&"notifications/progress"), "{progress:?}");
    assert!(progress.last().is_some_and(|m| m["id"] == 2 && m.get("result").is_some()), "{progress:?}");
    // Never on the listen stream.
    let on_listen = methods(&listen_frames);
    assert_eq!(on_listen.first(), Some(&"notifications/subscriptions/acknowledged"));
    assert!(
        on_listen.iter().all(|m| *m != "notifications/message" && *m != "notifications/progress"),
        "{listen_frames:?}"
    );
}

#[tokio::test]
async fn e11_log_messages_are_sent_only_when_the_request_asks_for_them() {
    let s = HttpServer::start("everything");
    let count = |r: &Reply| r.messages.iter().filter(|m| m["method"] == "notifications/message").count();
    let none = send(call_with_meta(&s.url, 1, "test_logging_tool", json!({}))).await;
    assert!(none.last().get("result").is_some(), "{:?}", none.messages);
    assert_eq!(count(&none), 0, "{:?}", none.messages);
    let info =
        send(call_with_meta(&s.url, 2, "test_logging_tool", json!({ "io.modelcontextprotocol/logLevel": "info" })))
            .await;
    assert!(count(&info) >= 1, "{:?}", info.messages);
    // The level is a threshold: nothing below `info` is sent.
    assert!(
        info.messages
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .all(|m| m["params"]["level"] != "debug"),
        "{:?}",
        info.messages
    );
}

/// The list-change methods among `frames`, with their subscription ids, in arrival order.
fn changes(frames: &[Value]) -> Vec<(String, Value)> {
    frames
        .iter()
        .filter(|f| f["method"].as_str().is_some_and(|m| m.ends_with("/list_changed")))
        .map(|f| (f["method"].as_str().unwrap_or_default().to_owned(), f["params"]["_meta"][SID].clone()))
        .collect()
}

const ALTERNATION: [&str; 6] = [
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_trigger_prompt_change",
    "test_trigger_tool_change",
];

fn expected_order() -> Vec<String> {
    ALTERNATION
        .iter()
        .map(
            |t| {
                if t.contains("tool") {
                    "notifications/tools/list_changed"
                } else {
                    "notifications/prompts/list_changed"
                }
            },
        )
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn c21_one_subscription_sees_its_ack_first_then_events_in_publication_order_on_stdio() {
    let mut s = Stdio::start();
    s.send(
        json!("o"),
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true, "promptsListChanged": true } }),
    )
    .await;
    let mut frames = vec![s.next(Duration::from_secs(10)).await.expect("ack")];
    // Each trigger publishes before it answers, so the publication order is the call order.
    for (i, tool) in ALTERNATION.iter().enumerate() {
        let id = 100 + i as i64;
        s.send(json!(id), "tools/call", json!({ "name": tool, "arguments": {} })).await;
        frames.extend(s.until_response(id).await);
    }
    while changes(&frames).len() < ALTERNATION.len() {
        frames.push(s.next(Duration::from_secs(5)).await.expect("a list_changed frame"));
    }
    assert_eq!(frames[0]["method"], "notifications/subscriptions/acknowledged");
    let got = changes(&frames);
    assert!(got.iter().all(|(_, sid)| *sid == "o"), "{got:?}");
    assert_eq!(got.into_iter().map(|(m, _)| m).collect::<Vec<_>>(), expected_order());
}

#[tokio::test]
async fn c21_one_subscription_sees_events_in_publication_order_over_http() {
    let s = HttpServer::start("fixture");
    let frames = http_listen(
        &s.url,
        json!({ "toolsListChanged": true, "promptsListChanged": true }),
        async || {
            for (i, tool) in ALTERNATION.iter().enumerate() {
                let call = modern(&client(), &s.url, json!(i), "tools/call", json!({ "name": tool, "arguments": {} }));
                assert!(send(call).await.last().get("result").is_some());
            }
        },
        Duration::from_millis(1500),
    )
    .await;
    assert_eq!(frames[0]["method"], "notifications/subscriptions/acknowledged");
    let got: Vec<String> = changes(&frames).into_iter().map(|(m, _)| m).collect();
    assert_eq!(got, expected_order(), "{frames:?}");
}
