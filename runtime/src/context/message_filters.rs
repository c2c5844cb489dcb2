use serde_json::Value;
use std::sync::Arc;

/// A message filter: sees whole JSON-RPC messages as they cross the transport, in both directions —
/// the outermost layer of the pipeline.
///
/// - **Incoming:** every client message (request, notification, response) before routing, in
///   registration order; returning false drops it (a dropped request is never answered; on HTTP
///   the POST gets 202 with no body).
/// - **Outgoing:** every notification a request emits (progress, log messages) and every
///   response to a dispatched request, in reverse registration order (the first registered
///   filter is outermost, so it sees messages last). Return the messages to send instead: none
///   drops the message, several inject extra ones before or after it.
///
/// Register with [`ServerBuilder::message_filter`](crate::ServerBuilder::message_filter). Keep
/// them cheap: they run on every message.
pub trait MessageFilter: Send + Sync + 'static {
    /// Inspects (and may drop) a client message.
    fn incoming(&self, message: &Value) -> bool {
        let _ = message;
        true
    }

    /// Rewrites a server message into zero or more messages.
    fn outgoing(&self, message: Value) -> Vec<Value> {
        vec![message]
    }
}

/// The message filters of a server, in registration order.
#[derive(Clone, Default)]
pub struct MessageFilters(Arc<[Arc<dyn MessageFilter>]>);

impl std::fmt::Debug for MessageFilters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageFilters").field("count", &self.0.len()).finish()
    }
}

impl MessageFilters {
    pub(crate) fn new(filters: Vec<Arc<dyn MessageFilter>>) -> Self {
        MessageFilters(filters.into())
    }

    /// True when no filter is registered (transports then skip the work).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when every filter lets `message` in.
    pub fn incoming(&self, message: &Value) -> bool {
        self.0.iter().all(|f| f.incoming(message))
    }

    /// The messages to send in place of `message`.
    pub fn outgoing(&self, message: Value) -> Vec<Value> {
        let mut messages = vec![message];
        for f in self.0.iter().rev() {
            messages = messages.into_iter().flat_map(|m| f.outgoing(m)).collect();
        }
        messages
    }
}
