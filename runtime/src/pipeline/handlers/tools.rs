use super::page::{listed, page};
use crate::auth::Primitive;
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ResultObject, TakenOut, ToolArguments};
use crate::model::{CallToolResult, ToolResultParts, ToolResultText};
use crate::pipeline::Engine;
use crate::pipeline::encode;
use crate::pipeline::method::Method;
use crate::pipeline::{CallToolParams, ErasedValue};
use crate::registry::BoxFuture;
use crate::registry::ListedKind;
use futures::future::{Either, ready};
use serde_json::{Map, Value};
use std::future::Future;

/// `tools/list`: the enabled tools the caller may use, in name order, paginated.
pub(crate) fn list(server: &Engine, ctx: &RequestContext, params: &Map<String, Value>) -> Result<Value, McpError> {
    let table = server.table();
    let visible = table.tools().filter(|t| server.allows(ctx, Primitive::Tool(&t.name), t.roles, t.scopes));
    let modern = ctx.era().is_modern();
    let listed = visible.filter_map(|t| listed(server, ctx, ListedKind::Tool, t.definition_for(modern)));
    page("tools", listed, params, server.page_size)
}

/// `tools/call`: decodes the params, matches the tool, then runs the method's alternate and
/// typed filters around the tool. A missing `arguments` is `{}`.
///
/// Errors: `-32602` for malformed params, an unknown or disabled tool (before any filter runs),
/// or arguments the tool's params type rejects; whatever protocol error a filter or the tool
/// returns.
///
/// Not an `async fn`: the checks run here, and the returned future is the filters' and the
/// tool's alone (an `async fn` would also keep room for the params and every step's locals,
/// which put the boxed future of every call over a kilobyte).
pub(crate) fn call(
    server: &Engine,
    ctx: RequestContext,
    params: Map<String, Value>,
    taken: TakenOut,
) -> impl Future<Output = Result<ResultObject, McpError>> + Send + '_ {
    let decoded = match admit(server, &ctx, params, taken) {
        Ok(decoded) => decoded,
        Err(e) => return Either::Left(ready(Err(e))),
    };
    if let Some(replacement) = &server.tools_call {
        // A replacement (a proxy, say) may answer with an alternate result it signals.
        let answer = replacement(ctx, decoded);
        return Either::Right(Either::Left(async move {
            let result = match answer.await {
                Ok(result) => result,
                Err(e) => return e.into_alternate_result().map(ResultObject::Value),
            };
            serde_json::to_value(result)
                .map(ResultObject::Value)
                .map_err(|e| McpError::internal(format!("tool result could not be encoded: {e}")))
        }));
    }
    let direct = encode::encodes_directly(server, *ctx.era());
    let method = Method::ToolsCall.descriptor();
    if !server.pipelines.chains.contains_key(method.name) {
        // No filter between the call and the tool: what `run_method` does without a chain
        // (the tool's answer encoded, an error's alternate result answered), without erasing
        // the params, the body's future or its answer into boxes. Text needs a wire that
        // takes it.
        return Either::Right(Either::Right(Either::Left(async move {
            match execute(ctx, decoded, direct.is_some()).await {
                Ok(Answer::Typed(result)) => encode::typed_tool_result(server, direct, &result),
                Ok(Answer::Text(text)) => encode::tool_result_text(server, direct, text),
                Err(e) => e.into_alternate_result().map(ResultObject::Value),
            }
        })));
    }
    // A typed filter reads the result as a `CallToolResult`, so no text.
    let decoded: ErasedValue = Box::new(decoded);
    Either::Right(Either::Right(Either::Right(crate::pipeline::run_method(
        server,
        method.name,
        ctx,
        decoded,
        run_tool,
        move |r| encode::call_tool_result(server, direct, r),
    ))))
}

/// What `tools/call` checks before any filter runs: the params decode, the tool exists, the
/// caller may use it and its declared limits admit the call; records the tool on the span.
fn admit(
    server: &Engine,
    ctx: &RequestContext,
    params: Map<String, Value>,
    taken: TakenOut,
) -> Result<CallToolParams, McpError> {
    let mut decoded = call_params(params, taken.name)?;
    if let Some(text) = taken.arguments {
        decoded.arguments = ToolArguments::from_checked_text(text);
    }
    let access =
        server.table().tool_and_name(&decoded.name).map(|(t, name)| (t.roles, t.scopes, t.limits, name.clone()));
    let Some((roles, scopes, limits, name)) = access else {
        return Err(McpError::invalid_params(format!("unknown tool: {}", decoded.name)));
    };
    // The outermost alternate step: a denied call reaches no filter, task or tool.
    server.authorize(ctx, Primitive::Tool(&decoded.name), roles, scopes)?;
    // An over-the-limit call starts no filter, task or body either.
    if !limits.is_none()
        && let Some(limiter) = server.tool_limiter.get()
    {
        limiter.admit(ctx, &decoded.name, limits)?;
    }
    ctx.set_matched(Method::ToolsCall.descriptor().span_field, name);
    Ok(decoded)
}

/// Decodes the params of `tools/call` into [`CallToolParams`]; other keys (`_meta` included)
/// are ignored, as serde ignores them. An object `arguments` was taken out of `params` by the
/// parser ([`Request::arguments`](crate::jsonrpc::Request::arguments)); one left here is `null`
/// or of a wrong type. So may a string `name` have been (`name`,
/// [`Request::tool_name`](crate::jsonrpc::Request::tool_name)): `params` then holds none.
///
/// The usual shape (`name` a string; `arguments` an object, `null` or absent) is taken apart in
/// one pass over the entries: serde would rebuild the `arguments` map entry by entry (an
/// allocation and a SipHash per key) only to hand over the same entries, and removing the two
/// keys by name would hash each. Any other shape goes through serde, which alone words the
/// errors.
///
/// Errors: `-32602` naming the serde error when the params do not decode.
fn call_params(mut params: Map<String, Value>, name: Option<Box<str>>) -> Result<CallToolParams, McpError> {
    if let Some(name) = name {
        // Nothing left beside it (the usual call): no map to read. Otherwise the name goes back
        // and the params are read as sent, for the same answer and wording.
        if params.is_empty() {
            return Ok(CallToolParams { name: name.into_string(), arguments: ToolArguments::default() });
        }
        params.insert("name".into(), Value::String(name.into_string()));
    }
    let plain = params.iter().fold(0u8, |found, (k, v)| match (k.as_str(), v) {
        ("name", Value::String(_)) => found | 1,
        ("arguments", Value::Null | Value::Object(_)) => found,
        ("name" | "arguments", _) => found | 2,
        _ => found,
    }) == 1;
    if !plain {
        return serde_json::from_value::<CallToolParams>(Value::Object(params))
            .map_err(|e| McpError::invalid_params(format!("tools/call: invalid params: {e}")));
    }
    let mut decoded = CallToolParams { name: String::new(), arguments: ToolArguments::default() };
    for (k, v) in params {
        match (k.as_str(), v) {
            ("name", Value::String(name)) => decoded.name = name,
            ("arguments", Value::Object(arguments)) => decoded.arguments = arguments.into(),
            _ => {}
        }
    }
    Ok(decoded)
}

/// The innermost step of a filtered call: [`execute`] with the params and the answer erased,
/// answering a [`CallToolResult`](crate::model::CallToolResult).
fn run_tool(ctx: RequestContext, params: ErasedValue) -> BoxFuture<Result<ErasedValue, McpError>> {
    let p = match params.downcast::<CallToolParams>() {
        Ok(p) => *p,
        Err(_) => return Box::pin(ready(Err(McpError::internal("RPC params type mismatch")))),
    };
    Box::pin(async move {
        Ok(match execute(ctx, p, false).await? {
            Answer::Typed(result) => Box::new(result) as ErasedValue,
            Answer::Text(text) => Box::new(text),
        })
    })
}

/// What a tool answered: its result, or (from its text entry point) the text it is written as.
enum Answer {
    Typed(CallToolResult),
    Text(ToolResultText),
}

/// Runs the call `p`: resolves `params.name` again and, when a filter swapped the tool,
/// authorizes the new one; validates the arguments against the tool's input schema (a failure
/// is an `isError: true` result, see [`ToolSchemas`](crate::registry)), runs the tool body, and
/// shapes its `structuredContent` for the client's era. With `text`, through the tool's text
/// entry point when it has one and declares no limits: for a call nothing needs typed (no
/// typed filter, a result written as text), see [`call`].
///
/// Errors: `-32602` for an unknown tool, the authorization's and the limits' refusals, and
/// what the tool body returns.
async fn execute(ctx: RequestContext, p: CallToolParams, text: bool) -> Result<Answer, McpError> {
    let mut arguments = p.arguments;
    let (call, text_call, schemas, limits, limiter) = {
        let engine = Engine::of(&ctx)?;
        let table = engine.table();
        let tool = table.tool(&p.name).ok_or_else(|| McpError::invalid_params(format!("unknown tool: {}", p.name)))?;
        if ctx.matched_primitive() != Some(p.name.as_str()) {
            engine.authorize(&ctx, Primitive::Tool(&p.name), tool.roles, tool.scopes)?;
        }
        if let Err(rejected) = tool.schemas.check_arguments(&p.name, &mut arguments) {
            return Ok(Answer::Typed(*rejected));
        }
        let limiter = if tool.limits.is_none() { None } else { engine.tool_limiter.get().cloned() };
        let text_call = if text && limiter.is_none() { tool.text_call.clone() } else { None };
        (tool.call.clone(), text_call, tool.schemas.clone(), tool.limits, limiter)
    };
    let modern = ctx.era().is_modern();
    let mut result = match (text_call, limiter) {
        (Some(text_call), _) => match text_call(ctx, arguments).await?.into_parts() {
            ToolResultParts::Text(text) => return Ok(Answer::Text(ToolResultText::kept(text))),
            ToolResultParts::Typed(result) => result,
        },
        (None, None) => call(ctx, arguments).await?,
        (None, Some(limiter)) => {
            let deadline = ctx.clone();
            if limits.timeout_value().is_some() {
                // Installed before the body is made: a handler may take its token when
                // called, before its future first runs.
                deadline.deadline_token();
            }
            limiter.run(&deadline, &p.name, limits, call(ctx, arguments)).await?
        }
    };
    schemas.finish_output(&p.name, modern, &mut result)?;
    Ok(Answer::Typed(result))
}

#[cfg(test)]
mod tests {
    use super::call_params;
    use crate::pipeline::CallToolParams;
    use serde_json::{Value, json};

    fn params(v: Value) -> Params {
        v.as_object().cloned().unwrap_or_default()
    }

    type Params = serde_json::Map<String, Value>;

    /// `v` as the parser leaves a `tools/call`'s params when it takes a string `name` out.
    fn taken_out(v: &Value) -> Option<(Params, Option<Box<str>>)> {
        let mut p = params(v.clone());
        match p.shift_remove("name") {
            Some(Value::String(name)) => Some((p, Some(name.into_boxed_str()))),
            _ => None,
        }
    }

    #[test]
    fn the_fast_path_decodes_what_serde_decodes() {
        for v in [
            json!({"name": "echo", "arguments": {"text": "hi", "n": [1, 2]}}),
            json!({"name": "echo", "arguments": null}),
            json!({"name": "echo"}),
            json!({"name": "echo", "arguments": {}, "extra": true}),
            json!({"_meta": {"progressToken": 1}, "arguments": {"a": 1}, "name": "echo"}),
        ] {
            let fast = call_params(params(v.clone()), None).expect("decodes");
            let (p, name) = taken_out(&v).expect("a string name");
            let taken = call_params(p, name).expect("decodes");
            let serde: CallToolParams = serde_json::from_value(v).expect("decodes");
            assert_eq!(fast, serde);
            assert_eq!(taken, serde);
        }
    }

    #[test]
    fn other_shapes_get_the_serde_error() {
        for (v, needle) in [
            (json!({"arguments": {}}), "missing field `name`"),
            (json!({"_meta": {}}), "missing field `name`"),
            (json!({"name": 3}), "invalid type"),
            (json!({"name": "echo", "arguments": [1]}), "invalid type"),
            (json!({"name": "echo", "arguments": "x"}), "invalid type"),
        ] {
            let err = call_params(params(v.clone()), None).expect_err("rejected");
            assert_eq!(err.code(), crate::ErrorCode::INVALID_PARAMS, "{v}");
            assert!(err.message().starts_with("tools/call: invalid params: "), "{}", err.message());
            assert!(err.message().contains(needle), "{v}: {}", err.message());
            // The same answer when the parser took the name out.
            if let Some((p, name)) = taken_out(&v) {
                assert_eq!(call_params(p, name).expect_err("rejected").message(), err.message(), "{v}");
            }
        }
    }
}
