use super::{LogLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use crate::jsonrpc::{McpError, small_map};
use serde_json::{Map, Value};

/// The per-request `_meta` of a 2026-07-28 request, validated
/// ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta)).
#[derive(Debug, Clone)]
pub struct ModernMeta {
    /// `io.modelcontextprotocol/protocolVersion`, as sent (not yet checked against what we serve).
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`: a `ClientCapabilities` object.
    pub client_capabilities: Value,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub client_info: Option<Value>,
    /// `io.modelcontextprotocol/logLevel`, when sent.
    pub log_level: Option<LogLevel>,
}

/// Validates the required `_meta` keys of a modern request.
///
/// Errors (all `-32602`): `params` or `params._meta` missing or not an object, the protocol version
/// missing or not a string, the client capabilities missing or not an object, an unknown
/// `logLevel`. The Streamable HTTP transport answers them with HTTP 400 (unlike other `-32602`s,
/// which are 200), as it calls this itself before dispatch. The version value itself is checked
/// later (header comparison first, then `-32022`), following the order of the HTTP transport's
pub fn parse_modern_meta(params: Option<&Map<String, Value>>) -> Result<ModernMeta, McpError> {
    let mut meta = check_modern_meta(params)?;
    meta.client_info = params
        .and_then(|p| small_map::get(p, "_meta"))
        .and_then(Value::as_object)
        .and_then(|m| small_map::get(m, META_CLIENT_INFO))
        .cloned();
    Ok(meta)
}

/// [`parse_modern_meta`] without copying `clientInfo` (`client_info` is `None`), for the
/// server's own transports: the request's context reads it from the `_meta` it keeps
/// (`RequestContext::client_info`), so it is not copied and dropped per request.
///
/// Errors: those of [`parse_modern_meta`].
pub(crate) fn check_modern_meta(params: Option<&Map<String, Value>>) -> Result<ModernMeta, McpError> {
    let bad = |msg: &str| McpError::invalid_params(msg.to_owned());
    let meta = match params.and_then(|p| small_map::get(p, "_meta")) {
        Some(Value::Object(m)) => m,
        None => {
            return Err(bad(
                "params._meta is required on every 2026-07-28 request (clients of 2025-11-25 and earlier send initialize first)",
            ));
        }
        Some(other) => return Err(bad(&format!("params._meta must be an object, not {}", kind(other)))),
    };
    let protocol_version = match small_map::get(meta, META_PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.clone(),
        None => return Err(bad("params._meta[\"io.modelcontextprotocol/protocolVersion\"] is required")),
        Some(other) => {
            return Err(bad(&format!(
                "params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a string, not {}",
                kind(other)
            )));
        }
    };
    let client_capabilities = match small_map::get(meta, META_CLIENT_CAPABILITIES) {
        Some(v @ Value::Object(_)) => v.clone(),
        None => {
            return Err(bad(
                "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] is required (an object; {} for none)",
            ));
        }
        Some(other) => {
            return Err(bad(&format!(
                "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] must be an object ({{}} for none), not {}",
                kind(other)
            )));
        }
    };
    if let Some(t) = small_map::get(meta, "progressToken")
        && !(t.is_string() || t.is_i64() || t.is_u64())
    {
        return Err(bad("params._meta.progressToken must be a string or an integer"));
    }
    let log_level = match small_map::get(meta, META_LOG_LEVEL) {
        None => None,
        Some(v) => Some(v.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            bad("params._meta[\"io.modelcontextprotocol/logLevel\"] must be one of debug, info, notice, warning, error, critical, alert, emergency")
        })?),
    };
    Ok(ModernMeta { protocol_version, client_capabilities, client_info: None, log_level })
}

/// The JSON type of `v`, for error messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(params: Value) -> String {
        let err = parse_modern_meta(params.as_object()).expect_err("refused");
        assert_eq!(err.code(), crate::ErrorCode::INVALID_PARAMS);
        err.message().to_owned()
    }

    #[test]
    fn a_missing_key_and_a_wrong_type_get_different_messages() {
        assert!(message(json!({})).contains("_meta is required"));
        assert!(message(json!({ "_meta": 3 })).contains("_meta must be an object, not a number"));
        let caps = json!({});
        assert!(
            message(json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": caps } })).contains("is required")
        );
        let m = message(
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {} } }),
        );
        assert!(m.contains("must be a string, not a number"), "{m}");
        let m = message(
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [] } }),
        );
        assert!(m.contains("must be an object ({} for none), not an array"), "{m}");
    }
}
