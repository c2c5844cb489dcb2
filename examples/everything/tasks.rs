//! The Tasks extension fixtures of the conformance suite (`tasks-*` scenarios, conformance
//! README §3.5): `greet` runs synchronously, `slow_compute` may run as a task, `failing_job` and
//! `protocol_error_job` run only as tasks; `confirm_delete` and `multi_input` run as tasks that
//! ask the client for input (`input_required`, answered with `tasks/update`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard_tasks::request_input;

/// Arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
pub struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// Returns exactly `Hello, {name}!` (never a task).
#[mcp_tool]
async fn greet(args: GreetArgs) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", args.name))
}

/// Arguments of `slow_compute`.
#[derive(Deserialize, JsonSchema)]
pub struct SlowComputeArgs {
    /// How long to compute, in seconds (at most one hour).
    seconds: f64,
    /// An optional label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

/// Computes for `seconds` (stops when the task is cancelled); a task when the client opts in.
#[mcp_tool(task_support = "optional")]
async fn slow_compute(args: SlowComputeArgs, cancel: CancellationToken) -> Result<String, ToolError> {
    let secs = if args.seconds.is_finite() { args.seconds.clamp(0.0, 3600.0) } else { 0.0 };
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs_f64(secs)) => {
            Ok(format!("computed {} for {secs} s", args.label.as_deref().unwrap_or("result")))
        }
        _ = cancel.cancelled() => Err(ToolError::new("slow_compute was cancelled")),
    }
}

/// Runs only as a task and ends, after about a second, with a tool error (`isError: true`).
#[mcp_tool(task_support = "required")]
async fn failing_job(cancel: CancellationToken) -> Result<String, ToolError> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs(1)) => Err(ToolError::new("failing_job failed, as it always does")),
        _ = cancel.cancelled() => Err(ToolError::new("failing_job was cancelled")),
    }
}

/// Runs only as a task and ends with a protocol error (-32603), so the task is `failed`.
#[mcp_tool(task_support = "required")]
async fn protocol_error_job() -> Result<String, McpError> {
    Err(McpError::internal("protocol_error_job: an internal error, as designed"))
}

/// Arguments of `confirm_delete`.
#[derive(Deserialize, JsonSchema)]
pub struct ConfirmDeleteArgs {
    /// The file to delete (default `example.txt`: the tool is also called without arguments).
    #[serde(default = "default_filename")]
    filename: String,
}

fn default_filename() -> String {
    "example.txt".to_owned()
}

/// One form elicitation `{key: {method, params}}` asking for a boolean or a string field.
fn elicitation(message: &str, field: &str, ty: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": { "type": "object", "properties": { field: { "type": ty } }, "required": [field] },
        },
    })
}

fn input_failed(e: McpError) -> ToolError {
    ToolError::new(format!("no input: {}", e.message))
}

/// Runs as a task and asks the client (one elicitation, through `tasks/update`) to confirm.
/// Called without the extension it runs directly and reports (as a tool error) that it needs a
/// task: task support is optional so that it stays callable by any client, as the first tool
/// listed (the `http-header-validation` scenario calls that one without the extension).
#[mcp_tool(task_support = "optional")]
async fn confirm_delete(args: ConfirmDeleteArgs, ctx: RequestContext) -> Result<String, ToolError> {
    let mut requests = Map::new();
    requests.insert("confirm_delete".into(), elicitation(&format!("Delete {}?", args.filename), "confirm", "boolean"));
    let answers = request_input(&ctx, requests).await.map_err(input_failed)?;
    let answer = &answers["confirm_delete"];
    if answer["action"] == "accept" && answer["content"]["confirm"] == true {
        Ok(format!("Deleted {}", args.filename))
    } else {
        Ok(format!("Kept {}", args.filename))
    }
}

/// Runs as a task and asks the client two questions at once (two outstanding input requests).
#[mcp_tool(task_support = "required")]
async fn multi_input(ctx: RequestContext) -> Result<String, ToolError> {
    let mut requests = Map::new();
    requests.insert("name".into(), elicitation("Your name?", "name", "string"));
    requests.insert("color".into(), elicitation("Your favourite colour?", "color", "string"));
    let answers = request_input(&ctx, requests).await.map_err(input_failed)?;
    let field = |k: &str, f: &str| answers[k]["content"][f].as_str().unwrap_or("?").to_owned();
    Ok(format!("{} likes {}", field("name", "name"), field("color", "color")))
}
