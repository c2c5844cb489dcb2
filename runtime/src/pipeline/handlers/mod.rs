//! The handlers of the built-in MCP methods, one function per method.

mod completion;
mod page;
mod prompts;
mod resources;
mod session;
mod tools;

use super::Engine;
use super::method::Method;
use super::session::LegacySession;
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ResultObject, TakenOut};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub(crate) async fn call(
    server: &Engine,
    method: Method,
    ctx: RequestContext,
    (params, taken): (Map<String, Value>, TakenOut),
    session: Option<&Arc<LegacySession>>,
) -> Result<ResultObject, McpError> {
    let value = match method {
        Method::Discover => Ok(discover(server, ctx.notifier().can_deliver())),
        Method::ToolsList => tools::list(server, &ctx, &params),
        Method::ToolsCall => return Box::pin(tools::call(server, ctx, params, taken)).await,
        Method::PromptsList => prompts::list(server, &ctx, &params),
        Method::PromptsGet => return Box::pin(prompts::get(server, ctx, params)).await,
        Method::ResourcesList => resources::list(server, &ctx, &params),
        Method::TemplatesList => resources::templates(server, &ctx, &params),
        Method::ResourcesRead => return Box::pin(resources::read(server, ctx, params)).await,
        Method::Complete => Box::pin(completion::complete(server, ctx, params)).await,
        Method::Ping => Ok(json!({})),
        Method::SetLevel => session::set_level(session, &params),
        Method::Subscribe => session::subscribe(server, session, &params, true),
        Method::Unsubscribe => session::subscribe(server, session, &params, false),
        // Each awaiting branch is boxed: inline, the largest would size the future of every
        // request, and a listen subscription keeps that future for its whole life.
        Method::Listen => match &server.listen {
            Some(handler) => Box::pin(crate::subscriptions::replacement::listen(server, handler, ctx, params)).await,
            None => Box::pin(crate::subscriptions::listen::listen(server, ctx, params)).await,
        },
    };
    value.map(ResultObject::Value)
}

/// `server/discover`
/// ([spec](https://modelcontextprotocol.io/specification/2026-07-28/server/discover)): supported
/// versions, capabilities, instructions.
fn discover(server: &Engine, streams: bool) -> Value {
    let mut result = json!({
        "supportedVersions": crate::protocol::SUPPORTED_VERSIONS,
        "capabilities": server.capabilities_for(streams),
    });
    if !server.extensions.is_empty() {
        result["capabilities"]["extensions"] = Value::Object(server.extensions.clone());
    }
    if let Some(i) = &server.instructions {
        result["instructions"] = json!(i);
    }
    result
}

/// Reads a required string field of params.
fn required_str<'a>(params: &'a Map<String, Value>, field: &str, method: &str) -> Result<&'a str, McpError> {
    params
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params(format!("{method}: params.{field} (a string) is required")))
}
