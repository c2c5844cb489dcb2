//! JSON-RPC batches on the Streamable HTTP transport: a POST whose body is an array.
//!
//! Only a legacy session that negotiated 2025-03-26 takes them, where the server MUST
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#sending-messages-to-the-server>).
//! Anywhere else (the 2026-07-28 wire, later sessions, no session) the POST is 400 with one
//! `-32600` error object, as every batch was before.
//!
//! In a 2025-03-26 session each message of the batch is handled as if it had been POSTed alone,
//! in order: notifications and responses act at once, and each request runs as a request of the
//! session (registered for `notifications/cancelled`, its notifications on the reply). Then:
//!
//! - no requests and no malformed entries: 202 Accepted with no body;
//! - otherwise one JSON array of the answers (`application/json`, HTTP 200), in batch order,
//!   when they all come before any notification; else the same resumable SSE stream as a single
//!   request gets (notifications, then each answer as its own event).
//!
//! An `initialize` inside a batch gets `-32600` in its place (the lifecycle forbids batching it),
//! and every malformed entry its own error; malformed notifications get nothing.
//!
//! The requests of one batch run concurrently, as separate POSTs would: one slow request, or
//! one waiting for the client's answer to an elicitation, does not hold up the others' work.
//! What bounds the work one POST can start is the batch length,
//! [`MAX_BATCH_LEN`](crate::jsonrpc::MAX_BATCH_LEN), checked before anything runs.

use super::HttpState;
use super::headers::protocol_version;
use super::legacy::{self, Answer};
use super::respond;
use crate::auth::Principal;
use crate::context::{self, Connection, Payload};
use crate::jsonrpc::{McpError, Message, ParseFailure, error_response, parse_entry};
use crate::protocol::{MODERN_VERSION, accepts_batches, batch_refused, is_legacy_version};
use crate::registry::BoxFuture;
use axum::response::Response;
use futures::FutureExt;
use http::HeaderMap;
use serde_json::Value;
use std::sync::Arc;

/// Answers a POST whose body was an array (`batch`, from [`parse_batch`](crate::jsonrpc::parse_batch)).
/// `accepts_sse`: the client's `Accept` allows an SSE reply.
pub(crate) async fn post(
    state: &HttpState,
    session_id: Option<&str>,
    headers: &HeaderMap,
    batch: Result<Vec<Value>, Box<ParseFailure>>,
    principal: Option<Arc<Principal>>,
    connection: Option<Connection>,
    accepts_sse: bool,
) -> Response {
    // Not a batch we can read (invalid JSON, empty, too long), or one refused here: 400.
    let entries = match batch {
        Ok(entries) => entries,
        Err(f) => return respond::error(400, None, &f.error),
    };
    let header_version = protocol_version(headers);
    let modern = header_version.as_deref().is_some_and(|v| !is_legacy_version(v));
    if modern || !state.config.legacy_sessions {
        return respond::error(400, None, &batch_refused(Some(MODERN_VERSION)));
    }
    let Some(session_id) = session_id else { return respond::error(400, None, &batch_refused(None)) };
    let head = legacy::Head::of(state, headers, accepts_sse);
    let timing = head.timing(state);
    let session = match legacy::session_for(state, session_id, header_version.as_deref(), principal.as_deref()) {
        Ok(s) => s,
        Err(r) => return respond::refused(None, &r),
    };
    if !accepts_batches(session.legacy.version) {
        return respond::error(400, None, &batch_refused(Some(session.legacy.version)));
    }
    let filters = state.server.message_filters().clone();
    let (ntx, nrx) = context::outbound_channel(64);
    let mut answers: Vec<BoxFuture<Payload>> = Vec::new();
    let at_once = |m: Value| -> BoxFuture<Payload> { Box::pin(std::future::ready(Payload::Value(m))) };
    // Ids of the batch's requests so far: a second request with one id could not be told apart
    // in the answer, nor cancelled on its own (at most MAX_BATCH_LEN, so a scan is enough).
    let mut ids = Vec::new();
    for entry in entries {
        if !filters.is_empty() && !filters.incoming(&entry) {
            continue;
        }
        match parse_entry(entry) {
            // JSON-RPC never answers a notification, not even a malformed one.
            Err(f) if f.notification => {}
            Err(f) => answers.push(at_once(error_response(f.id.as_ref(), &f.error))),
            Ok(Message::Notification(n)) => legacy::on_notification(&session, &n),
            Ok(Message::Response { id, outcome }) => legacy::on_response(&session, id, outcome),
            Ok(Message::Request(req)) if req.method == "initialize" => {
                let err = McpError::invalid_request("initialize must not be part of a JSON-RPC batch");
                answers.push(at_once(error_response(Some(&req.id), &err)));
            }
            Ok(Message::Request(req)) if ids.contains(&req.id) => {
                let err = McpError::invalid_request(format!("request id {} is already in flight", req.id));
                answers.push(at_once(error_response(Some(&req.id), &err)));
            }
            Ok(Message::Request(req)) => {
                ids.push(req.id.clone());
                answers.push(legacy::start(
                    state,
                    &session,
                    req,
                    ntx.clone(),
                    principal.clone(),
                    connection.clone(),
                    head.clone(),
                ));
            }
        }
    }
    // Only the requests' notifiers may keep the queue open: it closes when they are all done.
    drop(ntx);
    if answers.is_empty() {
        return respond::accepted();
    }
    let work = Box::pin(
        futures::future::join_all(answers)
            .map(|answers| Answer::Batch(answers.into_iter().map(Payload::into_value).collect())),
    );
    legacy::reply(session, work, nrx, timing, filters, state.challenge(principal.as_deref())).await
}
