use switchyard::prelude::*;

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

/// `next` of a raw filter in a typed one.
#[mcp_filter(rpc = sum)]
async fn raw_next(req: TypedRequest<SumParams>, next: RawNext) -> Result<SumResult, McpError> {
    let _ = (req, next);
    Err(McpError::internal("unreachable"))
}

/// `next` with the result type swapped.
#[mcp_filter(rpc = sum)]
async fn swapped(req: TypedRequest<SumParams>, next: Next<SumParams, String>) -> Result<SumResult, McpError> {
    let _ = (req, next);
    Err(McpError::internal("unreachable"))
}

fn main() {}
