//! The limits tools declare (`#[mcp_tool(timeout, rate_limit, max_concurrency)]`,
//! [`DynamicTool::limits`](crate::server::DynamicTool::limits)), enforced by the ready filters
//! of this module: one [`RateLimit`](super::RateLimit), [`ConcurrencyLimit`] and [`Timeout`]
//! per tool, made on the tool's first call and kept while its declaration stays the same.

use super::{ConcurrencyLimit, Timeout};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::CallToolResult;
use crate::pipeline::tool_limits::ToolLimiter;
use crate::registry::{BoxFuture, ToolLimits};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The filters of one tool's declaration.
struct PerTool {
    declared: ToolLimits,
    #[cfg(feature = "rate-limit")]
    rate: Option<super::RateLimit>,
    concurrency: Option<ConcurrencyLimit>,
    timeout: Option<Timeout>,
}

impl PerTool {
    fn new(tool: &str, declared: ToolLimits) -> PerTool {
        PerTool {
            declared,
            // The bounds were checked when the tool entered the table (`ToolLimits::check`).
            #[cfg(feature = "rate-limit")]
            rate: declared
                .rate()
                .and_then(|(calls, per)| super::Rate::new(calls, per).ok())
                .map(|rate| super::RateLimit::per_tool(tool, rate)),
            concurrency: declared.max_concurrency_value().map(|n| ConcurrencyLimit::per_tool(tool, n as usize)),
            timeout: declared.timeout_value().map(|limit| Timeout::per_tool(tool, limit)),
        }
    }
}

/// Every tool's filters, by the tool's public name.
#[derive(Default)]
pub(crate) struct DeclaredLimits {
    tools: Mutex<HashMap<String, Arc<PerTool>>>,
}

impl DeclaredLimits {
    /// The filters of `tool` as declared now: a replaced tool with other limits starts afresh.
    fn of(&self, tool: &str, declared: ToolLimits) -> Arc<PerTool> {
        let mut tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        match tools.get(tool) {
            Some(per) if per.declared == declared => per.clone(),
            _ => {
                let per = Arc::new(PerTool::new(tool, declared));
                tools.insert(tool.to_owned(), per.clone());
                per
            }
        }
    }
}

/// The limiter a server installs once a tool declares limits.
pub(crate) fn limiter() -> Arc<dyn ToolLimiter> {
    Arc::new(DeclaredLimits::default())
}

/// Why a server cannot enforce `limits`: a rate limit without the `rate-limit` feature.
///
/// Errors: a sentence for a build error or a `-32602`.
pub(crate) fn unsupported(limits: ToolLimits) -> Result<(), String> {
    if cfg!(not(feature = "rate-limit")) && limits.rate().is_some() {
        return Err("it declares a `rate_limit`, which needs the runtime's `rate-limit` feature".to_owned());
    }
    Ok(())
}

impl ToolLimiter for DeclaredLimits {
    fn admit(&self, ctx: &RequestContext, tool: &str, limits: ToolLimits) -> Result<(), McpError> {
        #[cfg(feature = "rate-limit")]
        if limits.rate().is_some()
            && let Some(rate) = &self.of(tool, limits).rate
        {
            return rate.check(ctx, Some(tool));
        }
        let _ = (ctx, tool, limits);
        Ok(())
    }

    fn run(
        &self,
        ctx: &RequestContext,
        tool: &str,
        limits: ToolLimits,
        body: BoxFuture<Result<CallToolResult, McpError>>,
    ) -> BoxFuture<Result<CallToolResult, McpError>> {
        if limits.max_concurrency_value().is_none() && limits.timeout_value().is_none() {
            return body;
        }
        let per = self.of(tool, limits);
        let tool = tool.to_owned();
        let ctx = ctx.clone();
        Box::pin(async move {
            let _permit = match &per.concurrency {
                Some(limit) => Some(limit.acquire("tools/call", Some(&tool)).await?),
                None => None,
            };
            match &per.timeout {
                Some(timeout) => timeout.run_as(&ctx, Some(&tool), body).await,
                None => body.await,
            }
        })
    }
}
