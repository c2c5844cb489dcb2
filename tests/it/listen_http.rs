//! C19 (keep-alive comments on idle listen streams) and C20 (one broken subscription does not
//! stop the others) against `examples/fixture` over Streamable HTTP.

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

const SID: &str = "io.modelcontextprotocol/subscriptionId";

/// An open listen stream and what has been read from it.
struct Listen {
    body: futures::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

impl Listen {
    /// Opens listen `id` for tools changes on its own client (its own connection) and reads
    /// up to the ack.
    async fn open(url: &str, id: i64) -> Listen {
        Self::open_on(&client(), url, id).await
    }

    /// Opens listen `id` for tools changes on `c` (with an HTTP/2 client, a stream of its
    /// one connection) and reads up to the ack.
    async fn open_on(c: &reqwest::Client, url: &str, id: i64) -> Listen {
        let resp =
            modern(c, url, json!(id), "subscriptions/listen", json!({ "notifications": { "toolsListChanged": true } }))
                .send()
                .await
                .expect("sent");
        assert_eq!(resp.status().as_u16(), 200);
        let body = resp.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed();
        let mut l = Listen { body, buf: String::new() };
        let ack = l.frames_until(|f| !f.is_empty(), Duration::from_secs(10)).await;
        assert_eq!(ack[0]["method"], "notifications/subscriptions/acknowledged", "{ack:?}");
        assert_eq!(ack[0]["params"]["_meta"][SID], id);
        l.buf.clear();
        l
    }

    /// Reads until `done(frames so far)` or `wait` passes; returns the data frames read.
    async fn frames_until(&mut self, done: impl Fn(&[Value]) -> bool, wait: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut frames = Vec::new();
        while !done(&frames) {
            let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, self.body.next()).await else { break };
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
            frames = data_frames(&self.buf);
        }
        frames
    }
}

fn data_frames(text: &str) -> Vec<Value> {
    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str(d.trim()).ok()).collect()
}

#[tokio::test]
async fn c19_idle_listen_streams_get_keep_alive_comments_at_the_configured_interval() {
    let s = HttpServer::start_with("fixture", &["--keepalive-ms", "100"]);
    let mut l = Listen::open(&s.url, 1).await;
    // Idle for 450 ms after the ack: comments at 100, 200, 300 and 400 ms are due.
    let frames = l.frames_until(|_| false, Duration::from_millis(450)).await;
    assert!(frames.is_empty(), "no data frames on an idle stream: {frames:?}");
    let comments = l.buf.lines().filter(|line| line.starts_with(':')).count();
    assert!(comments >= 3, "at least 3 SSE comment lines in 450 ms: {:?}", l.buf);
    assert!(l.buf.lines().all(|line| line.is_empty() || line.starts_with(':')), "only comments: {:?}", l.buf);
}

#[tokio::test]
async fn c19_the_fixture_refuses_a_keep_alive_without_http_or_a_number() {
    for args in [&["--stdio", "--keepalive-ms", "100"][..], &["--http", "127.0.0.1:0", "--keepalive-ms", "0"]] {
        let out = std::process::Command::new(example("fixture")).args(args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

async fn open_count(url: &str) -> i64 {
    let r = send(modern(&client(), url, json!(50), "fixture/subscriptions", json!({}))).await;
    r.last()["result"]["count"].as_i64().unwrap_or_else(|| panic!("a count: {:?}", r.messages))
}

async fn trigger(url: &str) {
    let r = send(modern(
        &client(),
        url,
        json!(60),
        "tools/call",
        json!({ "name": "test_trigger_tool_change", "arguments": {} }),
    ))
    .await;
    assert!(r.last().get("result").is_some(), "{:?}", r.messages);
}

#[tokio::test]
async fn c20_a_broken_subscription_is_removed_and_the_others_still_get_their_frames() {
    let s = HttpServer::start_with("fixture", &["--listen-probes"]);
    assert_eq!(open_count(&s.url).await, 0);
    let broken = Listen::open(&s.url, 1).await;
    let mut kept = Listen::open(&s.url, 2).await;
    assert_eq!(open_count(&s.url).await, 2);
    // Break #1's transport: its connection closes with the stream unread.
    drop(broken);
    trigger(&s.url).await;
    let frames = kept.frames_until(|f| f.iter().any(|f| f["params"]["_meta"][SID] == 2), Duration::from_secs(10)).await;
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["method"], "notifications/tools/list_changed");
    assert_eq!(frames[0]["params"]["_meta"][SID], 2);
    // #1 leaves the registry (an upper bound for liveness, not a timing requirement).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut count = open_count(&s.url).await;
    while count != 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        count = open_count(&s.url).await;
    }
    assert_eq!(count, 1, "the broken subscription is gone, the other stays");
    // #2 keeps working after #1 was removed.
    trigger(&s.url).await;
    let frames = kept.frames_until(|f| f.len() >= 2, Duration::from_secs(10)).await;
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert!(frames.iter().all(|f| f["params"]["_meta"][SID] == 2), "{frames:?}");
}

#[tokio::test]
async fn the_probe_exists_only_with_its_flag() {
    let s = HttpServer::start("fixture");
    let r = send(modern(&client(), &s.url, json!(1), "fixture/subscriptions", json!({}))).await;
    assert_eq!(r.error_code(), Some(-32601), "{:?}", r.messages);
}

/// Polls the probe until it reports `want` open subscriptions (an upper bound for liveness,
/// not a timing requirement); returns the last count.
async fn wait_for_count(url: &str, want: i64) -> i64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut count = open_count(url).await;
    while count != want && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        count = open_count(url).await;
    }
    count
}

/// One event fanned out to many listen streams of one HTTP/2 connection reaches each of
/// them once, with its own subscription id.
#[tokio::test]
async fn http2_fan_out_reaches_every_listen_stream_of_one_connection() {
    let s = HttpServer::start_with("fixture", &["--listen-probes"]);
    let c = h2_client(None);
    let mut streams = futures::future::join_all((1..=40).map(|id| Listen::open_on(&c, &s.url, id))).await;
    assert_eq!(open_count(&s.url).await, 40);
    trigger(&s.url).await;
    for (id, l) in (1..=40).zip(streams.iter_mut()) {
        let frames = l.frames_until(|f| !f.is_empty(), Duration::from_secs(10)).await;
        assert_eq!(frames.len(), 1, "listen {id}: {frames:?}");
        assert_eq!(frames[0]["method"], "notifications/tools/list_changed", "listen {id}");
        assert_eq!(frames[0]["params"]["_meta"][SID], id, "listen {id} got another stream's frame");
    }
}

/// A listen stream whose client stops reading fills its HTTP/2 flow-control window (1 KiB
/// here); the other streams of the same connection, and new requests on it, go on, and
/// once the client reads again the stalled stream delivers every frame, in order.
#[tokio::test]
async fn an_unread_http2_listen_stream_does_not_hold_up_its_connection() {
    let s = HttpServer::start_with("fixture", &["--listen-probes"]);
    let c = h2_client(Some(1024));
    let mut stalled = Listen::open_on(&c, &s.url, 1).await;
    let mut kept = Listen::open_on(&c, &s.url, 2).await;
    // Each frame is well over 100 bytes: 20 of them overflow the stalled stream's window.
    for _ in 0..20 {
        trigger(&s.url).await;
    }
    let frames = kept.frames_until(|f| f.len() >= 20, Duration::from_secs(10)).await;
    assert_eq!(frames.len(), 20, "the reading stream gets every frame: {frames:?}");
    let r = send(modern(&c, &s.url, json!("same-connection"), "tools/list", json!({}))).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    assert!(r.last()["result"]["tools"].is_array(), "{:?}", r.messages);
    let frames = stalled.frames_until(|f| f.len() >= 20, Duration::from_secs(10)).await;
    assert_eq!(frames.len(), 20, "the stalled stream loses nothing: {frames:?}");
    assert!(frames.iter().all(|f| f["params"]["_meta"][SID] == 1), "{frames:?}");
}

/// Dropping an HTTP/2 connection with open listen streams and an SSE reply in flight ends
/// its subscriptions, and the server goes on serving new connections.
#[tokio::test]
async fn an_abruptly_closed_http2_connection_frees_its_subscriptions() {
    let s = HttpServer::start_with("fixture", &["--listen-probes"]);
    {
        let c = h2_client(None);
        let streams = futures::future::join_all((1..=5).map(|id| Listen::open_on(&c, &s.url, id))).await;
        assert_eq!(open_count(&s.url).await, 5);
        trigger(&s.url).await;
        // Gone mid-stream: the client, its connection and every unread body.
        drop(streams);
        drop(c);
    }
    assert_eq!(wait_for_count(&s.url, 0).await, 0, "the dropped connection's subscriptions end");
    let c = h2_client(None);
    let mut l = Listen::open_on(&c, &s.url, 9).await;
    trigger(&s.url).await;
    let frames = l.frames_until(|f| !f.is_empty(), Duration::from_secs(10)).await;
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["params"]["_meta"][SID], 9);
}

/// Shutting the server down (SIGTERM) while listen streams are open on an HTTP/2 connection
/// ends each with its own result, then the server exits cleanly.
#[tokio::test]
async fn shutdown_ends_http2_listen_streams_with_their_results_and_exits() {
    let mut s = HttpServer::start("fixture");
    let c = h2_client(None);
    let mut streams = futures::future::join_all((1..=3).map(|id| Listen::open_on(&c, &s.url, id))).await;
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
    for (id, l) in (1..=3).zip(streams.iter_mut()) {
        let frames = l.frames_until(|f| f.iter().any(|f| f.get("result").is_some()), Duration::from_secs(10)).await;
        let last = frames.last().unwrap_or_else(|| panic!("listen {id}: no result"));
        assert_eq!(last["id"], id, "{frames:?}");
        assert_eq!(last["result"]["_meta"][SID], id, "{frames:?}");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = s.child.try_wait().expect("the server's status") {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "the server exits after its HTTP/2 streams ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status:?}");
}
