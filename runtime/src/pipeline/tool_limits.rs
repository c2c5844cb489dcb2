//! Where `tools/call` enforces the limits a tool declares ([`ToolLimits`]): the rate limit
//! before any filter or task, the concurrency cap and the timeout around the body. The work
//! itself is the ready filters' (`crate::filters`, a layer above), installed by the server when
//! the first tool with limits is built or added, so a server whose tools declare none carries
//! no limiter, and a tool without limits is one branch per call.

use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::CallToolResult;
use crate::registry::{BoxFuture, ToolLimits};

/// Enforces declared tool limits, keeping each tool's state (limiters, permits) across calls.
pub(crate) trait ToolLimiter: Send + Sync + 'static {
    /// Counts one call of `tool` against its rate limit, if it declares one.
    ///
    /// Errors: the rate limiter's refusal (`-32600`, `data.reason = "rate_limited"`).
    fn admit(&self, ctx: &RequestContext, tool: &str, limits: ToolLimits) -> Result<(), McpError>;

    /// Runs `body` under the tool's concurrency cap and timeout, those it declares; the
    /// timeout fires the deadline token of `ctx`, the context `body` runs with.
    ///
    /// Errors: the concurrency refusal (`-32600`), the timeout (`-32603`), or the body's own.
    fn run(
        &self,
        ctx: &RequestContext,
        tool: &str,
        limits: ToolLimits,
        body: BoxFuture<Result<CallToolResult, McpError>>,
    ) -> BoxFuture<Result<CallToolResult, McpError>>;
}
