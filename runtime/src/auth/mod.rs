//! Authorization: who is calling (a [`Principal`], taken from the HTTP `Authorization` header by
//! a tower layer, or configured for stdio), and which primitives they may use.
//!
//! - **Identity.** [`BearerAuth`] is a tower layer for the HTTP router: `Authorization: Bearer T`
//!   is checked by a [`TokenVerifier`] ([`JwtVerifier`] for JWTs, [`StaticTokens`] for fixed
//!   tokens, or your own) and the principal travels with the request. No header means an
//!   anonymous caller; a token that fails verification is answered with HTTP 401 and
//!   `WWW-Authenticate: Bearer error="invalid_token"`.
//! - **Protected resource.** [`ProtectedResource`] (RFC 9728) makes tokens required, names the
//!   metadata in `401` challenges, and with [`Dpop`] accepts sender-constrained tokens
//!   (RFC 9449) only with a proof of their key; [`JwksVerifier`] checks JWTs against an
//!   issuer's published keys, [`IntrospectionVerifier`] opaque tokens (RFC 7662).
//! - **Rules.** `roles = ["admin"]` on `#[mcp_tool]`, `#[mcp_prompt]`, `#[mcp_resource]` and
//!   `#[mcp_rpc]` restricts a primitive to callers holding any one of those roles. The server's
//!   [`Policy`] decides (default [`RolePolicy`]; [`ServerBuilder::policy`](crate::ServerBuilder::policy)
//!   replaces it, e.g. with [`AllowAll`]).
//! - **Enforcement.** Lists (`tools/list`, `prompts/list`, `resources/list`,
//!   `resources/templates/list`) show only what the caller may use, and are cached `private`
//!   whenever the policy says lists vary by caller. A call is checked after its primitive is
//!   matched and before any alternate or typed filter runs — it is the outermost alternate step,
//!   so a denied primitive never reaches an alternate or typed filter, a task or the body — and
//!   checked again right before the body runs, in case a filter swapped the primitive (then
//!   alternate filters such as Tasks have already run, and the denial ends the call or task).
//!   Raw filters and message filters wrap everything and do see denied requests (audit, rate
//!   limits). Names are not confidential: a denied call says `forbidden`, an unknown one says
//!   unknown, and `Mcp-Param-*` checks run before authorization.
//! - **Sessions.** A legacy HTTP session belongs to the principal that sent its `initialize`;
//!   to anyone else it does not exist (404).
//! - **Denial.** JSON-RPC error `-32600` with the message `forbidden: ...` (HTTP 403 on the
//!   stateless wire) and `data: {"reason": "forbidden"}`.

#[cfg(feature = "oauth")]
mod dpop;
#[cfg(feature = "oauth")]
mod fetch;
#[cfg(feature = "oauth")]
mod introspection;
#[cfg(feature = "oauth")]
mod jwks;
#[cfg(feature = "auth-jwt")]
mod jwt;
#[cfg(feature = "http")]
mod layer;
mod policy;
mod principal;
mod resource;
mod verifier;

#[cfg(feature = "oauth")]
pub use dpop::Dpop;
#[cfg(feature = "oauth")]
pub use introspection::IntrospectionVerifier;
#[cfg(feature = "oauth")]
pub use jwks::JwksVerifier;
#[cfg(feature = "auth-jwt")]
pub use jwt::JwtVerifier;
#[cfg(feature = "http")]
pub use layer::BearerAuth;
pub use policy::{AllowAll, Policy, Primitive, RolePolicy};
pub use principal::Principal;
#[cfg(feature = "http")]
pub(crate) use resource::challenge_in as challenge_header;
pub use resource::{METADATA_PATH, ProtectedResource};
pub use verifier::{AuthError, SharedError, StaticTokens, TokenVerifier};

use crate::jsonrpc::McpError;

/// `data.reason` of the error [`forbidden`] makes: what tells the Streamable HTTP transport to
/// answer 403 rather than the 400 of any other `-32600`.
pub(crate) const FORBIDDEN_REASON: &str = "forbidden";

/// The error of a denied request: `-32600`, `forbidden: <what>`, `data: {"reason": "forbidden"}`
/// (HTTP 403 on the stateless wire, where the transport reads `data.reason`).
pub fn forbidden(what: &str) -> McpError {
    McpError::invalid_request(format!("forbidden: the caller may not use {what}"))
        .with_data(serde_json::json!({ "reason": FORBIDDEN_REASON }))
}

/// `data.reason` of the error [`insufficient_scope`] makes.
pub(crate) const INSUFFICIENT_SCOPE_REASON: &str = "insufficient_scope";

/// The error of a request whose token lacks a scope `what` needs: `-32600`,
/// `data: {"reason": "insufficient_scope", "scope": "<scopes, space-separated>"}`. Over HTTP it
/// is 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1,
/// [SEP-835 step-up](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#scope-challenge-handling));
/// 401 with the same `scope` when the request had no token at all.
pub fn insufficient_scope(what: &str, scopes: &[&str]) -> McpError {
    let scope = scopes.join(" ");
    McpError::invalid_request(format!(
        "insufficient scope: {what} needs a token granting {scope}; authorize again asking for it"
    ))
    .with_data(serde_json::json!({ "reason": INSUFFICIENT_SCOPE_REASON, "scope": scope }))
}
