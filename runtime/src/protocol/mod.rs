//! MCP protocol eras, versions, per-request `_meta` and logging levels.

pub(crate) mod level;
mod meta;
pub(crate) mod revision;
mod trace;
mod version;

// At the crate root: `switchyard::LogLevel`.
pub(crate) use level::LogLevel;
pub(crate) use meta::check_modern_meta;
pub use meta::{ModernMeta, parse_modern_meta};
pub use trace::{
    MAX_BAGGAGE_BYTES, MAX_BAGGAGE_MEMBERS, MAX_TRACESTATE_BYTES, MAX_TRACESTATE_MEMBERS, META_BAGGAGE,
    META_TRACEPARENT, META_TRACESTATE, TraceContext,
};
pub(crate) use version::method_not_served;
pub use version::{
    Era, LEGACY_VERSIONS, MODERN_VERSION, SUPPORTED_VERSIONS, accepts_batches, batch_refused, is_legacy_version,
    negotiate_legacy, primes_sse_streams,
};

/// `_meta` key: the protocol version of a 2026-07-28 request
/// ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta)).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's `Implementation` (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level the client opts in to for this request
/// ([per-request log level](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging#per-request-log-level)).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key: the server's `Implementation`.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` key: the listen subscription a notification belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
