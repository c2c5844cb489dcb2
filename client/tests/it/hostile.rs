//! A hostile or broken server and authorization server: a routing raw HTTP server (one request
//! per connection) that plays the MCP server, its protected resource metadata, and the
//! authorization server at once, answering what each test tells it.

use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard_client::{ClientBuilder, ClientError, OAuthConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone)]
struct Req {
    method: String,
    path: String,
    head: String,
    body: String,
}

impl Req {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_owned))
    }
}

async fn read_req(stream: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_end, length) = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
                .unwrap_or(0);
            break (at + 4, length);
        }
    };
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let first = head.lines().next().unwrap_or_default().to_owned();
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    Some(Req {
        method,
        path,
        head: head.to_ascii_lowercase(),
        body: String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned(),
    })
}

type Handler = Arc<dyn Fn(Req, TcpStream) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

async fn serve(handler: Handler) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let handler = handler.clone();
            tokio::spawn(async move {
                if let Some(req) = read_req(&mut stream).await {
                    handler(req, stream).await;
                }
            });
        }
    });
    base
}

async fn reply(mut stream: TcpStream, status: &str, headers: &str, body: &str) {
    let head = format!("HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n", body.len());
    let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
}

async fn reply_json(stream: TcpStream, status: &str, headers: &str, body: Value) {
    reply(stream, status, &format!("{headers}content-type: application/json\r\n"), &body.to_string()).await;
}

/// The authorization server part: metadata, registration, a token endpoint that issues
/// `tok:<scopes>` with `expires_in` (the code is the scopes asked for, see `authorizer`).
async fn auth_server(base: &str, req: &Req, stream: TcpStream, expires_in: Value, metadata_extra: Value) -> bool {
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/prm") => {
            let doc = json!({ "resource": format!("{base}/mcp"), "authorization_servers": [base] });
            reply_json(stream, "200 OK", "", doc).await;
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            let mut doc = json!({
                "issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"), "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
            });
            for (k, v) in metadata_extra.as_object().cloned().unwrap_or_default() {
                if v.is_null() {
                    doc.as_object_mut().expect("object").remove(&k);
                } else {
                    doc[k] = v;
                }
            }
            reply_json(stream, "200 OK", "", doc).await;
        }
        ("POST", "/register") => reply_json(stream, "201 Created", "", json!({ "client_id": "c1" })).await,
        ("POST", "/token") => {
            let code = req
                .body
                .split('&')
                .find_map(|kv| kv.strip_prefix("code="))
                .map(|c| c.replace('+', " ").replace("%20", " ").replace("%3A", ":"))
                .unwrap_or_default();
            let mut token = json!({ "access_token": format!("tok:{code}"), "token_type": "Bearer" });
            if !expires_in.is_null() {
                token["expires_in"] = expires_in;
            }
            reply_json(stream, "200 OK", "", token).await;
        }
        _ => return false,
    }
    true
}

/// The authorizer: the redirect carries the requested scopes as the code.
fn authorizer(calls: Arc<AtomicUsize>, delay: Duration) -> OAuthConfig {
    OAuthConfig::new("http://127.0.0.1:1/cb", move |url: String| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            let url = reqwest::Url::parse(&url).map_err(|e| e.to_string())?;
            let get = |k: &str| url.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
            let mut back = reqwest::Url::parse("http://127.0.0.1:1/cb").expect("url");
            back.query_pairs_mut()
                .append_pair("code", &get("scope").unwrap_or_default())
                .append_pair("state", &get("state").unwrap_or_default());
            Ok(back.to_string())
        }
    })
}

/// The MCP part (2025-11-25 session over JSON): needs a bearer token; `tools/call` of tool
/// `needs_X` needs scope `X` in the token, else `403 insufficient_scope scope="X"`.
async fn mcp(base: &str, req: Req, stream: TcpStream) {
    let token = req.header("authorization").and_then(|a| a.strip_prefix("bearer ").map(str::to_owned));
    let challenge = format!("www-authenticate: Bearer resource_metadata=\"{base}/prm\"\r\n");
    let Some(token) = token else {
        return reply(stream, "401 Unauthorized", &challenge, "").await;
    };
    if req.method == "GET" {
        return reply(stream, "405 Method Not Allowed", "", "").await;
    }
    let body = req.json();
    match body["method"].as_str() {
        Some("initialize") => {
            let result = json!({ "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": { "name": "raw", "version": "0" } });
            reply_json(
                stream,
                "200 OK",
                "mcp-session-id: s1\r\n",
                json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
            )
            .await;
        }
        Some("tools/call") => {
            let name = body["params"]["name"].as_str().unwrap_or_default().to_owned();
            let needed = name.strip_prefix("needs_").unwrap_or_default().to_owned();
            // Both calls must meet the 403 before either step-up ends.
            tokio::time::sleep(Duration::from_millis(100)).await;
            if !token.split([':', ' ']).any(|s| s == needed) {
                let ch = format!(
                    "www-authenticate: Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{base}/prm\"\r\n"
                );
                return reply(stream, "403 Forbidden", &ch, "").await;
            }
            let result = json!({ "content": [{"type": "text", "text": name}] });
            reply_json(stream, "200 OK", "", json!({"jsonrpc": "2.0", "id": body["id"], "result": result})).await;
        }
        Some(_) if body.get("id").is_some() => {
            reply_json(stream, "200 OK", "", json!({"jsonrpc": "2.0", "id": body["id"], "result": {}})).await;
        }
        _ => reply(stream, "202 Accepted", "", "").await,
    }
}

async fn protected(expires_in: Value, metadata_extra: Value) -> String {
    let base_cell: Arc<Mutex<String>> = Arc::default();
    let cell = base_cell.clone();
    let handler: Handler = Arc::new(move |req, stream| {
        let base = cell.lock().expect("lock").clone();
        let expires_in = expires_in.clone();
        let metadata_extra = metadata_extra.clone();
        Box::pin(async move {
            if req.path.starts_with("/mcp") {
                mcp(&base, req, stream).await;
            } else if !auth_server(&base, &req, stream, expires_in, metadata_extra).await {
                // unknown path: nothing
            }
        })
    });
    let base = serve(handler).await;
    *base_cell.lock().expect("lock") = base.clone();
    base
}

/// An `expires_in` near u64::MAX does not overflow the clock: the token is used.
#[tokio::test]
async fn a_huge_expires_in_is_survived() {
    let base = protected(json!(u64::MAX), json!({})).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let started = std::time::Instant::now();
    let outcome = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .request_timeout(Duration::from_secs(3))
        .oauth(authorizer(calls.clone(), Duration::ZERO))
        .connect_http(format!("{base}/mcp"))
        .await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "signed in once");
    let client = outcome.expect("connects with the token");
    client.ping().await.expect("the token still serves");
    let _ = started;
}

/// Authorization server metadata without `code_challenge_methods_supported` is refused (MCP
/// 2025-11-25: the client must not proceed), before the user is sent anywhere.
#[tokio::test]
async fn metadata_without_pkce_methods_is_refused() {
    let base = protected(json!(3600), json!({ "code_challenge_methods_supported": null })).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let client = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .request_timeout(Duration::from_secs(5))
        .oauth(authorizer(calls.clone(), Duration::ZERO))
        .connect_http(format!("{base}/mcp"))
        .await;
    assert!(
        matches!(&client, Err(ClientError::Auth { message, .. }) if message.contains("S256")),
        "{:?}",
        client.err()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the user is not sent to an AS that does not advertise PKCE");
}

/// Two calls meet `403 insufficient_scope` for different scopes with the same token: the second
/// waits for the first step-up, then steps up for its own scope too; both succeed.
#[tokio::test]
async fn concurrent_step_ups_for_different_scopes_both_succeed() {
    let base = protected(json!(3600), json!({})).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let client = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .request_timeout(Duration::from_secs(10))
        .oauth(authorizer(calls.clone(), Duration::from_millis(300)).scopes(["base"]))
        .connect_http(format!("{base}/mcp"))
        .await
        .expect("connects");
    let (a, b) = tokio::join!(client.call_tool("needs_a", json!({})), client.call_tool("needs_b", json!({})));
    assert!(a.is_ok() && b.is_ok(), "a: {:?}\nb: {:?}", a.as_ref().err(), b.as_ref().err());
}

/// A server that answers each resumption GET with a priming event (no answer) and hangs up:
/// resuming stops with the request's timeout and the client's close.
#[tokio::test]
async fn resumption_ends_with_the_request() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counter = gets.clone();
    let handler: Handler = Arc::new(move |req, mut stream| {
        let gets = counter.clone();
        Box::pin(async move {
            let body = req.json();
            let sse = "content-type: text/event-stream\r\n";
            if req.method == "GET" && req.header("last-event-id").is_some() {
                let n = gets.fetch_add(1, Ordering::SeqCst);
                // Only a priming event (an id, empty data), as the spec tells servers to send.
                let head = format!("HTTP/1.1 200 OK\r\n{sse}connection: close\r\n\r\n");
                let _ = stream.write_all(format!("{head}id: e{n}\nretry: 20\ndata: \n\n").as_bytes()).await;
            } else if req.method == "GET" {
                reply(stream, "405 Method Not Allowed", "", "").await;
            } else if body["method"] == "initialize" {
                let result = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": { "name": "raw", "version": "0" } });
                reply_json(
                    stream,
                    "200 OK",
                    "mcp-session-id: s1\r\n",
                    json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
                )
                .await;
            } else if body.get("id").is_some() {
                let head = format!("HTTP/1.1 200 OK\r\n{sse}connection: close\r\n\r\n");
                let _ = stream.write_all(format!("{head}id: e0\nretry: 20\ndata: \n\n").as_bytes()).await;
            } else {
                reply(stream, "202 Accepted", "", "").await;
            }
        })
    });
    let base = serve(handler).await;
    let client = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .request_timeout(Duration::from_millis(500))
        .connect_http(format!("{base}/mcp"))
        .await
        .expect("connects");
    let err = client.list_tools().await.expect_err("times out");
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
    client.close().await;
    drop(client);
    let after_close = gets.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = gets.load(Ordering::SeqCst);
    assert!(later <= after_close + 1, "still resuming after close: {after_close} -> {later}");
}

/// A `retry` of u64::MAX ms parks no task: each POST ends with its request's timeout.
#[tokio::test]
async fn a_huge_retry_leaks_no_task() {
    let endpoint_alive = Arc::new(AtomicBool::new(false));
    let handler: Handler = Arc::new(move |req, mut stream| {
        Box::pin(async move {
            let body = req.json();
            if req.method == "GET" {
                reply(stream, "405 Method Not Allowed", "", "").await;
            } else if body["method"] == "initialize" {
                let result = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": { "name": "raw", "version": "0" } });
                reply_json(
                    stream,
                    "200 OK",
                    "mcp-session-id: s1\r\n",
                    json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
                )
                .await;
            } else if body.get("id").is_some() {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let _ = stream.write_all(format!("{head}id: e0\nretry: {}\ndata: \n\n", u64::MAX).as_bytes()).await;
            } else {
                reply(stream, "202 Accepted", "", "").await;
            }
        })
    });
    let _ = endpoint_alive;
    let base = serve(handler).await;
    let client = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .request_timeout(Duration::from_millis(500))
        .connect_http(format!("{base}/mcp"))
        .await
        .expect("connects");
    // A weak handle on the runtime's tasks: count alive tasks before/after.
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    for _ in 0..20 {
        let _ = client.ping().await;
    }
    client.close().await;
    drop(client);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = metrics.num_alive_tasks();
    assert!(after <= before + 2, "parked POST tasks: {before} -> {after}");
}

/// A server that answers each session GET with `retry: 0`, a comment and a hang-up is
/// reconnected with a floor and a backoff, not in a tight loop.
#[tokio::test]
async fn the_get_stream_backs_off() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counter = gets.clone();
    let handler: Handler = Arc::new(move |req, mut stream| {
        let gets = counter.clone();
        Box::pin(async move {
            let body = req.json();
            if req.method == "GET" {
                gets.fetch_add(1, Ordering::SeqCst);
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let _ = stream.write_all(format!("{head}retry: 0\n: ping\n\n").as_bytes()).await;
            } else if body["method"] == "initialize" {
                let result = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": { "name": "raw", "version": "0" } });
                reply_json(
                    stream,
                    "200 OK",
                    "mcp-session-id: s1\r\n",
                    json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
                )
                .await;
            } else {
                reply(stream, "202 Accepted", "", "").await;
            }
        })
    });
    let base = serve(handler).await;
    let client = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .connect_http(format!("{base}/mcp"))
        .await
        .expect("connects");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let n = gets.load(Ordering::SeqCst);
    drop(client);
    assert!(n <= 10, "{n} GETs in one second");
}

/// A 400 MiB token endpoint answer is cut off at the limit: the sign-in fails, nothing is
/// buffered whole.
#[tokio::test]
async fn a_huge_token_answer_is_refused() {
    let base_cell: Arc<Mutex<String>> = Arc::default();
    let cell = base_cell.clone();
    let handler: Handler = Arc::new(move |req, mut stream| {
        let base = cell.lock().expect("lock").clone();
        Box::pin(async move {
            if req.path == "/token" {
                let size: usize = 400 << 20;
                let head =
                    format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", size);
                let _ = stream.write_all(head.as_bytes()).await;
                let chunk = vec![b' '; 1 << 20];
                for _ in 0..400 {
                    if stream.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
            } else if req.path.starts_with("/mcp") {
                mcp(&base, req, stream).await;
            } else {
                auth_server(&base, &req, stream, json!(3600), json!({})).await;
            }
        })
    });
    let base = serve(handler).await;
    *base_cell.lock().expect("lock") = base.clone();
    let outcome = ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .request_timeout(Duration::from_secs(60))
        .oauth(authorizer(Arc::new(AtomicUsize::new(0)), Duration::ZERO))
        .connect_http(format!("{base}/mcp"))
        .await;
    let err = outcome.expect_err("refused");
    let mut shown = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        shown.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    assert!(matches!(err, ClientError::Auth { .. }) && shown.contains("more than"), "{shown}");
}
