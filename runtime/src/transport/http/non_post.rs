//! Every HTTP method but POST on the MCP endpoint.
//!
//! The era of a request without a body is read from its headers alone:
//!
//! - `MCP-Protocol-Version` names a version this server does not know, on a server with legacy
//!   sessions: GET and DELETE are 400 (2025-11-25: an unsupported version header MUST be a 400).
//! - `MCP-Protocol-Version` names a version that is not legacy (2026-07-28, or an unknown one on a
//!   server without legacy sessions): the 2026-07-28 wire, POST only. GET and DELETE are 405 with
//!   `Allow: POST` whatever `Mcp-Session-Id` or `Last-Event-ID` say
//!   ([earlier Streamable HTTP revisions](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#earlier-streamable-http-revisions),
//!   [backward compatibility](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions));
//!   the stray session is neither looked up nor touched.
//! - Otherwise (no version header, or a legacy one), on a server with legacy sessions: the
//!   2025-11-25 rules, as a dual-era server must keep them. GET opens or resumes the session's
//!   stream and DELETE ends the session; without `Mcp-Session-Id` both are 400, an unknown
//!   session is 404, and a version header other than the session's is 400.
//!
//! Any other method (PUT, PATCH, HEAD, OPTIONS, ...) is 405. RFC 9110 §15.5.6 requires `Allow`
//! on every 405, listing what the endpoint serves on the request's wire; it never lists the
//! refused method. OPTIONS is refused too rather than answered: CORS, when wanted, is a layer
//! around the router that answers preflights before they reach it.

use super::respond;
use super::{HttpState, headers, legacy};
use crate::auth::Principal;
use crate::jsonrpc::McpError;
use crate::protocol::{MODERN_VERSION, SUPPORTED_VERSIONS, is_legacy_version};
use axum::response::Response;
use http::Method;
use http::request::Parts;

/// Answers a request whose method is not POST.
pub(crate) async fn answer(state: &HttpState, parts: &Parts, principal: Option<&Principal>) -> Response {
    let version = headers::protocol_version(&parts.headers);
    if let Some(v) = &version
        && state.config.legacy_sessions
        && matches!(parts.method, Method::GET | Method::DELETE)
        && !is_legacy_version(v)
        && v != MODERN_VERSION
    {
        // 2025-11-25 transports: an invalid or unsupported version header MUST be a 400. A 405
        // here would tell a legacy client that DELETE is not allowed, and its session would
        // linger.
        let err = McpError::invalid_request(format!(
            "unsupported MCP-Protocol-Version {v:?}: use a version this server supports ({})",
            SUPPORTED_VERSIONS.join(", ")
        ));
        return respond::error(400, None, &err);
    }
    let modern = version.is_some_and(|v| !is_legacy_version(&v));
    let allowed = Allowed::on(state, modern);
    let served = match parts.method {
        Method::GET => allowed.get,
        Method::DELETE => allowed.delete,
        _ => false,
    };
    if !served {
        return respond::method_not_allowed(allowed.header());
    }
    let Some(id) = headers::session_id(&parts.headers) else {
        // 2025-11-25: a server that requires sessions SHOULD answer 400 to any request but
        // `initialize` that comes without one.
        let err = McpError::invalid_request("missing Mcp-Session-Id: send initialize first");
        return respond::error(400, None, &err);
    };
    if parts.method == Method::GET {
        if !super::media::accepts(&parts.headers).sse {
            return super::media::not_acceptable(&parts.headers, "text/event-stream");
        }
        legacy::open_stream(state, &id, &parts.headers, principal).await
    } else {
        legacy::delete(state, &id, &parts.headers, principal)
    }
}

/// The methods the endpoint serves on one wire, besides POST (always served).
struct Allowed {
    get: bool,
    delete: bool,
}

impl Allowed {
    /// What a request on the modern wire (`modern`) or the legacy one may use: the modern wire
    /// and a server without legacy sessions have POST only; the legacy session stream (GET)
    /// exists only where replies may stream.
    fn on(state: &HttpState, modern: bool) -> Allowed {
        let legacy = !modern && state.config.legacy_sessions;
        Allowed { get: legacy && state.config.streaming, delete: legacy }
    }

    fn header(&self) -> &'static str {
        match (self.get, self.delete) {
            (true, true) => "GET, POST, DELETE",
            (true, false) => "GET, POST",
            (false, true) => "POST, DELETE",
            (false, false) => "POST",
        }
    }
}
