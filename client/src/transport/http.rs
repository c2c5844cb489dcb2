//! Streamable HTTP: every message the client sends is one POST to the endpoint; the answer
//! comes back as that POST's body, JSON or an SSE stream
//! ([Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)).
//!
//! The headers follow from each message, so this layer needs no word from the session layer:
//! a message carrying the 2026-07-28 `_meta` version gets `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name` (2026-07-28 HTTP header mirroring); `initialize`'s answer
//! gives the legacy session's `Mcp-Session-Id` and revision, sent on every later message and
//! ended with `DELETE` when the client closes. A `tools/call` mirrors the arguments its tool's
//! schema marks with `x-mcp-header` in `Mcp-Param-*` headers (`param_headers.rs`).
//!
//! On a session, once `notifications/initialized` went out, a `GET` opens the stream the
//! server sends its own requests and notifications on outside any request (reopened after the
//! server's `retry` when it ends, with `Last-Event-ID` when its events have ids; a `405` means
//! the server offers none)
//! ([listening](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server)).
//! The messages sent after `notifications/initialized` are posted once that GET has its
//! answer (a stream, or a refusal), once the notification turns out to open none (refused,
//! failed), or [`LISTEN_WAIT`] after it was sent at the latest: what the server sends on the
//! stream because of a request (a list change, a resource update) then finds the stream open,
//! even on a server that keeps no events for a stream opened later.
//!
//! An event stream that ends before the answer to its request: on a session whose server
//! numbered its events, the client waits the server's `retry` and resumes with a `GET` carrying
//! `Last-Event-ID` ([resumability](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery));
//! otherwise the request fails at once with [`ClientError::Transport`] rather than waiting for
//! its timeout.

use crate::error::ClientError;
#[cfg(feature = "oauth")]
use crate::oauth::{Challenge, Credentials, OAuthSession};
use crate::param_headers::ParamHeaders;
use crate::peer::Incoming;
use futures::{Sink, Stream, StreamExt};
use serde_json::Value;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use switchyard::protocol::META_PROTOCOL_VERSION;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const INCOMING_BUFFER: usize = 1024;
/// How long to wait before resuming a stream whose server gave no `retry`.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// The most resumptions in a row that bring no event: a server that keeps closing the stream
/// at once cannot keep a request resuming forever (its timeout, which cancels it, or closing
/// the client end it in any case).
const MAX_IDLE_RESUMPTIONS: u32 = 5;
/// The longest `retry` honoured: a server cannot park a reconnection for hours.
const MAX_RETRY: Duration = Duration::from_secs(60);
/// The shortest wait before the session's GET stream is opened again, doubled for each
/// reopening in a row that brought no message.
const MIN_RECONNECT: Duration = Duration::from_millis(100);
/// The longest the messages after `notifications/initialized` wait, counted from when it was
/// sent, for the session's GET stream to be answered: a server slow to accept the
/// notification or to answer the GET delays them no more than this.
const LISTEN_WAIT: Duration = Duration::from_secs(2);

/// The endpoint and what the server said about the session.
struct Endpoint {
    http: reqwest::Client,
    url: String,
    max_bytes: usize,
    /// `Mcp-Session-Id` and revision of a legacy session, once `initialize` answered.
    session: Mutex<Option<(Option<String>, String)>>,
    incoming: mpsc::Sender<Incoming>,
    param_headers: Arc<ParamHeaders>,
    /// Cancelled when the client closes: ends the GET stream.
    closed: CancellationToken,
    /// From `notifications/initialized` until the session's GET stream is answered (or will
    /// not be opened), the time the messages sent after it stop waiting: they wait for `None`
    /// until then.
    listening: tokio::sync::watch::Sender<Option<tokio::time::Instant>>,
    /// How many GET stream tasks were started (one per accepted `notifications/initialized`).
    listens_started: AtomicUsize,
    /// The POSTs of requests still being read, by request id: cancelling one closes its stream.
    inflight: Mutex<std::collections::HashMap<i64, tokio::task::AbortHandle>>,
    /// Signing in, when the client was given an `OAuthConfig`.
    #[cfg(feature = "oauth")]
    auth: Option<Arc<OAuthSession>>,
}

/// Whether a message waits for the session's GET stream before it is posted.
enum Gate {
    /// Posted at once.
    Open,
    /// Sent after `notifications/initialized`: posted once `listening` reads `None`, or at
    /// `until`.
    Waits { listening: tokio::sync::watch::Receiver<Option<tokio::time::Instant>>, until: tokio::time::Instant },
    /// `notifications/initialized` itself, with the count of GET tasks started before it.
    Opens { listens: usize },
}

/// Where an event stream stands, for resuming it.
struct StreamState {
    /// The id of the last event received (`Last-Event-ID` of a resumption).
    last_event_id: Option<String>,
    /// How long the server asked the client to wait before reconnecting.
    retry: Duration,
    /// Whether the answer to the request arrived.
    answered: bool,
    /// Events received since the stream was (re)opened.
    events: usize,
    /// Messages (events with data) received since the stream was (re)opened.
    messages: usize,
    /// The client no longer reads what arrives.
    gone: bool,
}

impl StreamState {
    fn new() -> Self {
        StreamState { last_event_id: None, retry: DEFAULT_RETRY, answered: false, events: 0, messages: 0, gone: false }
    }
}

/// The message stream pair of a Streamable HTTP endpoint at `url`.
pub(crate) fn connect(
    http: reqwest::Client,
    url: String,
    max_bytes: usize,
    param_headers: Arc<ParamHeaders>,
    #[cfg(feature = "oauth")] auth: Option<Arc<OAuthSession>>,
) -> (
    impl Stream<Item = Incoming> + Send + Unpin + 'static,
    impl Sink<Value, Error = ClientError> + Send + Unpin + 'static,
) {
    let (tx, rx) = mpsc::channel(INCOMING_BUFFER);
    let endpoint = Arc::new(Endpoint {
        http,
        url,
        max_bytes,
        session: Mutex::new(None),
        incoming: tx,
        param_headers,
        inflight: Mutex::default(),
        closed: CancellationToken::new(),
        listening: tokio::sync::watch::Sender::new(None),
        listens_started: AtomicUsize::new(0),
        #[cfg(feature = "oauth")]
        auth,
    });
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
        let endpoint = &self.endpoint;
        if message.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            // Cancelling closes the request's stream (how 2026-07-28 cancels over HTTP, and
            // what ends a subscriptions/listen); a session also gets the notification.
            let cancelled = message.pointer("/params/requestId").and_then(Value::as_i64);
            if let Some(post) = cancelled.and_then(|id| endpoint.inflight().remove(&id)) {
                post.abort();
            }
            if endpoint.session.lock().unwrap_or_else(|p| p.into_inner()).is_none() {
                return Ok(());
            }
        }
        let request_id = message.get("id").and_then(Value::as_i64).filter(|_| message.get("method").is_some());
        // Decided here, in the order the messages are sent: the messages sent after an
        // `initialized` wait, the ones before it do not, whenever their tasks first run.
        let opens_stream = message.get("method").and_then(Value::as_str) == Some("notifications/initialized")
            && modern_version(&message).is_none();
        let gate = if opens_stream {
            endpoint.listening.send_replace(Some(tokio::time::Instant::now() + LISTEN_WAIT));
            Gate::Opens { listens: endpoint.listens_started.load(Ordering::Acquire) }
        } else {
            match *endpoint.listening.borrow() {
                Some(until) => Gate::Waits { listening: endpoint.listening.subscribe(), until },
                None => Gate::Open,
            }
        };
        // Held while spawning, so the task's own removal cannot come before the insert.
        let mut inflight = endpoint.inflight();
        let post = tokio::spawn(endpoint.clone().post(message, gate));
        if let Some(id) = request_id {
            inflight.insert(id, post.abort_handle());
        }
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        self.endpoint.closed.cancel();
        let endpoint = self.endpoint.clone();
        let closing = self.closing.get_or_insert_with(|| Box::pin(async move { endpoint.end_session().await }));
        closing.as_mut().poll(cx).map(Ok)
    }
}

impl Drop for Posts {
    fn drop(&mut self) {
        self.endpoint.closed.cancel();
    }
}

impl Endpoint {
    fn inflight(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<i64, tokio::task::AbortHandle>> {
        self.inflight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Posts `message` (once its `gate` lets it) and passes on what answers it.
    async fn post(self: Arc<Self>, message: Value, gate: Gate) {
        let id = message.get("id").and_then(Value::as_i64);
        let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
        // Closing the client ends every POST still being read (or resumed).
        let closed = self.closed.clone();
        let opens = match gate {
            Gate::Opens { listens } => Some(listens),
            _ => None,
        };
        let outcome = tokio::select! {
            outcome = async {
                if let Gate::Waits { mut listening, until } = gate {
                    // The sender lives as long as `self`: no error comes before the time.
                    let _ = tokio::time::timeout_at(until, listening.wait_for(Option::is_none)).await;
                }
                self.exchange(&message, method.as_deref()).await
            } => outcome,
            () = closed.cancelled() => Ok(()),
        };
        // An `initialized` that did not lead to a GET stream (refused, failed, or a server
        // that answered it otherwise) holds nothing up any longer.
        if opens.is_some_and(|before| self.listens_started.load(Ordering::Acquire) == before) {
            self.listening.send_replace(None);
        }
        if let Some(id) = id.filter(|_| method.is_some()) {
            self.inflight().remove(&id);
        }
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

    async fn exchange(self: &Arc<Self>, message: &Value, method: Option<&str>) -> Result<(), ClientError> {
        let modern = modern_version(message);
        let body = bytes::Bytes::from(serde_json::to_vec(message).map_err(|e| ClientError::Encode(e.to_string()))?);
        #[cfg(feature = "oauth")]
        let mut retried = Retried::default();
        // Without sign-in there is nothing to retry: one pass.
        #[cfg_attr(not(feature = "oauth"), allow(clippy::never_loop))]
        let response = loop {
            let request = self.post_request(message, method, modern.and_then(Value::as_str));
            #[cfg(feature = "oauth")]
            let (request, generation) = self.with_token(request, "POST").await;
            let response = request
                .body(body.clone())
                .send()
                .await
                .map_err(|e| ClientError::transport(format!("POST {}", self.url), e))?;
            // A server that refuses the new token as well answers the request with its status.
            #[cfg(feature = "oauth")]
            let fresh_nonce = self.auth.as_ref().is_some_and(|auth| auth.remember_nonce(response.headers()));
            #[cfg(feature = "oauth")]
            if let Some((auth, status, challenge)) = self.refusal(&response) {
                // RFC 9449 §9: the server wants a nonce in the proof; the token is fine.
                // Never a reason to sign in again (and perhaps open a browser): a nonce that
                // came back, or a second one, ends the message with the server's status.
                if challenge.error.as_deref() == Some("use_dpop_nonce") && auth.holds_bound_token() {
                    if fresh_nonce && !retried.nonce {
                        retried.nonce = true;
                        continue;
                    }
                    break response;
                }
                let done = if status == 401 { &mut retried.sign_in } else { &mut retried.step_up };
                if !*done {
                    *done = true;
                    auth.renew(status, &challenge, generation).await?;
                    continue;
                }
            }
            break response;
        };
        let status = response.status();
        let session = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let media = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
        if status == reqwest::StatusCode::ACCEPTED || status == reqwest::StatusCode::NO_CONTENT {
            if method == Some("notifications/initialized") && modern.is_none() {
                self.listens_started.fetch_add(1, Ordering::AcqRel);
                tokio::spawn(self.clone().listen());
            }
            return Ok(());
        }
        match media.as_deref() {
            Some("text/event-stream") if status.is_success() => {
                let initialize = (method == Some("initialize")).then_some(session);
                let request_id = message.get("id").filter(|_| method.is_some());
                self.read_events(response, initialize, request_id, modern.is_none()).await
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

    /// Each event's `data` is one message; the stream ends after the server's answer to
    /// `request_id`. For an `initialize` (`initialize` holds the response's `Mcp-Session-Id`),
    /// the session is recorded from its answer before the answer is passed on, so the messages
    /// that follow carry it. A stream that ends first is resumed on a session (`resumable`)
    /// when its events have ids; otherwise the request fails.
    async fn read_events(
        &self,
        response: reqwest::Response,
        initialize: Option<Option<String>>,
        request_id: Option<&Value>,
        resumable: bool,
    ) -> Result<(), ClientError> {
        let mut state = StreamState::new();
        let mut response = response;
        let mut idle = 0;
        loop {
            let read = self.read_stream(response, &initialize, request_id, &mut state).await;
            let Some(id) = request_id else { return read };
            if state.answered || state.gone {
                return Ok(());
            }
            idle = if state.events == 0 { idle + 1 } else { 0 };
            let Some(last) = state.last_event_id.clone().filter(|_| resumable && idle <= MAX_IDLE_RESUMPTIONS) else {
                return Err(read.err().unwrap_or_else(|| ClientError::Transport {
                    message: format!("the event stream of {} ended before the answer to request {id}", self.url),
                    source: None,
                }));
            };
            tokio::time::sleep(state.retry).await;
            state.events = 0;
            response = self.open_stream(Some(&last)).await?;
        }
    }

    /// Reads one event stream to its end, passing each message on.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        initialize: &Option<Option<String>>,
        request_id: Option<&Value>,
        state: &mut StreamState,
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
            state.events += 1;
            if let Some(id) = event.id.filter(|id| !id.is_empty()) {
                state.last_event_id = Some(id);
            }
            if let Some(retry) = event.retry {
                state.retry = Duration::from_millis(retry).min(MAX_RETRY);
            }
            let Some(data) = event.data else { continue };
            if data.trim().is_empty() {
                continue;
            }
            if let Some(session) = initialize {
                self.remember_session(data.as_bytes(), session.clone());
            }
            state.messages += 1;
            if request_id.is_some_and(|id| answers_request(&data, id)) {
                state.answered = true;
            }
            let message = match request_id.and_then(Value::as_i64) {
                Some(id) => Incoming::Related(id, data.into_bytes()),
                None => Incoming::Message(data.into_bytes()),
            };
            if self.incoming.send(message).await.is_err() {
                state.gone = true;
                break;
            }
            if state.answered {
                break;
            }
        }
        Ok(())
    }

    /// A POST of `message` with the headers it calls for: on 2026-07-28 (`version`) the
    /// version, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`; on a session its id and revision.
    fn post_request(&self, message: &Value, method: Option<&str>, version: Option<&str>) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json, text/event-stream");
        if let Some(version) = version {
            request = request.header(VERSION_HEADER, version);
            if let Some(method) = method {
                request = request.header("mcp-method", method);
                if let Some(name) = routing_name(method, message) {
                    request = request.header("mcp-name", name);
                }
                if method == "tools/call"
                    && let Some(tool) = routing_name(method, message)
                {
                    let arguments = message.get("params").and_then(|p| p.get("arguments"));
                    for (name, value) in self.param_headers.for_call(tool, arguments) {
                        request = request.header(name, value);
                    }
                }
            }
        } else if let Some((session, version)) = self.session.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            request = request.header(VERSION_HEADER, version);
            if let Some(session) = session {
                request = request.header(SESSION_HEADER, session);
            }
        }
        request
    }

    /// `request` (an HTTP `method` to the endpoint) with the current access token (and its
    /// DPoP proof when the token is bound to a key), and the token's generation.
    #[cfg(feature = "oauth")]
    async fn with_token(&self, request: reqwest::RequestBuilder, method: &str) -> (reqwest::RequestBuilder, u64) {
        let Some(auth) = &self.auth else { return (request, 0) };
        let (credentials, generation) = auth.credentials(method).await;
        let Some(Credentials { authorization, proof }) = credentials else { return (request, generation) };
        let mut request = request.header(reqwest::header::AUTHORIZATION, authorization);
        if let Some(proof) = proof {
            request = request.header("dpop", proof);
        }
        (request, generation)
    }

    /// The sign-in and the challenge when `response` refuses the request's token: a `401`, or
    /// a `403` with `insufficient_scope`
    /// ([scope challenges](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#scope-challenge-handling)).
    #[cfg(feature = "oauth")]
    fn refusal(&self, response: &reqwest::Response) -> Option<(&OAuthSession, u16, Challenge)> {
        let auth = self.auth.as_deref()?;
        let status = response.status().as_u16();
        if status != 401 && status != 403 {
            return None;
        }
        let values = response.headers().get_all(reqwest::header::WWW_AUTHENTICATE);
        let challenge = Challenge::from_headers(values.iter().filter_map(|v| v.to_str().ok()));
        if status == 403 && challenge.error.as_deref() != Some("insufficient_scope") {
            return None;
        }
        Some((auth, status, challenge))
    }

    /// Keeps the session's GET stream open until the client closes: reopened after the
    /// server's `retry` when it ends. Stops for good when the server offers no stream (`405`),
    /// refuses it (another status: a gone session's `404`), or cannot be reached
    /// [`MAX_IDLE_RESUMPTIONS`] times in a row.
    async fn listen(self: Arc<Self>) {
        let closed = self.closed.clone();
        tokio::select! {
            () = closed.cancelled() => {}
            () = self.listen_until_refused() => {}
        }
    }

    async fn listen_until_refused(&self) {
        let mut state = StreamState::new();
        let mut idle = 0;
        loop {
            let opened = self.open_stream(state.last_event_id.as_deref()).await;
            // Answered: the messages held for it go now.
            self.listening.send_if_modified(|until| until.take().is_some());
            match opened {
                Ok(response) => {
                    state.messages = 0;
                    if let Err(e) = self.read_stream(response, &None, None, &mut state).await {
                        tracing::debug!(target: "switchyard_client", error = %e, "the GET stream broke");
                    }
                    if state.gone {
                        return;
                    }
                    idle = if state.messages == 0 { idle + 1 } else { 0 };
                }
                Err(ClientError::Http { status, .. }) => {
                    if status != 405 {
                        tracing::debug!(target: "switchyard_client", status, "the server refuses the GET stream");
                    }
                    return;
                }
                Err(e) => {
                    tracing::debug!(target: "switchyard_client", error = %e, "the GET stream could not be opened");
                    idle += 1;
                }
            }
            if idle > MAX_IDLE_RESUMPTIONS {
                return;
            }
            tokio::time::sleep(state.retry.max(MIN_RECONNECT) * 2u32.pow(idle.min(6))).await;
        }
    }

    /// Opens (or, after event `last_event_id`, reopens) a session's stream with `GET`.
    ///
    /// Errors: [`ClientError::Transport`] when the GET fails; [`ClientError::Http`] when the
    /// server answers it with anything but an event stream.
    async fn open_stream(&self, last_event_id: Option<&str>) -> Result<reqwest::Response, ClientError> {
        let mut request = self.http.get(&self.url).header(reqwest::header::ACCEPT, "text/event-stream");
        #[cfg(feature = "oauth")]
        {
            request = self.with_token(request, "GET").await.0;
        }
        if let Some(last_event_id) = last_event_id {
            request = request.header("last-event-id", last_event_id);
        }
        if let Some((session, version)) = self.session.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            request = request.header(VERSION_HEADER, version);
            if let Some(session) = session {
                request = request.header(SESSION_HEADER, session);
            }
        }
        let response = request.send().await.map_err(|e| ClientError::transport(format!("GET {}", self.url), e))?;
        // A nonce handed out here (with a `use_dpop_nonce` refusal or not) goes into the next
        // proof, so the stream's reopening carries it.
        #[cfg(feature = "oauth")]
        if let Some(auth) = &self.auth {
            auth.remember_nonce(response.headers());
        }
        let status = response.status();
        let is_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
        if !status.is_success() || !is_stream {
            let body = self.read_body(response).await.unwrap_or_default();
            return Err(http_error(status, &body));
        }
        Ok(response)
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
        let request = self.http.delete(&self.url).header(SESSION_HEADER, id).header(VERSION_HEADER, version);
        #[cfg(feature = "oauth")]
        let request = self.with_token(request, "DELETE").await.0;
        let deleted = request.send().await;
        if let Err(e) = deleted {
            tracing::debug!(target: "switchyard_client", error = %e, "DELETE of the session failed");
        }
    }
}

/// `_meta["io.modelcontextprotocol/protocolVersion"]` of a 2026-07-28 message.
fn modern_version(message: &Value) -> Option<&Value> {
    message.get("params")?.get("_meta")?.get(META_PROTOCOL_VERSION)
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

/// Whether the message `data` is the response (result or error) to the request with `id`.
fn answers_request(data: &str, id: &Value) -> bool {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    // A batch, or anything that is no single message, answers nothing here.
    serde_json::from_str::<Envelope>(data).is_ok_and(|e| e.method.is_none() && e.id.as_ref() == Some(id))
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

/// The retries one message has caused: a sign-in for a 401, one for a 403 step-up (a first
/// token may lack a scope the server wants), never more of either; and one more try with a
/// DPoP nonce the server asked for (RFC 9449 §9).
#[cfg(feature = "oauth")]
#[derive(Default)]
struct Retried {
    sign_in: bool,
    step_up: bool,
    nonce: bool,
}
