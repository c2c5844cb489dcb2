use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct SumParams {
    a: i64,
}

#[derive(serde::Serialize)]
struct SumResult {
    sum: i64,
}

#[derive(serde::Deserialize)]
struct OtherParams;

#[mcp_rpc("acme/sum")]
async fn sum(params: SumParams) -> Result<SumResult, McpError> {
    Ok(SumResult { sum: params.a })
}

/// Takes the params of another method.
#[mcp_filter(rpc = sum)]
async fn wrong_params(req: TypedRequest<OtherParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    let _ = req;
    Err(McpError::internal(format!("{next:?}")))
}

/// Returns another result type.
#[mcp_filter(rpc = sum)]
async fn wrong_result(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<String, McpError> {
    next.run(req).await.map(|r| r.sum.to_string())
}

fn main() {}
