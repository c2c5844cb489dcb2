//! [`Audit`]: one `tracing` event per call, with OpenTelemetry attribute names.

use super::Methods;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::pipeline::{RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use serde_json::Value;
use std::time::Duration;

/// The `tracing` target of the audit events: what a subscriber's filter enables (at `INFO`)
/// to get them, e.g. `RUST_LOG=switchyard::audit=info`.
pub const AUDIT_TARGET: &str = "switchyard::audit";

/// One `INFO` event per call, target [`AUDIT_TARGET`] (`switchyard::audit`), message
/// `mcp.audit`, with the attribute names of the
/// [OpenTelemetry semantic conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/)
/// that the request span uses (`docs/observability.md`):
///
/// | field | value |
/// |---|---|
/// | `enduser.id` | the principal's `id` (a token's `sub`); absent when anonymous |
/// | `client.address` | the client's IP address, when the transport knows it |
/// | `mcp.method.name` | `tools/call`, ... |
/// | `mcp.protocol.version` | `2026-07-28`, or the session's revision |
/// | `jsonrpc.request.id` | the request id |
/// | `gen_ai.tool.name` / `gen_ai.prompt.name` / `mcp.resource.uri` | the primitive called |
/// | `mcp.server.operation.duration` | seconds (f64) from the filter to the answer, as the metric of that name |
/// | `outcome` | `ok`, `tool_error` (`isError: true`), `input_required`, `error`, or `cancelled` (withdrawn by the client, or its connection ended, before the answer) |
/// | `error.type` | the JSON-RPC error code (`-32602`), or `tool_error`; absent on success |
///
/// The event is emitted inside the request's span, so a subscriber that records spans sees
/// the rest of the request's fields too. Records `tools/call`, `prompts/get` and
/// `resources/read` by default; [`all_methods`](Self::all_methods) records every method.
/// Place it outermost (lowest `order`) to record refusals of the filters inside it.
///
/// Cost: two clock reads and the event; with no subscriber enabled for the target, the
/// event is a callsite check.
#[derive(Debug, Clone)]
pub struct Audit {
    methods: Methods,
}

impl Default for Audit {
    fn default() -> Self {
        Audit::new()
    }
}

impl Audit {
    /// Records `tools/call`, `prompts/get` and `resources/read`.
    pub fn new() -> Audit {
        Audit { methods: Methods::calls() }
    }

    /// Records every method (`tools/list`, `ping`, ... too).
    pub fn all_methods(mut self) -> Audit {
        self.methods = Methods::All;
        self
    }

    /// Records these methods.
    pub fn methods<I, S>(mut self, methods: I) -> Audit
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = Methods::only(methods);
        self
    }

    /// Emits the event of one call that took `duration` and ended with `outcome` (the raw
    /// result or error; a typed filter passes `serde_json::to_value(&result)` or the error):
    /// `audit.record(&ctx, Some(&name), started.elapsed(), &outcome)`. The primitive is
    /// `name`, or the one dispatch matched when `name` is `None`.
    pub fn record(
        &self,
        ctx: &RequestContext,
        name: Option<&str>,
        duration: Duration,
        outcome: &Result<Value, McpError>,
    ) {
        emit(ctx, name, duration, outcome);
    }
}

/// [`Audit::record`].
fn emit(ctx: &RequestContext, name: Option<&str>, duration: Duration, outcome: &Result<Value, McpError>) {
    let (kind, error_type) = match outcome {
        Ok(r) if r.get("isError") == Some(&Value::Bool(true)) => ("tool_error", Some("tool_error".to_owned())),
        Ok(_) => ("ok", None),
        Err(e) if e.as_input_required().is_some() => ("input_required", None),
        Err(e) if e.as_alternate_result().is_some() => ("ok", None),
        Err(e) => ("error", Some(e.code().0.to_string())),
    };
    event(ctx, name, duration, kind, error_type.as_deref());
}

/// The audit event of one call that ended as `kind`.
fn event(ctx: &RequestContext, name: Option<&str>, duration: Duration, kind: &str, error_type: Option<&str>) {
    let name = name.or_else(|| ctx.matched_primitive());
    let (tool, prompt, uri) = match ctx.method() {
        "tools/call" => (name, None, None),
        "prompts/get" => (None, name, None),
        "resources/read" => (None, None, name),
        _ => (None, None, None),
    };
    tracing::info!(
        target: AUDIT_TARGET,
        outcome = kind,
        enduser.id = ctx.principal().map(|p| p.id.as_str()),
        client.address = ctx.connection().and_then(|c| c.peer()).map(|a| tracing::field::display(a.ip())),
        mcp.method.name = ctx.method(),
        mcp.protocol.version = ctx.protocol_version(),
        jsonrpc.request.id = %ctx.request_id(),
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        mcp.resource.uri = uri,
        mcp.server.operation.duration = duration.as_secs_f64(),
        error.type = error_type,
        "mcp.audit"
    );
}

/// A call being audited: records it as `cancelled` if its future is dropped before it answers
/// (the client withdrew it, or its connection ended), so that no call that ran goes unrecorded.
struct InFlight {
    ctx: RequestContext,
    name: Option<String>,
    started: std::time::Instant,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.answered {
            event(&self.ctx, self.name.as_deref(), self.started.elapsed(), "cancelled", None);
        }
    }
}

impl RawFilter for Audit {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        if !self.methods.contains(req.ctx.method()) {
            return Box::pin(next.run(req));
        }
        // Nothing to record when no subscriber wants the events: the call runs as it would.
        if !tracing::enabled!(target: AUDIT_TARGET, tracing::Level::INFO) {
            return Box::pin(next.run(req));
        }
        // The name as asked for (an unknown tool's too), not only as dispatch matched it.
        let name = super::primitive(&req).map(str::to_owned);
        Box::pin(async move {
            let mut call = InFlight { ctx: req.ctx.clone(), name, started: std::time::Instant::now(), answered: false };
            let out = next.run(req).await;
            call.answered = true;
            emit(&call.ctx, call.name.as_deref(), call.started.elapsed(), &out);
            out
        })
    }
}
