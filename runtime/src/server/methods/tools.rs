use super::page::page;
use super::required_str;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::server::Server;
use serde_json::{Map, Value};

/// `tools/list`: enabled tools in name order, paginated.
pub(crate) fn list(server: &Server, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    page("tools", table.tools().map(|t| t.definition.clone()), params, server.inner.page_size)
}

/// `tools/call`: finds the tool and runs it. A missing `arguments` is `{}`.
///
/// Errors: `-32602` for a missing name, an unknown or disabled tool, non-object arguments, or
/// arguments the tool's params type rejects; whatever protocol error the tool returns.
pub(crate) async fn call(server: &Server, ctx: RequestContext, params: Map<String, Value>) -> Result<Value, McpError> {
    let name = required_str(&params, "name", "tools/call")?;
    let table = server.table();
    let tool = table.tool(name).ok_or_else(|| McpError::invalid_params(format!("unknown tool: {name}")))?;
    let args = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(McpError::invalid_params("tools/call: params.arguments must be an object")),
    };
    let result = (tool.call)(ctx, args).await?;
    serde_json::to_value(result).map_err(|e| McpError::internal(format!("tool result could not be encoded: {e}")))
}
