use super::status::{self, Refusal};
use crate::context::{Outbound, OutboundReceiver, Payload};
use crate::jsonrpc::{McpError, RequestId, ResultObject, error_response, success_response};
use crate::pipeline::MessageFilters;
use crate::registry::BoxFuture;
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A JSON body with `status`.
pub(crate) fn json(status: u16, body: &Value) -> Response {
    // `to_vec` rather than `to_string`: `Display` goes through a `fmt::Formatter` call per
    // token, about twice the instructions for the same bytes (a stateless `tools/call`
    // answer: 10,000 → 4,500, callgrind, 2026-12-01).
    json_bytes(status, serde_json::to_vec(body).unwrap_or_default())
}

/// A JSON body with `status` holding `message`, written from its parts: a success response
/// needs no envelope map ([`Payload::Success`]), and its bytes are those [`json`] writes for
/// [`final_message`]'s `Value`.
pub(crate) fn payload(status: u16, message: &Payload) -> Response {
    // The exact size when it is known (no shared header for `Bytes`), else room for a small
    // answer: one allocation instead of a chain of regrowths.
    let mut bytes = Vec::with_capacity(message.json_len().unwrap_or(256));
    message.write_json(&mut bytes);
    json_bytes(status, bytes)
}

fn json_bytes(status: u16, bytes: Vec<u8>) -> Response {
    let mut resp = Response::new(Body::from(bytes));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// A JSON-RPC error response with HTTP `status`: [`status::of`] for an error of the request
/// pipeline, the transport's own choice for its refusals
/// ([server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation)).
pub(crate) fn error(status: u16, id: Option<&RequestId>, err: &McpError) -> Response {
    json(status, &error_response(id, err))
}

/// The response refusing a request: `refusal`'s error with its status.
pub(crate) fn refused(id: Option<&RequestId>, refusal: &Refusal) -> Response {
    error(refusal.status, id, &refusal.error)
}

/// 202 Accepted with no body: a notification or response was taken.
pub(crate) fn accepted() -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::ACCEPTED;
    resp
}

/// 200 with no body: what ended (a legacy session, on DELETE) answers no JSON-RPC message.
pub(crate) fn ended() -> Response {
    Response::new(Body::empty())
}

/// 405 with no body and `Allow: <allow>` (RFC 9110 §15.5.6 requires the header).
pub(crate) fn method_not_allowed(allow: &'static str) -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    resp
}

/// One SSE event carrying a JSON-RPC message.
pub(crate) fn sse_event(msg: &Value, event_id: Option<&str>) -> Bytes {
    sse_frame(event_id, |frame| {
        // Cannot fail: writing into a Vec does no I/O, and a `Value`'s map keys are strings.
        let _ = serde_json::to_writer(frame, msg);
    })
}

/// One SSE event carrying a queued message (a `Value`, or JSON text encoded by its sender).
fn sse_payload(msg: &Payload) -> Bytes {
    sse_frame(None, |frame| msg.write_json(frame))
}

/// `id: ..\nevent: message\ndata: <json>\n\n`, the JSON written by `write`.
fn sse_frame(event_id: Option<&str>, write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    // Written straight into the frame: no intermediate string, and room for a typical
    // notification up front rather than a chain of reallocations.
    let mut frame = Vec::with_capacity(256);
    if let Some(id) = event_id {
        frame.extend_from_slice(b"id: ");
        frame.extend_from_slice(id.as_bytes());
        frame.push(b'\n');
    }
    frame.extend_from_slice(b"event: message\ndata: ");
    write(&mut frame);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

/// A streaming `text/event-stream` response fed by `rx`.
pub(crate) fn sse_response(rx: mpsc::Receiver<Bytes>) -> Response {
    sse_stream_response(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    }))
}

/// A streaming `text/event-stream` response with the frames of `stream`.
fn sse_stream_response<S>(stream: S) -> Response
where
    S: futures::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    let mut resp = Response::new(Body::from_stream(stream));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    resp
}

/// How a request's reply is shaped.
pub(crate) struct ReplyPlan {
    /// The request id.
    pub id: RequestId,
    /// Keep-alive comment interval on SSE replies.
    pub keep_alive: Duration,
    /// How long the request may stay silent before the reply turns into SSE
    /// ([`HttpConfig::sse_after`](super::HttpConfig::sse_after)); `None` also when the client
    /// cannot read SSE.
    pub sse_after: Option<Duration>,
    /// The server's message filters, applied to the final response.
    pub filters: MessageFilters,
    /// Who asked, for the challenge of an insufficient-scope denial.
    pub challenge: Challenge,
}

/// What the challenge of an insufficient-scope denial needs to know of its request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Challenge {
    /// The protected resource metadata URL, when the server has one.
    pub metadata: Option<std::sync::Arc<str>>,
    /// The request came without a token.
    pub anonymous: bool,
    /// The request came with a DPoP-bound token: the challenge uses the `DPoP` scheme
    /// (RFC 9449 §7.1).
    pub dpop: bool,
}

/// `resp` answering an insufficient-scope denial that names `scope`: 403 with
/// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"`
/// (RFC 6750 §3.1, RFC 9728 §5.1), or 401 with `Bearer scope="…", …` when the request had no
/// token at all (it needs one first, RFC 6750 §3.1).
pub(crate) fn scope_challenge(mut resp: Response, scope: &str, challenge: &Challenge) -> Response {
    let (status, error) = if challenge.anonymous {
        (StatusCode::UNAUTHORIZED, None)
    } else {
        (StatusCode::FORBIDDEN, Some(("insufficient_scope", "")))
    };
    *resp.status_mut() = status;
    let scheme = if challenge.dpop { "DPoP" } else { "Bearer" };
    let value = crate::auth::challenge_header(scheme, challenge.metadata.as_deref(), error, scope, None);
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}

/// Receives the next message, skipping stream-control items (the stateless wire has no
/// resumable streams).
async fn next_message(rx: &mut OutboundReceiver) -> Option<Payload> {
    loop {
        match rx.recv().await? {
            Outbound::Message(m) => return Some(m),
            Outbound::CloseStream => continue,
        }
    }
}

/// Takes an already queued message, skipping stream-control items.
pub(crate) fn queued_message(rx: &mut OutboundReceiver) -> Option<Payload> {
    loop {
        match rx.try_recv()? {
            Outbound::Message(m) => return Some(m),
            Outbound::CloseStream => continue,
        }
    }
}

/// Answers with `message` after the outgoing message filters: one message as a JSON body with
/// `status`, none as 202 without body, several (injected) as an SSE stream.
pub(crate) fn filtered(filters: &MessageFilters, status: u16, message: Payload) -> Response {
    if filters.is_empty() {
        // Nothing needs the message as a `Value`: written from its parts.
        return payload(status, &message);
    }
    let mut out = filters.outgoing(message.into_value());
    match out.len() {
        0 => accepted(),
        1 => json(status, &out.remove(0)),
        _ => {
            let (tx, rx) = mpsc::channel::<Bytes>(out.len());
            for m in &out {
                let _ = tx.try_send(sse_event(m, None));
            }
            sse_response(rx)
        }
    }
}

/// The final JSON-RPC message of a request.
pub(crate) fn final_message(id: &RequestId, r: Result<ResultObject, McpError>) -> Value {
    match r {
        Ok(v) => success_response(id, v.into_value()),
        Err(e) => error_response(Some(id), &e),
    }
}

/// [`final_message`] as a [`Payload`]: a success stays in parts until it is written or a
/// filter needs its `Value` ([`Payload::into_value`]).
pub(crate) fn final_payload(id: RequestId, r: Result<ResultObject, McpError>) -> Payload {
    match r {
        Ok(v) => Payload::Success(id, v),
        Err(e) => Payload::Value(error_response(Some(&id), &e)),
    }
}

/// Runs `work` and answers with JSON when it finishes before emitting any notification, or with SSE
/// (the notifications, then the response) as soon as it emits one
/// ([sending messages](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages)),
/// or when it has run for `plan.sse_after` without either (then a keep-alive comment first).
///
/// The request's `cancel` token fires when the client goes away: for JSON when axum drops this
/// future, for SSE when the response body is dropped. Nothing is sent after that.
pub(crate) async fn reply(
    plan: ReplyPlan,
    mut work: BoxFuture<Result<ResultObject, McpError>>,
    mut notes: OutboundReceiver,
    cancel: CancellationToken,
) -> Response {
    let guard = cancel.drop_guard();
    let first = async {
        tokio::select! {
            biased;
            // Only a message switches to SSE: the channel also closes when the handler merely
            // dropped its context (and with it the notifier) before its result.
            Some(n) = next_message(&mut notes) => First::Note(n),
            r = &mut work => First::Done(r),
        }
    };
    let (first, done) = match first_within(first, plan.sse_after).await {
        First::Note(n) => (Some(n), None),
        First::Done(r) => match queued_message(&mut notes) {
            // A notification raced the result: stream both, in order.
            Some(n) => (Some(n), Some(r)),
            None => {
                drop(guard.disarm());
                let (status, scope, retry) = match &r {
                    Ok(_) => (200, None, None),
                    Err(e) => (status::of(e), status::missing_scope(e).map(str::to_owned), status::retry_after(e)),
                };
                let mut resp = filtered(&plan.filters, status, final_payload(plan.id, r));
                if let Some(seconds) = retry {
                    resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                }
                return match scope {
                    Some(scope) => scope_challenge(resp, &scope, &plan.challenge),
                    None => resp,
                };
            }
        },
        First::Silent => (None, None),
    };
    let mut pending = std::collections::VecDeque::new();
    match first {
        Some(n) => pending.push_back(sse_payload(&n)),
        // Body bytes at once: they reset a proxy's read timer, which the head alone may not.
        None => pending.push_back(KEEP_ALIVE.clone()),
    }
    let mut stream = SseReply {
        work: Some(work),
        notes,
        tick: keep_alive_ticks(plan.keep_alive),
        pending,
        plan,
        _cancel_on_drop: guard,
    };
    if let Some(r) = done {
        stream.finish(r);
    }
    sse_stream_response(futures::stream::unfold(stream, |mut s| async move {
        let next = std::future::poll_fn(|cx| s.poll_next_frame(cx)).await?;
        Some((Ok::<_, Infallible>(next), s))
    }))
}

/// An SSE comment: no event for the client, bytes for whatever sits in between.
pub(crate) const KEEP_ALIVE: Bytes = Bytes::from_static(b": keep-alive\n\n");

/// What ends the wait for the first thing a request sends.
pub(crate) enum First<N, R> {
    /// A notification, before the result: the reply is SSE.
    Note(N),
    /// The result, before any notification: the reply may be JSON.
    Done(R),
    /// Nothing within `sse_after`: the reply is SSE.
    Silent,
}

/// `first`, or [`First::Silent`] when it has not ended within `sse_after` (`None`: no limit).
/// The timer is armed only when the first poll finds `first` pending, so a request that
/// answers at once (most do) pays no timer.
pub(crate) async fn first_within<N, R>(
    first: impl Future<Output = First<N, R>>,
    sse_after: Option<Duration>,
) -> First<N, R> {
    let mut first = std::pin::pin!(first);
    if let std::task::Poll::Ready(f) = futures::poll!(&mut first) {
        return f;
    }
    let Some(after) = sse_after else { return first.await };
    // Boxed: the future of every request, also one that answers at once, would otherwise
    // carry a timer's state.
    let mut silence = Box::pin(tokio::time::sleep(after));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(f) = first.as_mut().poll(cx) {
            return std::task::Poll::Ready(f);
        }
        silence.as_mut().poll(cx).map(|()| First::Silent)
    })
    .await
}

/// Keep-alive ticks every `every`, the first one `every` from now; ticks missed while the
/// stream was not polled are not sent in a burst.
fn keep_alive_ticks(every: Duration) -> tokio::time::Interval {
    let every = every.max(Duration::from_millis(1));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick
}

/// The SSE body of a request that streams: its notifications as they come, keep-alive comments
/// while it is idle, then its final message. The body drives the request itself, so an open
/// stream costs no task and no channel of its own (a listen subscription holds one for
/// its whole life); dropping the body (the client went away) drops the request and fires its
/// cancellation token.
struct SseReply {
    /// The request; `None` once it finished.
    work: Option<BoxFuture<Result<ResultObject, McpError>>>,
    notes: OutboundReceiver,
    tick: tokio::time::Interval,
    /// Frames ready to send, in order.
    pending: std::collections::VecDeque<Bytes>,
    plan: ReplyPlan,
    _cancel_on_drop: tokio_util::sync::DropGuard,
}

impl SseReply {
    /// Queues what is left after the request finished with `r`: notifications it sent just
    /// before, then its final message (through the outgoing message filters).
    fn finish(&mut self, r: Result<ResultObject, McpError>) {
        self.work = None;
        while let Some(n) = queued_message(&mut self.notes) {
            self.pending.push_back(sse_payload(&n));
        }
        for m in self.plan.filters.outgoing(final_message(&self.plan.id, r)) {
            self.pending.push_back(sse_event(&m, None));
        }
    }

    /// The next frame: queued frames first, then (after letting the request run) its next
    /// notification, or its remaining notifications and final message once it finished, else a
    /// keep-alive when one is due. `None` ends the body.
    fn poll_next_frame(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Bytes>> {
        use std::task::Poll;
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Poll::Ready(Some(frame));
            }
            let Some(work) = self.work.as_mut() else { return Poll::Ready(None) };
            // The request first, so that what it sends in this poll goes out in this poll too.
            // Its sends must not wake this task (the queue is polled right below): for a listen
            // subscription that would be a second, empty poll of the whole request per event.
            self.notes.unpark();
            if let Poll::Ready(r) = work.as_mut().poll(cx) {
                self.finish(r);
                continue;
            }
            match self.notes.poll_recv(cx) {
                Poll::Ready(Some(Outbound::Message(m))) => return Poll::Ready(Some(sse_payload(&m))),
                // The stateless wire has no resumable streams to close.
                Poll::Ready(Some(Outbound::CloseStream)) => continue,
                // Every sender is gone: only the final message can still come.
                Poll::Ready(None) | Poll::Pending => {}
            }
            return match self.tick.poll_tick(cx) {
                Poll::Ready(_) => Poll::Ready(Some(KEEP_ALIVE.clone())),
                Poll::Pending => Poll::Pending,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{final_message, final_payload, json, payload, sse_event};
    use crate::jsonrpc::{EncodedResult, McpError, RequestId, ResultObject, error_response};
    use serde_json::{Value, json};

    async fn body_bytes(resp: axum::response::Response) -> Vec<u8> {
        axum::body::to_bytes(resp.into_body(), usize::MAX).await.map(|b| b.to_vec()).unwrap_or_default()
    }

    /// The envelope and body against the plain ones (`json!`, `to_string`): equal values and
    /// byte for byte the same body.
    #[tokio::test]
    async fn the_final_message_and_its_body_match_the_plain_path() {
        let results = [
            json!({ "content": [{ "type": "text", "text": "hé \"quoted\"\n" }], "isError": false,
                    "structuredContent": { "z": 1, "a": [1.5, null, true] }, "_meta": {} }),
            json!({}),
            json!([1, "two"]),
            Value::Null,
        ];
        let ids = [RequestId::Number(0), RequestId::Number(-7), RequestId::String("a\"b".into())];
        for id in &ids {
            for result in &results {
                let plain = json!({ "jsonrpc": "2.0", "id": id.to_value(), "result": result });
                let forms = [
                    ResultObject::Value(result.clone()),
                    ResultObject::Encoded(EncodedResult::new(result.to_string())),
                ];
                for form in forms {
                    let fast = final_message(id, Ok(form.clone()));
                    assert_eq!(fast, plain);
                    assert_eq!(body_bytes(json(200, &fast)).await, plain.to_string().into_bytes());
                    // Written from its parts, without the envelope map: the same bytes.
                    let parts = payload(200, &final_payload(id.clone(), Ok(form)));
                    assert_eq!(parts.headers()["content-type"], "application/json");
                    assert_eq!(body_bytes(parts).await, plain.to_string().into_bytes());
                }
            }
            let err = McpError::invalid_request("no");
            assert_eq!(final_message(id, Err(err.clone())), error_response(Some(id), &err));
            let body = body_bytes(payload(400, &final_payload(id.clone(), Err(err.clone())))).await;
            assert_eq!(body, error_response(Some(id), &err).to_string().into_bytes());
        }
    }

    #[test]
    fn an_sse_event_is_one_data_line_with_the_compact_message() {
        let msg = json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": { "data": "a\nb" } });
        let plain = sse_event(&msg, None);
        assert_eq!(
            &plain[..],
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"a\\nb\"}}\n\n"
        );
        let with_id = sse_event(&json!(1), Some("s1-7"));
        assert_eq!(&with_id[..], b"id: s1-7\nevent: message\ndata: 1\n\n");
    }
}
