use super::page::page;
use crate::auth::Primitive;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::CallToolResult;
use crate::pipeline::{CallToolParams, ErasedValue, decode_erased, encode_erased, rpc_shim};
use crate::registry::BoxFuture;
use crate::server::Server;
use serde_json::{Map, Value};

/// `tools/list`: the enabled tools the caller may use, in name order, paginated.
pub(crate) fn list(server: &Server, ctx: &RequestContext, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    let visible = table.tools().filter(|t| server.allows(ctx, Primitive::Tool(&t.name), t.roles));
    page("tools", visible.map(|t| t.definition.clone()), params, server.inner.page_size)
}

/// `tools/call`: decodes the params, matches the tool, then runs the method's alternate and
/// typed filters around the tool. A missing `arguments` is `{}`.
///
/// Errors: `-32602` for malformed params, an unknown or disabled tool (before any filter runs),
/// or arguments the tool's params type rejects; whatever protocol error a filter or the tool
/// returns.
pub(crate) async fn call(
    server: &Server,
    ctx: RequestContext,
    mut params: Map<String, Value>,
) -> Result<Value, McpError> {
    params.remove("_meta");
    let decoded = decode_erased::<CallToolParams>(Value::Object(params))
        .map_err(|e| McpError::invalid_params(format!("tools/call: {}", e.message)))?;
    let name = decoded.downcast_ref::<CallToolParams>().map(|p| p.name.clone()).unwrap_or_default();
    let roles = server.table().tool(&name).map(|t| t.roles);
    let Some(roles) = roles else {
        return Err(McpError::invalid_params(format!("unknown tool: {name}")));
    };
    // The outermost alternate step: a denied call reaches no filter, task or tool.
    server.authorize(&ctx, Primitive::Tool(&name), roles)?;
    ctx.set_matched(name);
    if let Some(replacement) = &server.inner.tools_call {
        let params =
            decoded.downcast::<CallToolParams>().map_err(|_| McpError::internal("tools/call params type mismatch"))?;
        let result = replacement(ctx, *params).await?;
        return serde_json::to_value(result)
            .map_err(|e| McpError::internal(format!("tool result could not be encoded: {e}")));
    }
    crate::pipeline::run_method(server, "tools/call", ctx, decoded, run_tool, encode_erased::<CallToolResult>).await
}

/// The innermost step: resolves `params.name` again and, when a filter swapped the tool,
/// authorizes the new one, then runs the tool body.
fn run_tool(ctx: RequestContext, params: ErasedValue) -> BoxFuture<Result<ErasedValue, McpError>> {
    rpc_shim::<CallToolParams, CallToolResult, _, _>(ctx, params, |ctx, p| async move {
        let (call, roles) = ctx
            .server()
            .table()
            .tool(&p.name)
            .map(|t| (t.call.clone(), t.roles))
            .ok_or_else(|| McpError::invalid_params(format!("unknown tool: {}", p.name)))?;
        if ctx.matched_primitive() != Some(p.name.as_str()) {
            ctx.server().authorize(&ctx, Primitive::Tool(&p.name), roles)?;
        }
        call(ctx, Value::Object(p.arguments)).await
    })
}
