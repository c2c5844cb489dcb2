//! Refusals given before a request's body was read, over raw HTTP/1.1: the server takes the body
//! first, so the connection carries the client's next request (an OAuth client's metadata
//! request right after its 401), or says `Connection: close` when it will not take the body.
//! hyper alone closes the connection after such an answer without saying so, and a client that
//! reuses the connection at once loses its next request. Answers off the MCP endpoint (404,
//! metadata, probes) do not read a body: they say `Connection: close` when one was sent.

use switchyard::Server;
use switchyard::auth::{BearerAuth, Principal, ProtectedResource, StaticTokens};
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::{ConnectionLimits, HttpConfig, router, serve_app};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A server behind bearer tokens (none anonymous) on a loopback port; its address.
async fn protected() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let resource = ProtectedResource::new(&format!("http://{addr}/mcp"))
        .and_then(|r| r.authorization_server("https://auth.example.com"))
        .expect("a resource");
    let tokens = StaticTokens::new().with("t", Principal::new("tess", Vec::<String>::new()));
    let server = Server::builder("refusals", "1").groups(["none"]).build().expect("builds");
    let shutdown = server.shutdown_token().clone();
    let app = router(server, HttpConfig::default().protected_resource(resource.clone()))
        .layer(BearerAuth::new(tokens).protected_resource(resource));
    tokio::spawn(async move { serve_app(listener, app, shutdown, &ConnectionLimits::default()).await });
    addr
}

/// The head of a POST of `length` body bytes to `/mcp`, naming `host`, with `extra` headers.
fn post_head(host: &str, length: usize, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n{extra}\r\n"
    )
}

/// One answer read off `s`: its head (lowercased) and body; `None` when the connection ended
/// first.
async fn answer(s: &mut TcpStream) -> Option<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let limit = std::time::Duration::from_secs(30);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match tokio::time::timeout(limit, s.read(&mut chunk)).await.expect("an answer in time") {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().expect("a length"))
        .expect("answers here have a Content-Length");
    while buf.len() < head_end + length {
        match tokio::time::timeout(limit, s.read(&mut chunk)).await.expect("a body in time") {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    Some((head, String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned()))
}

fn closes(head: &str) -> bool {
    head.lines().any(|l| l.trim() == "connection: close")
}

#[tokio::test]
async fn a_401_before_the_body_came_keeps_the_connection_for_the_metadata_request() {
    let addr = protected().await;
    let mut s = TcpStream::connect(addr).await.expect("connect");
    // The head alone, as clients that write head and body apart may leave it for a moment:
    // the refusal waits for the body.
    s.write_all(post_head(&addr.to_string(), PING.len(), "").as_bytes()).await.expect("write");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    s.write_all(PING.as_bytes()).await.expect("write the body");
    let (head, body) = answer(&mut s).await.expect("a 401");
    assert!(head.starts_with("http/1.1 401"), "{head}");
    assert!(head.contains("www-authenticate: bearer"), "{head}");
    assert!(body.contains("-32600"), "{body}");
    assert!(!closes(&head), "{head}");
    let metadata = format!(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n"
    );
    s.write_all(metadata.as_bytes()).await.expect("write the next request");
    let (head, body) = answer(&mut s).await.expect("the next request answered on the same connection");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(body.contains("authorization_servers"), "{body}");
}

#[tokio::test]
async fn a_refused_client_awaiting_100_continue_is_told_to_close_and_not_asked_for_its_body() {
    let addr = protected().await;
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(post_head(&addr.to_string(), PING.len(), "Expect: 100-continue\r\n").as_bytes()).await.expect("write");
    let (head, _) = answer(&mut s).await.expect("a 401");
    assert!(head.starts_with("http/1.1 401"), "no 100 Continue first: {head}");
    assert!(closes(&head), "{head}");
}

#[tokio::test]
async fn a_refused_body_over_four_mebibytes_is_not_read_and_the_connection_closes() {
    let addr = protected().await;
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(post_head(&addr.to_string(), (4 << 20) + 1, "").as_bytes()).await.expect("write");
    let (head, _) = answer(&mut s).await.expect("a 401");
    assert!(head.starts_with("http/1.1 401"), "{head}");
    assert!(closes(&head), "{head}");
}

#[tokio::test]
async fn a_refused_host_takes_the_late_body_and_serves_the_next_request() {
    let server = Server::builder("refusals", "1").groups(["none"]).build().expect("builds");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
    let addr = http.addr();
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(post_head("rebound.example", PING.len(), "").as_bytes()).await.expect("write");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    s.write_all(PING.as_bytes()).await.expect("write the body");
    let (head, _) = answer(&mut s).await.expect("a 403");
    assert!(head.starts_with("http/1.1 403"), "{head}");
    assert!(!closes(&head), "{head}");
    let discover = r#"{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n";
    s.write_all(format!("{}{discover}", post_head(&addr.to_string(), discover.len(), headers)).as_bytes())
        .await
        .expect("write");
    let (head, body) = answer(&mut s).await.expect("the next request answered on the same connection");
    assert!(head.starts_with("http/1.1 200"), "{head}{body}");
    assert!(body.contains(r#""supportedVersions""#), "{body}");
}

#[tokio::test]
async fn a_body_that_stops_arriving_gets_408_with_connection_close() {
    let server = Server::builder("refusals", "1").groups(["none"]).build().expect("builds");
    let limits = ConnectionLimits::default().body_read_timeout(std::time::Duration::from_millis(300));
    let http = HttpTestServer::start(server, HttpConfig::default().connections(limits)).await.expect("a port");
    let addr = http.addr();
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(format!("{}{{", post_head(&addr.to_string(), PING.len(), "")).as_bytes()).await.expect("write");
    let (head, _) = answer(&mut s).await.expect("a 408");
    assert!(head.starts_with("http/1.1 408"), "{head}");
    assert!(closes(&head), "{head}");
}

#[tokio::test]
async fn an_answer_off_the_endpoint_to_a_request_with_a_body_says_connection_close() {
    let server = Server::builder("refusals", "1").groups(["none"]).build().expect("builds");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port");
    let addr = http.addr();
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let get = format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    s.write_all(get.as_bytes()).await.expect("write");
    let (head, _) = answer(&mut s).await.expect("a 404");
    assert!(head.starts_with("http/1.1 404"), "{head}");
    assert!(!closes(&head), "no body, nothing left unread: {head}");
    let post = format!("{}{PING}", post_head(&addr.to_string(), PING.len(), "")).replacen("/mcp", "/elsewhere", 1);
    s.write_all(post.as_bytes()).await.expect("write");
    let (head, _) = answer(&mut s).await.expect("a 404 on the same connection");
    assert!(head.starts_with("http/1.1 404"), "{head}");
    assert!(closes(&head), "a body left unread: {head}");
}
