//! Adversarial input against the example servers over real transports: reused and duplicate
//! request ids on stdio, listen streams reset on a shared HTTP/2 connection.

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

fn slow(id: i64, seconds: f64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": "slow", "arguments": { "seconds": seconds }, "_meta": meta(json!({})) } })
}

fn cancel(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } })
}

/// A client that cancels request 5 and at once sends a new request 5 must still be able to
/// cancel the new one: the old request, winding down after the new one was registered, used to
/// unregister it, so the second cancellation was ignored and the new request answered.
#[tokio::test]
async fn stdio_a_request_reusing_a_cancelled_id_can_still_be_cancelled() {
    let mut s = StdioPeer::start("fixture", &[]);
    s.write(&[slow(5, 30.0)]).await;
    // Cancel it and reuse its id in the same read turn.
    s.write(&[cancel(5), slow(5, 3.0)]).await;
    // Let the first request 5 wind down (it answers nothing): a ping's answer, then a pause.
    // Not a timing assertion: with the bug fixed the outcome is the same however long this is.
    s.write(&[json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": { "_meta": meta(json!({})) } })])
        .await;
    let listed = s.next(Duration::from_secs(10)).await.expect("tools/list answers");
    assert_eq!(listed["id"], 7, "{listed}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.write(&[cancel(5)]).await;
    // A marker that answers after the second request 5 would have: everything the server
    // sends for id 5 comes before it.
    s.write(&[slow(6, 5.0)]).await;
    let mut seen = Vec::new();
    while let Some(m) = s.next(Duration::from_secs(10)).await {
        let done = m["id"] == 6;
        seen.push(m);
        if done {
            break;
        }
    }
    assert_eq!(seen.last().map(|m| m["id"].clone()), Some(json!(6)), "the marker answered: {seen:?}");
    assert!(seen.iter().all(|m| m["id"] != 5), "both requests 5 were cancelled and get no answer: {seen:?}");
    // The id is free again, and still guarded against duplicates while in flight.
    s.write(&[slow(5, 1.0), slow(5, 1.0)]).await;
    let dup = s.next(Duration::from_secs(10)).await.expect("the duplicate's error");
    assert_eq!(dup["error"]["code"], -32600, "{dup}");
    let first = s.next(Duration::from_secs(10)).await.expect("the first's answer");
    assert_eq!(first["result"]["content"][0]["text"], "slept 1 s", "{first}");
}

async fn open_count(c: &reqwest::Client, url: &str) -> i64 {
    let r = send(modern(c, url, json!(50), "fixture/subscriptions", json!({}))).await;
    r.last()["result"]["count"].as_i64().unwrap_or_else(|| panic!("a count: {:?}", r.messages))
}

/// Two listen streams on one HTTP/2 connection: resetting one (RST_STREAM) ends that
/// subscription on the server, and the connection keeps serving the other and new requests.
#[tokio::test]
async fn h2_a_reset_listen_stream_leaves_the_registry_while_its_neighbour_stays() {
    let s = HttpServer::start_with("fixture", &["--listen-probes"]);
    let c = h2_client(None);
    let mut bodies = Vec::new();
    for id in [1, 2] {
        let params = json!({ "notifications": { "toolsListChanged": true } });
        let resp = modern(&c, &s.url, json!(id), "subscriptions/listen", params).send().await.expect("sent");
        assert_eq!(resp.version(), reqwest::Version::HTTP_2);
        let mut body = resp.bytes_stream().boxed();
        let mut buf = String::new();
        while !buf.contains("acknowledged") {
            let chunk = tokio::time::timeout(Duration::from_secs(10), body.next()).await.expect("the ack in time");
            buf.push_str(&String::from_utf8_lossy(&chunk.expect("a chunk").expect("readable")));
        }
        bodies.push(body);
    }
    assert_eq!(open_count(&c, &s.url).await, 2);
    drop(bodies.remove(0));
    // An upper bound for liveness, not a timing requirement.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut count = open_count(&c, &s.url).await;
    while count != 1 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        count = open_count(&c, &s.url).await;
    }
    assert_eq!(count, 1, "the reset subscription is gone, the other stays");
}
