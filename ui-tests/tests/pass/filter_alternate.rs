//! Alternate-result filters: on an `#[mcp_rpc]` handler and on a built-in method, as a bare
//! flag or `alternate = true`, next to typed filters of the same method.
#![deny(warnings)]

use switchyard::__private::serde_json::json;
use switchyard::methods::{PromptsGet, ToolsCall};
use switchyard::prelude::*;
use switchyard::{AltNext, Alternate, CallToolParams, GetPromptParams};

#[derive(serde::Deserialize)]
pub struct JobParams {
    pub id: String,
}

#[derive(serde::Serialize)]
pub struct JobStatus {
    pub done: bool,
}

#[mcp_rpc("acme/job", group = "alt")]
async fn job(params: JobParams) -> Result<JobStatus, McpError> {
    Ok(JobStatus { done: !params.id.is_empty() })
}

/// Answers for long jobs with a task instead of the status.
#[mcp_filter(alternate, rpc = job, order = 5, group = "alt")]
async fn as_task(
    req: TypedRequest<JobParams>,
    next: AltNext<JobParams, JobStatus>,
) -> Result<Alternate<JobStatus>, McpError> {
    if req.params.id.starts_with("long-") {
        return Ok(Alternate::Other(json!({"resultType": "task", "task": {"taskId": req.params.id}})));
    }
    next.run(req).await
}

/// A typed filter of the same method: runs inside every alternate filter whatever its order.
#[mcp_filter(rpc = job, order = -100, group = "alt")]
async fn check_id(req: TypedRequest<JobParams>, next: Next<JobParams, JobStatus>) -> Result<JobStatus, McpError> {
    if req.params.id.is_empty() {
        return Err(McpError::invalid_params("empty id"));
    }
    next.run(req).await
}

/// On `prompts/get`, written `alternate = true`, with a full path to the method.
#[mcp_filter(alternate = true, rpc = switchyard::methods::PromptsGet, group = "alt")]
async fn prompt_alt(
    req: TypedRequest<GetPromptParams>,
    next: AltNext<GetPromptParams, GetPromptResult>,
) -> Result<Alternate<GetPromptResult>, McpError> {
    next.run(req).await
}

/// On `tools/call`, through an imported marker; any argument pattern.
#[mcp_filter(rpc = ToolsCall, alternate, order = -1, group = "alt")]
async fn tool_alt(
    _: TypedRequest<CallToolParams>,
    _next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    Ok(Alternate::Other(json!({"resultType": "custom"})))
}

/// `alternate = false` is an ordinary typed filter.
#[mcp_filter(rpc = PromptsGet, alternate = false, group = "alt")]
async fn prompt_typed(
    req: TypedRequest<GetPromptParams>,
    next: Next<GetPromptParams, GetPromptResult>,
) -> Result<GetPromptResult, McpError> {
    next.run(req).await
}

fn main() {
    Server::builder("t", "0").groups(["alt"]).build().expect("build");
}
