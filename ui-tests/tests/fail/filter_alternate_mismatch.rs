use switchyard::prelude::*;
use switchyard::{AltNext, Alternate, GetPromptParams};

#[derive(serde::Deserialize)]
struct SumParams {
    a: i64,
}

#[derive(serde::Serialize)]
struct SumResult {
    sum: i64,
}

#[mcp_rpc("acme/sum")]
async fn sum(params: SumParams) -> Result<SumResult, McpError> {
    Ok(SumResult { sum: params.a })
}

/// Takes the params of another method.
#[mcp_filter(alternate, rpc = sum)]
async fn wrong_params(
    req: TypedRequest<GetPromptParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    let _ = req;
    Err(McpError::internal(format!("{next:?}")))
}

/// Returns the method's result without `Alternate`, as a typed filter would.
#[mcp_filter(alternate, rpc = sum)]
async fn plain_result(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<SumResult, McpError> {
    let _ = (req, next);
    Ok(SumResult { sum: 0 })
}

/// Returns an alternate of another result type.
#[mcp_filter(alternate, rpc = switchyard::methods::PromptsGet)]
async fn wrong_result(
    req: TypedRequest<GetPromptParams>,
    next: AltNext<GetPromptParams, GetPromptResult>,
) -> Result<Alternate<String>, McpError> {
    let _ = (req, next);
    Ok(Alternate::Ordinary(String::new()))
}

fn main() {}
