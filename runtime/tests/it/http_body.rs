//! Request bodies that break off: 400, not 413.

use switchyard::Server;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_body_shorter_than_its_content_length_is_400() {
    let server = Server::builder("body", "1").groups(["none"]).build().expect("builds");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
    let addr = http.addr();
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n",
        addr.port()
    );
    s.write_all(head.as_bytes()).await.expect("write");
    s.write_all(br#"{"jsonrpc":"2.0""#).await.expect("write");
    s.shutdown().await.expect("half-close");
    let mut reply = String::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_string(&mut reply)).await;
    assert!(reply.starts_with("HTTP/1.1 400"), "{reply}");
    assert!(reply.contains("-32600"), "{reply}");
}

/// A body that stops arriving is answered 408 after the body read timeout, so clients that
/// send a head and a byte of body cannot hold every connection the server allows.
#[tokio::test]
async fn a_body_that_stops_arriving_is_408_and_frees_its_connection() {
    use switchyard::transport::http::ConnectionLimits;
    use tokio::io::AsyncBufReadExt;
    let server = Server::builder("body", "1").groups(["none"]).build().expect("builds");
    let limits = ConnectionLimits::default().body_read_timeout(std::time::Duration::from_secs(1)).max_connections(2);
    let http = HttpTestServer::start(server, HttpConfig::default().connections(limits)).await.expect("a port");
    let addr = http.addr();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{",
        addr.port()
    );
    // As many stalled bodies as the server takes connections.
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        s.write_all(head.as_bytes()).await.expect("write");
        stalled.push(s);
    }
    for s in stalled {
        let mut lines = tokio::io::BufReader::new(s).lines();
        let status = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line()).await;
        let status = status.expect("answered").expect("readable").unwrap_or_default();
        assert!(status.starts_with("HTTP/1.1 408"), "{status}");
    }
    // The slots are free again: a whole request is answered.
    let reply = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .timeout(std::time::Duration::from_secs(30))
        .send()
        .await
        .expect("answered");
    assert_ne!(reply.status().as_u16(), 408);
}
