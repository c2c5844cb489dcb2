use super::{LogLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use crate::jsonrpc::McpError;
use serde_json::{Map, Value};

/// The per-request `_meta` of a 2026-07-28 request, validated (spec digest §1.2).
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
/// Errors (all `-32602`, HTTP 400): `params` or `params._meta` missing or not an object, the
/// protocol version missing or not a string, the client capabilities missing or not an object,
/// an unknown `logLevel`. The version value itself is checked later (header comparison first,
/// then `-32022`), following the order of spec digest §1.7.
pub fn parse_modern_meta(params: Option<&Map<String, Value>>) -> Result<ModernMeta, McpError> {
    let bad = |msg: &str| McpError::invalid_params(msg.to_owned()).with_http_status(400);
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .ok_or_else(|| bad("params._meta is required on every 2026-07-28 request"))?;
    let protocol_version = meta
        .get(META_PROTOCOL_VERSION)
        .and_then(Value::as_str)
        .ok_or_else(|| bad("params._meta[\"io.modelcontextprotocol/protocolVersion\"] is required"))?
        .to_owned();
    let client_capabilities =
        meta.get(META_CLIENT_CAPABILITIES).filter(|v| v.is_object()).cloned().ok_or_else(|| {
            bad("params._meta[\"io.modelcontextprotocol/clientCapabilities\"] is required (an object; {} for none)")
        })?;
    if let Some(t) = meta.get("progressToken")
        && !(t.is_string() || t.is_i64() || t.is_u64())
    {
        return Err(bad("params._meta.progressToken must be a string or an integer"));
    }
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(v) => Some(v.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            bad("params._meta[\"io.modelcontextprotocol/logLevel\"] must be one of debug, info, notice, warning, error, critical, alert, emergency")
        })?),
    };
    Ok(ModernMeta {
        protocol_version,
        client_capabilities,
        client_info: meta.get(META_CLIENT_INFO).cloned(),
        log_level,
    })
}
