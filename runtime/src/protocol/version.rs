/// The stateless revision this crate implements
/// ([changelog](https://modelcontextprotocol.io/specification/2026-07-28/changelog)).
pub const MODERN_VERSION: &str = "2026-07-28";

/// The session-based revisions served for legacy clients, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// Every revision served, newest first, as listed in `server/discover` `supportedVersions` and in
/// `-32022` `data.supported`.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// Which protocol era a request is served under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// 2026-07-28: stateless, per-request `_meta`.
    Modern,
    /// A session-based revision agreed in `initialize` (one of [`LEGACY_VERSIONS`]).
    Legacy(&'static str),
}

impl Era {
    /// The protocol version string of this era.
    pub fn version(&self) -> &'static str {
        match self {
            Era::Modern => MODERN_VERSION,
            Era::Legacy(v) => v,
        }
    }

    /// True for the stateless 2026-07-28 era.
    pub fn is_modern(&self) -> bool {
        matches!(self, Era::Modern)
    }
}

/// True when `v` names a session-based revision (including 2024-11-05, which is negotiated up).
pub fn is_legacy_version(v: &str) -> bool {
    LEGACY_VERSIONS.contains(&v) || v == "2024-11-05"
}

/// True when SSE streams of a session on protocol version `v` open with a priming event (an
/// event id and empty data, so the client can resume before any message): introduced in
/// 2025-11-25 (SEP-1699,
/// <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server>).
/// Earlier clients parse every `data:` line as JSON and fail on the empty one.
pub fn primes_sse_streams(v: &str) -> bool {
    is_legacy_version(v) && !matches!(v, "2024-11-05" | "2025-03-26" | "2025-06-18")
}

/// True when a connection on protocol version `v` receives JSON-RPC batches: only 2025-03-26,
/// where receiving them is a MUST
/// (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>). 2025-06-18
/// removed batching (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>), and
/// the later revisions and the 2026-07-28 stateless wire take one message at a time.
pub fn accepts_batches(v: &str) -> bool {
    v == "2025-03-26"
}

/// The `-32600` error (HTTP 400) answering a batch on a connection whose protocol version
/// `version` does not take batches (see [`accepts_batches`]; `None`: no version agreed yet, as
/// on stdio before `initialize`). It is one error object with a `null` id, never an array
/// (<https://www.jsonrpc.org/specification#batch>: a batch that cannot be taken as a whole gets a
/// single response).
pub fn batch_refused(version: Option<&str>) -> crate::jsonrpc::McpError {
    crate::jsonrpc::McpError::invalid_request(match version {
        Some(v) => format!("batches are not supported in protocol version {v}: send one message at a time"),
        None => "batches are not supported before an initialize that negotiates protocol version 2025-03-26".to_owned(),
    })
}

/// The legacy version to answer `initialize` with: the client's own when we serve it, otherwise
/// the newest legacy revision (2025-11-25 lifecycle rules).
pub fn negotiate_legacy(requested: Option<&str>) -> &'static str {
    requested.and_then(|r| LEGACY_VERSIONS.iter().copied().find(|v| *v == r)).unwrap_or(LEGACY_VERSIONS[0])
}

/// `-32601` for a method this server does not serve on a request's wire: on the 2026-07-28
/// wire (`session: None`) or a legacy session of the given version. A method of the other
/// revisions gets a hint saying so, since a client that mixes them up reads "method not found"
/// as "this server lacks it".
pub(crate) fn method_not_served(method: &str, session: Option<&'static str>) -> crate::jsonrpc::McpError {
    let hint = match (method, session) {
        ("initialize", None) => Some(format!(
            "2026-07-28 has no initialize: each request carries its protocol version and client \
             capabilities in params._meta, and server/discover describes the server; send \
             initialize without `MCP-Protocol-Version: {MODERN_VERSION}` to open a 2025-11-25 session"
        )),
        ("ping" | "logging/setLevel", None) => {
            Some(format!("a method of the session-based revisions (2025-11-25 and earlier), not of {MODERN_VERSION}"))
        }
        ("resources/subscribe" | "resources/unsubscribe", None) => Some(format!(
            "a method of the session-based revisions; on {MODERN_VERSION} use subscriptions/listen \
             with notifications.resourceSubscriptions"
        )),
        ("server/discover" | "subscriptions/listen", Some(version)) => {
            Some(format!("a {MODERN_VERSION} method; this session negotiated {version}"))
        }
        _ => None,
    };
    let err = crate::jsonrpc::McpError::method_not_found(method);
    match hint {
        Some(hint) => crate::jsonrpc::McpError::new(err.code(), format!("{} ({hint})", err.message())),
        None => err,
    }
}
