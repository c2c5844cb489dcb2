//! The legacy-session channel (2025-11-25 and older): real server→client JSON-RPC requests on
//! the originating request's stream, correlated with the client's responses.

use super::{InputChannel, InputFuture, InputKind, InputRound};
use crate::context::{Notifier, RequestContext};
use crate::jsonrpc::{McpError, RequestId};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// A client's response to a server→client request: `Ok(result)` or `Err(error object)`.
pub type ClientOutcome = Result<Value, Value>;

/// The server→client requests of one legacy session that await a response, by id.
///
/// Ids are strings `"srv-N"` (N counting up per session), distinct from anything the client
/// uses for its own requests, which live in another id space anyway.
#[derive(Debug, Default)]
pub struct ClientRequests {
    next: AtomicU64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<ClientOutcome>>>,
}

impl ClientRequests {
    /// Registers a new request; the response is awaited on the returned guard.
    pub(crate) fn register(self: &Arc<Self>) -> Pending {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(format!("srv-{n}"));
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), tx);
        Pending { id, rx: Some(rx), owner: self.clone() }
    }

    /// Hands the client's response to the request `id` to whoever awaits it. Returns false when
    /// no request with that id is pending (unknown, answered already, or its request ended);
    /// such responses are dropped.
    pub fn deliver(&self, id: &RequestId, outcome: ClientOutcome) -> bool {
        let tx = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        match tx {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Number of requests awaiting a response.
    pub fn pending(&self) -> usize {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// One awaited server→client request; dropping it (the request ended or was cancelled)
/// forgets the id, so a late response is dropped.
pub(crate) struct Pending {
    pub(crate) id: RequestId,
    rx: Option<oneshot::Receiver<ClientOutcome>>,
    owner: Arc<ClientRequests>,
}

impl Pending {
    async fn response(mut self) -> Option<ClientOutcome> {
        let rx = self.rx.take()?;
        rx.await.ok()
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.owner.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

/// Sends each request of a round to the client of a legacy session and awaits the responses.
#[derive(Debug)]
pub(crate) struct LegacyChannel {
    requests: Arc<ClientRequests>,
    notifier: Notifier,
}

impl LegacyChannel {
    pub(crate) fn new(requests: Arc<ClientRequests>, notifier: Notifier) -> Self {
        LegacyChannel { requests, notifier }
    }
}

/// A legacy request's channel is made only when its handler asks: most never do, and the
/// channel holds the request's notifier.
impl crate::context::input::DeferredChannel for ClientRequests {
    fn channel(self: Arc<Self>, notifier: &Notifier) -> Arc<dyn InputChannel> {
        Arc::new(LegacyChannel::new(self, notifier.clone()))
    }
}

impl InputChannel for LegacyChannel {
    fn ask<'a>(&'a self, _ctx: &'a RequestContext, round: &'a InputRound) -> InputFuture<'a> {
        Box::pin(async move {
            if !self.notifier.can_deliver() {
                return Err(McpError::internal(
                    "this transport cannot send requests to the client (JSON-only HTTP); \
                     the handler's input request cannot be delivered",
                ));
            }
            let mut waits = Vec::with_capacity(round.len());
            for (key, request) in round.iter() {
                let pending = self.requests.register();
                let mut params = request.params().clone();
                if request.kind() == InputKind::ElicitationUrl {
                    // 2025-11-25 URL elicitation needs an id the client can complete against.
                    params.entry("elicitationId").or_insert_with(|| pending.id.to_value());
                }
                let msg = json!({ "jsonrpc": "2.0", "id": pending.id.to_value(), "method": request.method(),
                    "params": params });
                if !self.notifier.send_message(msg).await {
                    return Err(McpError::internal(format!(
                        "could not send {} to the client: its stream is gone",
                        request.method()
                    )));
                }
                waits.push((key.to_owned(), request.method(), pending));
            }
            let mut answers = Map::new();
            for (key, method, pending) in waits {
                match pending.response().await {
                    Some(Ok(result)) => {
                        answers.insert(key, result);
                    }
                    Some(Err(error)) => {
                        let code = error.get("code").and_then(Value::as_i64).unwrap_or_default();
                        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
                        return Err(McpError::internal(format!(
                            "the client answered {method} with error {code}: {message}"
                        )));
                    }
                    None => {
                        return Err(McpError::internal(format!("the client never answered {method}")));
                    }
                }
            }
            Ok(answers)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn responses_reach_their_request_once() {
        let reqs = Arc::new(ClientRequests::default());
        let a = reqs.register();
        let b = reqs.register();
        assert_ne!(a.id, b.id);
        assert!(reqs.deliver(&b.id, Ok(json!({"roots": []}))));
        assert!(!reqs.deliver(&b.id, Ok(json!({}))), "a second response is dropped");
        assert_eq!(b.response().await, Some(Ok(json!({"roots": []}))));
        let a_id = a.id.clone();
        drop(a);
        assert!(!reqs.deliver(&a_id, Ok(json!({}))), "a dropped request forgets its id");
        assert_eq!(reqs.pending(), 0);
    }
}
