//! Detaching a request for work that outlives it (the Tasks extension's background execution).

use super::{Inner, RequestContext};
use crate::context::Notifier;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl RequestContext {
    /// A fresh context for work that goes on after this request has been answered, e.g. a task
    /// of the Tasks extension (requirement A8).
    ///
    /// The new context keeps the request's identity: id, method, era, `_meta`, client
    /// capabilities and info, principal, matched primitive, shared state and server. It gets:
    /// - its own request scope ([`extensions`](Self::extensions)), empty, dropped exactly once
    ///   when the last clone of the new context is dropped, independently of this request's;
    /// - `cancel` as its cancellation token, instead of this request's (which fires when the
    ///   client disconnects or the transport ends the request);
    /// - a disconnected notification channel: the request's response stream is closed once it
    ///   has been answered, so progress and log notifications of the detached work are dropped
    ///   rather than written to a closed stream.
    ///
    /// This context itself is not changed.
    pub fn detach(&self, cancel: CancellationToken) -> RequestContext {
        let mut parts = self.inner.parts.clone();
        parts.cancel = cancel;
        parts.notifier = Notifier::disconnected();
        let matched = std::sync::OnceLock::new();
        if let Some(m) = self.inner.matched.get() {
            let _ = matched.set(m.clone());
        }
        RequestContext {
            inner: Arc::new(Inner {
                parts,
                state: self.inner.state.clone(),
                server: self.inner.server.clone(),
                matched,
                extensions: std::sync::Mutex::new(http::Extensions::new()),
            }),
        }
    }

    /// True when both handles are the same request context (clones of one another); a
    /// [`detach`](Self::detach)ed context is never the same as its origin.
    pub fn same_context(&self, other: &RequestContext) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
