//! Listen limits (issue #18, item 3) against `examples/fixture` as a real process: the caps on
//! open `subscriptions/listen` subscriptions per connection and per caller, set with the shared
//! command line (`--listen-max-per-connection`, `--listen-max-per-principal`), and 10,000
//! subscriptions over HTTP/2 whose reader never reads.
//!
//! No assertion depends on timing: slots are freed asynchronously (the server learns of a
//! closed stream or a cancellation, then drops the subscription), so the checks that one was
//! freed retry within a bounded wait. Memory figures are printed
//! (`cargo test -p switchyard-tests --test it listen_limits:: -- --nocapture`).

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

const SID: &str = "io.modelcontextprotocol/subscriptionId";
const ACK: &str = "notifications/subscriptions/acknowledged";

fn listen_params() -> Value {
    json!({ "notifications": { "toolsListChanged": true } })
}

fn data_frames(text: &str) -> Vec<Value> {
    text.lines().filter_map(|l| l.strip_prefix("data:")).filter_map(|d| serde_json::from_str(d.trim()).ok()).collect()
}

/// Sends listen `id` on `c`: the open stream, read up to its acknowledgement and no further,
/// or the JSON-RPC error message it was refused with.
async fn try_listen(c: &reqwest::Client, url: &str, id: Value) -> Result<reqwest::Response, Value> {
    let mut resp = modern(c, url, id.clone(), "subscriptions/listen", listen_params()).send().await.expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let sse = resp.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return Err(resp.json().await.expect("a JSON body"));
    }
    let mut buf = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(60), resp.chunk())
            .await
            .unwrap_or_else(|_| panic!("no acknowledgement for {id} within 60 s"))
            .expect("a readable stream")
            .unwrap_or_else(|| panic!("listen {id} ended before its acknowledgement: {buf}"));
        buf.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(first) = data_frames(&buf).first() {
            assert_eq!(first["method"], ACK, "{first}");
            assert_eq!(first["params"]["_meta"][SID], id, "{first}");
            return Ok(resp);
        }
    }
}

async fn listen(c: &reqwest::Client, url: &str, id: Value) -> reqwest::Response {
    let label = id.to_string();
    try_listen(c, url, id).await.unwrap_or_else(|e| panic!("listen {label} refused: {e}"))
}

/// Asserts that `message` is the refusal of a listen over the `scope` limit of `limit`.
fn assert_refused(message: &Value, scope: &str, limit: u64) {
    let error = &message["error"];
    assert_eq!(error["code"], -32603, "{message}");
    assert_eq!(error["data"], json!({ "reason": "listenLimit", "limit": limit, "scope": scope }), "{message}");
    let text = error["message"].as_str().unwrap_or_default();
    assert!(text.contains(&limit.to_string()) && text.contains("close one"), "says the limit and what to do: {text}");
}

/// Listens with `id` until it is accepted, within 30 s: a slot freed by a closed stream or a
/// cancellation comes back once the server has dropped that subscription. Any refusal meanwhile
/// must be a limit's.
async fn listen_once_freed(c: &reqwest::Client, url: &str, id: Value) -> reqwest::Response {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match try_listen(c, url, id.clone()).await {
            Ok(resp) => return resp,
            Err(e) => {
                assert_eq!(e["error"]["data"]["reason"], "listenLimit", "{e}");
                assert!(tokio::time::Instant::now() < deadline, "no slot was freed within 30 s: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn echo(c: &reqwest::Client, url: &str, id: Value, text: &str) {
    let params = json!({ "name": "echo", "arguments": { "text": text } });
    let r = send(modern(c, url, id.clone(), "tools/call", params)).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    assert_eq!(r.last()["id"], id, "{:?}", r.messages);
    assert_eq!(r.last()["result"]["content"][0]["text"], text, "{:?}", r.messages);
}

#[tokio::test]
async fn over_http2_a_connection_and_a_caller_get_their_limits_and_closing_a_stream_frees_a_slot() {
    let s = HttpServer::start_with("fixture", &["--listen-max-per-connection", "3", "--listen-max-per-principal", "5"]);
    let url = &s.url;
    // One HTTP/2 connection each: all streams of `a` count against one connection.
    let (a, b) = (h2_client(None), h2_client(None));
    let mut on_a = Vec::new();
    for i in 0..3 {
        on_a.push(listen(&a, url, json!(format!("a{i}"))).await);
    }
    let refused = try_listen(&a, url, json!("a3")).await.expect_err("a fourth on the connection is refused");
    assert_refused(&refused, "connection", 3);
    assert_eq!(refused["id"], "a3");
    // The connection stays usable, and its open streams keep theirs.
    echo(&a, url, json!("call-on-a"), "still serving this connection").await;

    // Another connection from the same (anonymous) address is the same caller: 3 + 2 = 5.
    let on_b = vec![listen(&b, url, json!("b0")).await, listen(&b, url, json!("b1")).await];
    let refused = try_listen(&b, url, json!("b2")).await.expect_err("the caller is at its limit");
    assert_refused(&refused, "principal", 5);

    // Closing one stream of `a` (an HTTP/2 RST_STREAM) gives its slot back, on the connection
    // and for the caller.
    drop(on_a.remove(0));
    on_a.push(listen_once_freed(&a, url, json!("a4")).await);
    assert_refused(&try_listen(&b, url, json!("b3")).await.expect_err("full again"), "principal", 5);
    // Closing a whole connection gives back every slot of it.
    drop(on_b);
    drop(b);
    let c = h2_client(None);
    let mut on_c = vec![listen_once_freed(&c, url, json!("c0")).await];
    on_c.push(listen_once_freed(&c, url, json!("c1")).await);
    echo(&c, url, json!("call-on-c"), "answering").await;
    drop((on_a, on_c));
}

/// One listen line on stdio for tools list changes.
fn stdio_listen(id: &str) -> Value {
    let params = json!({ "notifications": { "toolsListChanged": true }, "_meta": meta(json!({})) });
    json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params })
}

/// The next message `peer` writes, within 10 s.
async fn next_message(peer: &mut StdioPeer) -> Value {
    peer.next(Duration::from_secs(10)).await.expect("a message within 10 s")
}

#[tokio::test]
async fn over_stdio_the_connection_limit_holds_and_a_cancelled_subscription_frees_its_slot() {
    let mut p = StdioPeer::start("fixture", &["--listen-max-per-connection", "2"]);
    for id in ["s1", "s2"] {
        p.write(&[stdio_listen(id)]).await;
        let ack = next_message(&mut p).await;
        assert_eq!((&ack["method"], &ack["params"]["_meta"][SID]), (&json!(ACK), &json!(id)), "{ack}");
    }
    p.write(&[stdio_listen("s3")]).await;
    let refused = next_message(&mut p).await;
    assert_eq!(refused["id"], "s3");
    assert_refused(&refused, "connection", 2);
    let call = json!({ "jsonrpc": "2.0", "id": "call", "method": "tools/call",
        "params": { "name": "echo", "arguments": { "text": "hi" }, "_meta": meta(json!({})) } });
    p.write(&[call]).await;
    let answer = next_message(&mut p).await;
    assert_eq!((&answer["id"], &answer["result"]["content"][0]["text"]), (&json!("call"), &json!("hi")), "{answer}");

    // Cancelling s1 frees its slot once the server has ended it.
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": "s1" } });
    p.write(&[cancel]).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for attempt in 0.. {
        let id = format!("s4-{attempt}");
        p.write(&[stdio_listen(&id)]).await;
        let m = next_message(&mut p).await;
        if m["method"] == ACK {
            assert_eq!(m["params"]["_meta"][SID], id);
            break;
        }
        assert_eq!(m["id"], id, "no answer for the cancelled s1: {m}");
        assert_refused(&m, "connection", 2);
        assert!(tokio::time::Instant::now() < deadline, "the cancelled subscription kept its slot for 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Subscriptions per HTTP/2 connection in the test below: the server's default
/// `max_concurrent_streams`, and the default per-connection limit.
const STREAMS_PER_CONNECTION: usize = 1_000;
/// Connections of the unread subscriptions.
const UNREAD_CONNECTIONS: usize = 10;
/// The server's resident memory must stay under this while it holds 10,000 unread
/// subscriptions and events are published to them. Measured on the debug build (2026-12-01):
/// 106 MiB with them open, 186 MiB once 500 events filled their queues, 226 MiB at most in
/// the second round; the bound leaves over twice the room.
const RSS_BOUND_KIB: u64 = 512 * 1024;
/// Most the resident memory may grow while 1,500 more events are published to subscriptions
/// already stalled by 500: the hub's ring (1,024 events, shared by every subscriber) and each
/// stalled subscription's outbound queue (64 frames) bound what is held, whatever is published
/// (measured: no growth).
const EVENT_GROWTH_KIB: u64 = 64 * 1024;

/// One HTTP/2 connection of a client that reads each of its listen responses up to the
/// acknowledgement and never again, with small receive windows, so the server's writes on its
/// streams stall as soon as the windows are spent. Dropping it closes the connection with
/// every stream unread.
///
/// Raw `h2` rather than reqwest: since h2 0.4.18 a client ends a connection on which too many
/// small DATA frames wait unread (`GOAWAY ENHANCE_YOUR_CALM`, "too_many_data_frames": half the
/// connection window of framing overhead, about 1,000 unread events or keep-alive comments
/// here), and reqwest cannot raise that budget. That is the client protecting itself; this
/// test is about a client that keeps its connection and never reads.
struct UnreadConnection {
    driver: tokio::task::JoinHandle<()>,
    _streams: Vec<h2::RecvStream>,
}

impl Drop for UnreadConnection {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Sends listen `id` on `h2` and reads its stream up to the acknowledgement.
async fn unread_listen(h2: h2::client::SendRequest<bytes::Bytes>, url: &str, id: Value) -> h2::RecvStream {
    let mut params = listen_params();
    params["_meta"] = meta(json!({}));
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params });
    let request = http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .body(())
        .expect("a request");
    let mut h2 = h2.ready().await.unwrap_or_else(|e| panic!("listen {id}: the connection ended: {e}"));
    let (response, mut send) = h2.send_request(request, false).unwrap_or_else(|e| panic!("listen {id}: {e}"));
    send.send_data(bytes::Bytes::from(body.to_string()), true).unwrap_or_else(|e| panic!("listen {id}: {e}"));
    let response = response.await.unwrap_or_else(|e| panic!("listen {id}: no response: {e}"));
    assert_eq!(response.status(), 200, "listen {id}");
    let sse = response.headers().get("content-type").is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let mut stream = response.into_body();
    let mut buf = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(60), stream.data())
            .await
            .unwrap_or_else(|_| panic!("no acknowledgement for {id} within 60 s"))
            .unwrap_or_else(|| panic!("listen {id} ended before its acknowledgement: {buf}"))
            .unwrap_or_else(|e| panic!("listen {id}: {e}"));
        let _ = stream.flow_control().release_capacity(chunk.len());
        buf.push_str(&String::from_utf8_lossy(&chunk));
        assert!(sse || !buf.contains('}'), "listen {id} refused: {buf}");
        if let Some(first) = data_frames(&buf).first() {
            assert_eq!(first["method"], ACK, "{first}");
            assert_eq!(first["params"]["_meta"][SID], id, "{first}");
            return stream;
        }
    }
}

/// Opens `STREAMS_PER_CONNECTION` acknowledged listen streams on each of `UNREAD_CONNECTIONS`
/// new connections.
async fn open_unread(port: u16, url: &str, round: usize) -> Vec<UnreadConnection> {
    let connections = (0..UNREAD_CONNECTIONS).map(|k| {
        let url = url.to_owned();
        tokio::spawn(async move {
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connects");
            let (h2, connection) = h2::client::Builder::new()
                .initial_window_size(16 * 1024)
                .initial_connection_window_size(256 * 1024)
                .data_frame_budget(usize::MAX)
                .handshake::<_, bytes::Bytes>(tcp)
                .await
                .expect("an h2c connection");
            let driver = tokio::spawn(async move {
                if let Err(e) = connection.await {
                    eprintln!("[listen_limits] unread connection {k} ended: {e}");
                }
            });
            let opens = (0..STREAMS_PER_CONNECTION).map(|i| {
                let (h2, url) = (h2.clone(), url.clone());
                async move { unread_listen(h2, &url, json!(format!("r{round}-c{k}-{i}"))).await }
            });
            let streams: Vec<_> = futures::stream::iter(opens).buffer_unordered(100).collect().await;
            UnreadConnection { driver, _streams: streams }
        })
    });
    let mut all = Vec::new();
    for t in connections {
        all.push(t.await.expect("a connection's listens failed"));
    }
    all
}

/// Publishes `n` tools-list changes through `test_trigger_tool_change` on `c`.
async fn publish(c: &reqwest::Client, url: &str, n: usize) {
    let triggers = (0..n).map(|i| {
        let (c, url) = (c.clone(), url.to_owned());
        async move {
            let params = json!({ "name": "test_trigger_tool_change", "arguments": {} });
            let r = send(modern(&c, &url, json!(i), "tools/call", params)).await;
            assert!(r.last().get("result").is_some(), "{:?}", r.messages);
        }
    });
    futures::stream::iter(triggers).for_each_concurrent(16, |f| f).await;
}

async fn open_count(c: &reqwest::Client, url: &str) -> i64 {
    let r = send(modern(c, url, json!("count"), "fixture/subscriptions", json!({}))).await;
    r.last()["result"]["count"].as_i64().unwrap_or_else(|| panic!("a count: {:?}", r.messages))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_unread_http2_subscriptions_stay_bounded_and_free_every_slot_when_dropped() {
    let total = STREAMS_PER_CONNECTION * UNREAD_CONNECTIONS;
    let limit = total.to_string();
    let s = HttpServer::start_with(
        "fixture",
        &["--listen-probes", "--listen-max-per-connection", "1000", "--listen-max-per-principal", limit.as_str()],
    );
    let url = s.url.clone();
    let other = client();
    echo(&other, &url, json!("warm"), "warm").await;
    let baseline = rss_kib(s.pid());
    for round in 0..2 {
        let held = open_unread(s.port, &url, round).await;
        assert_eq!(open_count(&other, &url).await, total as i64);
        // The caller (anonymous, 127.0.0.1) is at its limit, whatever the connection.
        let refused = try_listen(&h2_client(None), &url, json!("one-more")).await.expect_err("over the limit");
        assert_refused(&refused, "principal", total as u64);
        echo(&other, &url, json!(format!("during-{round}")), "answering beside 10,000 unread subscriptions").await;
        let opened = rss_kib(s.pid());

        publish(&other, &url, 500).await;
        let stalled = rss_kib(s.pid());
        publish(&other, &url, 1_500).await;
        echo(&other, &url, json!(format!("after-events-{round}")), "answering after 2,000 events").await;
        let published = rss_kib(s.pid());
        if let (Some(baseline), Some(opened), Some(stalled), Some(published)) = (baseline, opened, stalled, published) {
            eprintln!(
                "[listen_limits] round {round}: RSS baseline {baseline} KiB, with {total} open {opened} KiB, \
                 after 500 events {stalled} KiB, after 2,000 {published} KiB"
            );
            for (what, kib) in [("open", opened), ("after 500 events", stalled), ("after 2,000 events", published)] {
                assert!(kib < RSS_BOUND_KIB, "{what}: RSS {kib} KiB is not under {RSS_BOUND_KIB} KiB");
            }
            assert!(
                published < stalled + EVENT_GROWTH_KIB,
                "1,500 more events grew RSS from {stalled} KiB to {published} KiB"
            );
        } else {
            eprintln!("[listen_limits] /proc not available, memory not measured");
        }

        // The client goes away: every connection closes with its streams unread.
        drop(held);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let mut open = open_count(&other, &url).await;
        while open != 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{open} subscriptions still open 60 s after the client left"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
            open = open_count(&other, &url).await;
        }
        // Every slot is back: the next round opens the whole limit again, and a listen at the
        // limit's edge succeeds.
    }
    let last = listen(&h2_client(None), &url, json!("after-all")).await;
    drop(last);
    echo(&other, &url, json!("final"), "still answering").await;
}
