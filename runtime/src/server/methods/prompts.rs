use super::page::page;
use super::required_str;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::server::Server;
use serde_json::{Map, Value};

/// `prompts/list`: prompts in name order, paginated.
pub(crate) fn list(server: &Server, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    page("prompts", table.prompts().map(|p| p.definition.clone()), params, server.inner.page_size)
}

/// `prompts/get`.
///
/// Errors: `-32602` for an unknown prompt, non-string argument values, a missing required
/// argument (named in the message), or arguments the params type rejects.
pub(crate) async fn get(server: &Server, ctx: RequestContext, params: Map<String, Value>) -> Result<Value, McpError> {
    let name = required_str(&params, "name", "prompts/get")?;
    let table = server.table();
    let prompt = table.prompt(name).ok_or_else(|| McpError::invalid_params(format!("unknown prompt: {name}")))?;
    let args = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(McpError::invalid_params("prompts/get: params.arguments must be an object")),
    };
    if let Some((k, _)) = args.iter().find(|(_, v)| !v.is_string()) {
        return Err(McpError::invalid_params(format!("prompts/get: argument `{k}` must be a string")));
    }
    if let Some(missing) = prompt.arguments.iter().find(|a| a.required && !args.contains_key(&a.name)) {
        return Err(McpError::invalid_params(format!(
            "prompts/get: prompt `{name}` needs the argument `{}`",
            missing.name
        )));
    }
    let result = (prompt.handler)(ctx, args).await?;
    serde_json::to_value(result).map_err(|e| McpError::internal(format!("prompt result could not be encoded: {e}")))
}
