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
