//! Escalation: a tool that starts on the request path (gathering input through 2026-07-28
//! input-required rounds, say) and hands the rest of its work to a task on the final round
//! ([task creation](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-creation):
//! finish multi round-trip exchanges before the task exists; conformance fixture
//! `test_tool_with_task`).

use crate::CurrentTask;
use crate::executor::{Body, Continuation};
use crate::launch;
use crate::support::{declares_tasks, task_support};
use crate::tasks::installed;
use std::future::Future;
use switchyard::registry::TaskSupport;
use switchyard::{CallToolParams, CallToolResult, McpError, RequestContext};

/// Hands the rest of a tool's work to a task and ends the `tools/call` with the
/// `CreateTaskResult` (`{"resultType":"task","taskId":..,"status":"working",..}`).
///
/// For a tool declared `#[mcp_tool(task_support = "escalate")]`, whose body runs on the request
/// path: everything before `escalate` (typically `ctx.input(..)` rounds, answered by the
/// client's retries) happens synchronously; `rest` then runs once in the background with the
/// task's request context (its own cancellation, wired to `tasks/cancel`; `ctx.input` there
/// asks through `tasks/update`), and its outcome becomes the task's: a `CallToolResult` makes
/// it `completed`, an error `failed`. The task is stored before the `CreateTaskResult` is sent.
///
/// `rest` runs inline instead, and its result is returned as it is, when no task can be made:
/// the request does not declare `io.modelcontextprotocol/tasks` in its own capabilities (a
/// legacy session never does), the extension is not installed, the tool's `task_support` is
/// not `"escalate"`, or the call already runs as a task.
///
/// Errors: the error of `rest` when it runs inline; `-32603` when the store cannot create the
/// task. When a task is made, the `Err` this returns is the control signal
/// [`McpError::alternate_result`] carrying the `CreateTaskResult`: return it from the tool with
/// `?`, and typed filters pass it on unchanged; the alternate chain of `tools/call` receives it
/// as `Ok(Alternate::Other(..))` and the client the `CreateTaskResult`.
pub async fn escalate<F, Fut>(ctx: &RequestContext, rest: F) -> Result<CallToolResult, McpError>
where
    F: FnOnce(RequestContext) -> Fut + Send + 'static,
    Fut: Future<Output = Result<CallToolResult, McpError>> + Send + 'static,
{
    let in_task = ctx.extensions().get::<CurrentTask>().is_some();
    let tool = ctx.matched_primitive().map(str::to_owned).unwrap_or_default();
    let mode = task_support(ctx, &tool);
    let tasks = installed(ctx).filter(|_| !in_task && mode == TaskSupport::Escalate && declares_tasks(ctx));
    let Some(tasks) = tasks else { return rest(ctx.clone()).await };
    let params = ctx
        .extensions()
        .get::<CallToolParams>()
        .cloned()
        .unwrap_or(CallToolParams { name: tool, arguments: Default::default() });
    let body: Continuation = Box::new(move |ctx| Box::pin(rest(ctx)));
    let created = launch::start(&tasks, ctx, params, Body::Continuation(body)).await?;
    Err(McpError::alternate_result(created))
}
