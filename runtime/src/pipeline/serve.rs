//! The request path of [`super`], stage by stage: era and target, the requestState check,
//! the raw filters, dispatch to a built-in handler or a typed RPC, and the era's result stamping.

use super::method::{self, Method, ServedWith};
use super::session::LegacySession;
use super::{Engine, encode, handlers};
use crate::context::{Origin, RequestContext, RequestParts};
use crate::input::{InputSource, ModernChannel};
use crate::jsonrpc::{McpError, Request, RequestMeta, ResultObject, TakenOut, small_map};
use crate::pipeline::{RawRequest, RawResponse};
use crate::protocol::negotiate_legacy;
use crate::protocol::{Era, LEGACY_VERSIONS, MODERN_VERSION, ModernMeta, TraceContext, check_modern_meta};
use crate::registry::BoxFuture;
use futures::FutureExt;
use futures::future::{Either, ready};
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;
use tracing::Instrument;

/// What a method name resolves to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target {
    Builtin(Method),
    Rpc(&'static str),
}

impl Target {
    /// The method's name.
    fn name(self) -> &'static str {
        match self {
            Target::Builtin(m) => m.descriptor().name,
            Target::Rpc(name) => name,
        }
    }

    /// Whether a 2026-07-28 request may end with an `InputRequiredResult`.
    fn asks_input(self) -> bool {
        matches!(self, Target::Builtin(m) if m.descriptor().asks_input)
    }
}

impl Engine {
    /// What serves `method` in the given era: a built-in method (taking the capabilities into
    /// account: `prompts/*` only with prompts, ...) or a typed RPC of that era.
    pub(crate) fn target(&self, method: &str, modern: bool) -> Option<Target> {
        if let Some(m) = self.method(method, modern) {
            return Some(Target::Builtin(m));
        }
        let (&name, reg) = self.pipelines.rpcs.get_key_value(method)?;
        // An extension's methods exist only while the server declares that extension.
        if reg.extension.is_some_and(|id| !self.has_extension(id)) {
            return None;
        }
        reg.eras.serves(modern).then_some(Target::Rpc(name))
    }

    /// The params field that the HTTP `Mcp-Name` header mirrors for `method`, if any
    /// (`name` for tools/call and prompts/get, `uri` for resources/read, an RPC's routing name).
    pub(crate) fn routing_field(&self, method: &str) -> Option<&'static str> {
        match method::named(method) {
            Some(builtin) => builtin.routing_field,
            None => self.pipelines.rpcs.get(method).and_then(|r| r.routing_name),
        }
    }

    fn method(&self, method: &str, modern: bool) -> Option<Method> {
        let d = method::lookup(method, modern)?;
        let t = self.table.load();
        let served = match d.served_with {
            ServedWith::Always => true,
            ServedWith::Tools => t.has_tools(),
            ServedWith::Prompts => t.has_prompts(),
            ServedWith::Resources => t.has_resources(),
            ServedWith::Completions => t.has_completions(),
            ServedWith::Listen => self.listen.is_some() || t.has_tools() || t.has_prompts() || t.has_resources(),
        };
        served.then_some(d.method)
    }

    /// True when a 2026-07-28 request for `method` would be dispatched (not `-32601`).
    pub(crate) fn serves_modern_method(&self, method: &str) -> bool {
        self.target(method, true).is_some()
    }

    /// Checks the `_meta` protocol version of a modern request.
    ///
    /// Errors: `-32022` (HTTP 400) with `data = {supported, requested}` unless it is 2026-07-28;
    /// `supported` is the list `server/discover` advertises, and for a legacy version the message
    /// says to negotiate it with `initialize`.
    pub(crate) fn check_modern_version(&self, meta: &ModernMeta) -> Result<(), McpError> {
        if meta.protocol_version == MODERN_VERSION {
            return Ok(());
        }
        let mut err = McpError::unsupported_version(&meta.protocol_version, crate::protocol::SUPPORTED_VERSIONS);
        if crate::protocol::is_legacy_version(&meta.protocol_version) {
            err = err.with_message(format!(
                "protocol version {:?} is session-based: send `initialize` (without the 2026-07-28 `_meta`) to use it; \
                 stateless requests support {MODERN_VERSION}",
                meta.protocol_version
            ));
        }
        Err(err)
    }

    /// Serves a request whose era the transport has not decided: with a legacy session (a stdio
    /// process that began with `initialize`) under the session's version, whatever its `_meta`
    /// (a 2026-07-28 envelope there is `-32600`); without one statelessly (2026-07-28), except
    /// a `ping` without the 2026-07-28 `_meta` envelope, which answers `{}`.
    ///
    /// That `ping` is the one request the legacy lifecycle lets a client send before
    /// `initialize` (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>),
    /// so it is answered without choosing an era: it runs through the pipeline under the newest
    /// legacy revision (ping is the same in all of them) on a session made for it alone, and a
    /// later `initialize` of any revision, or a 2026-07-28 request, is served as if it had not
    /// come. A `ping` with the 2026-07-28 envelope is `-32601` (that revision removed it).
    ///
    /// `initialize` is not handled here: transports call [`Server::initialize`] to create the
    /// session. `origin` says how the request is cancelled, where its notifications go, who
    /// sent it and the transport's trace context. Returns the result
    /// object (already stamped for its era) or the error to send.
    ///
    /// The checks run (and the request's context is made) when this is called; the returned
    /// future, which owns everything it needs (`'static`), runs the filters and the handler.
    pub(crate) fn handle_request(
        self: &Arc<Self>,
        req: Request,
        session: Option<&Arc<LegacySession>>,
        origin: Origin,
    ) -> impl Future<Output = Result<ResultObject, McpError>> + Send + 'static + use<> {
        // After `initialize` the legacy rules cover the whole connection
        // (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions),
        // so a request carrying the 2026-07-28 envelope there is a legacy request (and refused).
        match session {
            Some(s) => Either::Left(Either::Left(self.serve_legacy(req, s, origin))),
            None if req.method == "ping" && !req.meta.contains_key(crate::protocol::META_PROTOCOL_VERSION) => {
                let unnegotiated = Arc::new(LegacySession::new(String::new(), LEGACY_VERSIONS[0], json!({}), None));
                let server = self.clone();
                // The block owns the session the request borrows; nothing else keeps it. Boxed:
                // inline, this rare branch (a session's future and the request beside it)
                // would size the future of every request.
                Either::Left(Either::Right(Box::pin(
                    async move { server.serve_legacy(req, &unnegotiated, origin).await },
                )))
            }
            None => Either::Right(
                match check_modern_meta(&req.meta).and_then(|meta| {
                    self.check_modern_version(&meta)?;
                    Ok(meta)
                }) {
                    Ok(meta) => Either::Left(self.serve_modern(req, meta, origin)),
                    Err(e) => Either::Right(ready(Err(e))),
                },
            ),
        }
    }

    /// Serves a 2026-07-28 request whose `_meta` was validated (and, on HTTP, whose headers
    /// were checked). Unknown and removed methods are `-32601` (HTTP 404).
    ///
    /// The checks run (and the request's context is made) when this is called; the returned
    /// future, which owns everything it needs (`'static`), runs the filters and the handler.
    pub(crate) fn serve_modern(
        self: &Arc<Self>,
        req: Request,
        meta: ModernMeta,
        origin: Origin,
    ) -> impl Future<Output = Result<ResultObject, McpError>> + Send + 'static + use<> {
        // The checks and the request's parts are made here, synchronously; the future keeps
        // only the running request (see `run`).
        match self.prepare_modern(req, meta, origin) {
            Err(e) => Either::Left(ready(Err(e))),
            Ok(p) => {
                let target = p.target;
                let server = self.clone();
                let had_input = p.had_input;
                Either::Right(
                    self.run(p.target, p.parts, (p.params, p.taken), None, p.channel)
                        .map(move |r| server.finish_modern(target, had_input, r)),
                )
            }
        }
    }

    /// What [`serve_modern`](Self::serve_modern) checks before anything runs: the target, the
    /// input-required state of a retry, the request's parts.
    fn prepare_modern(&self, mut req: Request, meta: ModernMeta, origin: Origin) -> Result<Prepared, McpError> {
        let target =
            self.target(&req.method, true).ok_or_else(|| crate::protocol::method_not_served(&req.method, None))?;
        let taken = req.take_out();
        let mut params = req.params.unwrap_or_default();
        let takes_input = target.asks_input();
        // MRTR (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr): the
        // retry's answers and state are checked before any filter or handler runs; a state that
        // does not verify is -32602 and nothing runs.
        let had_input = takes_input
            && (small_map::contains(&params, "inputResponses") || small_map::contains(&params, "requestState"));
        let channel = if takes_input {
            let principal_id = origin.principal.as_deref().map(|p| p.id.as_str());
            let c = ModernChannel::from_params(
                self.request_state.clone(),
                target.name(),
                &mut params,
                &taken,
                principal_id,
            )?;
            Some(InputSource::Ready(Arc::new(c)))
        } else {
            None
        };
        let (raw, taken) = self.take_meta(target, &mut params, req.meta, taken);
        let parts = RequestParts {
            id: req.id,
            method: req.method,
            era: Era::Modern,
            client_capabilities: Arc::new(meta.client_capabilities),
            client_info: meta.client_info.map(Arc::new),
            trace: trace_context(&raw, origin.trace),
            meta: raw,
            log_level: meta.log_level,
            cancel: origin.cancel,
            notifier: origin.notifier,
            principal: origin.principal,
            connection: origin.connection,
        };
        Ok(Prepared { target, parts, params, taken, channel, had_input })
    }

    /// The modern answer from the outcome of `run`: an input-required error becomes its result
    /// (for the methods that may ask), results are stamped for the era.
    fn finish_modern(
        &self,
        target: Target,
        had_input: bool,
        outcome: Result<ResultObject, McpError>,
    ) -> Result<ResultObject, McpError> {
        let result = match outcome {
            // Encoded straight from its typed form, already stamped (`encode::call_tool_result`).
            Ok(ResultObject::Encoded(text)) => return Ok(ResultObject::Encoded(text)),
            Ok(ResultObject::Value(r)) => r,
            Err(e) => match e.into_input_required() {
                // An InputRequiredResult is a result, never cached (stamp_modern adds no ttlMs).
                Ok(input_required) if target.asks_input() => input_required,
                Ok(_) => {
                    return Err(McpError::internal(format!("{} cannot ask the client for input", target.name())));
                }
                Err(e) => return Err(e),
            },
        };
        let cache = match target {
            Target::Builtin(m) => m.descriptor().cache,
            Target::Rpc(_) => method::CacheRule::Never,
        };
        let mut stamped = encode::stamp_modern(self, cache, result);
        // A task's `ttlMs` is its retention, not a cache hint: a CreateTaskResult keeps it.
        if had_input
            && let Some(obj) = stamped.as_object_mut().filter(|o| o.contains_key("ttlMs") && o["resultType"] != "task")
        {
            // A result that depends on the client's answers is never reused
            // (https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching#cacheable-results).
            obj.insert("ttlMs".into(), json!(0));
            obj.insert("cacheScope".into(), json!("private"));
        }
        Ok(ResultObject::Value(stamped))
    }

    /// Serves a request on a legacy session.
    ///
    /// Errors: `-32601` for methods the legacy revisions do not have or this server does not
    /// serve, `-32600` for a second `initialize`.
    ///
    /// The checks run (and the request's context is made) when this is called; the returned
    /// future, which owns everything it needs (`'static`), runs the filters and the handler.
    pub(crate) fn serve_legacy(
        self: &Arc<Self>,
        mut req: Request,
        session: &Arc<LegacySession>,
        origin: Origin,
    ) -> impl Future<Output = Result<ResultObject, McpError>> + Send + 'static + use<> {
        if req.method == "initialize" {
            return Either::Left(ready(Err(McpError::invalid_request("the session is already initialized"))));
        }
        let Some(target) = self.target(&req.method, false) else {
            return Either::Left(ready(Err(crate::protocol::method_not_served(&req.method, Some(session.version)))));
        };
        let taken = req.take_out();
        let mut params = req.params.unwrap_or_default();
        if let Err(e) = super::legacy_meta::reject_modern_envelope(&req.meta, session.version) {
            return Either::Left(ready(Err(e)));
        }
        let (raw, taken) = self.take_meta(target, &mut params, req.meta, taken);
        let channel = InputSource::Deferred(session.client_requests().clone());
        let parts = RequestParts {
            id: req.id,
            method: req.method,
            era: Era::Legacy(session.version),
            client_capabilities: session.client_capabilities.clone(),
            client_info: session.client_info.clone(),
            trace: trace_context(&raw, origin.trace),
            meta: raw,
            log_level: session.log_level(),
            cancel: origin.cancel,
            notifier: origin.notifier,
            principal: origin.principal,
            connection: origin.connection,
        };
        let run = self.run(target, parts, (params, taken), Some(session.clone()), Some(channel));
        if crate::protocol::revision::has_every_key(Era::Legacy(session.version)) {
            return Either::Right(Either::Left(run));
        }
        // An older revision's results lose the content keys its schema lacks. A combinator: an
        // async block would hold `run` twice (captured, and awaited).
        let era = Era::Legacy(session.version);
        Either::Right(Either::Right(run.map(move |outcome| {
            outcome.map(|result| {
                // Never encoded: `encode::encodes_directly` keeps this era's results `Value`s.
                let mut result = result.into_value();
                crate::protocol::revision::fit_result(&mut result, era);
                ResultObject::Value(result)
            })
        })))
    }

    /// Runs one request through the raw filters to its method, until it ends or (except a
    /// subscription, which ends itself) its cancellation token fires.
    ///
    /// Not an `async fn`: the context and the work are made here, and the returned future holds
    /// the running work once. An `async fn` would also keep its arguments (the request's parts
    /// and params) for the request's whole life, and an open subscription is such a request.
    fn run(
        self: &Arc<Self>,
        target: Target,
        parts: RequestParts,
        (params, taken): (Map<String, Value>, TakenOut),
        session: Option<Arc<LegacySession>>,
        input: Option<InputSource>,
    ) -> impl Future<Output = Result<ResultObject, McpError>> + Send + 'static + use<> {
        let span = request_span(&parts, session.as_deref());
        let ctx = RequestContext::new(parts, self.state.clone(), self.clone(), span.clone());
        if let Some(channel) = input {
            ctx.set_input_source(channel);
        }
        // A subscription ends itself: with its result on shutdown, silently when cancelled.
        let ends_itself = matches!(target, Target::Builtin(Method::Listen));
        let watched = (!ends_itself).then(|| ctx.clone());
        let server = self.clone();
        let work = async move {
            if server.raw.is_empty() {
                // No raw filter to pass through: the terminal step itself, without the shared
                // closure and boxed future that a chain needs.
                return server.dispatch(target, ctx, params, taken, session.as_ref()).await;
            }
            let chain = server.clone();
            // Panics of the method are contained inside the chain too, so that the raw filters
            // see them as the -32603 they become (MaskErrors logs them under a correlation id,
            // Audit records them) instead of being unwound through.
            let terminal: Arc<dyn Fn(RawRequest) -> BoxFuture<RawResponse> + Send + Sync> = Arc::new(move |req| {
                let server = chain.clone();
                let session = session.clone();
                // With raw filters, results stay `Value`s (`encode::encodes_directly`), which
                // `into_value` moves out.
                Box::pin(contain_panics(async move {
                    let dispatched =
                        server.dispatch(target, req.ctx, req.params, TakenOut::default(), session.as_ref());
                    dispatched.await.map(ResultObject::into_value)
                }))
            });
            server.raw.run(RawRequest { ctx, params }, terminal).await.map(ResultObject::Value)
        };
        // A panicking filter or handler ends its own request with -32603, never the connection:
        // the request still gets its answer and its id is released. Outside the wait for
        // cancellation, which may drop the last clone of the context (and with it the values of
        // its `extensions`, whose `Drop` is the application's).
        let until = contain_panics(UntilCancelled { work, watched, cancel: None });
        if span.is_disabled() {
            // No subscriber wants the span: the request's future carries nothing for it.
            return Either::Left(until);
        }
        let recorder = span.clone();
        Either::Right(Box::pin(until.inspect(move |outcome| record_outcome(&recorder, outcome)).instrument(span)))
    }

    /// The innermost step of the raw chain: the built-in method, or the typed RPC with its
    /// capability gate, params decoding and typed filters.
    async fn dispatch(
        self: &Arc<Self>,
        target: Target,
        ctx: RequestContext,
        mut params: Map<String, Value>,
        taken: TakenOut,
        session: Option<&Arc<LegacySession>>,
    ) -> Result<ResultObject, McpError> {
        let name = match target {
            Target::Builtin(m) => return handlers::call(self, m, ctx, (params, taken), session).await,
            Target::Rpc(name) => name,
        };
        let reg = *self.pipelines.rpcs.get(name).ok_or_else(|| McpError::method_not_found(name))?;
        if ctx.era().is_modern()
            && let Some(required) = reg.required_capabilities.map(|f| f())
            && !declares(ctx.client_capabilities(), &required)
        {
            return Err(McpError::missing_capability(
                format!("{name} needs client capabilities the request did not declare: {required}"),
                required,
            ));
        }
        self.authorize(&ctx, crate::auth::Primitive::Method(name), reg.roles, reg.scopes)?;
        // Handlers never see the reserved envelope as user data; they read it through the context.
        params.remove("_meta");
        let decoded = (reg.decode)(Value::Object(params))?;
        let encode = reg.encode;
        Box::pin(crate::pipeline::run_method(self, name, ctx, decoded, reg.handler, move |r| {
            encode(r).map(ResultObject::Value)
        }))
        .await
    }

    /// Handles a legacy `initialize`: negotiates the version (the client's when served, else
    /// 2025-11-25) and creates the session. `streams` tells whether the transport can deliver
    /// notifications outside responses (see [`capabilities_for`](Self::capabilities_for)).
    ///
    /// Errors: `-32602` when `params.protocolVersion` is missing or not a string, or
    /// `params.capabilities` is not an object.
    pub(crate) fn initialize(
        &self,
        params: Option<&Map<String, Value>>,
        session_id: String,
        streams: bool,
    ) -> Result<(Arc<LegacySession>, Value), McpError> {
        let params = params.ok_or_else(|| McpError::invalid_params("initialize needs params"))?;
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("initialize: params.protocolVersion (string) is required"))?;
        let caps = params.get("capabilities").cloned().unwrap_or_else(|| json!({}));
        if !caps.is_object() {
            return Err(McpError::invalid_params("initialize: params.capabilities must be an object"));
        }
        let version = negotiate_legacy(Some(requested));
        let session = Arc::new(LegacySession::new(session_id, version, caps, params.get("clientInfo").cloned()));
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities_for(streams),
            "serverInfo": crate::protocol::revision::fit_definition(
                crate::protocol::revision::Definition::Implementation,
                &self.info,
                Era::Legacy(version),
            ),
        });
        if let Some(i) = &self.instructions {
            result["instructions"] = json!(i);
        }
        Ok((session, result))
    }

    /// The `ServerCapabilities` (the same in both eras) for a transport that can (`streams`) or
    /// cannot hold a stream: without streams nothing can be delivered outside a response, so
    /// `listChanged` and `resources.subscribe` are left out.
    pub(crate) fn capabilities_for(&self, streams: bool) -> Value {
        let t = self.table.load();
        let mut caps = Map::new();
        caps.insert("logging".into(), json!({}));
        // Every transport of this crate can deliver what the publisher sends: modern clients
        // through listen streams, legacy sessions on their stream (stdio, or the HTTP GET stream).
        let flag = |v: Value| if streams { v } else { json!({}) };
        if t.has_tools() {
            caps.insert("tools".into(), flag(json!({ "listChanged": true })));
        }
        if t.has_prompts() {
            caps.insert("prompts".into(), flag(json!({ "listChanged": true })));
        }
        if t.has_resources() {
            caps.insert("resources".into(), flag(json!({ "subscribe": true, "listChanged": true })));
        }
        if t.has_completions() {
            caps.insert("completions".into(), json!({}));
        }
        Value::Object(caps)
    }
}

/// True when every key of `need` (recursively, for objects) is declared in `have`.
fn declares(have: &Value, need: &Value) -> bool {
    match need.as_object() {
        Some(need) => need.iter().all(|(k, v)| have.get(k).is_some_and(|h| h.is_object() && declares(h, v))),
        None => true,
    }
}

/// The request's span, named and shaped as the OpenTelemetry semantic conventions for MCP say
/// (<https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/>); the handlers record the matched
/// primitive, [`record_outcome`] the error. Fields are only computed when a subscriber enables
/// the span: without one this is a callsite check.
fn request_span(parts: &RequestParts, session: Option<&LegacySession>) -> tracing::Span {
    use tracing::field::Empty;
    let span = tracing::info_span!(
        target: crate::context::SPAN_TARGET,
        crate::context::REQUEST_SPAN,
        otel.name = %parts.method,
        otel.kind = "server",
        mcp.method.name = %parts.method,
        mcp.protocol.version = parts.era.version(),
        mcp.session.id = Empty,
        jsonrpc.request.id = %parts.id,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        error.type = Empty,
    );
    if let Some(s) = session.filter(|s| !s.id.is_empty() && !span.is_disabled()) {
        span.record("mcp.session.id", s.id.as_str());
    }
    // Exported, the span continues the caller's trace instead of starting one of its own.
    #[cfg(feature = "otel")]
    if let Some(trace) = &parts.trace {
        crate::otel::set_remote_parent(&span, trace);
    }
    span
}

/// Records a failed request's JSON-RPC error code as `error.type` (the input-required outcome
/// is a result, not a failure).
fn record_outcome<T>(span: &tracing::Span, outcome: &Result<T, McpError>) {
    if let Err(e) = outcome
        && !span.is_disabled()
        && e.as_input_required().is_none()
    {
        span.record("error.type", e.code().0.to_string());
    }
}

/// The request's trace context: its `_meta`'s (SEP-414), else the transport's.
fn trace_context(meta: &RequestMeta, transport: Option<TraceContext>) -> Option<TraceContext> {
    if meta.contains_key(crate::protocol::META_TRACEPARENT) {
        return TraceContext::from_meta(meta.map());
    }
    transport
}

impl Engine {
    /// The request's `params._meta` for [`RequestParts::meta`], and a `tools/call`'s
    /// `arguments` text and `name` for the call, all of which the parser took out of `params`.
    ///
    /// Raw filters see the undecoded params with `_meta`, `name` and `arguments`, and a
    /// replacement listen handler sees them with `_meta`: there `params` gets them back as
    /// `Value`s (made from their text only then), and the call reads them from `params` after
    /// the filters (nothing is returned apart). Every other step would drop `_meta` from
    /// `params` before decoding them (handlers read it through the context).
    fn take_meta(
        &self,
        target: Target,
        params: &mut Map<String, Value>,
        meta: RequestMeta,
        taken: TakenOut,
    ) -> (RequestMeta, TakenOut) {
        let seen_in_params = !self.raw.is_empty() || matches!(target, Target::Builtin(Method::Listen));
        if seen_in_params && let Some(value) = meta.to_value() {
            params.insert("_meta".into(), value);
        }
        if self.raw.is_empty() {
            return (meta, taken);
        }
        if let Some(name) = taken.name {
            params.insert("name".into(), Value::String(name.into_string()));
        }
        if let Some(value) = taken.arguments.and_then(|text| serde_json::from_str(&text).ok()) {
            params.insert("arguments".into(), value);
        }
        (meta, TakenOut::default())
    }
}

/// Turns a panic inside `work` into `-32603` (logged), so one faulty handler cannot take the
/// response, the request id or the connection with it. The request's state is dropped with the
/// future, so no half-updated value is observed afterwards (hence the `AssertUnwindSafe`).
///
/// A combinator rather than an `async fn`: an `async fn` would keep `work` twice (its argument,
/// and the awaited copy), and every request future carries this one.
pub(crate) fn contain_panics<F, T>(work: F) -> impl Future<Output = Result<T, McpError>>
where
    F: Future<Output = Result<T, McpError>>,
{
    use futures::FutureExt;
    std::panic::AssertUnwindSafe(work).catch_unwind().map(settle_panic)
}

fn settle_panic<T>(outcome: std::thread::Result<Result<T, McpError>>) -> Result<T, McpError> {
    match outcome {
        Ok(r) => r,
        Err(panic) => {
            let what = panic_message(panic.as_ref());
            tracing::error!(panic = %what, "a filter or handler panicked");
            Err(McpError::internal(
                "the server failed while handling this request (a handler panicked); see the server log",
            ))
        }
    }
}

/// What a panic said: its message when it was a string (`panic!("...")`, formatted or not).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

/// A modern request, checked and ready to run.
struct Prepared {
    target: Target,
    parts: RequestParts,
    params: Map<String, Value>,
    /// What the parser kept apart from a `tools/call`'s params ([`Request::arguments`],
    /// [`Request::tool_name`]).
    taken: TakenOut,
    /// The input-required channel, for the methods that may ask the client.
    channel: Option<InputSource>,
    /// The retry carried answers or state (its result must not be cached).
    had_input: bool,
}

pin_project_lite::pin_project! {
    /// `work`, ended with `-32603` "request cancelled" when the request's own token
    /// ([`RequestContext::request_cancellation`]) of `watched` fires first (`None`: `work`
    /// alone). A struct rather than `select!` in an `async fn`, which would keep a second copy
    /// of `work`'s state.
    ///
    /// The wait for the token is made only once `work` has to wait: most requests finish in
    /// their first poll, and the wait costs a clone of the token (a lock of its node) and the
    /// removal of its waiter (another) for nothing. `work` is polled first either way, so a
    /// request that finishes at once answers though cancelled, as before.
    struct UntilCancelled<F> {
        #[pin]
        work: F,
        watched: Option<RequestContext>,
        #[pin]
        cancel: Option<tokio_util::sync::WaitForCancellationFutureOwned>,
    }
}

impl<T, F: Future<Output = Result<T, McpError>>> Future for UntilCancelled<F> {
    type Output = Result<T, McpError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let mut this = self.project();
        if let std::task::Poll::Ready(r) = this.work.poll(cx) {
            // The context goes when the work ends, as it would without this clone.
            *this.watched = None;
            return std::task::Poll::Ready(r);
        }
        if let Some(ctx) = this.watched.take() {
            this.cancel.set(Some(ctx.request_cancellation().clone().cancelled_owned()));
        }
        match this.cancel.as_pin_mut().map(|c| c.poll(cx)) {
            Some(std::task::Poll::Ready(())) => std::task::Poll::Ready(Err(McpError::internal("request cancelled"))),
            _ => std::task::Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UntilCancelled;
    use crate::context::{RequestContext, RequestParts};
    use crate::jsonrpc::McpError;
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Wake, Waker};
    use tokio_util::sync::CancellationToken;

    fn context(cancel: CancellationToken) -> RequestContext {
        let parts = RequestParts::for_test(cancel);
        RequestContext::new(parts, Arc::new(Default::default()), Arc::new(()), tracing::Span::none())
    }

    /// A waker that records whether it was woken.
    #[derive(Default)]
    struct Flag(AtomicBool);

    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn poll<F: Future>(f: std::pin::Pin<&mut F>, flag: &Arc<Flag>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(&Waker::from(flag.clone())))
    }

    #[test]
    fn work_that_waits_ends_when_the_request_is_cancelled_later() {
        let cancel = CancellationToken::new();
        let ctx = context(cancel.clone());
        // A deadline installed before the first poll (as a timed tool's is) is the handler's
        // cancellation, not the request's: the wait must not be on it.
        let deadline = ctx.deadline_token().clone();
        let work = std::future::pending::<Result<(), McpError>>();
        let mut until = Box::pin(UntilCancelled { work, watched: Some(ctx), cancel: None });
        let flag = Arc::new(Flag::default());
        assert!(poll(until.as_mut(), &flag).is_pending());
        deadline.cancel();
        assert!(!flag.0.load(Ordering::SeqCst), "a deadline woke the wait");
        assert!(poll(until.as_mut(), &flag).is_pending());
        cancel.cancel();
        assert!(flag.0.load(Ordering::SeqCst), "the request's cancellation did not wake the wait");
        match poll(until.as_mut(), &flag) {
            Poll::Ready(Err(e)) => assert_eq!(e.message(), "request cancelled"),
            other => panic!("expected the cancellation, got {other:?}"),
        }
    }

    #[test]
    fn the_context_goes_when_the_work_ends() {
        let ctx = context(CancellationToken::new());
        let mut until = Box::pin(UntilCancelled {
            work: std::future::ready(Ok::<_, McpError>(())),
            watched: Some(ctx.clone()),
            cancel: None,
        });
        assert!(poll(until.as_mut(), &Arc::new(Flag::default())).is_ready());
        assert!(until.watched.is_none(), "the finished wait still holds the context");
    }

    #[test]
    fn work_that_finishes_at_once_answers_though_cancelled() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let work = std::future::ready(Ok::<_, McpError>(7));
        let mut until = Box::pin(UntilCancelled { work, watched: Some(context(cancel)), cancel: None });
        assert!(matches!(poll(until.as_mut(), &Arc::new(Flag::default())), Poll::Ready(Ok(7))));
    }
}
