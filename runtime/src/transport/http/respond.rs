use crate::jsonrpc::{McpError, RequestId, error_response, success_response};
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
    /// HTTP status for an error sent as JSON (modern: by code; legacy: 200).
    pub error_status: fn(&McpError) -> u16,
    /// Keep-alive comment interval on SSE replies.
    pub keep_alive: Duration,
}

/// Runs `work` and answers with JSON when it finishes before emitting any notification, or
/// with SSE (the notifications, then the response) as soon as it emits one (spec digest §5.2).
///
/// The request's `cancel` token fires when the client goes away: for JSON when axum drops this
/// future, for SSE when the response body is dropped. Nothing is sent after that.
pub(crate) async fn reply(
    plan: ReplyPlan,
    work: BoxFuture<Result<Value, McpError>>,
    mut notes: mpsc::Receiver<Value>,
    cancel: CancellationToken,
) -> Response {
    let guard = cancel.clone().drop_guard();
    let mut work = work;
    let first = tokio::select! {
        biased;
        n = notes.recv() => n,
        r = &mut work => {
            match notes.try_recv() {
                Ok(n) => {
                    // A notification raced the result: stream both, in order.
                    let (tx, rx) = mpsc::channel(64);
                    let _ = tx.try_send(sse_event(&n, None));
                    tokio::spawn(async move {
                        let _guard = guard;
                        while let Ok(n) = notes.try_recv() {
                            if tx.send(sse_event(&n, None)).await.is_err() { return; }
                        }
                        let _ = tx.send(sse_event(&final_message(&plan.id, r), None)).await;
                    });
                    return sse_response(rx);
                }
                Err(_) => {
                    drop(guard.disarm());
                    return match r {
                        Ok(v) => json(200, &success_response(&plan.id, v)),
                        Err(e) => json((plan.error_status)(&e), &error_response(Some(&plan.id), &e)),
                    };
                }
            }
        }
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    if let Some(n) = first {
        let _ = tx.try_send(sse_event(&n, None));
    }
    tokio::spawn(async move {
        let _guard = guard;
        let mut tick = tokio::time::interval(plan.keep_alive);
        tick.tick().await;
        let mut notes_open = true;
        loop {
            tokio::select! {
                biased;
                _ = tx.closed() => return,
                n = notes.recv(), if notes_open => match n {
                    Some(n) => if tx.send(sse_event(&n, None)).await.is_err() { return },
                    None => notes_open = false,
                },
                r = &mut work => {
                    while let Ok(n) = notes.try_recv() {
                        if tx.send(sse_event(&n, None)).await.is_err() { return; }
                    }
                    let _ = tx.send(sse_event(&final_message(&plan.id, r), None)).await;
                    return;
                }
                _ = tick.tick() => if tx.send(Bytes::from_static(b": keep-alive\n\n")).await.is_err() { return },
            }
        }
    });
    sse_response(rx)
}

fn final_message(id: &RequestId, r: Result<Value, McpError>) -> Value {
    match r {
        Ok(v) => success_response(id, v),
        Err(e) => error_response(Some(id), &e),
    }
}
