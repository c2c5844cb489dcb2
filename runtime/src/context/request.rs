mod detach;

use super::{Connection, Logger, Notifier, Progress, StateMap};
use crate::auth::Principal;
use crate::jsonrpc::{McpError, RequestId, RequestMeta};
use crate::protocol::{Era, LogLevel, META_CLIENT_INFO, TraceContext};
use serde_json::{Map, Value};
use std::any::Any;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Everything the dispatcher knows about one request, from which a [`RequestContext`] is made.
#[derive(Debug, Clone)]
pub struct RequestParts {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The era it is served under.
    pub era: Era,
    /// The client's capabilities: from this request's `_meta` (modern) or the session (legacy).
    /// Shared: a legacy session's requests all refer to the values of its `initialize` rather
    /// than each copying them.
    pub client_capabilities: Arc<Value>,
    /// The client's `Implementation`, when known (shared like `client_capabilities`). On a
    /// 2026-07-28 request `None` reads it from `meta` instead
    /// ([`RequestContext::client_info`]).
    pub client_info: Option<Arc<Value>>,
    /// The request's `params._meta` (absent when it had none), read as a map only when asked.
    pub meta: RequestMeta,
    /// Minimum level of log messages the client wants for this request; `None` sends none.
    pub log_level: Option<LogLevel>,
    /// Fires when the client cancels (stdio `notifications/cancelled`, HTTP disconnect) or the
    /// server shuts down.
    pub cancel: CancellationToken,
    /// Where this request's progress and log notifications go.
    pub notifier: Notifier,
    /// The authenticated caller; `None` for an anonymous one.
    pub principal: Option<Arc<Principal>>,
    /// The caller's W3C trace context (SEP-414): from `params._meta`, else from the transport
    /// (the HTTP `traceparent` header); `None` when neither carries a valid one.
    pub trace: Option<TraceContext>,
    /// The transport connection the request came on; `None` when the transport did not say.
    pub connection: Option<Connection>,
}

/// What a transport knows about an incoming request besides its JSON-RPC message: how it is
/// cancelled, where its notifications go, who sent it and the transport's trace context.
///
/// Made with [`Origin::new`] and the setters; passed to
/// [`Server::handle_request`](crate::Server::handle_request).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Origin {
    /// Fires when the client cancels the request or goes away (and when the server shuts down,
    /// when it is a child of [`Server::shutdown_token`](crate::Server::shutdown_token)).
    pub cancel: CancellationToken,
    /// Where the request's own notifications go ([`Notifier::disconnected`] when nowhere).
    pub notifier: Notifier,
    /// The authenticated caller; `None` (the default) for an anonymous one.
    pub principal: Option<Arc<Principal>>,
    /// The transport's W3C trace context (HTTP `traceparent`, `tracestate` and `baggage`
    /// headers), used when the request's `params._meta` carries none (SEP-414).
    pub trace: Option<TraceContext>,
    /// The transport connection the request came on (default `None`: unknown). The server
    /// counts open listen subscriptions per connection; without one only the per-caller limit
    /// applies ([`ListenLimits`](crate::subscriptions::ListenLimits)).
    pub connection: Option<Connection>,
}

impl Origin {
    /// An anonymous request without transport trace context or connection.
    pub fn new(cancel: CancellationToken, notifier: Notifier) -> Self {
        Origin { cancel, notifier, principal: None, trace: None, connection: None }
    }

    /// Sets [`principal`](Self::principal).
    pub fn principal(mut self, principal: Option<Arc<Principal>>) -> Self {
        self.principal = principal;
        self
    }

    /// Sets [`trace`](Self::trace).
    pub fn trace(mut self, trace: Option<TraceContext>) -> Self {
        self.trace = trace;
        self
    }

    /// Sets [`connection`](Self::connection).
    pub fn connection(mut self, connection: Option<Connection>) -> Self {
        self.connection = connection;
        self
    }
}

/// The running server behind a request, as the layer that made the context knows it (the
/// pipeline's engine); [`RequestContext::server`] gives it back as a
/// [`Server`](crate::Server). Kept opaque here so that the context needs nothing above it.
pub(crate) type Runtime = Arc<dyn Any + Send + Sync>;

/// The `tracing` target of the request spans (`mcp.request`, and `mcp.detached` for work that
/// outlives its request, such as a task) and of the events that mark their progress (a task's
/// status changes): what a subscriber's filter enables, at `INFO`, to get them
/// (`RUST_LOG=switchyard::request=info`).
pub const SPAN_TARGET: &str = "switchyard::request";
/// The name of the span every request runs in ([`RequestContext::span`]).
pub(crate) const REQUEST_SPAN: &str = "mcp.request";

/// The context of one request: identity, era, client capabilities, cancellation, the request's
/// own notification channel, shared state and the server handle.
///
/// Cheap to clone (one `Arc`). Handlers receive it directly or through extractors
/// ([`FromRequestContext`](crate::FromRequestContext)).
#[derive(Debug, Clone)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    parts: RequestParts,
    state: Arc<StateMap>,
    runtime: Runtime,
    span: tracing::Span,
    matched: std::sync::OnceLock<Matched>,
    extensions: std::sync::Mutex<http::Extensions>,
    input: std::sync::Mutex<super::input::InputSlot>,
    progress: std::sync::Mutex<Option<Arc<dyn super::ProgressSink>>>,
    /// A child of `parts.cancel` that a deadline fires ([`RequestContext::deadline_token`]):
    /// the handler sees it as its cancellation, while the transport, holding `parts.cancel`,
    /// still answers. Made only when something sets a deadline.
    deadline: std::sync::OnceLock<CancellationToken>,
}

/// The primitive a request matched ([`RequestContext::matched_primitive`]): the dispatch
/// table's shared copy of a tool's name, or a name or URI of the request's own.
#[derive(Debug, Clone)]
pub(crate) enum Matched {
    Shared(Arc<str>),
    Owned(String),
}

impl Matched {
    fn as_str(&self) -> &str {
        match self {
            Matched::Shared(name) => name,
            Matched::Owned(name) => name,
        }
    }
}

impl From<Arc<str>> for Matched {
    fn from(name: Arc<str>) -> Self {
        Matched::Shared(name)
    }
}

impl From<String> for Matched {
    fn from(name: String) -> Self {
        Matched::Owned(name)
    }
}

#[cfg(test)]
impl RequestParts {
    /// A modern `tools/call` with id 1, no `_meta`, anonymous, cancelled by `cancel`, its
    /// notifications dropped: what tests change one field or two of.
    pub(crate) fn for_test(cancel: CancellationToken) -> RequestParts {
        RequestParts {
            id: RequestId::Number(1),
            method: "tools/call".into(),
            era: Era::Modern,
            client_capabilities: Arc::new(serde_json::json!({})),
            client_info: None,
            meta: Default::default(),
            log_level: None,
            cancel,
            notifier: Notifier::disconnected(),
            principal: None,
            trace: None,
            connection: None,
        }
    }
}

impl RequestContext {
    pub(crate) fn new(parts: RequestParts, state: Arc<StateMap>, runtime: Runtime, span: tracing::Span) -> Self {
        RequestContext {
            inner: Arc::new(Inner {
                parts,
                state,
                runtime,
                span,
                matched: std::sync::OnceLock::new(),
                extensions: std::sync::Mutex::new(http::Extensions::new()),
                input: std::sync::Mutex::new(Default::default()),
                progress: std::sync::Mutex::new(None),
                deadline: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The authenticated caller (HTTP bearer token via [`BearerAuth`](crate::auth::BearerAuth),
    /// or the stdio transport's configured principal); `None` when anonymous.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.parts.principal.as_deref()
    }

    /// The transport connection the request came on: set by the stdio transport, and by
    /// [`transport::http::serve`](crate::transport::http::serve) /
    /// [`serve_app`](crate::transport::http::serve_app) on 2026-07-28 requests; `None` under a
    /// server of your own that does not insert one, and on legacy-session requests. A
    /// [`detach`](Self::detach)ed context keeps it.
    pub fn connection(&self) -> Option<&Connection> {
        self.inner.parts.connection.as_ref()
    }

    /// The primitive the request was matched to before any alternate or typed filter ran: the
    /// tool name of `tools/call`, the prompt name of `prompts/get`, the URI of
    /// `resources/read`; `None` for other methods. A filter that swaps the primitive changes
    /// the params, not this record.
    pub fn matched_primitive(&self) -> Option<&str> {
        self.inner.matched.get().map(Matched::as_str)
    }

    /// Records the primitive the request is for, and on the span as `span_field` (the
    /// attribute the OpenTelemetry semantic conventions for MCP give the method's primitive).
    pub(crate) fn set_matched(&self, span_field: Option<&'static str>, name: impl Into<Matched>) {
        let name = name.into();
        let span = &self.inner.span;
        if !span.is_disabled() {
            if let Some(field) = span_field {
                span.record(field, name.as_str());
            }
            span.record("otel.name", format!("{} {}", self.method(), name.as_str()));
        }
        // Set once per request, by the method's dispatch, before the first filter.
        let _ = self.inner.matched.set(name);
    }

    /// The request's `tracing` span (`mcp.request`, disabled when no subscriber wants it): the
    /// filters and the handler run inside it, so their own spans and events are its children.
    /// Its fields follow the
    /// [OpenTelemetry semantic conventions for MCP](https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/):
    /// `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id` (legacy sessions),
    /// `jsonrpc.request.id`, `gen_ai.tool.name` / `gen_ai.prompt.name` / `mcp.resource.uri`
    /// (the matched primitive), `error.type` (the JSON-RPC error code of a failed request), and
    /// `otel.name` = `{method} {target}`.
    pub fn span(&self) -> &tracing::Span {
        &self.inner.span
    }

    /// The JSON-RPC request id.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.parts.id
    }

    /// The method name (`tools/call`, ...).
    pub fn method(&self) -> &str {
        &self.inner.parts.method
    }

    /// The protocol era of this request.
    pub fn era(&self) -> &Era {
        &self.inner.parts.era
    }

    /// The protocol version string (`2026-07-28`, `2025-11-25`, ...).
    pub fn protocol_version(&self) -> &'static str {
        self.inner.parts.era.version()
    }

    /// The client's capabilities (`ClientCapabilities` JSON) as declared for this request.
    pub fn client_capabilities(&self) -> &Value {
        &self.inner.parts.client_capabilities
    }

    /// The client's `Implementation` (`{name, version, ...}`), when it sent one: a legacy
    /// session's from its `initialize`, a 2026-07-28 request's from its
    /// `_meta["io.modelcontextprotocol/clientInfo"]`.
    pub fn client_info(&self) -> Option<&Value> {
        let parts = &self.inner.parts;
        match &parts.client_info {
            Some(info) => Some(info),
            // The server's transports leave a 2026-07-28 request's client info in its `_meta`
            // rather than copying it out per request.
            None if matches!(parts.era, Era::Modern) => parts.meta.get(META_CLIENT_INFO),
            None => None,
        }
    }

    /// The raw `params._meta` of the request.
    pub fn meta(&self) -> &Map<String, Value> {
        self.inner.parts.meta.map()
    }

    /// The caller's W3C trace context
    /// ([SEP-414](https://modelcontextprotocol.io/seps/414-request-meta)): `traceparent`,
    /// `tracestate` and `baggage` from `params._meta`, else from the HTTP headers of the same
    /// names; `None` when neither carries a valid `traceparent`. Pass it on
    /// ([`TraceContext::to_meta`]) in requests this handler makes to other MCP servers. A
    /// [`detach`](Self::detach)ed context (a task's) keeps it.
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.inner.parts.trace.as_ref()
    }

    /// True when the client declared the top-level capability `name` (e.g. `"sampling"`) as an
    /// object, as the schema defines capabilities; `true`, `false` or `null` do not count.
    pub fn has_client_capability(&self, name: &str) -> bool {
        self.inner.parts.client_capabilities.get(name).is_some_and(Value::is_object)
    }

    /// Fails with `-32021` (HTTP 400) and `data.requiredCapabilities = {name: {}}` unless the
    /// client declared the capability `name` on this request
    /// ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta)).
    pub fn require_client_capability(&self, name: &str) -> Result<(), McpError> {
        if self.has_client_capability(name) {
            return Ok(());
        }
        let mut required = Map::new();
        required.insert(name.to_owned(), Value::Object(Map::new()));
        Err(McpError::missing_capability(
            format!("this request needs the client capability `{name}`; declare it in the request's capabilities"),
            Value::Object(required),
        ))
    }

    /// The cancellation token of this request: it fires when the client cancels the request
    /// (stdio or session `notifications/cancelled`, an HTTP disconnect), when the server shuts
    /// down, and when a deadline set on the call passes (a [`Timeout`](crate::filters::Timeout)
    /// filter, `#[mcp_tool(timeout = "30s")]`). Hand it (or a `child_token()`) to work the
    /// handler spawns, so that work stops too.
    ///
    /// A fired deadline does not withdraw the call: it is still answered, with the timeout's
    /// `-32603` error; a client's cancellation is not
    /// ([cancellation](https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/cancellation)).
    pub fn cancellation(&self) -> &CancellationToken {
        self.inner.deadline.get().unwrap_or(&self.inner.parts.cancel)
    }

    /// True once [`cancellation`](Self::cancellation) fired: the client cancelled the request,
    /// the server is shutting down, or the call's deadline passed.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }

    /// The request's own token, which the transport holds: the client's cancellation and the
    /// server's shutdown fire it, a deadline does not.
    pub(crate) fn request_cancellation(&self) -> &CancellationToken {
        &self.inner.parts.cancel
    }

    /// The token a deadline fires: a child of the request's own, installed on first use as
    /// what [`cancellation`](Self::cancellation) returns from then on. Firing it cancels the
    /// handler's work without withdrawing the call, whose answer the transport still sends.
    pub(crate) fn deadline_token(&self) -> &CancellationToken {
        self.inner.deadline.get_or_init(|| self.inner.parts.cancel.child_token())
    }

    /// The request's own notification channel.
    pub(crate) fn notifier(&self) -> &crate::context::Notifier {
        &self.inner.parts.notifier
    }

    /// The progress reporter of this request: its reports go to the
    /// [`ProgressSink`](super::ProgressSink) installed with
    /// [`set_progress_sink`](Self::set_progress_sink) (a task's status), else out as
    /// `notifications/progress` when the client sent a `progressToken`, else nowhere.
    pub fn progress(&self) -> Progress {
        // Only a string or an integer is a progress token (legacy requests are not validated
        // up front, so anything else is ignored here rather than echoed).
        let token = self.inner.parts.meta.get("progressToken").filter(|t| t.is_string() || t.is_i64() || t.is_u64());
        Progress { token: token.cloned(), notifier: self.inner.parts.notifier.clone(), sink: self.progress_sink() }
    }

    /// The logger of this request.
    pub fn logger(&self) -> Logger {
        Logger { threshold: self.inner.parts.log_level, notifier: self.inner.parts.notifier.clone(), name: None }
    }

    /// Ends this request's HTTP response stream while the request keeps running, so that the
    /// client reconnects with `GET` + `Last-Event-ID` and receives the rest there (2025-11-25
    /// Streamable HTTP polling, SEP-1699). Only legacy HTTP sessions resume streams; elsewhere
    /// this does nothing. Returns false when there is no stream to close.
    pub async fn close_sse_stream(&self) -> bool {
        self.inner.parts.notifier.close_stream().await
    }

    /// The request scope: typed values that filters and the handler of this request share
    /// (one value per type). It lives as long as the request (every clone of this context) and
    /// is dropped exactly once when the request ends.
    pub fn extensions(&self) -> std::sync::MutexGuard<'_, http::Extensions> {
        // A poisoned lock only means another filter panicked mid-insert; the map is still usable.
        self.inner.extensions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Shared state of type `T`, if the builder was given one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.state.get::<T>()
    }

    pub(crate) fn input_slot(&self) -> std::sync::MutexGuard<'_, super::input::InputSlot> {
        // A poisoned lock only means a handler panicked while asking; the slot stays consistent.
        self.inner.input.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn progress_slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<dyn super::ProgressSink>>> {
        // A poisoned lock only means a panic while swapping the sink; the slot holds one or none.
        self.inner.progress.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The running server behind this request (see [`Runtime`]).
    pub(crate) fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }
}
