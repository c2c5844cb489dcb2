//! The Tasks alternate-result filter on `tools/call`.

use crate::escalate::escalated;
use crate::tasks::installed;
use crate::{EXTENSION, TASKS_FILTER_ORDER};
use serde_json::{Value, json};
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::registry::TaskSupport;

/// True when this request's own `_meta` client capabilities declare the Tasks extension (only a
/// 2026-07-28 request can: legacy requests carry the session's capabilities, which never count).
pub fn declares_tasks(ctx: &RequestContext) -> bool {
    ctx.era().is_modern()
        && ctx.client_capabilities().get("extensions").and_then(|e| e.get(EXTENSION)).is_some_and(Value::is_object)
}

/// The declared `task_support` of `tool` on `ctx`'s server (`Forbidden` for an unknown tool).
pub(crate) fn task_support(ctx: &RequestContext, tool: &str) -> TaskSupport {
    ctx.server().table().tool(tool).map(|t| t.task_support).unwrap_or_default()
}

/// The `-32021` for a `required` tool called without the extension.
fn needs_tasks(tool: &str) -> McpError {
    McpError::missing_capability(
        format!(
            "the tool `{tool}` runs only as a task: declare the extension {EXTENSION} in the request's capabilities"
        ),
        json!({ "extensions": { EXTENSION: {} } }),
    )
}

/// Turns a `tools/call` into a task when the tool allows it and the request opted in; passes
/// everything else on unchanged. Registered at [`TASKS_FILTER_ORDER`].
#[mcp_filter(alternate, rpc = ToolsCall, order = 1000)]
async fn tasks_filter(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    const _: () = assert!(TASKS_FILTER_ORDER == 1000, "keep the attribute's order equal to TASKS_FILTER_ORDER");
    let Some(tasks) = installed(&req.ctx) else { return next.run(req).await };
    let tool = req.ctx.matched_primitive().unwrap_or(req.params.name.as_str()).to_owned();
    let mode = task_support(&req.ctx, &tool);
    match (mode, declares_tasks(&req.ctx)) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => next.run(req).await,
        (TaskSupport::Required, false) => Err(needs_tasks(&tool)),
        (TaskSupport::Optional | TaskSupport::Required, true) => tasks.create(req, next).await.map(Alternate::Other),
        (TaskSupport::Escalate, _) => {
            // `escalate` reads the params the task will record from the request scope.
            req.ctx.extensions().insert(req.params.clone());
            match next.run(req).await {
                Err(e) => escalated(&e).map(Alternate::Other).ok_or(e),
                ordinary => ordinary,
            }
        }
    }
}
