//! The seam between `ctx.progress()` and where its reports go when they must not become
//! `notifications/progress`: a task's status, for the Tasks extension.

use super::RequestContext;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The future a [`ProgressSink`] returns; what the handler's
/// [`Progress::report`](super::Progress::report) awaits.
pub type ProgressFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Takes a request's progress reports instead of the client's
/// [`notifications/progress`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress).
///
/// Installed on one context with [`RequestContext::set_progress_sink`]; from then on every
/// [`Progress`](super::Progress) taken from that context hands its reports here, whether or not
/// the request carried a `progressToken`, and sends no notification. Without a sink (the
/// usual case) reports go out as notifications when the client asked for them, as before.
///
/// This is the seam for task runtimes: a task's work runs on a detached context whose request
/// was answered long ago, and the Tasks extension forbids progress notifications for tasks
/// ([Tasks extension](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md));
/// a task runtime installs a sink that records the report on the task instead (its
/// `statusMessage`), so the handler's code stays the same inside and outside a task.
///
/// Object safe: stored as `Arc<dyn ProgressSink>`.
pub trait ProgressSink: Send + Sync + std::fmt::Debug + 'static {
    /// Takes one report, as [`Progress::report`](super::Progress::report) got it: `progress`
    /// so far (increasing between reports, may be fractional, in whatever unit the handler
    /// counts: items, bytes, ...), the `total` it will reach when known (same unit), and an
    /// optional human-readable `message`.
    ///
    /// The handler awaits the returned future, so a sink that writes somewhere slow should
    /// queue or coalesce rather than make the handler wait for every write.
    fn report<'a>(&'a self, progress: f64, total: Option<f64>, message: Option<&'a str>) -> ProgressFuture<'a>;
}

impl RequestContext {
    /// Routes this context's progress reports to `sink` from now on (replacing a sink installed
    /// before) instead of `notifications/progress`: [`progress`](Self::progress) then reports
    /// as enabled and every [`Progress::report`](super::Progress::report) goes to the sink.
    /// This is the seam for task runtimes (see [`ProgressSink`]). A
    /// [`detach`](Self::detach)ed context starts without one.
    pub fn set_progress_sink(&self, sink: Arc<dyn ProgressSink>) {
        *self.progress_slot() = Some(sink);
    }

    /// The progress sink installed on this context, if any.
    pub fn progress_sink(&self) -> Option<Arc<dyn ProgressSink>> {
        self.progress_slot().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::{ProgressFuture, ProgressSink};
    use crate::RequestContext;
    use crate::context::{Notifier, Outbound, Payload, RequestParts, outbound_channel};
    use serde_json::{Map, Value, json};
    use std::sync::{Arc, Mutex};
    use tokio_util::sync::CancellationToken;

    /// One report as a sink got it: `(progress, total, message)`.
    type Report = (f64, Option<f64>, Option<String>);

    /// Keeps every report it gets.
    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<Report>>);

    impl ProgressSink for Recorder {
        fn report<'a>(&'a self, progress: f64, total: Option<f64>, message: Option<&'a str>) -> ProgressFuture<'a> {
            self.0.lock().expect("reports").push((progress, total, message.map(str::to_owned)));
            Box::pin(async {})
        }
    }

    /// A `tools/call` context whose notifications go into the returned queue; with a
    /// `progressToken` when `token` is given.
    fn context(token: Option<Value>) -> (RequestContext, crate::context::OutboundReceiver) {
        let (tx, rx) = outbound_channel(8);
        let mut meta = Map::new();
        if let Some(t) = token {
            meta.insert("progressToken".into(), t);
        }
        let parts = RequestParts {
            meta: crate::jsonrpc::RequestMeta::from_value(Value::Object(meta)),
            notifier: Notifier::new(tx, CancellationToken::new()),
            ..RequestParts::for_test(CancellationToken::new())
        };
        (RequestContext::new(parts, Arc::new(Default::default()), Arc::new(()), tracing::Span::none()), rx)
    }

    #[tokio::test]
    async fn without_a_sink_reports_are_notifications_for_a_progress_token_only() {
        let (ctx, mut rx) = context(Some(json!("p-1")));
        assert!(ctx.progress().is_enabled() && ctx.progress_sink().is_none());
        ctx.progress().report(3.0, Some(10.0), Some("copying")).await;
        let expected = json!({ "jsonrpc": "2.0", "method": "notifications/progress",
            "params": { "progressToken": "p-1", "progress": 3.0, "total": 10.0, "message": "copying" } });
        assert_eq!(rx.try_recv(), Some(Outbound::Message(Payload::Value(expected))));

        let (quiet, mut rx) = context(None);
        assert!(!quiet.progress().is_enabled());
        quiet.progress().report(1.0, None, None).await;
        assert!(rx.try_recv().is_none());
    }

    /// With a sink every report goes there, with or without a token, and none is sent.
    #[tokio::test]
    async fn with_a_sink_reports_go_to_it_and_no_notification_is_sent() {
        for token in [Some(json!(7)), None] {
            let (ctx, mut rx) = context(token);
            let sink = Arc::new(Recorder::default());
            ctx.set_progress_sink(sink.clone());
            let progress = ctx.progress();
            assert!(progress.is_enabled());
            progress.report(3.0, Some(10.0), Some("copying files")).await;
            progress.report(4.5, None, None).await;
            let got = sink.0.lock().expect("reports").clone();
            assert_eq!(got, vec![(3.0, Some(10.0), Some("copying files".to_owned())), (4.5, None, None)]);
            assert!(rx.try_recv().is_none(), "no notifications/progress");
            let detached = ctx.detach(CancellationToken::new());
            assert!(detached.progress_sink().is_none(), "a detached context starts without a sink");
        }
    }
}
