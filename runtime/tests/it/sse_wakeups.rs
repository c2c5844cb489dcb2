//! An SSE reply delivers notifications that other tasks and threads send for its request while
//! the request itself waits: each send wakes the response body (no keep-alive tick, which would
//! hide a lost wakeup, comes within the test's time limits).

use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;

/// Notifications each sender (one runtime task, one plain thread) sends per request.
const PER_SENDER: usize = 40;

/// Hands its progress reporter to a spawned task and to a plain thread, then waits until the
/// client goes away: only the other senders make the body produce frames.
#[mcp_tool(group = "wakeups")]
async fn fan_in(ctx: RequestContext) -> Result<String, ToolError> {
    let progress = ctx.progress();
    let from_task = progress.clone();
    tokio::spawn(async move {
        for i in 0..PER_SENDER {
            from_task.report(i as f64, None, Some("task")).await;
            tokio::task::yield_now().await;
        }
    });
    let from_thread = progress.clone();
    std::thread::spawn(move || {
        for i in 0..PER_SENDER {
            futures::executor::block_on(from_thread.report(i as f64, None, Some("thread")));
            std::thread::yield_now();
        }
    });
    drop(progress);
    ctx.cancellation().cancelled().await;
    Ok("cancelled".to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_sent_from_other_tasks_and_threads_reach_an_open_sse_reply() {
    let server = Server::builder("wakeups", "1").groups(["wakeups"]).build().expect("builds");
    let config = HttpConfig::default().keep_alive(Duration::from_secs(3600));
    let http = HttpTestServer::start(server, config).await.expect("a loopback port");
    let url = http.url();
    let client = reqwest::Client::new();
    for round in 0..25 {
        let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": "p" });
        let body = json!({ "jsonrpc": "2.0", "id": round, "method": "tools/call",
            "params": { "name": "fan_in", "arguments": {}, "_meta": meta } });
        let resp = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "fan_in")
            .body(body.to_string())
            .send()
            .await
            .expect("sent");
        let mut frames = resp.bytes_stream();
        let mut text = String::new();
        let mut seen = 0;
        let all = tokio::time::timeout(Duration::from_secs(20), async {
            while seen < 2 * PER_SENDER {
                let chunk = frames.next().await.expect("the stream stays open").expect("a chunk");
                text.push_str(&String::from_utf8_lossy(&chunk));
                seen = text.matches("notifications/progress").count();
            }
        })
        .await;
        assert!(all.is_ok(), "round {round}: {seen} of {} notifications arrived: {text}", 2 * PER_SENDER);
        let data: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).expect("JSON"))
            .collect();
        assert_eq!(data.len(), 2 * PER_SENDER, "{text}");
    }
}
