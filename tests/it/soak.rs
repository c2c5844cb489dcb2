//! Soak (issue #18, item 5): a bounded mixed load against `examples/fixture --http --tasks` as a
//! real process on loopback — `tools/call`, listen streams opened and dropped, tasks created and
//! polled, two-round MRTR exchanges and requests abandoned mid-flight — in identical rounds,
//! sampling the server's resident memory after each.
//!
//! After the warm-up rounds, every round's RSS must stay within [`BAND_KIB`] of the lowest one
//! seen after warm-up (a per-request or per-subscription leak grows round over round), and once
//! the load stops and the tasks' TTL has passed, RSS must come back within [`SETTLED_KIB`] of
//! the warm level. The figures are printed
//! (`cargo test -p switchyard-tests --test it soak:: -- --nocapture`). Counts, not durations,
//! bound each round; no assertion depends on timing.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;

/// Concurrent clients per round.
const CLIENTS: usize = 32;
/// Rounds before memory is compared (allocator arenas, connection pools and caches fill).
const WARM_ROUNDS: usize = 3;
/// Rounds whose memory is compared.
const MEASURED_ROUNDS: usize = 10;
/// Most the measured rounds' RSS may spread, in KiB.
const BAND_KIB: u64 = 24 * 1024;
/// Most the settled RSS may exceed the warm level by, in KiB.
const SETTLED_KIB: u64 = 16 * 1024;
/// The fixture's task TTL: tasks of one round are gone a few rounds later.
const TASK_TTL_MS: u64 = 1000;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn tasks_caps() -> Value {
    json!({ "extensions": { TASKS: {} } })
}

fn with_meta(mut params: Value, caps: Value) -> Value {
    params["_meta"] = meta(caps);
    params
}

async fn echo(c: &reqwest::Client, url: &str, id: String) {
    let params = json!({ "name": "echo", "arguments": { "text": id } });
    let r = send(modern(c, url, json!(id), "tools/call", params)).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    assert_eq!(r.last()["result"]["content"][0]["text"], id, "{:?}", r.messages);
}

/// A listen stream opened, read up to its acknowledgement and dropped.
async fn listen_and_drop(c: &reqwest::Client, url: &str, id: String) {
    let params = json!({ "notifications": { "toolsListChanged": true } });
    let mut resp = modern(c, url, json!(id), "subscriptions/listen", params).send().await.expect("listen sent");
    assert_eq!(resp.status().as_u16(), 200);
    let mut seen = String::new();
    while !seen.contains("notifications/subscriptions/acknowledged") {
        let chunk = tokio::time::timeout(Duration::from_secs(30), resp.chunk())
            .await
            .expect("an acknowledgement within 30 s")
            .expect("readable stream")
            .expect("the stream stays open until acknowledged");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// A task created by `slow {seconds: 0}` and polled until it completes.
async fn task(c: &reqwest::Client, url: &str, id: String) {
    let params = with_meta(json!({ "name": "slow", "arguments": { "seconds": 0 } }), tasks_caps());
    let r = send(modern(c, url, json!(id), "tools/call", params)).await;
    let created = &r.last()["result"];
    assert_eq!(created["resultType"], "task", "{:?}", r.messages);
    let task_id = created["taskId"].as_str().expect("a taskId").to_owned();
    for n in 0..200 {
        let params = with_meta(json!({ "taskId": task_id }), tasks_caps());
        let get = modern(c, url, json!(format!("{id}-get-{n}")), "tasks/get", params).header("mcp-name", &task_id);
        let r = send(get).await;
        let status = r.last()["result"]["status"].as_str().map(str::to_owned);
        match status.as_deref() {
            Some("completed") => return,
            Some("working") => tokio::time::sleep(Duration::from_millis(5)).await,
            _ => panic!("task {task_id}: {:?}", r.messages),
        }
    }
    panic!("task {task_id} did not complete");
}

/// `ask_name` in two rounds: an input-required result, then the retry with the answer and the
/// `requestState`.
async fn two_rounds(c: &reqwest::Client, url: &str, id: String) {
    let caps = json!({ "elicitation": {} });
    let first = with_meta(json!({ "name": "ask_name" }), caps.clone());
    let r = send(modern(c, url, json!(format!("{id}-1")), "tools/call", first)).await;
    let result = &r.last()["result"];
    assert_eq!(result["resultType"], "input_required", "{:?}", r.messages);
    let state = result["requestState"].clone();
    let answer = json!({ "name": { "action": "accept", "content": { "name": id } } });
    let retry = with_meta(json!({ "name": "ask_name", "inputResponses": answer, "requestState": state }), caps);
    let r = send(modern(c, url, json!(format!("{id}-2")), "tools/call", retry)).await;
    assert_eq!(r.last()["result"]["content"][0]["text"], format!("Hello, {id}!"), "{:?}", r.messages);
}

/// A `slow` call abandoned before its answer: the server sees the client go away.
async fn abandon(c: &reqwest::Client, url: &str, id: String) {
    let params = json!({ "name": "slow", "arguments": { "seconds": 30 } });
    let call = send(modern(c, url, json!(id), "tools/call", params));
    assert!(tokio::time::timeout(Duration::from_millis(30), call).await.is_err(), "slow answered at once");
}

/// One round: every client runs the whole mix once.
async fn round(c: &reqwest::Client, url: &str, round: usize) {
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (c, url) = (c.clone(), url.to_owned());
            tokio::spawn(async move {
                let tag = format!("r{round}c{i}");
                for k in 0..10 {
                    echo(&c, &url, format!("{tag}-echo{k}")).await;
                }
                listen_and_drop(&c, &url, format!("{tag}-listen")).await;
                task(&c, &url, format!("{tag}-task")).await;
                two_rounds(&c, &url, format!("{tag}-ask")).await;
                abandon(&c, &url, format!("{tag}-abandon")).await;
            })
        })
        .collect();
    for client in clients {
        client.await.expect("a client failed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_in_a_band_under_mixed_load_and_settles_after_it() {
    let ttl = TASK_TTL_MS.to_string();
    let s = HttpServer::start_with("fixture", &["--tasks", "--task-ttl-ms", &ttl, "--task-lease-ms", "300"]);
    let c = client();
    let Some(idle) = rss_kib(s.pid()) else {
        eprintln!("[soak] /proc not available: memory not measured, test skipped");
        return;
    };
    let mut rss = Vec::new();
    for n in 0..WARM_ROUNDS + MEASURED_ROUNDS {
        round(&c, &s.url, n).await;
        rss.push(rss_kib(s.pid()).expect("the server runs"));
    }
    let warm = rss[WARM_ROUNDS..].iter().copied().min().expect("measured rounds");
    let high = rss[WARM_ROUNDS..].iter().copied().max().expect("measured rounds");
    // Tasks expire, abandoned calls end, idle connections close.
    tokio::time::sleep(Duration::from_millis(TASK_TTL_MS * 3)).await;
    echo(&c, &s.url, "after the load".into()).await;
    let settled = rss_kib(s.pid()).expect("the server runs");
    eprintln!(
        "[soak] RSS KiB: idle {idle}; per round {rss:?}; after warm-up low {warm} high {high} (spread {}); settled {settled}",
        high - warm
    );
    assert!(
        high - warm <= BAND_KIB,
        "RSS spread {} KiB over the measured rounds, more than {BAND_KIB} KiB: {rss:?}",
        high - warm
    );
    assert!(
        settled <= warm + SETTLED_KIB,
        "RSS settled at {settled} KiB, more than {SETTLED_KIB} KiB over the warm level {warm} KiB"
    );
}
