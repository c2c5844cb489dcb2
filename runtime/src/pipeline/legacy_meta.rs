//! Legacy requests may not carry the 2026-07-28 per-request envelope.

use crate::jsonrpc::{McpError, RequestMeta};
use crate::protocol::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL};

/// Rejects a request on a legacy session whose `params._meta` carries a 2026-07-28 per-request
/// key (`clientCapabilities`, `clientInfo`, `logLevel` under `io.modelcontextprotocol/`): a
/// session declares those once, in `initialize`, and such a key must never switch on per-request
/// features (e.g. tasks).
///
/// Errors: `-32600` naming the key and the session's protocol `version`.
pub(crate) fn reject_modern_envelope(meta: &RequestMeta, version: &str) -> Result<(), McpError> {
    match [META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL].into_iter().find(|k| meta.contains_key(k)) {
        Some(key) => Err(McpError::invalid_request(format!(
            "`_meta[\"{key}\"]` belongs to 2026-07-28 requests; this request is on a {version} session, \
             whose capabilities were declared in initialize"
        ))),
        None => Ok(()),
    }
}
