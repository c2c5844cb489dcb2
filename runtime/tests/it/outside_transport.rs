//! A transport written outside the runtime crate, on its public connection seam alone: JSON-RPC
//! messages one per line over any byte stream (here an in-memory pipe), as a WebSocket or an
//! in-process bridge would carry them. It does every step the built-in transports do (see
//! `docs/architecture.md`, "A transport"): parsing, the incoming and outgoing message filters,
//! the legacy `initialize` handshake and its session, server→client requests and their answers,
//! session notifications from the server's events, cancellation, and 2026-07-28 requests with
//! their notifications ahead of their answer. The tests then talk to it as a client would.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::RequestId;
use switchyard::context::{Connection, MessageFilter, Origin, Outbound, OutboundSender, outbound_channel};
use switchyard::jsonrpc::{Message, error_response, parse_message, success_response};
use switchyard::prelude::*;
use switchyard::server::{DynamicTool, LegacySession};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

// ---- The transport ---------------------------------------------------------------------------

/// One connection of the line transport.
struct LineConnection {
    server: Server,
    out: OutboundSender,
    session: Option<Arc<LegacySession>>,
    /// Requests in flight by id, each with its place in arrival order: an id reused after a
    /// cancellation belongs to the new request only.
    in_flight: Arc<Mutex<HashMap<RequestId, (u64, CancellationToken)>>>,
    next_seq: u64,
    /// What listen limits count this connection's subscriptions by.
    identity: Connection,
    /// Cancelled when the client closes its side: ends the session's notifications.
    closed: CancellationToken,
}

/// Serves one connection until the client closes its side.
async fn serve_lines(server: Server, stream: DuplexStream) {
    let (read, mut write) = tokio::io::split(stream);
    let (out, mut queue) = outbound_channel(256);
    // One writer: answers, notifications and server→client requests leave in queue order.
    let writer = tokio::spawn(async move {
        while let Some(item) = queue.recv().await {
            if let Outbound::Message(payload) = item {
                let mut line = Vec::new();
                payload.write_json(&mut line);
                line.push(b'\n');
                if write.write_all(&line).await.is_err() {
                    return;
                }
            }
        }
    });
    let closed = CancellationToken::new();
    let mut conn = LineConnection {
        server,
        out,
        session: None,
        in_flight: Arc::default(),
        next_seq: 0,
        identity: Connection::new(None),
        closed: closed.clone(),
    };
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        conn.on_line(line.as_bytes()).await;
    }
    closed.cancel();
    drop(conn);
    let _ = writer.await;
}

/// Writes `message` through the server's outgoing message filters.
async fn emit(server: &Server, out: &OutboundSender, message: Value) {
    for m in server.message_filters().outgoing(message) {
        let _ = out.send(Outbound::Message(switchyard::context::Payload::Value(m))).await;
    }
}

impl LineConnection {
    async fn on_line(&mut self, line: &[u8]) {
        if let Ok(v) = serde_json::from_slice::<Value>(line)
            && !self.server.message_filters().incoming(&v)
        {
            return;
        }
        match parse_message(line) {
            Err(f) if f.notification => {}
            Err(f) => emit(&self.server, &self.out, error_response(f.id.as_ref(), &f.error)).await,
            Ok(Message::Notification(n)) => match n.method.as_str() {
                "notifications/initialized" => {
                    if let Some(s) = &self.session {
                        s.mark_initialized();
                    }
                }
                "notifications/cancelled" => {
                    let id = n.params.as_ref().and_then(|p| p.get("requestId")).and_then(RequestId::from_value);
                    if let Some((_, token)) = id.and_then(|id| self.in_flight.lock().expect("lock").remove(&id)) {
                        token.cancel();
                    }
                }
                _ => {}
            },
            Ok(Message::Response { id, outcome }) => {
                if let Some(s) = &self.session {
                    s.client_requests().deliver(&id, outcome);
                }
            }
            // With the 2026-07-28 `_meta` an `initialize` is a stateless request like any other.
            Ok(Message::Request(req))
                if req.method == "initialize"
                    && self.session.is_none()
                    && req
                        .params
                        .as_ref()
                        .and_then(|p| p.get("_meta"))
                        .is_none_or(|m| m.get("io.modelcontextprotocol/protocolVersion").is_none()) =>
            {
                match self.server.initialize(req.params.as_ref(), String::new(), true) {
                    Ok((session, result)) => {
                        self.session = Some(session.clone());
                        emit(&self.server, &self.out, success_response(&req.id, result)).await;
                        let (server, out, closed) = (self.server.clone(), self.out.clone(), self.closed.clone());
                        tokio::spawn(session_notifications(server, session, out, closed));
                    }
                    Err(e) => emit(&self.server, &self.out, error_response(Some(&req.id), &e)).await,
                }
            }
            Ok(Message::Request(req)) => {
                let token = self.server.shutdown_token().child_token();
                let seq = self.next_seq;
                self.next_seq += 1;
                self.in_flight.lock().expect("lock").insert(req.id.clone(), (seq, token.clone()));
                let notifier = self.server.notifier(self.out.clone(), token.clone());
                let id = req.id.clone();
                let origin = Origin::new(token.clone(), notifier).connection(Some(self.identity.clone()));
                let work = self.server.handle_request(req, self.session.as_ref(), origin);
                let (server, out, in_flight) = (self.server.clone(), self.out.clone(), self.in_flight.clone());
                tokio::spawn(async move {
                    let outcome = work.await;
                    let registered = {
                        let mut map = in_flight.lock().expect("lock");
                        let ours = map.get(&id).is_some_and(|(s, _)| *s == seq);
                        if ours {
                            map.remove(&id);
                        }
                        ours
                    };
                    // A request the client cancelled gets no answer.
                    if !registered {
                        return;
                    }
                    let answer = match outcome {
                        Ok(result) => success_response(&id, result.into_value()),
                        Err(e) => error_response(Some(&id), &e),
                    };
                    emit(&server, &out, answer).await;
                });
            }
        }
    }
}

/// The legacy session's notifications, from the server's events.
async fn session_notifications(
    server: Server,
    session: Arc<LegacySession>,
    out: OutboundSender,
    closed: CancellationToken,
) {
    use futures::StreamExt;
    let mut events = server.events();
    loop {
        let event = tokio::select! {
            _ = closed.cancelled() => return,
            event = events.next() => event,
        };
        match event {
            Some(Ok(e)) => {
                if let Some(n) = session.notification_for(&e) {
                    emit(&server, &out, n).await;
                }
            }
            // A lagging session misses events; its client re-lists.
            Some(Err(_)) => {}
            None => return,
        }
    }
}

// ---- The server --------------------------------------------------------------------------------

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

/// Echoes `text` after one progress report.
#[mcp_tool(name = "echo", group = "outside")]
async fn outside_echo(p: Text, progress: Progress) -> Result<String, ToolError> {
    progress.report(1.0, Some(1.0), Some("echoing")).await;
    Ok(p.text)
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// A name.
    name: String,
}

/// Asks the client for a name (a server→client request on a legacy session).
#[mcp_tool(name = "greet", group = "outside")]
async fn outside_greet(ctx: RequestContext) -> Result<String, McpError> {
    match ctx.elicit::<Name>("who", "Name?").await? {
        Elicited::Accept(n) => Ok(format!("Hello, {}!", n.name)),
        _ => Err(McpError::invalid_params("declined")),
    }
}

/// Waits until cancelled.
#[mcp_tool(name = "wait", group = "outside")]
async fn outside_wait(ctx: RequestContext) -> Result<String, ToolError> {
    ctx.cancellation().cancelled().await;
    Ok("cancelled".into())
}

/// Drops `drop/me` on the way in; tags every result on the way out.
struct Tagging;

impl MessageFilter for Tagging {
    fn incoming(&self, message: &Value) -> bool {
        message["method"] != "drop/me"
    }

    fn outgoing(&self, mut message: Value) -> Vec<Value> {
        if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
            result.insert("tagged".into(), json!(true));
        }
        vec![message]
    }
}

// ---- A client ----------------------------------------------------------------------------------

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Client {
    fn connect() -> (Client, Server) {
        let server =
            Server::builder("outside", "1").groups(["outside"]).message_filter(Tagging).build().expect("builds");
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        tokio::spawn(serve_lines(server.clone(), theirs));
        let (read, write) = tokio::io::split(ours);
        (Client { write, lines: BufReader::new(read).lines() }, server)
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.write.write_all(&line).await.expect("write");
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .expect("read")
            .expect("open");
        serde_json::from_str(&line).expect("JSON")
    }

    async fn initialize(&mut self) -> Value {
        self.send(json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},
            "clientInfo":{"name":"t","version":"0"}}}))
            .await;
        let init = self.next().await;
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
        init
    }
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" },
    })
}

// ---- Tests -------------------------------------------------------------------------------------

#[tokio::test]
async fn a_legacy_session_over_an_outside_transport() {
    let (mut c, server) = Client::connect();
    let init = c.initialize().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(init["result"]["tagged"], true, "outgoing filters apply to the handshake: {init}");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true, "{init}");

    // A server→client request, answered by the client, ends the tool.
    c.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{}}})).await;
    let ask = c.next().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    c.send(json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"name":"Ada"}}})).await;
    let done = c.next().await;
    assert_eq!(done["id"], 1, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");

    // The server's events become the session's notifications.
    server.add_tool(DynamicTool::new("late", |_ctx, _args| async { "late" })).expect("adds");
    let changed = c.next().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");

    // The incoming filter drops a request unanswered; the next one is answered.
    c.send(json!({"jsonrpc":"2.0","id":2,"method":"drop/me"})).await;
    c.send(json!({"jsonrpc":"2.0","id":3,"method":"ping"})).await;
    let pong = c.next().await;
    assert_eq!(pong, json!({"jsonrpc":"2.0","id":3,"result":{"tagged":true}}));

    // A cancelled request ends without an answer; the connection goes on.
    c.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait","arguments":{}}})).await;
    c.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}})).await;
    c.send(json!({"jsonrpc":"2.0","id":5,"method":"tools/list"})).await;
    let listed = c.next().await;
    assert_eq!(listed["id"], 5, "no answer for the cancelled request comes first: {listed}");
    assert!(listed["result"]["tools"].as_array().is_some_and(|t| t.len() == 4), "{listed}");
    // Nor later: the next message is the answer to the next request. The cancelled id is free
    // again, and a new request under it is answered.
    c.send(json!({"jsonrpc":"2.0","id":4,"method":"ping"})).await;
    let again = c.next().await;
    assert_eq!(again, json!({"jsonrpc":"2.0","id":4,"result":{"tagged":true}}), "{again}");
}

#[tokio::test]
async fn stateless_requests_over_an_outside_transport() {
    let (mut c, _server) = Client::connect();
    let mut params = json!({ "name": "echo", "arguments": { "text": "hi" }, "_meta": modern_meta() });
    params["_meta"]["progressToken"] = json!("p1");
    c.send(json!({"jsonrpc":"2.0","id":"a","method":"tools/call","params":params})).await;
    // The request's own notification comes before its answer.
    let progress = c.next().await;
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "p1", "{progress}");
    let answer = c.next().await;
    assert_eq!(answer["id"], "a", "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["tagged"], true, "{answer}");

    // Bad input gets its JSON-RPC error, and the connection stays usable.
    c.write.write_all(b"{not json\n").await.expect("write");
    let parse = c.next().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    c.send(json!({"jsonrpc":"2.0","id":"b","method":"tools/list","params":{"_meta":old}})).await;
    let refused = c.next().await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    c.send(json!({"jsonrpc":"2.0","id":"c","method":"server/discover","params":{"_meta":modern_meta()}})).await;
    let discover = c.next().await;
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28", "{discover}");
}
