//! Detaching a request for work that outlives it (the Tasks extension's background execution).

use super::{Inner, RequestContext};
use crate::context::Notifier;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl RequestContext {
    /// A fresh context for work that goes on after this request has been answered, e.g. a task of
    /// the Tasks extension.
    ///
    /// The new context keeps the request's identity: id, method, era, `_meta`, trace context, client
    /// capabilities and info, principal, connection, matched primitive, shared state and server.
    /// It gets:
    /// - its own request scope ([`extensions`](Self::extensions)), empty, dropped exactly once
    ///   when the last clone of the new context is dropped, independently of this request's;
    /// - `cancel` as its cancellation token, instead of this request's (which fires when the
    ///   client disconnects or the transport ends the request);
    /// - a disconnected notification channel: the request's response stream is closed once it
    ///   has been answered, so progress and log notifications of the detached work are dropped
    ///   rather than written to a closed stream;
    /// - no input channel and no [`ProgressSink`](crate::context::ProgressSink): the owner of the
    ///   detached work installs its own ([`set_input_channel`](Self::set_input_channel),
    ///   [`set_progress_sink`](Self::set_progress_sink)), as the Tasks extension does.
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
        // Its own span, linked to the request's rather than inside it: the request's span ends
        // when the request is answered, the detached work later.
        let span = tracing::info_span!(
            target: super::SPAN_TARGET,
            parent: None,
            "mcp.detached",
            mcp.method.name = %parts.method,
            jsonrpc.request.id = %parts.id,
        );
        span.follows_from(&self.inner.span);
        // In an exported trace the work is a child of the request, so it stays in the caller's
        // trace; in `tracing` it is not, or the request's span would stay open (and its
        // duration grow) until the work ends.
        #[cfg(feature = "otel")]
        {
            use tracing_opentelemetry::OpenTelemetrySpanExt;
            if !span.is_disabled() {
                let _ = span.set_parent(self.inner.span.context());
            }
        }
        RequestContext {
            inner: Arc::new(Inner {
                parts,
                state: self.inner.state.clone(),
                runtime: self.inner.runtime.clone(),
                span,
                matched,
                extensions: std::sync::Mutex::new(http::Extensions::new()),
                // The background part asks through the channel its owner installs (a task's
                // `tasks/update`), never through the request's retry or session.
                input: std::sync::Mutex::new(Default::default()),
                // Likewise its progress goes where its owner says (a task's status), never to
                // the answered request's closed stream.
                progress: std::sync::Mutex::new(None),
                deadline: std::sync::OnceLock::new(),
            }),
        }
    }

    /// True when both handles are the same request context (clones of one another); a
    /// [`detach`](Self::detach)ed context is never the same as its origin.
    pub fn same_context(&self, other: &RequestContext) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

#[cfg(test)]
mod tests {
    use crate::RequestContext;
    use crate::context::{Notifier, RequestParts};
    use crate::jsonrpc::RequestId;
    use crate::protocol::Era;
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio_util::sync::CancellationToken;

    /// Counts its drops (of the last clone: the value is shared through an `Arc`).
    #[derive(Clone)]
    struct Scoped(Arc<AtomicUsize>);

    impl Drop for Scoped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_detached_context_keeps_the_identity_and_owns_its_scope_and_cancellation() {
        let origin_cancel = CancellationToken::new();
        let parts = RequestParts {
            id: RequestId::Number(7),
            method: "tools/call".into(),
            era: Era::Modern,
            client_capabilities: Arc::new(json!({ "extensions": { "x/y": {} } })),
            client_info: None,
            meta: Default::default(),
            log_level: None,
            cancel: origin_cancel.clone(),
            notifier: Notifier::disconnected(),
            principal: Some(Arc::new(crate::auth::Principal::new("alice", ["ops"]))),
            trace: crate::protocol::TraceContext::parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                None,
                None,
            ),
            connection: None,
        };
        let origin = RequestContext::new(parts, Arc::new(Default::default()), Arc::new(()), tracing::Span::none());
        origin.set_matched(None, String::from("echo"));
        let drops = Arc::new(AtomicUsize::new(0));
        origin.extensions().insert(Scoped(drops.clone()));
        let task_cancel = CancellationToken::new();
        let detached = origin.detach(task_cancel.clone());
        assert!(!detached.same_context(&origin) && origin.same_context(&origin.clone()));
        assert_eq!(detached.principal().map(|p| p.id.as_str()), Some("alice"));
        assert_eq!((detached.matched_primitive(), detached.method()), (Some("echo"), "tools/call"));
        assert_eq!(detached.client_capabilities(), origin.client_capabilities());
        assert_eq!(detached.trace_context(), origin.trace_context(), "a task stays in the caller's trace");
        assert!(detached.trace_context().is_some());
        assert!(detached.extensions().get::<Scoped>().is_none(), "a fresh request scope");
        origin_cancel.cancel();
        assert!(!detached.is_cancelled(), "not tied to the originating request");
        task_cancel.cancel();
        assert!(detached.is_cancelled());
        detached.extensions().insert(Scoped(drops.clone()));
        drop(origin);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "the origin's scope went with the origin");
        drop(detached);
        assert_eq!(drops.load(Ordering::SeqCst), 2, "the detached scope is dropped exactly once");
    }
}
