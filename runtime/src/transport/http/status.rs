//! The HTTP status of a JSON-RPC error on the Streamable HTTP transport
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>, and the stateless
//! 2026-07-28 wire of
//! [server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation)).
//!
//! [`McpError`] is a protocol value and knows nothing of HTTP. An error the server's request
//! pipeline returns gets its status from [`of`]; an error the transport makes itself (unknown
//! session, body too large, a header it refuses, ...) is sent with the status chosen where it
//! is made, as a [`Refusal`] or straight to [`respond::error`](super::respond::error).

use crate::auth::{FORBIDDEN_REASON, INSUFFICIENT_SCOPE_REASON};
use crate::filters::{CONCURRENCY_LIMIT_REASON, RATE_LIMITED_REASON};
use crate::jsonrpc::McpError;
use crate::jsonrpc::error::ErrorCode;
use serde_json::Value;

/// The HTTP status of an error returned by the request pipeline (or the server's own checks):
///
/// | error | status |
/// |---|---|
/// | `-32600` with `data.reason == "forbidden"` ([`auth::forbidden`](crate::auth::forbidden)) | 403 |
/// | `-32600` with `data.reason == "insufficient_scope"` ([`auth::insufficient_scope`](crate::auth::insufficient_scope)) | 403 (401 without a token; see [`scope_challenge`](super::respond::scope_challenge)) |
/// | `-32600` with `data.reason == "rate_limited"` or `"concurrency_limit"` ([`filters::RateLimit`](crate::filters::RateLimit), [`filters::ConcurrencyLimit`](crate::filters::ConcurrencyLimit)) | 429, with `Retry-After` from `data.retryAfterMs` ([`retry_after`]) |
/// | `-32700`, `-32600`, `-32020`, `-32021`, `-32022` | 400 |
/// | `-32601` | 404 |
/// | anything else (`-32602` such as an unknown tool, `-32603`, custom codes) | 200 |
///
/// A `-32602` is 200 here because the handlers' own (unknown tool, bad arguments, missing
/// resource) are answers, not transport failures; the transport's `_meta` validation, whose
/// `-32602` is 400, does not go through this table. Never fails.
///
/// Spec: <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>.
pub(crate) fn of(err: &McpError) -> u16 {
    match err.code() {
        ErrorCode::INVALID_REQUEST if is_forbidden(err) || missing_scope(err).is_some() => 403,
        ErrorCode::INVALID_REQUEST if is_throttled(err) => 429,
        ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_VERSION
        | ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST => 400,
        ErrorCode::METHOD_NOT_FOUND => 404,
        _ => 200,
    }
}

/// Whether `err` is a denial: the marker [`auth::forbidden`](crate::auth::forbidden) puts in
/// `data.reason`, as the code alone (`-32600`) is shared with malformed requests.
fn is_forbidden(err: &McpError) -> bool {
    err.data().and_then(|d| d.get("reason")).and_then(Value::as_str) == Some(FORBIDDEN_REASON)
}

/// Whether `err` refuses a request for now, not for good: a rate or concurrency limit's refusal
/// (RFC 6585 §4, 429 Too Many Requests).
fn is_throttled(err: &McpError) -> bool {
    let reason = err.data().and_then(|d| d.get("reason")).and_then(Value::as_str);
    matches!(reason, Some(RATE_LIMITED_REASON | CONCURRENCY_LIMIT_REASON))
}

/// The `Retry-After` seconds of a throttled request (429): `data.retryAfterMs` rounded up to
/// whole seconds, at least 1 (RFC 9110 §10.2.3 counts in seconds); `None` for other errors.
pub(crate) fn retry_after(err: &McpError) -> Option<u64> {
    if err.code() != ErrorCode::INVALID_REQUEST || !is_throttled(err) {
        return None;
    }
    let ms = err.data().and_then(|d| d.get("retryAfterMs")).and_then(Value::as_u64).unwrap_or(1000);
    Some(ms.div_ceil(1000).max(1))
}

/// The scopes an insufficient-scope denial names (`data.scope`), `None` for any other error.
pub(crate) fn missing_scope(err: &McpError) -> Option<&str> {
    let data = err.data()?;
    if data.get("reason").and_then(Value::as_str) != Some(INSUFFICIENT_SCOPE_REASON) {
        return None;
    }
    data.get("scope").and_then(Value::as_str)
}

/// A request the transport refuses: the error to send and the HTTP status to send it with.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The JSON-RPC error of the body.
    pub(crate) error: McpError,
}

impl Refusal {
    /// `error`, sent with `status` whatever its code would call for.
    pub(crate) fn new(status: u16, error: McpError) -> Self {
        Refusal { status, error }
    }
}

impl From<McpError> for Refusal {
    /// `error` with the status its code calls for ([`of`]), so `?` works on the server's checks.
    fn from(error: McpError) -> Self {
        Refusal { status: of(&error), error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pipeline_errors_map_to_their_statuses() {
        let forbidden = crate::auth::forbidden("tool \"secret\"");
        let throttled = McpError::invalid_request("rate limited")
            .with_data(json!({ "reason": "rate_limited", "retryAfterMs": 1500 }));
        let busy =
            McpError::invalid_request("busy").with_data(json!({ "reason": "concurrency_limit", "retryAfterMs": 1 }));
        assert_eq!((retry_after(&throttled), retry_after(&busy)), (Some(2), Some(1)));
        assert_eq!(retry_after(&McpError::internal("x").with_data(json!({ "reason": "rate_limited" }))), None);
        let table: [(McpError, u16); 16] = [
            (throttled, 429),
            (busy, 429),
            (McpError::internal("x").with_data(json!({ "reason": "rate_limited" })), 200),
            (McpError::parse_error("bad JSON"), 400),
            (McpError::invalid_request("not a request"), 400),
            (forbidden, 403),
            // Another reason, or a reason of another code, is not a denial.
            (McpError::invalid_request("x").with_data(json!({ "reason": "other" })), 400),
            (McpError::invalid_params("x").with_data(json!({ "reason": "forbidden" })), 200),
            (McpError::header_mismatch("Mcp-Name differs"), 400),
            (McpError::missing_capability("needs sampling", json!({ "sampling": {} })), 400),
            (McpError::unsupported_version("1999-01-01", &["2026-07-28"]), 400),
            (McpError::method_not_found("nope/nope"), 404),
            (McpError::invalid_params("unknown tool: nope"), 200),
            (McpError::resource_not_found("file:///nope"), 200),
            (McpError::internal("boom"), 200),
            (McpError::new(ErrorCode(-31999), "custom"), 200),
        ];
        for (err, status) in table {
            assert_eq!(of(&err), status, "{err}");
        }
    }

    #[test]
    fn a_refusal_keeps_its_own_status_or_takes_the_table() {
        let r = Refusal::new(404, McpError::invalid_request("unknown session"));
        assert_eq!((r.status, r.error.code()), (404, ErrorCode::INVALID_REQUEST));
        let r = Refusal::new(400, McpError::invalid_params("params._meta is required"));
        assert_eq!(r.status, 400);
        assert_eq!(Refusal::from(McpError::method_not_found("x")).status, 404);
    }
}
