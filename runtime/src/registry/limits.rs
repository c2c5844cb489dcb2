use std::time::Duration;

/// Limits declared on one tool: a per-call timeout, a rate limit per caller and a cap on calls
/// running at once. Declared with `#[mcp_tool(timeout = "30s", rate_limit = "10/min",
/// max_concurrency = 4)]` or [`DynamicTool::limits`](crate::server::DynamicTool::limits), read
/// from [`ToolEntry::limits`](crate::registry::ToolEntry::limits). Nothing here is sent on the
/// wire; a tool without limits costs nothing per call.
///
/// Enforced on `tools/call` (see docs/filters.md, "Limits on a tool"): the rate limit before any
/// filter, task or body runs (an over-the-limit call never starts a task), the concurrency cap
/// and the timeout around the tool's body (so they hold for a body run as a task too). The
/// [MCP tools page](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#security-considerations)
/// says servers must rate limit tool invocations; this is the declarative way.
///
/// Built with `const` setters, so a registration can hold one:
///
/// ```
/// use std::time::Duration;
/// use switchyard::registry::ToolLimits;
///
/// const LIMITS: ToolLimits = ToolLimits::NONE
///     .timeout(Duration::from_secs(30))
///     .rate_limit(10, Duration::from_secs(60))
///     .max_concurrency(4);
/// assert_eq!(LIMITS.rate(), Some((10, Duration::from_secs(60))));
/// assert!(ToolLimits::NONE.is_none());
/// ```
///
/// Bounds (checked by the macro at compile time and by `build()`/`Server::add_tool`, which
/// refuse a tool breaking them: a `BuildError`, or `-32602`): timeout and period 1 ms to one
/// day, at least one call per period, `max_concurrency` at least 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolLimits {
    timeout: Option<Duration>,
    rate: Option<(u32, Duration)>,
    max_concurrency: Option<u32>,
}

impl ToolLimits {
    /// No limits: the default.
    pub const NONE: ToolLimits = ToolLimits { timeout: None, rate: None, max_concurrency: None };

    /// The longest one call's body may run: past it the body is cancelled (its future is
    /// dropped, so it stops at its next `.await`) and the call answers `-32603` with
    /// `data: {"reason": "timeout", "timeoutMs": ..}`. The request's
    /// [`CancellationToken`](crate::CancellationToken) is not fired: it means the client
    /// withdrew the request, which would leave the call unanswered; work the body spawned on its
    /// own must watch for its own end.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// At most `calls` calls per `per` by one caller (the principal's `sub`; anonymous callers
    /// by client address; on stdio, the one process at the other end), spread evenly over the
    /// period with a burst of `calls`. A call over it is refused with `-32600`,
    /// `data: {"reason": "rate_limited", "retryAfterMs": ..}` (HTTP 429 with `Retry-After` on a
    /// 2026-07-28 request answered with JSON).
    #[must_use]
    pub const fn rate_limit(mut self, calls: u32, per: Duration) -> Self {
        self.rate = Some((calls, per));
        self
    }

    /// At most `n` calls of the tool running at once on this instance, whoever calls; the next
    /// one is refused at once with `-32600`, `data: {"reason": "concurrency_limit", ..}`
    /// (HTTP 429 with `Retry-After` on a 2026-07-28 request answered with JSON).
    #[must_use]
    pub const fn max_concurrency(mut self, n: u32) -> Self {
        self.max_concurrency = Some(n);
        self
    }

    /// The declared timeout.
    pub const fn timeout_value(&self) -> Option<Duration> {
        self.timeout
    }

    /// The declared rate limit: (calls, per period).
    pub const fn rate(&self) -> Option<(u32, Duration)> {
        self.rate
    }

    /// The declared cap on calls running at once.
    pub const fn max_concurrency_value(&self) -> Option<u32> {
        self.max_concurrency
    }

    /// True when nothing is declared.
    pub const fn is_none(&self) -> bool {
        self.timeout.is_none() && self.rate.is_none() && self.max_concurrency.is_none()
    }

    /// Checks the bounds in the type docs.
    ///
    /// Errors: a sentence naming the first bound broken.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(timeout) = self.timeout {
            crate::vocab::limits::timeout(timeout.as_millis())?;
        }
        if let Some((calls, per)) = self.rate {
            crate::vocab::limits::rate_limit(calls, per.as_millis())?;
        }
        if let Some(n) = self.max_concurrency {
            crate::vocab::limits::max_concurrency(n)?;
        }
        Ok(())
    }
}
