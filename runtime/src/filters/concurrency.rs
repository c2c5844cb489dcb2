//! [`ConcurrencyLimit`]: calls running at once, per primitive and for the whole server.

use super::{CONCURRENCY_LIMIT_REASON, Methods, describe, primitive};
use crate::jsonrpc::McpError;
use crate::pipeline::{RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The `retryAfterMs` of a refusal: the limit cannot know when a running call ends.
const RETRY_HINT_MS: u64 = 1000;

/// At most `n` calls of a primitive (and/or of all primitives) running at once, each limit a
/// tokio [`Semaphore`]. A call over the limit waits for a place up to [`wait`](Self::wait)
/// (default: not at all), then is refused with
///
/// ```json
/// {"code": -32600, "message": "too many concurrent calls: tools/call of \"render\" runs at most 4 at once; retry later",
///  "data": {"reason": "concurrency_limit", "limit": 4, "retryAfterMs": 1000}}
/// ```
///
/// (HTTP 429 with `Retry-After: 1` on a 2026-07-28 HTTP request, like a
/// [`RateLimit`](super::RateLimit) refusal; `retryAfterMs` is a hint, since the limit cannot
/// know when a running call ends). The place is held until the call's answer is made, and
/// given back if the call is cancelled.
///
/// Applies to `tools/call`, `prompts/get` and `resources/read`; a per-primitive limit
/// ([`tool`](Self::tool), what `#[mcp_tool(max_concurrency = 4)]` declares) and the
/// [`global`](Self::global) one both apply when both are set (the primitive's first).
/// Cost: one or two uncontended semaphore acquisitions per call (about 2,500 instructions in
/// all, besides the raw chain's own; `docs/filters.md`).
#[derive(Debug, Clone)]
pub struct ConcurrencyLimit {
    global: Option<(usize, Arc<Semaphore>)>,
    per_primitive: HashMap<String, (usize, Arc<Semaphore>)>,
    wait: Duration,
    methods: Methods,
}

/// A place held under a [`ConcurrencyLimit`]: given back when dropped.
#[derive(Debug)]
#[must_use = "the place is given back when the permit is dropped"]
pub struct ConcurrencyPermit {
    _primitive: Option<OwnedSemaphorePermit>,
    _global: Option<OwnedSemaphorePermit>,
}

impl Default for ConcurrencyLimit {
    fn default() -> Self {
        ConcurrencyLimit::new()
    }
}

impl ConcurrencyLimit {
    /// No limit yet: add them with [`global`](Self::global) and [`tool`](Self::tool).
    pub fn new() -> ConcurrencyLimit {
        ConcurrencyLimit {
            global: None,
            per_primitive: HashMap::new(),
            wait: Duration::ZERO,
            methods: Methods::calls(),
        }
    }

    /// At most `n` calls of tool `name` at once (add others with [`tool`](Self::tool)): what
    /// `#[mcp_tool(max_concurrency = 4)]` declares.
    pub fn per_tool(name: impl Into<String>, n: usize) -> ConcurrencyLimit {
        ConcurrencyLimit::new().tool(name, n)
    }

    /// At most `n` calls at once over all primitives (0 is taken as 1).
    pub fn global(mut self, n: usize) -> ConcurrencyLimit {
        let n = n.max(1);
        self.global = Some((n, Arc::new(Semaphore::new(n))));
        self
    }

    /// At most `n` calls of tool (or prompt, or resource URI) `name` at once (0 is taken as 1).
    pub fn tool(mut self, name: impl Into<String>, n: usize) -> ConcurrencyLimit {
        let n = n.max(1);
        self.per_primitive.insert(name.into(), (n, Arc::new(Semaphore::new(n))));
        self
    }

    /// How long a call over the limit waits for a place before it is refused (default zero:
    /// refused at once). Measured on tokio's clock.
    pub fn wait(mut self, wait: Duration) -> ConcurrencyLimit {
        self.wait = wait;
        self
    }

    /// The methods limited (default `tools/call`, `prompts/get`, `resources/read`).
    pub fn methods<I, S>(mut self, methods: I) -> ConcurrencyLimit
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = Methods::only(methods);
        self
    }

    /// Takes a place for a call of `method` to `name` (a typed filter holds the permit across
    /// `next.run(req)`): `let _permit = limit.acquire("tools/call", Some(&name)).await?;`.
    ///
    /// Errors: the `-32600` `concurrency_limit` refusal (see the type) when no place is free
    /// within [`wait`](Self::wait).
    pub async fn acquire(&self, method: &str, name: Option<&str>) -> Result<ConcurrencyPermit, McpError> {
        if !self.methods.contains(method) {
            return Ok(ConcurrencyPermit { _primitive: None, _global: None });
        }
        let primitive = name.and_then(|n| self.per_primitive.get(n)).cloned();
        take(primitive, self.global.clone(), self.wait, method, name).await
    }
}

/// Takes a place under the primitive's limit, then under the global one.
async fn take(
    primitive: Option<(usize, Arc<Semaphore>)>,
    global: Option<(usize, Arc<Semaphore>)>,
    wait: Duration,
    method: &str,
    name: Option<&str>,
) -> Result<ConcurrencyPermit, McpError> {
    let primitive = match primitive {
        Some((n, s)) => Some(place(s, n, wait, &describe(method, name)).await?),
        None => None,
    };
    let global = match global {
        Some((n, s)) => Some(place(s, n, wait, "this server").await?),
        None => None,
    };
    Ok(ConcurrencyPermit { _primitive: primitive, _global: global })
}

/// A place under one limit of `n`, waiting up to `wait` for it.
async fn place(
    semaphore: Arc<Semaphore>,
    n: usize,
    wait: Duration,
    what: &str,
) -> Result<OwnedSemaphorePermit, McpError> {
    if let Ok(p) = semaphore.clone().try_acquire_owned() {
        return Ok(p);
    }
    if !wait.is_zero()
        && let Ok(Ok(p)) = tokio::time::timeout(wait, semaphore.acquire_owned()).await
    {
        return Ok(p);
    }
    Err(McpError::invalid_request(format!("too many concurrent calls: {what} runs at most {n} at once; retry later"))
        .with_data(serde_json::json!({
            "reason": CONCURRENCY_LIMIT_REASON, "limit": n, "retryAfterMs": RETRY_HINT_MS
        })))
}

impl RawFilter for ConcurrencyLimit {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        let method = req.ctx.method();
        let name = primitive(&req);
        let limited = self.methods.contains(method)
            && (self.global.is_some() || name.is_some_and(|n| self.per_primitive.contains_key(n)));
        if !limited {
            return Box::pin(next.run(req));
        }
        let places = (name.and_then(|n| self.per_primitive.get(n)).cloned(), self.global.clone(), self.wait);
        Box::pin(async move {
            let (own, global, wait) = places;
            let permit = take(own, global, wait, req.ctx.method(), primitive(&req)).await?;
            let out = next.run(req).await;
            drop(permit);
            out
        })
    }
}
