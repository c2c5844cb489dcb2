//! The Tasks alternate-result filter on `tools/call`.

use crate::launch;
use crate::support::{declares_tasks, task_support};
use crate::tasks::installed;
use crate::{EXTENSION, TASKS_FILTER_ORDER};
use serde_json::json;
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::registry::TaskSupport;

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
#[mcp_filter(alternate, rpc = ToolsCall, order = 1000, group = "io.modelcontextprotocol/tasks")]
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
        (TaskSupport::Optional | TaskSupport::Required, true) => {
            launch::create(&tasks, req, next).await.map(Alternate::Other)
        }
        (TaskSupport::Escalate, _) => {
            // `escalate` reads the params the task will record from the request scope.
            req.ctx.extensions().insert(req.params.clone());
            next.run(req).await
        }
        // A mode this version does not know runs the tool as it is, never as a task.
        _ => next.run(req).await,
    }
}
