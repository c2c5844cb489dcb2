use super::page::page;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::ReadResourceResult;
use crate::pipeline::{ErasedValue, ReadResourceParams, decode_erased, encode_erased, rpc_shim};
use crate::registry::{BoxFuture, ResourceRequest};
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

/// `resources/read`: decodes the params, matches the resource, then runs the method's
/// alternate and typed filters around the handler.
///
/// Errors: `-32602` with `data.uri` when no resource or template serves the URI (SEP-2164;
/// before any filter runs), and whatever the handler returns. A handler returning no contents
/// is answered as not found: an empty `contents` array is never sent.
pub(crate) async fn read(
    server: &Server,
    ctx: RequestContext,
    mut params: Map<String, Value>,
) -> Result<Value, McpError> {
    params.remove("_meta");
    let decoded = decode_erased::<ReadResourceParams>(Value::Object(params))
        .map_err(|e| McpError::invalid_params(format!("resources/read: {}", e.message)))?;
    let uri = decoded.downcast_ref::<ReadResourceParams>().map(|p| p.uri.clone()).unwrap_or_default();
    if server.table().resolve_resource(&uri).is_none() {
        return Err(McpError::resource_not_found(&uri));
    }
    ctx.set_matched(uri);
    crate::pipeline::run_method(
        server,
        "resources/read",
        ctx,
        decoded,
        read_resource,
        encode_erased::<ReadResourceResult>,
    )
    .await
}

/// The innermost step: resolves the (possibly filtered) URI and reads it.
fn read_resource(ctx: RequestContext, params: ErasedValue) -> BoxFuture<Result<ErasedValue, McpError>> {
    rpc_shim::<ReadResourceParams, ReadResourceResult, _, _>(ctx, params, |ctx, p| async move {
        let table = ctx.server().table();
        let (handler, variables) = table
            .resolve_resource(&p.uri)
            .map(|(e, vars)| (e.handler, vars))
            .ok_or_else(|| McpError::resource_not_found(&p.uri))?;
        drop(table);
        let result = handler(ctx, ResourceRequest { uri: p.uri.clone(), variables }).await?;
        if result.contents.is_empty() {
            return Err(McpError::resource_not_found(&p.uri));
        }
        Ok(result)
    })
}
