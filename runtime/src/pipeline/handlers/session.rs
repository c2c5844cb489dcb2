use super::required_str;
use crate::jsonrpc::McpError;
use crate::pipeline::session::LegacySession;
use crate::protocol::LogLevel;
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn session(s: Option<&Arc<LegacySession>>) -> Result<&Arc<LegacySession>, McpError> {
    s.ok_or_else(|| McpError::invalid_request("this method needs an initialized session"))
}

/// Legacy `logging/setLevel` → `{}`.
///
/// Errors: `-32602` for a level MCP does not define.
pub(crate) fn set_level(s: Option<&Arc<LegacySession>>, params: &Map<String, Value>) -> Result<Value, McpError> {
    let level = required_str(params, "level", "logging/setLevel")?;
    let level = LogLevel::parse(level).ok_or_else(|| {
        McpError::invalid_params(format!(
            "logging/setLevel: unknown level {level:?}; use debug, info, notice, warning, error, critical, alert or emergency"
        ))
    })?;
    session(s)?.set_log_level(level);
    Ok(json!({}))
}

/// Legacy `resources/subscribe` / `resources/unsubscribe` → `{}`.
pub(crate) fn subscribe(
    server: &crate::pipeline::Engine,
    s: Option<&Arc<LegacySession>>,
    params: &Map<String, Value>,
    on: bool,
) -> Result<Value, McpError> {
    let method = if on { "resources/subscribe" } else { "resources/unsubscribe" };
    let uri = required_str(params, "uri", method)?;
    let s = session(s)?;
    if on {
        s.subscribe(uri, &server.resource_interest)
    } else {
        s.unsubscribe(uri)
    }
    Ok(json!({}))
}
