use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::{Completion, CompletionRef, CompletionRequest};
use crate::pipeline::Engine;
use crate::registry::{CompletionKey, CompletionTarget};
use serde_json::{Map, Value, json};

/// `completion/complete`: runs the completion handler of a run-time prompt or resource template
/// when it has one, else the `#[mcp_completion]` registered for it and the argument; with
/// neither the answer is an empty list.
///
/// Errors: `-32602` for malformed params or a reference to a prompt or template that does not
/// exist.
pub(crate) async fn complete(
    server: &Engine,
    ctx: RequestContext,
    mut params: Map<String, Value>,
) -> Result<Value, McpError> {
    params.remove("_meta");
    let mut req: CompletionRequest = serde_json::from_value(Value::Object(params))
        .map_err(|e| McpError::invalid_params(format!("completion/complete: {e}")))?;
    let table = server.table();
    let (key, dynamic) = match &req.reference {
        CompletionRef::Prompt { name } => {
            let Some(prompt) = table.prompt(name) else {
                return Err(McpError::invalid_params(format!("completion/complete: unknown prompt: {name}")));
            };
            server.authorize(&ctx, crate::auth::Primitive::Prompt(name), prompt.roles, prompt.scopes)?;
            (CompletionKey::Prompt(name.clone()), prompt.completion.clone())
        }
        CompletionRef::Resource { uri } => {
            let Some(template) =
                table.templates().find(|t| t.definition.get("uriTemplate").and_then(Value::as_str) == Some(uri))
            else {
                return Err(McpError::invalid_params(format!("completion/complete: unknown resource template: {uri}")));
            };
            server.authorize(&ctx, crate::auth::Primitive::Resource(uri), template.roles, template.scopes)?;
            (CompletionKey::Resource(uri.clone()), template.completion.clone())
        }
    };
    let mut completion = if let Some(handler) = dynamic {
        // A run-time item is never mounted: its handler sees the reference as sent, which is
        // also the name or template it was added under.
        drop(table);
        handler(ctx, req).await?
    } else {
        // A mounted group's handler is shown the prompt name or URI template it declared.
        if let Some(target) = table.declared_completion_target(&key) {
            req.reference = match target {
                CompletionTarget::Prompt(name) => CompletionRef::Prompt { name: name.to_owned() },
                CompletionTarget::ResourceTemplate(uri) => CompletionRef::Resource { uri: uri.to_owned() },
            };
        }
        match table.completion(key, &req.argument.name) {
            Some(handler) => handler(ctx, req).await?,
            None => Completion { values: Vec::new(), total: Some(0), has_more: Some(false) },
        }
    };
    // The schema allows at most 100 values, whatever the handler returned.
    if completion.values.len() > 100 {
        completion.total = Some(completion.total.unwrap_or(0).max(completion.values.len() as u64));
        completion.values.truncate(100);
        completion.has_more = Some(true);
    }
    Ok(json!({ "completion": completion }))
}
