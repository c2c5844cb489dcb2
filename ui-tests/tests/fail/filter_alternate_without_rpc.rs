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

#[mcp_filter(alternate)]
async fn no_method(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    next.run(req).await
}

#[mcp_filter(order = 1, alternate = true)]
async fn no_method_either(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

#[mcp_filter(alternate = "yes", rpc = sum)]
async fn not_a_flag(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    next.run(req).await
}

#[mcp_filter(alternate, rpc = sum)]
async fn one_argument(req: TypedRequest<SumParams>) -> Result<Alternate<SumResult>, McpError> {
    Ok(Alternate::Ordinary(SumResult { sum: req.params.a }))
}

#[mcp_filter(alternate, alternative, rpc = sum)]
async fn alternative(
    req: TypedRequest<SumParams>,
    next: AltNext<SumParams, SumResult>,
) -> Result<Alternate<SumResult>, McpError> {
    next.run(req).await
}

fn main() {}
