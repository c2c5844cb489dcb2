//! An in-process MCP client for tests: drives a [`Server`] through the real stdio framing over an
//! in-memory pipe, with no port and no subprocess, in either protocol era.
//!
//! ```
//! # use switchyard::{Server, testing::TestClient};
//! # use serde_json::json;
//! # #[tokio::main] async fn main() {
//! let server = Server::builder("t", "0").groups(["none"]).build().expect("builds");
//! let client = TestClient::modern(server.clone());
//! let reply = client.request("server/discover", json!({})).await;
//! assert_eq!(reply.result()["resultType"], "complete");
//! // A server without tools has no `tools` capability: tools/call is -32601.
//! assert_eq!(client.call_tool("echo", json!({})).await.error_code(), Some(-32601));
//!
//! let legacy = TestClient::legacy(server, "2025-11-25").await.expect("initialize");
//! assert_eq!(legacy.raw_request("ping", json!({})).await.result(), &json!({}));
//! # }
//! ```

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
pub use http::HttpTestServer;
mod typed;
pub use typed::TestCallError;

use crate::protocol::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, MODERN_VERSION};
use crate::server::Server;
use crate::transport::stdio::{StdioConfig, serve_io};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The reply to one request, with the notifications that arrived while it was in flight.
#[derive(Debug, Clone)]
pub struct TestReply {
    /// The whole JSON-RPC response object.
    pub response: Value,
    /// Notifications received between sending the request and its response, in order.
    pub notifications: Vec<Value>,
}

impl TestReply {
    /// The `result` object. Panics (this is test code) when the response is an error.
    pub fn result(&self) -> &Value {
        assert!(self.response.get("error").is_none(), "expected a result, got {}", self.response);
        &self.response["result"]
    }

    /// The `error` object. Panics when the response is a result.
    pub fn error(&self) -> &Value {
        assert!(self.response.get("result").is_none(), "expected an error, got {}", self.response);
        &self.response["error"]
    }

    /// The error code, when the response is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.response.get("error").and_then(|e| e.get("code")).and_then(Value::as_i64)
    }
}

type Pending = Arc<Mutex<HashMap<String, (oneshot::Sender<Value>, usize)>>>;

/// Answers input requests as a client would: `(method, params) -> result`, e.g.
/// `("elicitation/create", {..}) -> {"action":"accept","content":{..}}`.
pub type InputAnswerer = Arc<dyn Fn(&str, &Value) -> Value + Send + Sync>;

type AnswererSlot = Arc<Mutex<Option<InputAnswerer>>>;

/// A test client connected to an in-process server. See the [module docs](self).
pub struct TestClient {
    tx: mpsc::Sender<String>,
    pending: Pending,
    notifications: Arc<Mutex<Vec<Value>>>,
    next_id: AtomicI64,
    modern: bool,
    capabilities: Value,
    answerer: AnswererSlot,
}

impl TestClient {
    fn connect(server: Server, modern: bool) -> TestClient {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(serve_io(server, server_read, server_write, StdioConfig::default()));
        let (read, mut write) = tokio::io::split(client_io);
        let (tx, mut rx) = mpsc::channel::<String>(64);
        tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if write.write_all(line.as_bytes()).await.is_err() || write.write_all(b"\n").await.is_err() {
                    break;
                }
            }
            // Dropping the writer closes the server's stdin: it sees EOF.
        });
        let pending: Pending = Arc::default();
        let notifications: Arc<Mutex<Vec<Value>>> = Arc::default();
        let answerer: AnswererSlot = Arc::default();
        let (p, n, a, reply_tx) = (pending.clone(), notifications.clone(), answerer.clone(), tx.downgrade());
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
                let id_key = msg.get("id").map(Value::to_string);
                let is_response = msg.get("result").is_some() || msg.get("error").is_some();
                // A server→client request of a legacy session: answered when an answerer is set.
                let answer = a.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if let (Some(answer), Some(method), Some(id)) =
                    (answer, msg.get("method").and_then(Value::as_str), msg.get("id"))
                {
                    let result = answer(method, msg.get("params").unwrap_or(&Value::Null));
                    let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result });
                    // Weak: the client's own sender alone keeps the server's stdin open.
                    if let Some(tx) = reply_tx.upgrade() {
                        let _ = tx.send(reply.to_string()).await;
                    }
                    continue;
                }
                let mut log = n.lock().unwrap_or_else(|e| e.into_inner());
                match id_key {
                    Some(key) if is_response => {
                        if let Some((tx, start)) = p.lock().unwrap_or_else(|e| e.into_inner()).remove(&key) {
                            let notes: Vec<Value> = log[start.min(log.len())..].to_vec();
                            let _ = tx.send(json!({ "response": msg, "notifications": notes }));
                        }
                    }
                    _ => log.push(msg),
                }
            }
        });
        TestClient { tx, pending, notifications, next_id: AtomicI64::new(1), modern, capabilities: json!({}), answerer }
    }

    /// A client speaking 2026-07-28: every request gets the required `_meta`, with the client
    /// capabilities set by [`with_capabilities`](Self::with_capabilities) (default `{}`).
    pub fn modern(server: Server) -> TestClient {
        Self::connect(server, true)
    }

    /// A client that first runs the legacy handshake (`initialize` with `version`, then
    /// `notifications/initialized`) with capabilities `{sampling:{}, elicitation:{}, roots:{}}`.
    ///
    /// Errors: the `initialize` error response, if the server refused.
    pub async fn legacy(server: Server, version: &str) -> Result<TestClient, Value> {
        Self::legacy_with_capabilities(server, version, json!({ "sampling": {}, "elicitation": {}, "roots": {} })).await
    }

    /// [`legacy`](Self::legacy) declaring `capabilities` in `initialize` instead (a legacy
    /// session's capabilities are those of its handshake; an extension's negotiation, say
    /// `{"extensions": {"io.modelcontextprotocol/ui": {..}}}`, is tested this way).
    ///
    /// Errors: the `initialize` error response, if the server refused.
    pub async fn legacy_with_capabilities(
        server: Server,
        version: &str,
        capabilities: Value,
    ) -> Result<TestClient, Value> {
        let client = Self::connect(server, false);
        let reply = client
            .raw_request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": { "name": "switchyard-test-client", "version": "0" },
                }),
            )
            .await;
        if reply.response.get("error").is_some() {
            return Err(reply.response);
        }
        client.notify("notifications/initialized", json!({})).await;
        Ok(client)
    }

    /// Sets the client capabilities sent in modern `_meta`.
    pub fn with_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Answers the server's input requests with `answer(method, params) -> result`, as a real
    /// client would on each path: a legacy client answers `elicitation/create`,
    /// `sampling/createMessage` and `roots/list` requests from the server; a modern client,
    /// given an `input_required` result by [`request`](Self::request), answers every entry of
    /// `inputRequests` and retries with `inputResponses` and the `requestState` (up to 16
    /// rounds). Without it both are left to the test.
    pub fn answering(self, answer: impl Fn(&str, &Value) -> Value + Send + Sync + 'static) -> Self {
        *self.answerer.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(answer));
        self
    }

    /// All notifications received so far that were not matched to a reply window.
    pub fn notifications(&self) -> Vec<Value> {
        self.notifications.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits (polling every 10 ms, at most `within`) for a received notification that
    /// `matches`; returns the first one, or `None` when none arrived in time.
    pub async fn wait_for_notification(&self, matches: impl Fn(&Value) -> bool, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(m) = self.notifications().into_iter().find(|m| matches(m)) {
                return Some(m);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Sends one raw line (for malformed-input tests) without waiting for anything.
    pub async fn send_line(&self, line: &str) {
        let _ = self.tx.send(line.to_owned()).await;
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let msg = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        self.send_line(&msg.to_string()).await;
    }

    /// The id the next request will use.
    pub fn next_id(&self) -> i64 {
        self.next_id.load(Ordering::SeqCst)
    }

    /// Sends `method` with `params` exactly as given (no `_meta` added) and waits for the reply.
    pub async fn raw_request(&self, method: &str, params: Value) -> TestReply {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_and_wait(json!(id), msg.to_string()).await
    }

    /// Sends a raw line carrying the request id `id` and waits for the response with that id.
    pub async fn send_and_wait(&self, id: Value, line: String) -> TestReply {
        let (tx, rx) = oneshot::channel();
        let start = self.notifications.lock().unwrap_or_else(|e| e.into_inner()).len();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string(), (tx, start));
        self.send_line(&line).await;
        let v = rx.await.unwrap_or_else(
            |_| json!({ "response": { "error": { "code": 0, "message": "connection closed" } }, "notifications": [] }),
        );
        TestReply {
            response: v["response"].clone(),
            notifications: v["notifications"].as_array().cloned().unwrap_or_default(),
        }
    }

    /// Sends a request; a modern client adds the required `_meta` (keeping any `_meta` keys
    /// already in `params`, such as `progressToken`).
    pub async fn request(&self, method: &str, params: Value) -> TestReply {
        let mut params = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if self.modern {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(m) = meta {
                m.entry(META_PROTOCOL_VERSION).or_insert_with(|| json!(MODERN_VERSION));
                m.entry(META_CLIENT_CAPABILITIES).or_insert_with(|| self.capabilities.clone());
                m.entry(META_CLIENT_INFO)
                    .or_insert_with(|| json!({ "name": "switchyard-test-client", "version": "0" }));
            }
        }
        let answer = self.answerer.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut reply = self.raw_request(method, Value::Object(params.clone())).await;
        let Some(answer) = answer.filter(|_| self.modern) else { return reply };
        for _ in 0..16 {
            let result = &reply.response["result"];
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                break;
            }
            let mut responses = Map::new();
            for (key, req) in result.get("inputRequests").and_then(Value::as_object).into_iter().flatten() {
                let method = req.get("method").and_then(Value::as_str).unwrap_or_default();
                responses.insert(key.clone(), answer(method, req.get("params").unwrap_or(&Value::Null)));
            }
            params.insert("inputResponses".into(), Value::Object(responses));
            match result.get("requestState") {
                Some(s) => params.insert("requestState".into(), s.clone()),
                None => params.remove("requestState"),
            };
            reply = self.raw_request(method, Value::Object(params.clone())).await;
        }
        reply
    }

    /// `tools/call` of `name` with `arguments`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> TestReply {
        self.request("tools/call", json!({ "name": name, "arguments": arguments })).await
    }
}
