use super::page::{listed, page};
use crate::auth::Primitive;
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ResultObject};
use crate::model::ReadResourceResult;
use crate::pipeline::Engine;
use crate::pipeline::method::Method;
use crate::pipeline::{ErasedValue, ReadResourceParams, decode_erased, encode_erased, rpc_shim};
use crate::registry::ListedKind;
use crate::registry::{BoxFuture, ResourceEntry, ResourceRequest};
use serde_json::{Map, Value};

/// `resources/list`: the static resources the caller may use, in URI order, paginated.
pub(crate) fn list(server: &Engine, ctx: &RequestContext, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    let visible = table.resources().filter(|r| allowed(server, ctx, r));
    let listed = visible.filter_map(|r| listed(server, ctx, ListedKind::Resource, &r.definition));
    page("resources", listed, params, server.page_size)
}

/// `resources/templates/list`: the URI templates the caller may use, in order, paginated.
pub(crate) fn templates(server: &Engine, ctx: &RequestContext, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    let visible = table.templates().filter(|r| allowed(server, ctx, r));
    let listed = visible.filter_map(|r| listed(server, ctx, ListedKind::ResourceTemplate, &r.definition));
    page("resourceTemplates", listed, params, server.page_size)
}

fn allowed(server: &Engine, ctx: &RequestContext, r: &ResourceEntry) -> bool {
    server.allows(ctx, Primitive::Resource(key(r)), r.roles, r.scopes)
}

/// The URI or URI template a resource entry is listed under: what the policy sees.
fn key(r: &ResourceEntry) -> &str {
    r.definition.get("uri").or_else(|| r.definition.get("uriTemplate")).and_then(Value::as_str).unwrap_or_default()
}

/// [`Engine::authorize`] for reading `uri` through `r`: the policy sees the entry's URI or
/// template, the denial names the URI read.
fn authorize(server: &Engine, ctx: &RequestContext, r: &ResourceEntry, uri: &str) -> Result<(), McpError> {
    server.authorize(ctx, Primitive::Resource(key(r)), r.roles, r.scopes).map_err(|e| {
        let message = e.message().replace(&format!("the resource `{}`", key(r)), &format!("the resource `{uri}`"));
        e.with_message(message)
    })
}

/// `resources/read`: decodes the params, matches the resource, then runs the method's
/// alternate and typed filters around the handler.
///
/// Errors: `-32602` with `data.uri` when no resource or template serves the URI (SEP-2164;
/// before any filter runs), and whatever the handler returns. A handler returning no contents
/// is answered as not found: an empty `contents` array is never sent.
pub(crate) async fn read(
    server: &Engine,
    ctx: RequestContext,
    mut params: Map<String, Value>,
) -> Result<ResultObject, McpError> {
    params.remove("_meta");
    let decoded = decode_erased::<ReadResourceParams>(Value::Object(params))
        .map_err(|e| McpError::invalid_params(format!("resources/read: {}", e.message())))?;
    let uri = decoded.downcast_ref::<ReadResourceParams>().map(|p| p.uri.clone()).unwrap_or_default();
    let table = server.table();
    let Some((entry, _)) = table.resolve_resource(&uri) else {
        return Err(McpError::resource_not_found(&uri));
    };
    authorize(server, &ctx, entry, &uri)?;
    drop(table);
    let method = Method::ResourcesRead.descriptor();
    ctx.set_matched(method.span_field, uri);
    crate::pipeline::run_method(server, method.name, ctx, decoded, read_resource, |r| {
        encode_erased::<ReadResourceResult>(r).map(ResultObject::Value)
    })
    .await
}

/// The innermost step: resolves the (possibly filtered) URI and reads it.
fn read_resource(ctx: RequestContext, params: ErasedValue) -> BoxFuture<Result<ErasedValue, McpError>> {
    rpc_shim::<ReadResourceParams, ReadResourceResult, _, _>(ctx, params, |ctx, p| async move {
        let engine = Engine::of(&ctx)?;
        let table = engine.table();
        let (entry, variables) = table.resolve_resource(&p.uri).ok_or_else(|| McpError::resource_not_found(&p.uri))?;
        if ctx.matched_primitive() != Some(p.uri.as_str()) {
            authorize(engine, &ctx, entry, &p.uri)?;
        }
        let handler = entry.handler.clone();
        drop(table);
        let result = handler(ctx, ResourceRequest { uri: p.uri.clone(), variables }).await?;
        if result.contents.is_empty() {
            return Err(McpError::resource_not_found(&p.uri));
        }
        Ok(result)
    })
}
