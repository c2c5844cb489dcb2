use super::HttpState;
use super::headers::mirrored;
use super::respond::{self, ReplyPlan};
use super::status::Refusal;
use crate::auth::Principal;
use crate::context::{self, Connection, Origin};
use crate::jsonrpc::{McpError, Message, Request};
use crate::protocol::{ModernMeta, check_modern_meta};
use crate::registry::ParamHeader;
use axum::response::Response;
use futures::future::{Either, ready};
use http::HeaderMap;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// A POST on the stateless 2026-07-28 path. Checks run in the order of
/// [server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation);
/// the first failure answers. `header_version`: the request's `MCP-Protocol-Version`, as the
/// caller read it to choose this path; `accepts_sse`: the client's `Accept` allows an SSE reply
/// (the caller read the header once, for its 406 check).
pub(crate) fn post(
    state: &HttpState,
    header_version: Option<&str>,
    headers: &HeaderMap,
    msg: Message,
    principal: Option<Arc<Principal>>,
    connection: Option<Connection>,
    accepts_sse: bool,
) -> impl Future<Output = Response> + Send + use<> {
    // Not an `async fn`: everything up to the reply is synchronous, and the returned future is
    // the reply's alone. An `async fn` would keep room for the message, the request and the
    // connection beside it, in a future that every request's boxed future carries.
    let req = match msg {
        // 2026-07-28 defines no client notification over HTTP; accept and ignore (202).
        Message::Notification(_) => return Either::Left(ready(respond::accepted())),
        Message::Response { .. } => {
            let err = McpError::invalid_request("the stateless wire takes no client responses");
            return Either::Left(ready(respond::error(400, None, &err)));
        }
        Message::Request(r) => r,
    };
    let meta = match validate(state, header_version, headers, &req) {
        Ok(m) => m,
        Err(r) => return Either::Left(ready(respond::refused(Some(&req.id), &r))),
    };
    let (ntx, nrx) = context::outbound_channel(64);
    let cancel = state.server.shutdown_token().child_token();
    // A client that cannot read SSE gets one JSON body, as from a server without streaming.
    let sse = state.config.streaming && accepts_sse;
    let notifier =
        if sse { state.server.notifier(ntx, cancel.clone()) } else { crate::context::Notifier::disconnected() };
    let plan = ReplyPlan {
        id: req.id.clone(),
        keep_alive: state.config.keep_alive,
        sse_after: if sse { state.config.sse_after } else { None },
        filters: state.server.message_filters().clone(),
        challenge: state.challenge(principal.as_deref()),
    };
    let token = cancel.clone();
    let origin = Origin::new(token, notifier)
        .principal(principal)
        .trace(super::headers::trace_context(headers))
        .connection(connection);
    let work = Box::pin(state.server.handle_modern_request(req, meta, origin));
    Either::Right(respond::reply(plan, work, nrx, cancel))
}

/// The request's checks before dispatch, in the order of
/// [server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation).
/// A malformed `_meta` is refused with 400; every other failure with the status its code calls for
/// ([`status::of`](super::status::of)).
fn validate(
    state: &HttpState,
    header_version: Option<&str>,
    headers: &HeaderMap,
    req: &Request,
) -> Result<ModernMeta, Refusal> {
    let header_version =
        header_version.ok_or_else(|| McpError::header_mismatch("the MCP-Protocol-Version header is required"))?;
    // Its `-32602` says the message is not a 2026-07-28 request at all, a transport-level 400,
    // where the same code from a handler (unknown tool, bad arguments) is a 200 answer.
    let meta = check_modern_meta(&req.meta).map_err(|mut e| {
        // A version this server does not know sent the request here; say so, or the client
        // reads that it spoke 2026-07-28 when it never did.
        if header_version != crate::protocol::MODERN_VERSION && !crate::protocol::is_legacy_version(header_version) {
            let mut supported = vec![crate::protocol::MODERN_VERSION];
            if state.config.legacy_sessions {
                supported.extend(crate::protocol::LEGACY_VERSIONS);
            }
            let message = format!(
                "{} (MCP-Protocol-Version {header_version:?} is not a version this server supports: {})",
                e.message(),
                supported.join(", ")
            );
            e = e.with_message(message);
        }
        Refusal::new(400, e)
    })?;
    check_after_meta(state, headers, req, header_version, &meta)?;
    Ok(meta)
}

/// The checks of [`validate`] that follow the `_meta` parse: version header against `_meta`,
/// the version itself, `Mcp-Method`, `Mcp-Name`, the method, `Mcp-Param-*`.
fn check_after_meta(
    state: &HttpState,
    headers: &HeaderMap,
    req: &Request,
    header_version: &str,
    meta: &ModernMeta,
) -> Result<(), McpError> {
    if header_version != meta.protocol_version {
        return Err(McpError::header_mismatch(format!(
            "MCP-Protocol-Version header {header_version:?} differs from _meta protocolVersion {:?}",
            meta.protocol_version
        )));
    }
    state.server.check_protocol_version(meta)?;
    let method_header = mirrored(headers, &super::headers::MCP_METHOD)?
        .ok_or_else(|| McpError::header_mismatch("the Mcp-Method header is required"))?;
    if method_header != req.method {
        return Err(McpError::header_mismatch(format!(
            "Mcp-Method header {method_header:?} differs from the body's method {:?}",
            req.method
        )));
    }
    check_name(headers, req, state.server.routing_field(&req.method))?;
    if !state.server.serves_modern_method(&req.method) {
        return Err(crate::protocol::method_not_served(&req.method, None));
    }
    if let Some(name) = req.tool_name() {
        let declared = state.server.tool_param_headers(name);
        if !declared.is_empty() {
            // An object `arguments` travels as text (`Request::arguments`); any other stays in
            // `params`. Parsed here only for a tool that mirrors some into headers.
            let parsed = req.arguments.as_ref().and_then(|text| serde_json::from_str::<Value>(text).ok());
            let args = parsed.as_ref().or_else(|| req.params.as_ref().and_then(|p| p.get("arguments")));
            check_params(headers, &declared, args)?;
        }
    }
    Ok(())
}

/// `Mcp-Name` against the body field it mirrors (`field`, from [`Server::routing_field`]).
fn check_name(headers: &HeaderMap, req: &Request, field: Option<&str>) -> Result<(), McpError> {
    let Some(field) = field else { return Ok(()) };
    // A `tools/call`'s name may have been taken out of `params` by the parser.
    let body = req.tool_name().or_else(|| req.params.as_ref()?.get(field)?.as_str());
    let header = mirrored(headers, &super::headers::MCP_NAME)?;
    match (body, header) {
        (Some(b), Some(h)) if b == h => Ok(()),
        (Some(b), Some(h)) => {
            Err(McpError::header_mismatch(format!("Mcp-Name header {h:?} differs from params.{field} {b:?}")))
        }
        (Some(_), None) => {
            Err(McpError::header_mismatch(format!("the Mcp-Name header is required for {}", req.method)))
        }
        // No body value: the params check of the method reports it.
        (None, _) => Ok(()),
    }
}

/// `Mcp-Param-*` headers against the tool's `x-mcp-header` properties
/// ([server behavior](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-behavior-for-custom-headers)).
fn check_params(headers: &HeaderMap, declared: &[ParamHeader], args: Option<&Value>) -> Result<(), McpError> {
    for p in declared {
        let value = args.and_then(|a| a.get(&p.property)).filter(|v| !v.is_null());
        let name = format!("mcp-param-{}", p.header.to_ascii_lowercase());
        let header = mirrored(headers, &name)?;
        let Some(value) = value else { continue };
        let Some(h) = header else {
            return Err(McpError::header_mismatch(format!("the Mcp-Param-{} header is required", p.header)));
        };
        let equal = match value {
            Value::String(s) => *s == h,
            Value::Bool(b) => h == if *b { "true" } else { "false" },
            Value::Number(n) => match (n.as_i64(), h.parse::<i64>()) {
                (Some(a), Ok(b)) => a == b,
                _ => false,
            },
            _ => false,
        };
        if !equal {
            return Err(McpError::header_mismatch(format!(
                "Mcp-Param-{} header {h:?} differs from arguments.{}",
                p.header, p.property
            )));
        }
    }
    Ok(())
}
