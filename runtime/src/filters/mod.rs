//! Ready filters: the limits, caches and records most servers want around their primitives,
//! each a value given to [`ServerBuilder::raw_filter`](crate::ServerBuilder::raw_filter) (a
//! [`RawFilter`](crate::RawFilter)) and, for a typed filter or a handler, a plain method doing
//! the same work on one call.
//!
//! | filter | what | answers |
//! |---|---|---|
//! | [`RateLimit`] (feature `rate-limit`) | calls per caller, address, tool | `-32600`, `data.reason = "rate_limited"`, `data.retryAfterMs`; HTTP 429 + `Retry-After` |
//! | [`Timeout`] | a deadline per call | `-32603`, `data.reason = "timeout"`, `data.timeoutMs` |
//! | [`ConcurrencyLimit`] | calls running at once | `-32600`, `data.reason = "concurrency_limit"`, `data.retryAfterMs`; HTTP 429 + `Retry-After` |
//! | [`MaxResultSize`] | bytes of a result's JSON | `-32603`, `data.reason = "result_too_large"` |
//! | [`ResultCache`] (feature `result-cache`) | results reused within their TTL | nothing of its own |
//! | [`MaskErrors`] | internal errors hidden behind a correlation id | `-32603`, `data.correlationId` |
//! | [`Audit`] | one `tracing` event per call | nothing of its own |
//!
//! Unless configured otherwise, each one acts on the three calls of a primitive, `tools/call`,
//! `prompts/get` and `resources/read` ([`RateLimit`]: `tools/call` alone), and passes every
//! other method (`tools/list`, `subscriptions/listen`, ...) through untouched. A server that
//! configures none of them pays nothing: they are values in the raw chain, and a server
//! without raw filters skips the chain.
//!
//! The order in which they are added is the order of the chain (lower `order` outside):
//! [`Audit`] and [`MaskErrors`] outermost, so they see every refusal; then [`RateLimit`], so
//! a refused call costs nothing more; then [`ResultCache`], [`ConcurrencyLimit`],
//! [`Timeout`] and [`MaxResultSize`] around the handler:
//!
//! ```rust,ignore
//! use switchyard::filters::*;
//! let server = Server::builder("demo", "1.0.0")
//!     .raw_filter(0, Audit::new())
//!     .raw_filter(1, MaskErrors::new())
//!     .raw_filter(2, RateLimit::new("10/min".parse()?))
//!     .raw_filter(3, ResultCache::new(10_000).tool("weather", CachePolicy::public(Duration::from_secs(60))))
//!     .raw_filter(4, ConcurrencyLimit::new().tool("render", 4))
//!     .raw_filter(5, Timeout::new(Duration::from_secs(30)))
//!     .raw_filter(6, MaxResultSize::new(1 << 20))
//!     .build()?;
//! ```

mod audit;
#[cfg(feature = "result-cache")]
mod cache;
mod concurrency;
pub(crate) mod declared;
mod mask_errors;
mod max_result_size;
#[cfg(feature = "rate-limit")]
mod rate_limit;
mod timeout;

pub use audit::{AUDIT_TARGET, Audit};
#[cfg(feature = "result-cache")]
pub use cache::{CachePolicy, CacheScope, ResultCache};
pub use concurrency::{ConcurrencyLimit, ConcurrencyPermit};
pub use mask_errors::MaskErrors;
pub use max_result_size::MaxResultSize;
#[cfg(feature = "rate-limit")]
pub use rate_limit::{Rate, RateKey, RateLimit, RateParseError};
pub use timeout::Timeout;

use crate::pipeline::RawRequest;

/// `data.reason` of a `RateLimit` refusal (`-32600`); with [`CONCURRENCY_LIMIT_REASON`], what
/// the HTTP transport answers with 429 and `Retry-After`.
pub const RATE_LIMITED_REASON: &str = "rate_limited";
/// `data.reason` of a [`ConcurrencyLimit`] refusal (`-32600`).
pub const CONCURRENCY_LIMIT_REASON: &str = "concurrency_limit";
/// `data.reason` of a [`Timeout`] error (`-32603`).
pub const TIMEOUT_REASON: &str = "timeout";
/// `data.reason` of a [`MaxResultSize`] error (`-32603`).
pub const RESULT_TOO_LARGE_REASON: &str = "result_too_large";

/// The three methods that call a primitive: what the filters act on by default.
pub(crate) const CALLS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The methods one filter acts on: a short list of names, or every method.
#[derive(Debug, Clone)]
pub(crate) enum Methods {
    Only(Vec<String>),
    All,
}

impl Methods {
    pub(crate) fn calls() -> Methods {
        Methods::Only(CALLS.iter().map(|m| (*m).to_owned()).collect())
    }

    pub(crate) fn only<I, S>(methods: I) -> Methods
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Methods::Only(methods.into_iter().map(Into::into).collect())
    }

    pub(crate) fn contains(&self, method: &str) -> bool {
        match self {
            Methods::All => true,
            Methods::Only(list) => list.iter().any(|m| m == method),
        }
    }
}

/// The primitive a raw request calls: the `name` of `tools/call` and `prompts/get`, the `uri`
/// of `resources/read`; `None` for other methods (or a request without it).
pub(crate) fn primitive(req: &RawRequest) -> Option<&str> {
    let field = match req.ctx.method() {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    req.params.get(field).and_then(serde_json::Value::as_str)
}

/// `what` for messages: `tools/call of "name"`, or the method alone.
pub(crate) fn describe(method: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{method} of {n:?}"),
        None => method.to_owned(),
    }
}
