//! Streamable HTTP: every message the client sends is one POST to the endpoint; the answer
//! comes back as that POST's body, JSON or an SSE stream
//! ([Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)).
//!
//! The headers follow from each message, so this layer needs no word from the session layer:
//! a message carrying the 2026-07-28 `_meta` version gets `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` (2026-07-28 HTTP header mirroring); `initialize`'s answer
//! gives the legacy session's `Mcp-Session-Id` and revision, sent on every later message and
//! ended with `DELETE` when the client closes.

use crate::error::ClientError;
use crate::peer::Incoming;
use futures::{Sink, Stream, StreamExt};
use serde_json::Value;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use switchyard::protocol::META_PROTOCOL_VERSION;
use tokio::sync::mpsc;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const INCOMING_BUFFER: usize = 1024;

/// The endpoint and what the server said about the session.
struct Endpoint {
    http: reqwest::Client,
    url: String,
    max_bytes: usize,
    /// `Mcp-Session-Id` and revision of a legacy session, once `initialize` answered.
    session: Mutex<Option<(Option<String>, String)>>,
    incoming: mpsc::Sender<Incoming>,
}

/// The message stream pair of a Streamable HTTP endpoint at `url`.
pub(crate) fn connect(
    http: reqwest::Client,
    url: String,
    max_bytes: usize,
) -> (
    impl Stream<Item = Incoming> + Send + Unpin + 'static,
    impl Sink<Value, Error = ClientError> + Send + Unpin + 'static,
) {
    let (tx, rx) = mpsc::channel(INCOMING_BUFFER);
    let endpoint = Arc::new(Endpoint { http, url, max_bytes, session: Mutex::new(None), incoming: tx });
    let incoming = Box::pin(futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) }));
    (incoming, Posts { endpoint, closing: None })
}

/// The sending half: each message is posted on a task of its own, so a long call does not
/// hold up the messages after it; closing ends a legacy session.
struct Posts {
    endpoint: Arc<Endpoint>,
    closing: Option<futures::future::BoxFuture<'static, ()>>,
}

impl Sink<Value> for Posts {
    type Error = ClientError;

    fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, message: Value) -> Result<(), ClientError> {
        tokio::spawn(self.endpoint.clone().post(message));
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        let endpoint = self.endpoint.clone();
        let closing = self.closing.get_or_insert_with(|| Box::pin(async move { endpoint.end_session().await }));
        closing.as_mut().poll(cx).map(Ok)
    }
}

impl Endpoint {
    async fn post(self: Arc<Self>, message: Value) {
        let id = message.get("id").and_then(Value::as_i64);
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        let outcome = self.exchange(&message, method.as_deref()).await;
        if let Err(error) = outcome {
            match id {
                Some(id) if method.is_some() => {
                    let _ = self.incoming.send(Incoming::Failed(id, error)).await;
                }
                // A notification or an answer to the server that did not arrive: nobody waits.
                _ => tracing::debug!(target: "switchyard_client", error = %error, "a message could not be posted"),
            }
        }
    }

    async fn exchange(&self, message: &Value, method: Option<&str>) -> Result<(), ClientError> {
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json, text/event-stream");
        let modern = message.pointer(&format!("/params/_meta/{}", META_PROTOCOL_VERSION.replace('/', "~1")));
        if let Some(version) = modern.and_then(Value::as_str) {
            request = request.header(VERSION_HEADER, version);
            if let Some(method) = method {
                request = request.header("mcp-method", method);
                if let Some(name) = routing_name(method, message) {
                    request = request.header("mcp-name", name);
                }
            }
        } else if let Some((session, version)) = self.session.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            request = request.header(VERSION_HEADER, version);
            if let Some(session) = session {
                request = request.header(SESSION_HEADER, session);
            }
        }
        let body = serde_json::to_vec(message).map_err(|e| ClientError::Encode(e.to_string()))?;
        let response =
            request.body(body).send().await.map_err(|e| ClientError::transport(format!("POST {}", self.url), e))?;
        let status = response.status();
        let session = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let media = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            return Ok(());
        }
        match media.as_deref() {
            Some("text/event-stream") if status.is_success() => {
                let initialize = (method == Some("initialize")).then_some(session);
                self.read_events(response, initialize).await
            }
            Some("application/json") => {
                let body = self.read_body(response).await?;
                if method == Some("initialize") && status.is_success() {
                    self.remember_session(&body, session);
                }
                // A JSON-RPC error for this very request in a 4xx body answers it as any error
                // does; anything else (`"id": null`, another id) is the status speaking.
                if status.is_success() || answers(&body, message.get("id")) {
                    let _ = self.incoming.send(Incoming::Message(body)).await;
                    Ok(())
                } else {
                    Err(http_error(status, &body))
                }
            }
            _ if status.is_success() => Err(ClientError::Protocol(format!(
                "POST {}: HTTP {status} with Content-Type {}, neither JSON nor an event stream",
                self.url,
                media.as_deref().unwrap_or("(none)")
            ))),
            _ => {
                let body = self.read_body(response).await.unwrap_or_default();
                Err(http_error(status, &body))
            }
        }
    }

    /// The body, at most `max_bytes`.
    async fn read_body(&self, response: reqwest::Response) -> Result<Vec<u8>, ClientError> {
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| ClientError::transport(format!("reading the answer of {}", self.url), e))?;
            if body.len() + chunk.len() > self.max_bytes {
                return Err(ClientError::Protocol(format!(
                    "the answer of {} is larger than {} bytes",
                    self.url, self.max_bytes
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Each event's `data` is one message; the stream ends after the server's answer. For an
    /// `initialize` (`initialize` holds the response's `Mcp-Session-Id`), the session is
    /// recorded from its answer before the answer is passed on, so the messages that follow
    /// carry it.
    async fn read_events(
        &self,
        response: reqwest::Response,
        initialize: Option<Option<String>>,
    ) -> Result<(), ClientError> {
        let max = self.max_bytes;
        // The parser keeps an unfinished event whole, so the bytes handed to it since the last
        // event are counted here: one event may not exceed the message limit.
        let since_event = Arc::new(AtomicUsize::new(0));
        let counted = since_event.clone();
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            if counted.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > max {
                return Err(std::io::Error::other(format!("an event is larger than {max} bytes")));
            }
            Ok(chunk)
        });
        let mut events = sse_stream::SseStream::from_bytes_stream(bytes);
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| ClientError::Protocol(format!("the event stream of {}: {e}", self.url)))?;
            since_event.store(0, Ordering::Relaxed);
            let Some(data) = event.data else { continue };
            if data.trim().is_empty() {
                continue;
            }
            if let Some(session) = &initialize {
                self.remember_session(data.as_bytes(), session.clone());
            }
            if self.incoming.send(Incoming::Message(data.into_bytes())).await.is_err() {
                break;
            }
        }
        Ok(())
    }

    fn remember_session(&self, body: &[u8], session: Option<String>) {
        let version = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.pointer("/result/protocolVersion").and_then(Value::as_str).map(str::to_owned));
        if let Some(version) = version {
            *self.session.lock().unwrap_or_else(|p| p.into_inner()) = Some((session, version));
        }
    }

    /// Ends a legacy session with `DELETE` (a 405 means the server keeps sessions until they
    /// expire; nothing to do).
    async fn end_session(&self) {
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some((Some(id), version)) = session else { return };
        let deleted =
            self.http.delete(&self.url).header(SESSION_HEADER, id).header(VERSION_HEADER, version).send().await;
        if let Err(e) = deleted {
            tracing::debug!(target: "switchyard_client", error = %e, "DELETE of the session failed");
        }
    }
}

/// `Mcp-Name`: what a 2026-07-28 request routes by (`params.name`, `params.uri`, `params.taskId`).
fn routing_name<'a>(method: &str, message: &'a Value) -> Option<&'a str> {
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    message.get("params")?.get(field)?.as_str()
}

/// Whether `body` is a JSON-RPC error response to the request with `id`.
fn answers(body: &[u8], id: Option<&Value>) -> bool {
    let Some(id) = id.filter(|id| !id.is_null()) else { return false };
    serde_json::from_slice::<Value>(body).is_ok_and(|v| v.get("error").is_some() && v.get("id") == Some(id))
}

fn http_error(status: reqwest::StatusCode, body: &[u8]) -> ClientError {
    let shown = String::from_utf8_lossy(&body[..body.len().min(300)]).trim().to_owned();
    let message = if shown.is_empty() { status.canonical_reason().unwrap_or("no reason").to_owned() } else { shown };
    ClientError::Http { status: status.as_u16(), message }
}
