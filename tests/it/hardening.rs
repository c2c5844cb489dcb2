//! The HTTP transport against abusive clients, on loopback with the quickstart binary:
//! connections that never finish a request head are closed after the header timeout while a
//! normal client is served, a connection that sends nothing is closed too, an oversized head
//! gets 431, and an HTTP/2 client resetting streams in a loop does not stop others being
//! served. Counts and waits are bounded; latencies are printed, never asserted.

use crate::common::{HttpServer, client, heavy, modern, rss_kib, send, socket_budget};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Half-open connections held at once where the open-file limit allows (the test process and
/// the server each hold this many sockets); fewer under a lower limit (`socket_budget`), e.g.
/// a laptop's 1 024.
const HALF_OPEN: usize = 10_000;
/// The server's resident memory with them all open stays under this (measured: see the note
/// printed by the test).
const RSS_BOUND_KIB: u64 = 256 * 1024;

/// `true` once the server has closed `stream` (EOF or reset), `false` if it is still open
/// after `within`.
async fn closed_by_server(mut stream: TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 512];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            // An answer (there should be none) is not a close; read on.
            Ok(Ok(_)) => {}
        }
    }
}

async fn add(server: &HttpServer) -> (u16, Duration) {
    let c = client();
    let started = Instant::now();
    let params = json!({ "name": "add", "arguments": { "a": 1, "b": 2 } });
    let reply = send(modern(&c, &server.url, json!(1), "tools/call", params)).await;
    let took = started.elapsed();
    if reply.status == 200 {
        assert_eq!(reply.last()["result"]["structuredContent"]["sum"], 3.0);
    }
    (reply.status, took)
}

#[tokio::test]
async fn half_open_connections_are_closed_after_the_header_timeout_while_others_are_served() {
    let _heavy = heavy().await;
    let count = socket_budget("hardening::half_open_connections", HALF_OPEN, 1);
    let server = HttpServer::start_with("quickstart", &["--http-header-timeout", "2"]);
    let addr = format!("127.0.0.1:{}", server.port);
    let idle_kib = rss_kib(server.child.id());
    let mut half_open = Vec::with_capacity(count);
    while half_open.len() < count {
        let batch = (0..500.min(count - half_open.len())).map(|_| async {
            let mut s = TcpStream::connect(&addr).await?;
            // A request line, a Host line and half of one more header; then nothing.
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Unfinished: aaaa").await?;
            std::io::Result::Ok(s)
        });
        half_open.extend(futures::future::try_join_all(batch).await.expect("loopback connects"));
    }
    let (status, took) = add(&server).await;
    assert_eq!(status, 200, "a normal client is served beside {count} half-open connections");
    let held_kib = rss_kib(server.child.id());
    eprintln!(
        "hardening: {count} half-open connections: a tools/call took {took:?}; server RSS {held_kib:?} KiB (idle {idle_kib:?})"
    );
    if let Some(kib) = held_kib {
        assert!(kib < RSS_BOUND_KIB, "server RSS {kib} KiB with {count} half-open connections");
    }
    // Within the 2 s timeout plus a generous margin for a loaded machine.
    let closed =
        futures::future::join_all(half_open.into_iter().map(|s| closed_by_server(s, Duration::from_secs(60)))).await;
    let still_open = closed.iter().filter(|c| !**c).count();
    assert_eq!(still_open, 0, "{still_open} of {count} half-open connections were never closed");
    let (status, _) = add(&server).await;
    assert_eq!(status, 200, "served after the flood too");
}

#[tokio::test]
async fn a_connection_that_sends_nothing_or_a_partial_preface_is_closed_too() {
    let server = HttpServer::start_with("quickstart", &["--http-header-timeout", "1"]);
    let addr = format!("127.0.0.1:{}", server.port);
    let silent = TcpStream::connect(&addr).await.expect("connects");
    let mut partial = TcpStream::connect(&addr).await.expect("connects");
    // Fewer bytes than the HTTP/2 preface the server reads before choosing a protocol.
    partial.write_all(b"PRI * HTTP/2").await.expect("writes");
    let within = Duration::from_secs(30);
    let (a, b) = tokio::join!(closed_by_server(silent, within), closed_by_server(partial, within));
    assert!(a, "a silent connection is closed");
    assert!(b, "a connection stuck in the HTTP/2 preface is closed");
}

/// A 2026-07-28 `tools/call` of `name` with `arguments`, as one HTTP/1.1 request on a kept-alive
/// connection.
fn raw_call(port: u16, name: &str, arguments: serde_json::Value) -> Vec<u8> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": crate::common::meta(json!({})) } })
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
         Mcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads from `stream` until what was read holds `marker`; panics on EOF or after 30 s.
async fn read_until(stream: &mut TcpStream, marker: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !String::from_utf8_lossy(&got).contains(marker) {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            other => panic!("no {marker:?} in {:?} ({other:?})", String::from_utf8_lossy(&got)),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// The header timeout runs between a kept-alive connection's requests, from the end of each
/// answer, and never while one is answered: a call that runs longer than the timeout is
/// answered, and afterwards a connection that sends half a head, or nothing, is closed.
#[tokio::test]
async fn a_kept_alive_connection_is_timed_between_requests_not_during_them() {
    let server = HttpServer::start_with("fixture", &["--http-header-timeout", "1"]);
    let mut slow = TcpStream::connect(("127.0.0.1", server.port)).await.expect("connects");
    slow.write_all(&raw_call(server.port, "slow", json!({ "seconds": 2.5 }))).await.expect("writes");
    let answer = read_until(&mut slow, "slept").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The same connection serves a second request, sent at once.
    slow.write_all(&raw_call(server.port, "echo", json!({ "text": "again" }))).await.expect("writes");
    read_until(&mut slow, "again").await;
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Unfini").await.expect("writes");

    let mut idle = TcpStream::connect(("127.0.0.1", server.port)).await.expect("connects");
    idle.write_all(&raw_call(server.port, "echo", json!({ "text": "once" }))).await.expect("writes");
    read_until(&mut idle, "once").await;

    let within = Duration::from_secs(30);
    let (half, silent) = tokio::join!(closed_by_server(slow, within), closed_by_server(idle, within));
    assert!(half, "a half head after an answer is cut off");
    assert!(silent, "an idle kept-alive connection is closed");
}

#[tokio::test]
async fn an_oversized_request_head_gets_431() {
    let server = HttpServer::start("quickstart");
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).await.expect("connects");
    let big = "a".repeat(200 * 1024);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Big: {big}\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    // The server may answer and close before reading it all; a failed write is fine.
    let _ = s.write_all(head.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer)).await;
    let status_line = String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned();
    assert!(status_line.starts_with("HTTP/1.1 431"), "{status_line:?}");
    let (status, _) = add(&server).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_h2_client_resetting_streams_in_a_loop_does_not_stop_others() {
    let server = HttpServer::start("quickstart");
    let tcp = TcpStream::connect(("127.0.0.1", server.port)).await.expect("connects");
    let (h2, connection) = h2::client::handshake(tcp).await.expect("an h2c connection");
    let driver = tokio::spawn(connection);
    let url = server.url.clone();
    let abuser = tokio::spawn(async move {
        let mut h2 = h2;
        let mut resets = 0u32;
        while resets < 20_000 {
            h2 = match h2.ready().await {
                Ok(h2) => h2,
                Err(_) => break, // the server ended the connection (GOAWAY)
            };
            let request = http::Request::post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(())
                .expect("a request");
            match h2.send_request(request, false) {
                Ok((_response, mut stream)) => {
                    stream.send_reset(h2::Reason::CANCEL);
                    resets += 1;
                }
                Err(_) => break,
            }
        }
        resets
    });
    let mut served = 0;
    for _ in 0..20 {
        let (status, _) = add(&server).await;
        assert_eq!(status, 200, "a normal client is served while another resets streams");
        served += 1;
    }
    let resets = abuser.await.expect("the abusive client ends");
    driver.abort();
    eprintln!("hardening: {resets} streams reset by one client while {served} normal calls were served");
    assert!(resets > 0);
}
