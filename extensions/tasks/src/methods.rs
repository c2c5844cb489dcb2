//! `tasks/get`, `tasks/update`, `tasks/cancel`
//! ([polling](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-polling),
//! [update](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-update-requests),
//! [cancellation](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-cancellation)).
//! `tasks/result` and `tasks/list` are not declared, so they get `-32601` like any unknown method
//! (both were removed,
//! [SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension#backward-compatibility)).
//!
//! All three are 2026-07-28 only (legacy sessions get `-32601`), need the extension in the
//! request's capabilities (`-32021`), carry `taskId` as the routing name (HTTP `Mcp-Name`), and
//! exist only while the extension is installed (`-32601` otherwise).

use crate::executor::ChosenExecutor;
use crate::tasks::{Tasks, installed};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use switchyard::prelude::*;

/// Params of `tasks/get` and `tasks/cancel`: `{"taskId": string}`.
#[derive(Debug, Deserialize)]
pub struct TaskRef {
    /// The task id.
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// Params of `tasks/update`: `{"taskId": string, "inputResponses": {key: response}}`.
#[derive(Debug, Deserialize)]
pub struct TaskUpdate {
    /// The task id.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Answers to the task's outstanding `inputRequests`, by key.
    #[serde(rename = "inputResponses")]
    pub input_responses: Map<String, Value>,
}

fn tasks_of(ctx: &RequestContext, method: &str) -> Result<Arc<Tasks>, McpError> {
    let tasks = installed(ctx).ok_or_else(|| McpError::method_not_found(method))?;
    tasks.ensure_maintenance(&ctx.server(), ctx.state::<ChosenExecutor>().map(|c| c.0.clone()));
    Ok(tasks)
}

/// `tasks/get` → the `DetailedTask` with `resultType: "complete"`.
///
/// Errors: `-32602` for an unknown, expired or foreign task; `-32603` when the store fails.
#[mcp_rpc(
    "tasks/get",
    extension = "io.modelcontextprotocol/tasks",
    routing_name = "taskId",
    group = "io.modelcontextprotocol/tasks"
)]
async fn tasks_get(params: TaskRef, ctx: RequestContext) -> Result<Value, McpError> {
    let tasks = tasks_of(&ctx, "tasks/get")?;
    let record = tasks.visible(&ctx, &params.task_id).await?;
    Ok(Value::Object(record.detailed_json()))
}

/// `tasks/update` → `{}` (an empty acknowledgement, `resultType: "complete"`); answers for keys
/// that are not outstanding are ignored.
///
/// Errors: `-32602` for an unknown, expired or foreign task.
#[mcp_rpc(
    "tasks/update",
    extension = "io.modelcontextprotocol/tasks",
    routing_name = "taskId",
    group = "io.modelcontextprotocol/tasks"
)]
async fn tasks_update(params: TaskUpdate, ctx: RequestContext) -> Result<Value, McpError> {
    let tasks = tasks_of(&ctx, "tasks/update")?;
    tasks.update(&ctx, &params.task_id, params.input_responses).await?;
    Ok(json!({}))
}

/// `tasks/cancel` → `{}`; the task becomes `cancelled` (unless already terminal: then nothing
/// changes) and its work is told to stop.
///
/// Errors: `-32602` for an unknown, expired or foreign task; `-32603` when the store fails.
#[mcp_rpc(
    "tasks/cancel",
    extension = "io.modelcontextprotocol/tasks",
    routing_name = "taskId",
    group = "io.modelcontextprotocol/tasks"
)]
async fn tasks_cancel(params: TaskRef, ctx: RequestContext) -> Result<Value, McpError> {
    let tasks = tasks_of(&ctx, "tasks/cancel")?;
    tasks.cancel(&ctx, &params.task_id).await?;
    Ok(json!({}))
}
