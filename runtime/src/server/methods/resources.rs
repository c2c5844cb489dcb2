use super::page::page;
use super::required_str;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::registry::ResourceRequest;
use crate::server::Server;
use serde_json::{Map, Value};

/// `resources/list`: static resources in URI order, paginated.
pub(crate) fn list(server: &Server, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    page("resources", table.resources().map(|r| r.definition.clone()), params, server.inner.page_size)
}

/// `resources/templates/list`: URI templates in order, paginated.
pub(crate) fn templates(server: &Server, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    page("resourceTemplates", table.templates().map(|r| r.definition.clone()), params, server.inner.page_size)
}

/// `resources/read`.
///
/// Errors: `-32602` with `data.uri` when no resource or template serves the URI (SEP-2164),
/// and whatever the handler returns. A handler returning no contents is answered as not found:
/// an empty `contents` array is never sent.
pub(crate) async fn read(server: &Server, ctx: RequestContext, params: Map<String, Value>) -> Result<Value, McpError> {
    let uri = required_str(&params, "uri", "resources/read")?.to_owned();
    let table = server.table();
    let (entry, variables) = table.resolve_resource(&uri).ok_or_else(|| McpError::resource_not_found(&uri))?;
    let result = (entry.handler)(ctx, ResourceRequest { uri: uri.clone(), variables }).await?;
    if result.contents.is_empty() {
        return Err(McpError::resource_not_found(&uri));
    }
    serde_json::to_value(result).map_err(|e| McpError::internal(format!("resource could not be encoded: {e}")))
}
