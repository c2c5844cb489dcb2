use switchyard::prelude::*;
use switchyard::{AltNext, Alternate};

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

/// The `next` of a typed filter in an alternate-result filter.
#[mcp_filter(alternate, rpc = sum)]
async fn typed_next(
    req: TypedRequest<SumParams>,
    next: Next<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    next.run(req).await.map(Alternate::Ordinary)
}

/// `next` with the result type swapped.
#[mcp_filter(alternate, rpc = sum)]
async fn swapped(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, String>,
) -> Result<Alternate<SumResult>, McpError> {
    let _ = (req, next);
    Err(McpError::internal("unreachable"))
}

/// An alternate-result filter that forgot `alternate`: a typed filter with the wrong `next`.
#[mcp_filter(rpc = sum)]
async fn forgot_alternate(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    next.run(req).await
}

fn main() {}
