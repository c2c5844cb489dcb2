use super::page::{listed, page};
use crate::auth::Primitive;
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ResultObject};
use crate::model::GetPromptResult;
use crate::pipeline::Engine;
use crate::pipeline::method::Method;
use crate::pipeline::{ErasedValue, GetPromptParams, decode_erased, encode_erased, rpc_shim};
use crate::registry::BoxFuture;
use crate::registry::ListedKind;
use serde_json::{Map, Value};

/// `prompts/list`: the prompts the caller may use, in name order, paginated.
pub(crate) fn list(server: &Engine, ctx: &RequestContext, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    let visible = table.prompts().filter(|p| {
        let name = p.definition.get("name").and_then(Value::as_str).unwrap_or_default();
        server.allows(ctx, Primitive::Prompt(name), p.roles, p.scopes)
    });
    let listed = visible.filter_map(|p| listed(server, ctx, ListedKind::Prompt, &p.definition));
    page("prompts", listed, params, server.page_size)
}

/// `prompts/get`: decodes the params, matches the prompt, then runs the method's alternate and
/// typed filters around the prompt.
///
/// Errors: `-32602` for an unknown prompt (before any filter runs), non-string argument values,
/// a missing required argument (named in the message), or arguments the params type rejects.
pub(crate) async fn get(
    server: &Engine,
    ctx: RequestContext,
    mut params: Map<String, Value>,
) -> Result<ResultObject, McpError> {
    params.remove("_meta");
    let decoded = decode_erased::<GetPromptParams>(Value::Object(params))
        .map_err(|e| McpError::invalid_params(format!("prompts/get: {}", e.message())))?;
    let name = decoded.downcast_ref::<GetPromptParams>().map(|p| p.name.clone()).unwrap_or_default();
    let Some((roles, scopes)) = server.table().prompt(&name).map(|p| (p.roles, p.scopes)) else {
        return Err(McpError::invalid_params(format!("unknown prompt: {name}")));
    };
    server.authorize(&ctx, Primitive::Prompt(&name), roles, scopes)?;
    let method = Method::PromptsGet.descriptor();
    ctx.set_matched(method.span_field, name);
    crate::pipeline::run_method(server, method.name, ctx, decoded, render, |r| {
        encode_erased::<GetPromptResult>(r).map(ResultObject::Value)
    })
    .await
}

/// The innermost step: resolves the prompt named by the (possibly filtered) params, checks its
/// arguments and renders it.
fn render(ctx: RequestContext, params: ErasedValue) -> BoxFuture<Result<ErasedValue, McpError>> {
    rpc_shim::<GetPromptParams, GetPromptResult, _, _>(ctx, params, |ctx, p| async move {
        let engine = Engine::of(&ctx)?;
        let table = engine.table();
        let prompt =
            table.prompt(&p.name).ok_or_else(|| McpError::invalid_params(format!("unknown prompt: {}", p.name)))?;
        if ctx.matched_primitive() != Some(p.name.as_str()) {
            engine.authorize(&ctx, Primitive::Prompt(&p.name), prompt.roles, prompt.scopes)?;
        }
        if let Some((k, _)) = p.arguments.iter().find(|(_, v)| !v.is_string()) {
            return Err(McpError::invalid_params(format!("prompts/get: argument `{k}` must be a string")));
        }
        if let Some(missing) = prompt.arguments.iter().find(|a| a.required && !p.arguments.contains_key(&a.name)) {
            return Err(McpError::invalid_params(format!(
                "prompts/get: prompt `{}` needs the argument `{}`",
                p.name, missing.name
            )));
        }
        let handler = prompt.handler.clone();
        drop(table);
        handler(ctx, p.arguments).await
    })
}
