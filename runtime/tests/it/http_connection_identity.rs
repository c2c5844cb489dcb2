//! The [`Connection`](switchyard::context::Connection) a request's context reports over HTTP,
//! under [`serve`](switchyard::transport::http::serve) (whose handler holds it per connection)
//! and under [`serve_app`] with [`router`] (which reads it from each request's extensions):
//! one id per TCP connection, kept across its requests, and the client's address as the peer,
//! which also counts legacy sessions per client.

use serde_json::{Value, json};
use std::net::{IpAddr, SocketAddr};
use switchyard::prelude::*;
use switchyard::server::DynamicTool;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::{ConnectionLimits, HttpConfig, SessionLimits, router, serve_app};

/// A server whose `whoami` tool answers its request's connection: `{"id": .., "peer": ..}`.
fn server() -> Server {
    let server = Server::builder("connection-identity", "1").groups(["none"]).build().expect("builds");
    server
        .add_tool(DynamicTool::new("whoami", |ctx: RequestContext, _args: Value| async move {
            let connection = ctx.connection().ok_or_else(|| ToolError::new("no connection"))?;
            let peer = connection.peer().map(|p| p.ip().to_string());
            Ok::<_, ToolError>(json!({ "id": connection.id(), "peer": peer }).to_string())
        }))
        .expect("a new tool");
    server
}

/// A client whose connections come from the loopback address `from`; reqwest keeps one
/// connection open between sequential requests.
fn client_from(from: &str) -> reqwest::Client {
    let ip: IpAddr = from.parse().expect("an address");
    reqwest::Client::builder().local_address(ip).build().expect("a client")
}

/// POSTs `body` as JSON to `url` with `headers` besides the content type and accept.
async fn post(client: &reqwest::Client, url: &str, body: &Value, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(body.to_string()).send().await.expect("sent")
}

/// `tools/call whoami` on the 2026-07-28 wire; the tool's answer parsed.
async fn whoami(client: &reqwest::Client, url: &str) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "whoami", "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "whoami")];
    let resp = post(client, url, &body, &headers).await;
    assert_eq!(resp.status(), 200);
    let answer: Value = resp.json().await.expect("a JSON body");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("a text result: {answer}"));
    serde_json::from_str(text).expect("the tool's JSON")
}

/// Two clients from two addresses, two requests each: each client's requests share an id that
/// the other's do not, and name its address.
async fn check(url: &str) {
    let (a, b) = (client_from("127.0.0.2"), client_from("127.0.0.3"));
    let (a1, a2) = (whoami(&a, url).await, whoami(&a, url).await);
    let (b1, b2) = (whoami(&b, url).await, whoami(&b, url).await);
    assert_eq!(a1, a2, "one connection, one id");
    assert_eq!(b1, b2, "one connection, one id");
    assert_ne!(a1["id"], b1["id"], "two connections, two ids");
    assert_eq!(a1["peer"], "127.0.0.2");
    assert_eq!(b1["peer"], "127.0.0.3");
}

#[tokio::test]
async fn serve_gives_each_request_its_connection() {
    let http = HttpTestServer::start(server(), HttpConfig::default()).await.expect("a loopback port");
    check(&http.url()).await;
}

/// [`router`] of [`server`] with `config` under [`serve_app`] on a loopback port: its MCP
/// endpoint's URL, and the task serving it.
async fn serve_router(config: HttpConfig) -> (String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let addr: SocketAddr = listener.local_addr().expect("bound");
    let server = server();
    let shutdown = server.shutdown_token().clone();
    let app = router(server, config);
    let task = tokio::spawn(async move { serve_app(listener, app, shutdown, &ConnectionLimits::default()).await });
    (format!("http://{addr}/mcp"), task)
}

#[tokio::test]
async fn serve_app_gives_the_router_each_request_its_connection() {
    let (url, task) = serve_router(HttpConfig::default()).await;
    check(&url).await;
    task.abort();
}

/// Anonymous legacy sessions count per client address: with a burst of one session and one
/// more per second, a client's second `initialize` at once is refused (429) while another
/// client's first is not. Were the address lost, all clients would share one bucket.
async fn check_sessions_per_client(url: &str) {
    let initialize = |client: reqwest::Client| async move {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": { "name": "t", "version": "0" } }
        });
        post(&client, url, &body, &[]).await.status().as_u16()
    };
    assert_eq!(initialize(client_from("127.0.0.2")).await, 200);
    assert_eq!(initialize(client_from("127.0.0.2")).await, 429, "the same client, at once");
    assert_eq!(initialize(client_from("127.0.0.3")).await, 200, "another client");
}

fn limited() -> HttpConfig {
    HttpConfig::default().session_limits(SessionLimits::default().creation_burst(1).creations_per_second(1))
}

#[tokio::test]
async fn serve_counts_sessions_per_client_address() {
    let http = HttpTestServer::start(server(), limited()).await.expect("a loopback port");
    check_sessions_per_client(&http.url()).await;
}

#[tokio::test]
async fn serve_app_counts_sessions_per_client_address() {
    let (url, task) = serve_router(limited()).await;
    check_sessions_per_client(&url).await;
    task.abort();
}
