use super::HttpState;
use super::headers::protocol_version;
use super::respond::{self, First, final_payload, queued_message};
use super::resume::EventLog;
use super::sessions::{Client, HttpSession, Refused, new_session_id};
use super::status::{self, Refusal};
use crate::auth::Principal;
use crate::context::{Connection, Origin, Outbound, OutboundReceiver, OutboundSender, Payload, outbound_channel};
use crate::jsonrpc::{McpError, Message, Notification, Request, RequestId, success_response};
use crate::pipeline::MessageFilters;
use crate::registry::BoxFuture;
use axum::response::Response;
use bytes::Bytes;
use futures::FutureExt;
use futures::future::{Either, ready};
use http::{HeaderMap, HeaderValue};
use serde_json::Value;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// The `retry` hint of the priming event: how soon a client reconnects after the server ends a
/// stream on purpose.
const RETRY: Duration = Duration::from_millis(500);

/// `initialize` without modern `_meta`: negotiate, create the session, answer with its id.
/// The session counts against the caller's quota ([`SessionLimits`](super::SessionLimits)):
/// `principal`, else the `peer` address; refusals are [`refuse_session`]'s.
pub(crate) async fn initialize(
    state: &HttpState,
    msg: Message,
    principal: Option<Arc<Principal>>,
    peer: Option<SocketAddr>,
) -> Response {
    let Message::Request(req) = msg else { return respond::accepted() };
    match state.server.initialize(req.params.as_ref(), new_session_id(), state.config.streaming) {
        Ok((legacy, result)) => {
            let client = Client::of(principal.as_deref(), peer);
            let owner = principal.map(|p| p.id.clone());
            let session = match state.sessions.insert(legacy, state.server.shutdown_token(), owner, client) {
                Ok(s) => s,
                Err(refused) => return refuse_session(&req.id, refused),
            };
            let mut resp = respond::json(200, &success_response(&req.id, result));
            if let Ok(v) = HeaderValue::from_str(&session.legacy.id) {
                resp.headers_mut().insert("mcp-session-id", v);
            }
            resp
        }
        Err(e) => respond::error(status::of(&e), Some(&req.id), &e),
    }
}

/// How long a client whose sessions are all in use is asked to wait before trying again.
const BUSY_RETRY_SECONDS: u64 = 5;

/// The answer to an `initialize` the session store refused, with `Retry-After` in seconds:
///
/// - the client's creation rate is spent: 429, `-32600`, `Retry-After` until its next token
///   (rounded up to whole seconds);
/// - the client holds its `per_client` sessions, all in use: 429, `-32600`, `Retry-After: 5`;
/// - the server holds `max_sessions`, none of which may be closed for this client: 503,
///   `-32603`, `Retry-After: 5`.
fn refuse_session(id: &RequestId, refused: Refused) -> Response {
    let (status, err, seconds) = match refused {
        Refused::RateLimited { client, retry_after, limits } => {
            let seconds = (retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0)).max(1);
            let err = McpError::invalid_request(format!(
                "this client ({client}) creates sessions too fast (at most {} at once, then {} per second); retry in {seconds} s, \
                 and reuse a session (send its Mcp-Session-Id) instead of initializing again",
                limits.creation_burst.max(1),
                limits.creations_per_second
            ));
            (429, err, seconds)
        }
        Refused::ClientBusy { client, per_client } => {
            let err = McpError::invalid_request(format!(
                "this client ({client}) already holds {per_client} sessions, all with requests or streams open; \
                 end sessions it no longer needs with DELETE, or send this work in one of them"
            ));
            (429, err, BUSY_RETRY_SECONDS)
        }
        Refused::Full { max } => {
            let err = McpError::internal(format!(
                "all {max} sessions of this server are in use; retry later or end an unused session with DELETE"
            ));
            (503, err, BUSY_RETRY_SECONDS)
        }
    };
    // An operator sees who is refused and why (a shared proxy address shows here first).
    tracing::debug!(status, retry_after_s = seconds, reason = %err.message(), "http: initialize refused");
    let mut resp = respond::error(status, Some(id), &err);
    resp.headers_mut().insert(http::header::RETRY_AFTER, HeaderValue::from(seconds));
    resp
}

/// The refusal of a session id that does not exist (for this caller): 404, after which the
/// client initializes again.
fn session_not_found() -> Refusal {
    Refusal::new(
        404,
        McpError::invalid_request(
            "unknown or expired Mcp-Session-Id; initialize again, without an Mcp-Session-Id header",
        ),
    )
}

/// A POST inside a legacy session. `header_version`: its `MCP-Protocol-Version`, as the caller
/// read it; `head`: what its other headers give the request ([`Head::of`]).
pub(crate) fn post(
    state: &HttpState,
    session_id: &str,
    header_version: Option<&str>,
    head: Head,
    msg: Message,
    principal: Option<Arc<Principal>>,
    connection: Option<Connection>,
) -> impl Future<Output = Response> + Send + use<> {
    // Not an `async fn`, for the reason `modern::post` gives: the future is the reply's alone.
    let req_id = match &msg {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let session = match session_for(state, session_id, header_version, principal.as_deref()) {
        Ok(s) => s,
        Err(r) => return Either::Left(ready(respond::refused(req_id.as_ref(), &r))),
    };
    let req = match msg {
        Message::Notification(n) => {
            on_notification(&session, &n);
            return Either::Left(ready(respond::accepted()));
        }
        Message::Response { id, outcome } => {
            on_response(&session, id, outcome);
            return Either::Left(ready(respond::accepted()));
        }
        Message::Request(r) => r,
    };
    let (ntx, nrx) = outbound_channel(64);
    let challenge = state.challenge(principal.as_deref());
    let timing = head.timing(state);
    let work = start(state, &session, req, ntx, principal, connection, head);
    let answer = Box::pin(work.map(Answer::One));
    let filters = state.server.message_filters().clone();
    Either::Right(reply(session, answer, nrx, timing, filters, challenge))
}

/// The caller's session `session_id`, if the request's `MCP-Protocol-Version` (`header_version`,
/// when it sends one) is the session's; otherwise the `-32600` error that refuses the request:
/// HTTP 404 for a session that does not exist (for this caller), 400 for another version.
pub(super) fn session_for(
    state: &HttpState,
    session_id: &str,
    header_version: Option<&str>,
    principal: Option<&Principal>,
) -> Result<Arc<HttpSession>, Refusal> {
    let Some(session) = owned(state, session_id, principal) else {
        return Err(session_not_found());
    };
    if let Some(v) = header_version
        && v != session.legacy.version
    {
        let err = McpError::invalid_request(format!(
            "MCP-Protocol-Version {v:?} is not this session's version {:?}",
            session.legacy.version
        ));
        return Err(Refusal::new(400, err));
    }
    Ok(session)
}

/// A client notification in a session: `initialized` and `cancelled` act; others are ignored.
pub(super) fn on_notification(session: &HttpSession, n: &Notification) {
    match n.method.as_str() {
        "notifications/initialized" => session.legacy.mark_initialized(),
        "notifications/cancelled" => {
            let id = n.params.as_ref().and_then(|p| p.get("requestId")).and_then(RequestId::from_value);
            if let Some(id) = id {
                session.in_flight.lock().unwrap_or_else(|e| e.into_inner()).cancel(&id);
            }
        }
        _ => {}
    }
}

/// The answer to a server→client request sent on one of this session's streams.
pub(super) fn on_response(session: &HttpSession, id: RequestId, outcome: Result<Value, Value>) {
    if !session.legacy.client_requests().deliver(&id, outcome) {
        tracing::debug!(%id, "http: ignoring a response to no pending server request");
    }
}

/// What the head of one HTTP request gives each JSON-RPC request in its body.
#[derive(Clone)]
pub(super) struct Head {
    trace: Option<crate::protocol::TraceContext>,
    /// The reply may be an SSE stream: the server streams and the client's `Accept` allows it.
    streaming: bool,
}

impl Head {
    /// `accepts_sse`: the client's `Accept` allows an SSE reply.
    pub(super) fn of(state: &HttpState, headers: &HeaderMap, accepts_sse: bool) -> Head {
        Head { trace: super::headers::trace_context(headers), streaming: state.config.streaming && accepts_sse }
    }

    /// When the reply of this request streams keep-alive comments.
    pub(super) fn timing(&self, state: &HttpState) -> Timing {
        Timing {
            keep_alive: state.config.keep_alive,
            sse_after: if self.streaming { state.config.sse_after } else { None },
        }
    }
}

/// When a legacy reply sends keep-alive comments.
#[derive(Clone, Copy)]
pub(super) struct Timing {
    /// Between comments on an SSE reply.
    keep_alive: Duration,
    /// Silence after which the reply turns into SSE ([`HttpConfig::sse_after`](super::HttpConfig::sse_after));
    /// `None` when the client cannot read SSE.
    sse_after: Option<Duration>,
}

/// Starts a request of the session (registered for `notifications/cancelled` while it runs,
/// its notifications into `notes`); the returned future ends with its final JSON-RPC message.
pub(super) fn start(
    state: &HttpState,
    session: &Arc<HttpSession>,
    req: Request,
    notes: OutboundSender,
    principal: Option<Arc<Principal>>,
    connection: Option<Connection>,
    head: Head,
) -> BoxFuture<Payload> {
    let Head { trace, streaming } = head;
    let cancel = session.closed.child_token();
    let registration = Registration::new(session, &req.id, &cancel);
    // A client that cannot read SSE gets one JSON body, as from a server without streaming.
    let notifier =
        if streaming { state.server.notifier(notes, cancel.clone()) } else { crate::context::Notifier::disconnected() };
    let id = req.id.clone();
    // The registration lives as long as the work: `map` keeps it with the future (an async
    // block would keep a second copy of the work's state).
    Box::pin(
        state
            .server
            .handle_request(
                req,
                Some(&session.legacy),
                Origin::new(cancel, notifier).principal(principal).connection(connection).trace(trace),
            )
            .map(move |r| {
                drop(registration);
                final_payload(id, r)
            }),
    )
}

/// What the requests of one POST answer: one response, or the responses of a batch.
pub(super) enum Answer {
    /// A single request's final message.
    One(Payload),
    /// The answers of a batch's requests (and errors of its malformed entries), in batch order.
    Batch(Vec<Value>),
}

impl Answer {
    /// The messages to send, after the outgoing message filters.
    fn into_messages(self, filters: &MessageFilters) -> Vec<Value> {
        match self {
            Answer::One(m) => filters.outgoing(m.into_value()),
            Answer::Batch(ms) => ms.into_iter().flat_map(|m| filters.outgoing(m)).collect(),
        }
    }

    /// The answer as one JSON body: a batch's as one array (202 without body if the filters
    /// left nothing).
    fn respond(self, filters: &MessageFilters, challenge: &respond::Challenge) -> Response {
        match self {
            // An insufficient scope is answered in HTTP too, so that the client can authorize
            // again for it (2025-11-25 authorization, scope challenge handling).
            Answer::One(m) => match missing_scope(&m) {
                Some(scope) => respond::scope_challenge(respond::filtered(filters, 200, m), &scope, challenge),
                // Other legacy JSON-RPC errors travel with HTTP 200: only transport problems get 4xx.
                None => respond::filtered(filters, 200, m),
            },
            batch => match batch.into_messages(filters) {
                ms if ms.is_empty() => respond::accepted(),
                ms => respond::json(200, &Value::Array(ms)),
            },
        }
    }
}

/// The scopes named by `m` when it is an insufficient-scope error response.
fn missing_scope(m: &Payload) -> Option<String> {
    let Payload::Value(v) = m else { return None };
    let data = v.get("error")?.get("data")?;
    if data.get("reason")?.as_str()? != crate::auth::INSUFFICIENT_SCOPE_REASON {
        return None;
    }
    data.get("scope")?.as_str().map(str::to_owned)
}

/// A request's entry in its session's in-flight map (for `notifications/cancelled`, and what
/// keeps the session busy), removed when the request's work ends, also when it is dropped
/// unfinished: a client that closes the connection before a JSON answer drops it with the
/// handler, and an entry left behind kept the session busy, unexpirable and never displaced.
struct Registration {
    session: Arc<HttpSession>,
    id: RequestId,
    /// The entry's number in the session's [`InFlight`](super::sessions::InFlight).
    number: u64,
}

impl Registration {
    fn new(session: &Arc<HttpSession>, id: &RequestId, cancel: &tokio_util::sync::CancellationToken) -> Self {
        let number = session.in_flight.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), cancel.clone());
        Registration { session: session.clone(), id: id.clone(), number }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.session.in_flight.lock().unwrap_or_else(|e| e.into_inner()).remove_own(&self.id, self.number);
    }
}

/// Answers a legacy request, or the requests of a batch: JSON when the answer comes before any
/// notification and within `timing.sse_after`; otherwise a resumable SSE stream (priming
/// event, notifications or a keep-alive comment, then each response as its own event, each
/// with an event id).
///
/// Unlike the stateless wire, losing the connection does not cancel the request (2025-11-25):
/// the work goes on and the client can pick the stream up again with `Last-Event-ID`. Requests
/// end by `notifications/cancelled`, DELETE of the session, or server shutdown.
pub(super) async fn reply(
    session: Arc<HttpSession>,
    mut work: BoxFuture<Answer>,
    mut notes: OutboundReceiver,
    timing: Timing,
    filters: MessageFilters,
    challenge: respond::Challenge,
) -> Response {
    let first = async {
        tokio::select! {
            biased;
            // Only an item switches to SSE: the channel also closes when the handler merely
            // dropped its context (and with it the notifier) before its result.
            Some(n) = notes.recv() => First::Note(n),
            r = &mut work => First::Done(r),
        }
    };
    let (first, done) = match respond::first_within(first, timing.sse_after).await {
        First::Note(n) => (Some(n), None),
        First::Done(r) => match notes.try_recv() {
            Some(n) => (Some(n), Some(r)),
            None => return r.respond(&filters, &challenge),
        },
        First::Silent => (None, None),
    };
    let priming = crate::protocol::primes_sse_streams(session.legacy.version).then_some(RETRY);
    let (log, rx) = session.streams.open(priming);
    let apply = move |n: Outbound, log: &Mutex<EventLog>| {
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        match n {
            // The event log keeps `Value`s (replayed on resumption); listen, the only sender of
            // encoded text, is not a legacy method, so the conversion does not happen in practice.
            Outbound::Message(m) => log.push(&m.into_value()),
            Outbound::CloseStream => log.detach(),
        }
    };
    match first {
        Some(n) => apply(n, &log),
        // Body bytes at once: they reset a proxy's read timer, which the head alone may not.
        None => {
            log.lock().unwrap_or_else(|e| e.into_inner()).keep_alive();
        }
    }
    tokio::spawn(async move {
        let finish = |log: &Mutex<EventLog>, notes: &mut OutboundReceiver, r: Answer| {
            while let Some(m) = queued_message(notes) {
                apply(Outbound::Message(m), log);
            }
            let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
            for m in r.into_messages(&filters) {
                log.push(&m);
            }
            log.finish();
        };
        if let Some(r) = done {
            finish(&log, &mut notes, r);
            return;
        }
        let mut tick = tokio::time::interval(timing.keep_alive);
        tick.tick().await;
        loop {
            tokio::select! {
                biased;
                Some(n) = notes.recv() => apply(n, &log),
                r = &mut work => {
                    finish(&log, &mut notes, r);
                    return;
                }
                _ = tick.tick() => {
                    log.lock().unwrap_or_else(|e| e.into_inner()).keep_alive();
                }
            }
        }
    });
    respond::sse_response(rx)
}

/// GET with a session id: with `Last-Event-ID`, resumes that stream (missed events, then the
/// rest); otherwise opens the session's server-to-client stream: list changes, updates of the
/// resources it subscribed to, and keep-alive comments, until the session ends or the client
/// disconnects. Refused as a POST of the session is ([`session_for`]: 404, or 400 for another
/// protocol version).
pub(crate) async fn open_stream(
    state: &HttpState,
    session_id: &str,
    headers: &HeaderMap,
    principal: Option<&Principal>,
) -> Response {
    let session = match session_for(state, session_id, protocol_version(headers).as_deref(), principal) {
        Ok(s) => s,
        Err(r) => return respond::refused(None, &r),
    };
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    if let Some(rx) = last.and_then(|l| session.streams.resume(l.trim())) {
        return respond::sse_response(rx);
    }
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let keep_alive = state.config.keep_alive;
    let server = state.server.clone();
    tokio::spawn(async move {
        use futures::StreamExt;
        let _listening = session.listening();
        // Ends when the server closes (after a drain's grace period): the client opens it again
        // on the instance it reaches next.
        let closing = server.closing_token().clone();
        let mut events = server.events();
        let mut tick = tokio::time::interval(keep_alive);
        loop {
            tokio::select! {
                _ = session.closed.cancelled() => return,
                _ = closing.cancelled() => return,
                _ = tx.closed() => return,
                e = events.next() => match e {
                    Some(Ok(e)) => {
                        if let Some(n) = session.legacy.notification_for(&e) {
                            for m in server.message_filters().outgoing(n) {
                                if tx.send(respond::sse_event(&m, None)).await.is_err() { return; }
                            }
                        }
                    }
                    Some(Err(_)) => {}
                    None => return,
                },
                _ = tick.tick() => if tx.send(Bytes::from_static(b": keep-alive\n\n")).await.is_err() { return },
            }
        }
    });
    respond::sse_response(rx)
}

/// DELETE with a session id: ends the session (its requests are cancelled) and answers 200
/// without a body. Refused as a POST of the session is ([`session_for`]).
pub(crate) fn delete(
    state: &HttpState,
    session_id: &str,
    headers: &HeaderMap,
    principal: Option<&Principal>,
) -> Response {
    if let Err(r) = session_for(state, session_id, protocol_version(headers).as_deref(), principal) {
        return respond::refused(None, &r);
    }
    match state.sessions.remove(session_id) {
        // Nothing to say but the status: a JSON body would have to be a JSON-RPC message,
        // and this answers none.
        Some(_) => respond::ended(),
        None => respond::refused(None, &session_not_found()),
    }
}

/// The session `id` if the caller is the principal that created it. A session is bound to its
/// creator: another caller (or an anonymous one) cannot post to it, read or resume its streams,
/// cancel its requests or delete it; to them it does not exist (404).
fn owned(state: &HttpState, id: &str, principal: Option<&Principal>) -> Option<Arc<HttpSession>> {
    let session = state.sessions.get(id)?;
    (session.owner.as_deref() == principal.map(|p| p.id.as_str())).then_some(session)
}
