//! Load and fault tests (issue #7, item 4) against `examples/fixture` as a real process on
//! loopback: 1,000 concurrent HTTP clients, clients that disconnect mid-response, a listen
//! consumer that never reads, oversized and malformed bodies, deeply nested JSON and 10,000
//! `notifications/cancelled` for unknown ids over HTTP and stdio.
//!
//! After each phase the server must still answer, every echo must return its own input, and
//! the server's resident memory must settle near its baseline. Memory bounds are generous and
//! the figures are printed (`cargo test -p switchyard-tests --test it load:: -- --nocapture`).
//! No assertion depends on timing; timeouts only bound liveness.

use crate::common::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Most a phase may leave behind in resident memory once settled, in KiB.
const SETTLED_SLACK_KIB: u64 = 64 * 1024;

/// Samples the resident memory of `pid` every 20 ms until dropped; `peak()` is the largest seen.
struct RssSampler {
    pid: u32,
    peak: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let peak = Arc::new(AtomicU64::new(rss_kib(pid).unwrap_or(0)));
        let p = peak.clone();
        let task = tokio::spawn(async move {
            loop {
                if let Some(kib) = rss_kib(pid) {
                    p.fetch_max(kib, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        RssSampler { pid, peak, task }
    }

    fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed).max(rss_kib(self.pid).unwrap_or(0))
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads the settled memory of `pid` and checks it against `baseline`; prints baseline / peak /
/// settled for the phase `label`.
async fn check_settled(label: &str, pid: u32, baseline: Option<u64>, peak: u64) {
    // Give closed connections and cancelled handlers a moment to be torn down; the bound
    // below does not depend on how long this takes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (Some(baseline), Some(settled)) = (baseline, rss_kib(pid)) else {
        eprintln!("[load] {label}: /proc not available, memory not measured");
        return;
    };
    eprintln!(
        "[load] {label}: RSS baseline {baseline} KiB, peak {peak} KiB, settled {settled} KiB (+{} KiB)",
        settled.saturating_sub(baseline)
    );
    assert!(
        settled < baseline + SETTLED_SLACK_KIB,
        "{label}: settled RSS {settled} KiB is not within {SETTLED_SLACK_KIB} KiB of the baseline {baseline} KiB"
    );
}

/// Calls `echo` with `text` and asserts the answer is exactly `text`, for this request's id.
async fn echo(c: &reqwest::Client, url: &str, id: Value, text: &str) {
    let params = json!({ "name": "echo", "arguments": { "text": text } });
    let r = send(modern(c, url, id.clone(), "tools/call", params)).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let last = r.last();
    assert_eq!(last["id"], id, "an answer for another request: {last}");
    assert_eq!(last["result"]["content"][0]["text"], text, "a wrong echo: {last}");
    assert_ne!(last["result"]["isError"], true, "{last}");
}

/// Opens a listen stream for tools list changes.
async fn open_listen(c: &reqwest::Client, url: &str, id: Value) -> reqwest::Response {
    let params = json!({ "notifications": { "toolsListChanged": true } });
    let resp = modern(c, url, id, "subscriptions/listen", params).send().await.expect("listen sent");
    assert_eq!(resp.status().as_u16(), 200);
    resp
}

/// Reads SSE frames from `resp` until one whose `method` is `method` arrives; returns every
/// frame seen. `buf` keeps a partial frame between calls.
async fn read_until(resp: &mut reqwest::Response, buf: &mut String, method: &str) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(30), resp.chunk())
            .await
            .unwrap_or_else(|_| panic!("no {method} frame within 30 s: {frames:?}"))
            .expect("readable stream")
            .unwrap_or_else(|| panic!("stream ended before {method}: {frames:?}"));
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            for data in event.lines().filter_map(|l| l.strip_prefix("data:")) {
                if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
                    frames.push(v);
                }
            }
        }
        if frames.iter().any(|f| f["method"] == method) {
            return frames;
        }
    }
}

/// Warms the server up (first connections, first calls) so the baseline is not its cold size.
async fn warm_up(c: &reqwest::Client, url: &str) {
    for i in 0..20 {
        echo(c, url, json!(format!("warm-{i}")), &format!("warm-{i}")).await;
    }
}

const ACK: &str = "notifications/subscriptions/acknowledged";

/// One round of `clients` concurrent clients (1,000 where the open-file limit allows) against
/// `url`: each calls `echo` three times, opens a listen stream, reads its acknowledgement and
/// drops it; every tenth also abandons a `slow` call before its answer; then each calls `echo`
/// once more. Every echo is checked.
async fn thousand_clients(url: &str, round: usize, clients: usize) {
    // One pool shared by all: it opens a connection per concurrent request.
    let c = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().expect("client");
    // Every client starts at once.
    let start = Arc::new(tokio::sync::Barrier::new(clients));
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let (c, url, start) = (c.clone(), url.to_owned(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                for k in 0..3 {
                    let text = format!("round {round} client {i} call {k} {}", "·".repeat(i % 17));
                    echo(&c, &url, json!(format!("{round}-{i}-{k}")), &text).await;
                }
                // A listen stream opened, acknowledged and dropped: a disconnect in the middle
                // of a response that never ends on its own.
                let id = format!("listen-{round}-{i}");
                let mut resp = open_listen(&c, &url, json!(id)).await;
                let frames = read_until(&mut resp, &mut String::new(), ACK).await;
                assert_eq!(frames[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], id);
                drop(resp);
                if i % 10 == 0 {
                    // A tool call abandoned before its answer: the client goes away mid-request.
                    let params = json!({ "name": "slow", "arguments": { "seconds": 30 } });
                    let call = send(modern(&c, &url, json!(i), "tools/call", params));
                    let abandoned = tokio::time::timeout(Duration::from_millis(50), call).await;
                    assert!(abandoned.is_err(), "slow answered before it was abandoned");
                }
                let text = format!("round {round} client {i} after listening");
                echo(&c, &url, json!(format!("{round}-{i}-after")), &text).await;
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("a client task failed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_clients_call_tools_and_open_and_drop_listen_streams() {
    let _heavy = crate::common::heavy().await;
    // A client holds up to two connections at once: its listen stream and an abandoned call.
    let clients = crate::common::socket_budget("load::a_thousand_concurrent_clients", 1000, 2);
    let s = HttpServer::start("fixture");
    let url = s.url.clone();
    let c = client();
    warm_up(&c, &url).await;
    let baseline = rss_kib(s.pid());
    let mut settled_after = Vec::new();
    for round in 0..2 {
        let sampler = RssSampler::start(s.pid());
        thousand_clients(&url, round, clients).await;
        let peak = sampler.peak();
        drop(sampler);
        warm_up(&c, &url).await;
        check_settled(&format!("{clients} concurrent clients, round {}", round + 1), s.pid(), baseline, peak).await;
        settled_after.push(rss_kib(s.pid()));
    }
    // The allocator keeps some of the first round's high-water mark; a second identical round
    // must not add to it much more (a per-connection or per-subscription leak would).
    if let [Some(first), Some(second)] = settled_after[..] {
        eprintln!("[load] {clients} concurrent clients: settled after round 1 {first} KiB, after round 2 {second} KiB");
        assert!(second < first + 32 * 1024, "memory grew by {} KiB in the second round", second - first);
    }
    echo(&c, &url, json!("final"), "still answering").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_consumer_that_never_reads_does_not_stall_the_others() {
    let s = HttpServer::start("fixture");
    let url = s.url.clone();
    let c = client();
    warm_up(&c, &url).await;
    let baseline = rss_kib(s.pid());
    let sampler = RssSampler::start(s.pid());

    // Its own client so nobody else reuses its connection; never read after the ack.
    let stalled_client = client();
    let mut stalled = open_listen(&stalled_client, &url, json!("stalled")).await;
    read_until(&mut stalled, &mut String::new(), ACK).await;

    let mut live = open_listen(&c, &url, json!("live")).await;
    let mut live_buf = String::new();
    read_until(&mut live, &mut live_buf, ACK).await;

    // Enough events to fill the loopback socket buffers of the stalled stream many times over.
    const TRIGGERS: usize = 3000;
    let triggers = (0..TRIGGERS).map(|i| {
        let (c, url) = (c.clone(), url.clone());
        async move {
            let params = json!({ "name": "test_trigger_tool_change", "arguments": {} });
            let r = send(modern(&c, &url, json!(i), "tools/call", params)).await;
            assert_eq!(r.last()["id"], i);
            assert!(r.last().get("result").is_some(), "{:?}", r.last());
        }
    });
    futures::StreamExt::for_each_concurrent(futures::stream::iter(triggers), 32, |f| f).await;
    // The reading subscriber still gets events while the other one is stuck.
    read_until(&mut live, &mut live_buf, "notifications/tools/list_changed").await;
    echo(&c, &url, json!("during-stall"), "answering during a stall").await;
    let peak = sampler.peak();
    drop(sampler);
    check_settled("slow listen consumer (still open)", s.pid(), baseline, peak).await;

    drop(stalled);
    drop(live);
    echo(&c, &url, json!("after-stall"), "answering after the stall").await;
}

/// A POST with the standard headers of a `tools/call echo` and `body` as is.
fn raw_post(c: &reqwest::Client, url: &str, body: Vec<u8>) -> reqwest::RequestBuilder {
    c.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_malformed_and_deeply_nested_bodies_get_errors_and_the_server_keeps_running() {
    let s = HttpServer::start("fixture");
    let url = s.url.clone();
    let c = client();
    warm_up(&c, &url).await;
    let baseline = rss_kib(s.pid());
    let sampler = RssSampler::start(s.pid());

    // 8 MiB: twice the default limit of 4 MiB (`HttpConfig::max_body_bytes`).
    for round in 0..4 {
        let params = json!({ "name": "echo", "arguments": { "text": "x".repeat(8 * 1024 * 1024) } });
        let r = send(modern(&c, &url, json!(round), "tools/call", params)).await;
        assert_eq!((r.status, r.error_code()), (413, Some(-32600)), "{:?}", r.messages);
        echo(&c, &url, json!(format!("after-big-{round}")), "after an 8 MiB body").await;
    }

    // Just under the limit: handled, and the answer is the input.
    let near = "y".repeat(4 * 1024 * 1024 - 4096);
    echo(&c, &url, json!("near-limit"), &near).await;

    // Malformed UTF-8 inside a string, as the whole body, and a lone surrogate after a BOM.
    let mut bad =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":""#.to_vec();
    bad.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
    bad.extend_from_slice(br#""}}}"#);
    for body in [bad, vec![0xc0, 0x80, 0xff], b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\"\xed\xa0\x80}".to_vec()] {
        let r = send(raw_post(&c, &url, body)).await;
        assert_eq!((r.status, r.error_code()), (400, Some(-32700)), "{:?}", r.messages);
        echo(&c, &url, json!("after-utf8"), "after malformed UTF-8").await;
    }

    // Deeply nested JSON, bare and inside an otherwise valid request: serde_json's recursion
    // limit turns it into a parse error instead of a stack overflow.
    let mut nested_args =
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"#.to_vec();
    nested_args.extend_from_slice("[".repeat(100_000).as_bytes());
    for body in ["[".repeat(100_000).into_bytes(), "{\"a\":".repeat(100_000).into_bytes(), nested_args] {
        let r = send(raw_post(&c, &url, body)).await;
        assert_eq!((r.status, r.error_code()), (400, Some(-32700)), "{:?}", r.messages);
        echo(&c, &url, json!("after-nesting"), "after deep nesting").await;
    }
    // Nested within the limit but of the wrong type for the argument: an ordinary argument
    // error, which is a tool result the model sees.
    let within: Value = serde_json::from_str(&format!("{}{}", "[".repeat(100), "]".repeat(100))).expect("100 levels");
    let params = json!({ "name": "echo", "arguments": { "text": within } });
    let r = send(modern(&c, &url, json!(3), "tools/call", params)).await;
    assert_eq!(r.last()["result"]["isError"], true, "{:?}", r.messages);
    assert_eq!(
        r.last()["result"]["content"][0]["text"],
        "Invalid arguments for tool `echo`: `text`: invalid type: sequence, expected a string"
    );

    let peak = sampler.peak();
    drop(sampler);
    check_settled("oversized / malformed / nested bodies", s.pid(), baseline, peak).await;
    echo(&c, &url, json!("final"), "still answering").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_cancellations_for_unknown_ids_over_http_get_no_answer() {
    let s = HttpServer::start("fixture");
    let url = s.url.clone();
    let c = client();
    warm_up(&c, &url).await;
    let baseline = rss_kib(s.pid());
    let sampler = RssSampler::start(s.pid());
    let cancels = (0..10_000u32).map(|i| {
        let (c, url) = (c.clone(), url.clone());
        async move {
            let id = if i % 2 == 0 { json!(format!("unknown-{i}")) } else { json!(1_000_000 + i) };
            let body = json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": { "requestId": id, "reason": "load test", "_meta": meta(json!({})) },
            });
            let r = send(
                c.post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", MODERN)
                    .header("mcp-method", "notifications/cancelled")
                    .body(body.to_string()),
            )
            .await;
            assert_eq!(r.status, 202);
            assert!(r.messages.is_empty(), "a notification got an answer: {:?}", r.messages);
        }
    });
    futures::StreamExt::for_each_concurrent(futures::stream::iter(cancels), 64, |f| f).await;
    let peak = sampler.peak();
    drop(sampler);
    echo(&c, &url, json!("after-cancels"), "answering after 10,000 cancellations").await;
    check_settled("10,000 HTTP cancellations", s.pid(), baseline, peak).await;
}

/// One stdio `tools/call echo` request line.
fn stdio_echo(id: &str, text: &str) -> String {
    let params = json!({ "name": "echo", "arguments": { "text": text }, "_meta": meta(json!({})) });
    format!("{}\n", json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
}

/// The next line the server writes, as JSON, within 30 s.
async fn next_json(out: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(30), out.next_line())
        .await
        .expect("an answer within 30 s")
        .expect("readable stdout")
        .expect("a line before EOF");
    serde_json::from_str(&line).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_cancellations_for_unknown_ids_over_stdio_get_no_output() {
    let mut child = stdio_child("fixture", &[]);
    let pid = child.id().expect("a running child");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    stdin.write_all(stdio_echo("warm", "warm").as_bytes()).await.expect("write");
    assert_eq!(next_json(&mut out).await["id"], "warm");
    let baseline = rss_kib(pid);
    let sampler = RssSampler::start(pid);

    let mut batch = String::new();
    for i in 0..10_000 {
        let id = if i % 2 == 0 { json!(format!("unknown-{i}")) } else { json!(1_000_000 + i) };
        let params = json!({ "requestId": id, "reason": "load test" });
        batch.push_str(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": params }).to_string());
        batch.push('\n');
    }
    // The echo behind them must be the very next line the server writes: nothing for the
    // notifications, and the request after them is still read and answered.
    batch.push_str(&stdio_echo("after", "answering after 10,000 cancellations"));
    stdin.write_all(batch.as_bytes()).await.expect("write");
    let v = next_json(&mut out).await;
    assert_eq!(v["id"], "after", "output for a cancellation of an unknown id: {v}");
    assert_eq!(v["result"]["content"][0]["text"], "answering after 10,000 cancellations");
    let peak = sampler.peak();
    drop(sampler);
    check_settled("10,000 stdio cancellations", pid, baseline, peak).await;
    stdin.write_all(stdio_echo("final", "still answering").as_bytes()).await.expect("write");
    assert_eq!(next_json(&mut out).await["result"]["content"][0]["text"], "still answering");
}

#[tokio::test]
async fn malformed_and_deeply_nested_lines_over_stdio_get_parse_errors() {
    let mut child = stdio_child("fixture", &[]);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut input = vec![0xff, 0xfe, b'{', 0xc3, 0x28, b'\n'];
    input.extend_from_slice("[".repeat(100_000).as_bytes());
    input.push(b'\n');
    input.extend_from_slice(stdio_echo("after", "still here").as_bytes());
    stdin.write_all(&input).await.expect("write");
    for _ in 0..2 {
        let v = next_json(&mut out).await;
        assert_eq!(v["error"]["code"], -32700, "{v}");
        assert_eq!(v["id"], Value::Null, "{v}");
    }
    let v = next_json(&mut out).await;
    assert_eq!(v["id"], "after");
    assert_eq!(v["result"]["content"][0]["text"], "still here");
}

/// Large replies on many streams of a few HTTP/2 connections at once: each reply spans many
/// DATA frames, so the connections' writes (gathered by the server's `batched_writes`) mix
/// frames of many streams and often wait for the socket. Every echo must come back whole, to
/// its own request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_replies_on_many_http2_streams_arrive_whole() {
    let s = HttpServer::start("fixture");
    let url = s.url.clone();
    let clients: Vec<reqwest::Client> = (0..4).map(|_| h2_client(None)).collect();
    let calls = (0..160usize).map(|i| {
        let (c, url) = (clients[i % clients.len()].clone(), url.clone());
        async move {
            // 64 to 256 KiB, distinct per request so a mixed-up frame shows.
            let text: String = format!("{i:04}-").repeat((64 + (i % 4) * 64) * 1024 / 5);
            echo(&c, &url, json!(i), &text).await;
        }
    });
    futures::future::join_all(calls).await;
    for c in &clients {
        echo(c, &url, json!("after"), "still serving").await;
    }
}
