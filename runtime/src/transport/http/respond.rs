use crate::context::Outbound;
use crate::jsonrpc::{McpError, RequestId, error_response, success_response};
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
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// A JSON-RPC error response with the status the error calls for (spec digest §5.5).
pub(crate) fn error(id: Option<&RequestId>, err: &McpError) -> Response {
    json(err.status(), &error_response(id, err))
}

/// 202 Accepted with no body: a notification or response was taken.
pub(crate) fn accepted() -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::ACCEPTED;
    resp
}

/// 405 with `Allow: POST`.
pub(crate) fn method_not_allowed() -> Response {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    resp
}

/// One SSE event carrying a JSON-RPC message.
pub(crate) fn sse_event(msg: &Value, event_id: Option<&str>) -> Bytes {
    let mut s = String::new();
    if let Some(id) = event_id {
        s.push_str("id: ");
        s.push_str(id);
        s.push('\n');
    }
    s.push_str("event: message\ndata: ");
    s.push_str(&msg.to_string());
    s.push_str("\n\n");
    Bytes::from(s)
}

/// A streaming `text/event-stream` response fed by `rx`.
pub(crate) fn sse_response(rx: mpsc::Receiver<Bytes>) -> Response {
    let stream =
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx)) });
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
    /// The server's message filters, applied to the final response.
    pub filters: MessageFilters,
}

/// Receives the next message, skipping stream-control items (the stateless wire has no
/// resumable streams).
async fn next_message(rx: &mut mpsc::Receiver<Outbound>) -> Option<Value> {
    loop {
        match rx.recv().await? {
            Outbound::Message(m) => return Some(m),
            Outbound::CloseStream => continue,
        }
    }
}

/// Takes an already queued message, skipping stream-control items.
pub(crate) fn queued_message(rx: &mut mpsc::Receiver<Outbound>) -> Option<Value> {
    loop {
        match rx.try_recv().ok()? {
            Outbound::Message(m) => return Some(m),
            Outbound::CloseStream => continue,
        }
    }
}

/// Answers with `message` after the outgoing message filters: one message as a JSON body with
/// `status`, none as 202 without body, several (injected) as an SSE stream.
pub(crate) fn filtered(filters: &MessageFilters, status: u16, message: Value) -> Response {
    if filters.is_empty() {
        return json(status, &message);
    }
    let mut out = filters.outgoing(message);
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
pub(crate) fn final_message(id: &RequestId, r: Result<Value, McpError>) -> Value {
    match r {
        Ok(v) => success_response(id, v),
        Err(e) => error_response(Some(id), &e),
    }
}

/// Runs `work` and answers with JSON when it finishes before emitting any notification, or
/// with SSE (the notifications, then the response) as soon as it emits one (spec digest §5.2).
///
/// The request's `cancel` token fires when the client goes away: for JSON when axum drops this
/// future, for SSE when the response body is dropped. Nothing is sent after that.
pub(crate) async fn reply(
    plan: ReplyPlan,
    mut work: BoxFuture<Result<Value, McpError>>,
    mut notes: mpsc::Receiver<Outbound>,
    cancel: CancellationToken,
) -> Response {
    let guard = cancel.clone().drop_guard();
    let (first, done) = tokio::select! {
        biased;
        // Only a message switches to SSE: the channel also closes when the handler merely
        // dropped its context (and with it the notifier) before its result.
        Some(n) = next_message(&mut notes) => (Some(n), None),
        r = &mut work => match queued_message(&mut notes) {
            // A notification raced the result: stream both, in order.
            Some(n) => (Some(n), Some(r)),
            None => {
                drop(guard.disarm());
                let status = match &r {
                    Ok(_) => 200,
                    Err(e) => e.status(),
                };
                return filtered(&plan.filters, status, final_message(&plan.id, r));
            }
        },
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    if let Some(n) = first {
        let _ = tx.try_send(sse_event(&n, None));
    }
    tokio::spawn(async move {
        let _guard = guard;
        if let Some(r) = done {
            while let Some(n) = queued_message(&mut notes) {
                if tx.send(sse_event(&n, None)).await.is_err() {
                    return;
                }
            }
            for m in plan.filters.outgoing(final_message(&plan.id, r)) {
                let _ = tx.send(sse_event(&m, None)).await;
            }
            return;
        }
        let mut tick = tokio::time::interval(plan.keep_alive);
        tick.tick().await;
        loop {
            tokio::select! {
                biased;
                _ = tx.closed() => return,
                Some(n) = next_message(&mut notes) => if tx.send(sse_event(&n, None)).await.is_err() { return },
                r = &mut work => {
                    while let Some(n) = queued_message(&mut notes) {
                        if tx.send(sse_event(&n, None)).await.is_err() { return; }
                    }
                    for m in plan.filters.outgoing(final_message(&plan.id, r)) {
                        let _ = tx.send(sse_event(&m, None)).await;
                    }
                    return;
                }
                _ = tick.tick() => if tx.send(Bytes::from_static(b": keep-alive\n\n")).await.is_err() { return },
            }
        }
    });
    sse_response(rx)
}
