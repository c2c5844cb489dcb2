//! What one request may add to the client's defaults: progress reports, a cancellation token,
//! its own timeout, and trace context from the current span.

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use switchyard::McpError;
use tokio_util::sync::CancellationToken;

/// One `notifications/progress` for a request
/// ([progress](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress)):
/// `progress` rises with each report; `total` when the server knows it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProgressUpdate {
    /// How far the work is (units the server chooses; it only rises).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What the server is doing now.
    pub message: Option<String>,
}

pub(crate) type ProgressFn = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// A per-request input handler: `(key, method, params)` of one input request → its answer.
pub(crate) type InputFn =
    Arc<dyn Fn(String, String, Value) -> BoxFuture<'static, Result<Value, McpError>> + Send + Sync>;

/// Options of one request ([`Client::request_with`](crate::Client::request_with),
/// [`Client::call_tool_with`](crate::Client::call_tool_with)).
///
/// ```no_run
/// # async fn run(client: switchyard_client::Client) -> Result<(), switchyard_client::ClientError> {
/// use switchyard_client::{CancellationToken, RequestOptions};
///
/// let stop = CancellationToken::new();
/// let options = RequestOptions::new()
///     .on_progress(|p| println!("{} of {:?}: {:?}", p.progress, p.total, p.message))
///     .cancel_with(stop.clone())
///     .timeout(std::time::Duration::from_secs(600));
/// let result = client.call_tool_with("index_repository", serde_json::json!({}), options).await?;
/// # let _ = result; Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) input: Option<(Value, InputFn)>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .field("timeout", &self.timeout)
            .field("input", &self.input.as_ref().map(|(capabilities, _)| capabilities))
            .finish()
    }
}

impl RequestOptions {
    /// No progress callback, no cancellation token, the client's timeout.
    pub fn new() -> Self {
        RequestOptions::default()
    }

    /// Asks the server for progress (`_meta.progressToken`) and calls `callback` with each
    /// report, in order, while the request runs (on the task awaiting it; keep it quick).
    pub fn on_progress(mut self, callback: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Cancels the request when `token` is cancelled: the server is sent
    /// `notifications/cancelled` and the request fails with
    /// [`ClientError::Cancelled`](crate::ClientError::Cancelled). The client only watches
    /// `token` and never cancels it, so a server's own request token can be handed over as it
    /// is: a timeout or a closed connection fails the request, not the token.
    pub fn cancel_with(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// This request's timeout instead of the client's
    /// ([`ClientBuilder::request_timeout`](crate::ClientBuilder::request_timeout)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Answers this request's own input rounds on 2026-07-28
    /// ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr))
    /// with `handler` instead of the client's input handlers, and declares `capabilities`
    /// (`{"elicitation":{..},"sampling":{},"roots":{}}`, or less) as this request's client
    /// capabilities instead of the client's. A gateway relays an upstream's questions to its
    /// own caller this way.
    ///
    /// `handler` gets each input request of a round as `(key, method, params)`
    /// (`"elicitation/create"`, `"sampling/createMessage"`, `"roots/list"`, with the request's
    /// params) and returns the result object to send back in `inputResponses[key]`; an `Err`
    /// fails the request with [`ClientError::Rpc`](crate::ClientError::Rpc) carrying that
    /// error unchanged.
    ///
    /// On a 2025 session the server asks with requests of its own, and `handler` answers those
    /// that belong to this request, with keys `input-1`, `input-2`, ... in the order asked:
    /// over Streamable HTTP the ones that come on this request's response stream (where the
    /// [transport](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server)
    /// sends a request's own), over stdio, which ties a server's request to none of ours, any
    /// that comes while this is the only request in flight with its own handler; the client's
    /// handlers answer the rest. `capabilities` are not sent there (a session declares them
    /// once, at `initialize`, from the client's handlers). An `Err` answers the server's request
    /// with that error; the `input_required` outcome
    /// ([`McpError::input_required`](switchyard::McpError::input_required), what a gateway's
    /// relay returns when its own client must be asked in a round of its own) also ends this
    /// request with [`ClientError::Rpc`](crate::ClientError::Rpc) carrying it, and the server
    /// is sent `notifications/cancelled`.
    pub fn on_input<F, Fut>(mut self, capabilities: Value, handler: F) -> Self
    where
        F: Fn(String, String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, McpError>> + Send + 'static,
    {
        self.input = Some((capabilities, Arc::new(move |key, method, params| Box::pin(handler(key, method, params)))));
        self
    }
}

/// The progress report in a notification's params, if it is one for `token`.
pub(crate) fn progress_for(params: Option<&Map<String, Value>>, token: &str) -> Option<ProgressUpdate> {
    let params = params?;
    if params.get("progressToken").and_then(Value::as_str) != Some(token) {
        return None;
    }
    Some(ProgressUpdate {
        progress: params.get("progress").and_then(Value::as_f64)?,
        total: params.get("total").and_then(Value::as_f64),
        message: params.get("message").and_then(Value::as_str).map(str::to_owned),
    })
}

/// Adds the current span's W3C trace context to `meta` (`traceparent`, `tracestate`;
/// [SEP-414](https://modelcontextprotocol.io/seps/414-request-meta)) when the span is recorded
/// by OpenTelemetry (feature `otel`) and the caller set none.
#[cfg(feature = "otel")]
pub(crate) fn inject_trace_context(meta: &mut Map<String, Value>) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if meta.contains_key("traceparent") {
        return;
    }
    let context = tracing::Span::current().context();
    let span = context.span();
    let span_context = span.span_context();
    if !span_context.is_valid() {
        return;
    }
    let traceparent =
        format!("00-{}-{}-{:02x}", span_context.trace_id(), span_context.span_id(), span_context.trace_flags().to_u8());
    meta.insert("traceparent".to_owned(), Value::from(traceparent));
    let state = span_context.trace_state().header();
    if !state.is_empty() {
        meta.insert("tracestate".to_owned(), Value::from(state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_this_requests_reports_are_read() {
        let params = json!({"progressToken": "p1", "progress": 2.0, "total": 4, "message": "half"});
        let update = progress_for(params.as_object(), "p1").expect("ours");
        assert_eq!((update.progress, update.total, update.message.as_deref()), (2.0, Some(4.0), Some("half")));
        assert_eq!(progress_for(params.as_object(), "p2"), None);
        assert_eq!(progress_for(json!({"progressToken": "p1"}).as_object(), "p1"), None, "no progress value");
        assert_eq!(progress_for(None, "p1"), None);
    }
}

#[cfg(all(test, feature = "otel"))]
mod otel_tests {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn the_current_spans_trace_context_goes_in_meta() {
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("client-test"));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let mut outside = Map::new();
            inject_trace_context(&mut outside);
            assert!(outside.is_empty(), "no span, no context: {outside:?}");
            let span = tracing::info_span!("agent.step");
            let _entered = span.enter();
            let mut meta = Map::new();
            inject_trace_context(&mut meta);
            let traceparent = meta.get("traceparent").and_then(Value::as_str).expect("a traceparent");
            let parts: Vec<&str> = traceparent.split('-').collect();
            assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [2, 32, 16, 2], "{traceparent}");
            assert_eq!(parts[0], "00");
            let mut own = Map::from_iter([("traceparent".to_owned(), Value::from("caller's"))]);
            inject_trace_context(&mut own);
            assert_eq!(own["traceparent"], "caller's", "the caller's context stays");
        });
    }
}
