//! Against a raw HTTP endpoint that answers what a test tells it: oversized bodies and events,
//! statuses without JSON-RPC, an event stream that never ends.

use serde_json::{Value, json};
use std::time::Duration;
use switchyard_client::{ClientBuilder, ClientError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads one HTTP/1.1 request (headers and a `Content-Length` body): the body, with the
/// lower-cased head under `"head"`; a `GET` (no body) is `{"get": true, "head": ..}`.
async fn read_request(stream: &mut TcpStream) -> Value {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_end, length) = loop {
        let n = stream.read(&mut chunk).await.expect("reads");
        assert!(n > 0, "the client closed before a whole request");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..at]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().expect("a length")))
                .unwrap_or(0);
            break (at + 4, length);
        }
    };
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.expect("reads");
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    if head.starts_with("get ") {
        return json!({ "get": true, "head": head });
    }
    let mut body: Value = serde_json::from_slice(&buf[head_end..head_end + length]).expect("a JSON body");
    body["head"] = Value::from(head);
    body
}

/// An endpoint that answers the handshake as a 2025-11-25 session server with JSON, then
/// hands every later request's connection and body to `then` (the session's GET stream
/// included), each connection on a task of its own. One request per connection: the
/// answers say `connection: close`, or end with it.
async fn endpoint<F, Fut>(then: F) -> String
where
    F: Fn(TcpStream, Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let then = std::sync::Arc::new(then);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let then = then.clone();
            tokio::spawn(async move {
                let request = read_request(&mut stream).await;
                match request["method"].as_str() {
                    Some("initialize") => answer_json(&mut stream, &request["id"], initialize_result()).await,
                    Some("notifications/initialized") => {
                        let _ = stream
                            .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                    }
                    _ => then(stream, request).await,
                }
            });
        }
    });
    url
}

fn client() -> ClientBuilder {
    ClientBuilder::new("t", "0")
        .protocol_versions(["2025-11-25"])
        .max_message_bytes(64 * 1024)
        .request_timeout(Duration::from_secs(10))
}

#[tokio::test]
async fn an_event_larger_than_the_limit_fails_its_request_without_buffering_it_all() {
    let url = endpoint(|mut stream, _| async move {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ").await;
        // One event that never ends: 1 MiB and counting, no newline.
        let filler = vec![b'x'; 64 * 1024];
        for _ in 0..16 {
            if stream.write_all(&filler).await.is_err() {
                return;
            }
        }
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    let err = client.list_tools().await.expect_err("too large");
    assert!(matches!(&err, ClientError::Protocol(m) if m.contains("larger than")), "{err:?}");
}

#[tokio::test]
async fn a_json_body_larger_than_the_limit_fails_its_request() {
    let url = endpoint(|mut stream, request| async move {
        let body =
            json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "pad": "y".repeat(128 * 1024) } }).to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    let err = client.list_tools().await.expect_err("too large");
    assert!(matches!(&err, ClientError::Protocol(m) if m.contains("larger than")), "{err:?}");
}

#[tokio::test]
async fn the_session_id_and_revision_ride_every_later_request_and_statuses_are_http_errors() {
    let url = endpoint(|mut stream, request| async move {
        let head = request["head"].as_str().unwrap_or_default();
        let carried = head.contains("mcp-session-id: s1") && head.contains("mcp-protocol-version: 2025-11-25");
        if request["method"] == "ping" && carried {
            let _ =
                stream.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            return;
        }
        let body = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32000, "message": "nope" } }).to_string();
        let head = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    // The 401 comes only when the session id and revision came along (else the 400 below).
    let err = client.ping().await.expect_err("401");
    assert!(matches!(&err, ClientError::Http { status: 401, .. }), "{err:?}");
    // An error object for no request (`"id": null`) does not answer this one: the status does.
    let err = client.list_tools().await.expect_err("400");
    assert!(matches!(&err, ClientError::Http { status: 400, message } if message.contains("nope")), "{err:?}");
}

/// What `initialize` answers: a 2025-11-25 session.
fn initialize_result() -> Value {
    json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": { "name": "raw", "version": "0" } })
}

/// Answers request `id` with `result` in a JSON body (`Mcp-Session-Id: s1`), closing the
/// connection after it.
async fn answer_json(stream: &mut TcpStream, id: &Value, result: Value) {
    let body = json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
}

/// Writes an event-stream response head and `events`, then closes the connection.
async fn stream_events(stream: &mut TcpStream, events: &str) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let _ = stream.write_all(format!("{head}{events}").as_bytes()).await;
}

#[tokio::test]
async fn a_stream_closed_before_the_answer_is_resumed_with_last_event_id_after_retry() {
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<String>();
    let url = endpoint(move |mut stream, request| {
        let seen = seen_tx.clone();
        async move {
            let head = request["head"].as_str().unwrap_or_default().to_owned();
            if request["get"] == true && head.contains("last-event-id: e1") {
                let _ = seen.send(head);
                let answer = json!({ "jsonrpc": "2.0", "id": 2, "result": { "tools": [] } });
                stream_events(&mut stream, &format!("id: e2\ndata: {answer}\n\n")).await;
            } else if request["get"] == true {
                // The session's own GET stream: this server offers none.
                let _ = stream
                    .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            } else {
                // A priming event with an id and a short retry, then the server hangs up.
                stream_events(&mut stream, "id: e1\nretry: 50\ndata: \n\n").await;
            }
        }
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    let tools = client.list_tools().await.expect("answered on the resumed stream");
    assert!(tools.is_empty());
    let head = seen.recv().await.expect("a resumption");
    assert!(head.contains("mcp-session-id: s1") && head.contains("accept: text/event-stream"), "{head}");
}

#[tokio::test]
async fn a_stream_that_ends_without_the_answer_or_ids_fails_at_once() {
    let url = endpoint(|mut stream, request| async move {
        if request["get"] == true {
            let _ = stream
                .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
            return;
        }
        stream_events(&mut stream, "data: \n\n").await;
    })
    .await;
    let client = client().request_timeout(Duration::from_secs(30)).connect_http(&url).await.expect("connects");
    let started = std::time::Instant::now();
    let err = client.list_tools().await.expect_err("no answer");
    assert!(matches!(&err, ClientError::Transport { message, .. } if message.contains("ended before")), "{err:?}");
    // Not the 30 s timeout: the end of the stream is the answer.
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

#[tokio::test]
async fn the_session_get_stream_carries_the_servers_own_messages() {
    use futures::StreamExt;
    let url = endpoint(|mut stream, request| async move {
        if request["get"] == true {
            let note = json!({ "jsonrpc": "2.0", "method": "notifications/message",
                "params": { "level": "info", "data": "from the GET stream" } });
            // Kept open, as a real server keeps it, until the test ends.
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
            let _ = stream.write_all(format!("{head}id: g1\ndata: {note}\n\n").as_bytes()).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    let mut notes = Box::pin(client.notifications());
    let note = tokio::time::timeout(Duration::from_secs(10), notes.next()).await.expect("in time").expect("one");
    assert_eq!(note.method, "notifications/message");
    assert_eq!(note.params.as_ref().and_then(|p| p.get("data")), Some(&json!("from the GET stream")));
}

#[tokio::test]
async fn requests_after_the_handshake_wait_until_the_get_stream_is_answered() {
    // The server answers the GET late; a request that went out before that answer would
    // reach it while the stream is not open yet.
    let (order_tx, mut order) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let url = endpoint(move |mut stream, request| {
        let order = order_tx.clone();
        async move {
            if request["get"] == true {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let _ = order.send("get answered");
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
                let _ = stream.write_all(format!("{head}id: g1\ndata: \n\n").as_bytes()).await;
                tokio::time::sleep(Duration::from_secs(30)).await;
                return;
            }
            let _ = order.send("tools/list");
            answer_json(&mut stream, &request["id"], json!({ "tools": [] })).await;
        }
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    client.list_tools().await.expect("listed");
    assert_eq!(order.recv().await, Some("get answered"));
    assert_eq!(order.recv().await, Some("tools/list"));
}

#[tokio::test]
async fn a_get_stream_never_answered_holds_requests_up_only_briefly() {
    let url = endpoint(|mut stream, request| async move {
        if request["get"] == true {
            // Never a status line: the client must not wait for it.
            tokio::time::sleep(Duration::from_secs(60)).await;
            return;
        }
        answer_json(&mut stream, &request["id"], json!({})).await;
    })
    .await;
    let client = client().connect_http(&url).await.expect("connects");
    // Within the 10 s request timeout: the wait for the GET ends well before it.
    client.ping().await.expect("answered");
}

/// A session endpoint that answers the `n`th `notifications/initialized` (from 1) with the
/// status line `answer(n)` gives, or, for `None`, with an event stream it holds open; it
/// refuses the GET stream (405) and reports each GET, and answers any request `{}`.
async fn initialized_endpoint(
    answer: impl Fn(usize) -> Option<&'static str> + Send + 'static,
) -> (String, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let (gets_tx, gets) = tokio::sync::mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        let mut initialized = 0;
        loop {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let request = read_request(&mut stream).await;
            let status = if request["get"] == true {
                let _ = gets_tx.send(());
                Some("405 Method Not Allowed")
            } else if request["method"] == "notifications/initialized" {
                initialized += 1;
                let Some(status) = answer(initialized) else {
                    tokio::spawn(async move {
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
                        let _ = stream.write_all(head.as_bytes()).await;
                        tokio::time::sleep(Duration::from_secs(60)).await;
                    });
                    continue;
                };
                Some(status)
            } else {
                None
            };
            if let Some(status) = status {
                let head = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = stream.write_all(head.as_bytes()).await;
                continue;
            }
            let result = if request["method"] == "initialize" { initialize_result() } else { json!({}) };
            answer_json(&mut stream, &request["id"], result).await;
        }
    });
    (url, gets)
}

#[tokio::test]
async fn an_initialized_notification_refused_holds_nothing_up() {
    let (url, mut gets) = initialized_endpoint(|_| Some("500 Internal Server Error")).await;
    let client = client().connect_http(&url).await.expect("connects");
    client.ping().await.expect("answered");
    assert!(gets.try_recv().is_err(), "no GET stream after a refused initialized");
}

#[tokio::test]
async fn an_initialized_sent_again_and_refused_holds_nothing_up() {
    let (url, mut gets) =
        initialized_endpoint(|n| Some(if n == 1 { "202 Accepted" } else { "500 Internal Server Error" })).await;
    let client = client().connect_http(&url).await.expect("connects");
    client.ping().await.expect("answered");
    assert!(gets.recv().await.is_some(), "a GET after the accepted initialized");
    // A second one, refused: the messages after it still go out.
    client.notify("notifications/initialized", json!({})).await.expect("sent");
    client.ping().await.expect("answered after the refused initialized");
}

#[tokio::test]
async fn an_initialized_answered_with_a_stream_held_open_holds_requests_up_only_briefly() {
    let (url, mut gets) = initialized_endpoint(|_| None).await;
    let client = client().connect_http(&url).await.expect("connects");
    // Within the 10 s request timeout: the wait is counted from the notification.
    client.ping().await.expect("answered while the initialized POST is still being read");
    assert!(gets.try_recv().is_err(), "no GET stream: the notification was never accepted");
}
