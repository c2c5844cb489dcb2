//! [`Timeout`]: a deadline per call, global or per primitive.

use super::{Methods, TIMEOUT_REASON, describe, primitive};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::pipeline::{RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

/// A deadline per call: a call that has not answered within it is cancelled and answered
/// with the JSON-RPC error
///
/// ```json
/// {"code": -32603, "message": "tools/call of \"slow\" timed out after 30000 ms (the server's limit for it)",
///  "data": {"reason": "timeout", "timeoutMs": 30000}}
/// ```
///
/// `-32603` because the server failed to answer in time, not the request's fault; the message
/// names the limit, and [`MaskErrors`](super::MaskErrors) passes it unchanged.
///
/// Cancelled means: at the deadline the request's
/// [`cancellation`](crate::RequestContext::cancellation) token fires, so work the handler
/// spawned with it (or a child of it) stops, and the handler's future (with every typed
/// filter's inside this one) is dropped, so the handler stops at its next `.await` and its drop
/// guards run. The token a deadline fires is a child of the one the transport holds: the call
/// is not withdrawn, and its answer is the error above (a client's
/// [cancellation](https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/cancellation)
/// is never answered).
///
/// Applies to `tools/call`, `prompts/get` and `resources/read` (never to a long-lived
/// `subscriptions/listen`); [`methods`](Self::methods) changes that. A deadline for one
/// primitive ([`tool`](Self::tool), what `#[mcp_tool(timeout = "30s")]` declares) wins over
/// the default one; without either, the call runs unlimited.
///
/// Time is tokio's (`tokio::time`), so tests with paused time run it without waiting.
/// Cost: one timer registration per call it limits (about 1,000 instructions besides the raw
/// chain's own; `docs/filters.md`).
#[derive(Debug, Clone)]
pub struct Timeout {
    default: Option<Duration>,
    per_primitive: HashMap<String, Duration>,
    methods: Methods,
}

impl Timeout {
    /// Every call gets `limit`.
    pub fn new(limit: Duration) -> Timeout {
        Timeout { default: Some(limit), per_primitive: HashMap::new(), methods: Methods::calls() }
    }

    /// A deadline for tool `name` alone (add others with [`tool`](Self::tool)): what
    /// `#[mcp_tool(timeout = "30s")]` declares.
    pub fn per_tool(name: impl Into<String>, limit: Duration) -> Timeout {
        Timeout { default: None, per_primitive: HashMap::new(), methods: Methods::calls() }.tool(name, limit)
    }

    /// The deadline of tool (or prompt, or resource URI) `name`, over the default.
    pub fn tool(mut self, name: impl Into<String>, limit: Duration) -> Timeout {
        self.per_primitive.insert(name.into(), limit);
        self
    }

    /// The methods limited (default `tools/call`, `prompts/get`, `resources/read`).
    pub fn methods<I, S>(mut self, methods: I) -> Timeout
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = Methods::only(methods);
        self
    }

    /// The deadline of a call of `method` to `name`, if it has one.
    pub fn limit_for(&self, method: &str, name: Option<&str>) -> Option<Duration> {
        if !self.methods.contains(method) {
            return None;
        }
        name.and_then(|n| self.per_primitive.get(n).copied()).or(self.default)
    }

    /// Runs `call` (the rest of a typed filter's chain, `next.run(req)`) within the deadline of
    /// the request `ctx` is for (its method and the tool, prompt or URI dispatch matched):
    /// `timeout.run(&ctx, next.run(req)).await`. At the deadline it fires the request's
    /// cancellation token (see the type) and drops `call`.
    ///
    /// Errors: the `-32603` `timeout` error (see the type) when the deadline passes first;
    /// whatever `call` returns otherwise.
    pub async fn run<T>(
        &self,
        ctx: &RequestContext,
        call: impl Future<Output = Result<T, McpError>>,
    ) -> Result<T, McpError> {
        self.run_as(ctx, ctx.matched_primitive(), call).await
    }

    /// [`run`](Self::run) for the primitive `name` (the tool a declaration limits, which a
    /// filter may have swapped after dispatch matched another).
    pub(crate) async fn run_as<T>(
        &self,
        ctx: &RequestContext,
        name: Option<&str>,
        call: impl Future<Output = Result<T, McpError>>,
    ) -> Result<T, McpError> {
        match self.limit_for(ctx.method(), name) {
            Some(limit) => within(limit, ctx, || describe(ctx.method(), name), call).await,
            None => call.await,
        }
    }
}

/// `call`, or, once `limit` has passed, the timeout error of `what()`, with the deadline token
/// of the request `ctx` is for fired.
async fn within<T>(
    limit: Duration,
    ctx: &RequestContext,
    what: impl FnOnce() -> String,
    call: impl Future<Output = Result<T, McpError>>,
) -> Result<T, McpError> {
    let deadline = ctx.deadline_token().clone();
    match tokio::time::timeout(limit, call).await {
        Ok(out) => out,
        Err(_) => {
            deadline.cancel();
            let what = what();
            let ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
            tracing::debug!(target: "switchyard::filters", limit_ms = ms, "{what} timed out");
            Err(McpError::internal(format!("{what} timed out after {ms} ms (the server's limit for it)"))
                .with_data(serde_json::json!({ "reason": TIMEOUT_REASON, "timeoutMs": ms })))
        }
    }
}

impl RawFilter for Timeout {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        match self.limit_for(req.ctx.method(), primitive(&req)) {
            Some(limit) => {
                let ctx = req.ctx.clone();
                // The primitive as dispatch matched it, read only on a timeout: nothing to
                // copy on the way in.
                Box::pin(async move {
                    within(limit, &ctx, || describe(ctx.method(), ctx.matched_primitive()), next.run(req)).await
                })
            }
            None => Box::pin(next.run(req)),
        }
    }
}
