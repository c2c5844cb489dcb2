//! The Tasks extension fixtures of the conformance suite (`tasks-*` scenarios, conformance
//! README §3.5): `greet` runs synchronously, `slow_compute` may run as a task, `failing_job` and
//! `protocol_error_job` run only as tasks; `confirm_delete` and `multi_input` run as tasks that
//! ask the client for input (`input_required`, answered with `tasks/update`);
//! `test_tool_with_task` asks on the request path, then escalates to a task.

use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;
use switchyard::prelude::*;

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

/// The form `confirm_delete` asks for.
#[derive(Deserialize, JsonSchema)]
pub struct Confirm {
    /// Delete the file?
    confirm: bool,
}

/// The name question of `multi_input` and `test_tool_with_task`.
#[derive(Deserialize, JsonSchema)]
pub struct NameForm {
    /// Your name.
    name: String,
}

/// The colour question of `multi_input` (only its schema is used: the answer is read as sent).
#[derive(Deserialize, JsonSchema)]
#[expect(dead_code, reason = "the form's schema is sent; answers are read field by field")]
pub struct ColorForm {
    /// Your favourite colour.
    color: String,
}

/// Asks the client to confirm (one elicitation). As a task (the client declared the
/// extension) the question goes through `input_required` and `tasks/update`; otherwise through
/// an input-required result (2026-07-28) or an `elicitation/create` request (legacy). Task
/// support is optional so that it stays callable by any client, as the first tool listed (the
/// `http-header-validation` scenario calls that one without the extension).
#[mcp_tool(task_support = "optional")]
async fn confirm_delete(args: ConfirmDeleteArgs, ctx: RequestContext) -> Result<String, ToolFailure> {
    match ctx.elicit::<Confirm>("confirm_delete", format!("Delete {}?", args.filename)).await? {
        Elicited::Accept(Confirm { confirm: true }) => Ok(format!("Deleted {}", args.filename)),
        _ => Ok(format!("Kept {}", args.filename)),
    }
}

/// Runs as a task and asks the client two questions at once (two outstanding input requests).
#[mcp_tool(task_support = "required")]
async fn multi_input(ctx: RequestContext) -> Result<String, ToolFailure> {
    let round = InputRound::new()
        .ask("name", InputRequest::elicit_form_for::<NameForm>("Your name?"))
        .ask("color", InputRequest::elicit_form_for::<ColorForm>("Your favourite colour?"));
    let mut answers = ctx.input_round(round).await?;
    // The conformance client answers with content of its own choosing: read what is there.
    let mut field = |key: &str| -> Result<String, McpError> {
        let answer = answers.take(key)?.into_elicit()?;
        let content = answer.content.unwrap_or_default();
        Ok(content.get(key).and_then(|v| v.as_str()).unwrap_or("?").to_owned())
    };
    let (name, color) = (field("name")?, field("color")?);
    Ok(format!("{name} likes {color}"))
}

/// Gathers the user's name through input-required rounds on the request path, then escalates:
/// the rest runs as a task (the client declared the extension) whose result names the user
/// (`tasks-mrtr-composition`).
#[mcp_tool(task_support = "escalate")]
async fn test_tool_with_task(ctx: RequestContext) -> Result<CallToolResult, McpError> {
    let name = match ctx.elicit::<NameForm>("user_name", "What is your name?").await? {
        Elicited::Accept(form) => form.name,
        Elicited::Decline | Elicited::Cancel => "stranger".to_owned(),
    };
    switchyard_tasks::escalate(&ctx, move |ctx| async move {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            _ = ctx.cancellation().cancelled() => return Err(McpError::internal("cancelled")),
        }
        Ok(CallToolResult::success(vec![Content::text(format!("Task finished for {name}"))]))
    })
    .await
}
