use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct SumParams {
    a: i64,
}

/// A function without `#[mcp_rpc]`.
async fn plain(params: SumParams) -> Result<i64, McpError> {
    Ok(params.a)
}

#[mcp_filter(rpc = plain)]
async fn on_plain(req: TypedRequest<SumParams>, next: Next<SumParams, i64>) -> Result<i64, McpError> {
    let _ = plain(SumParams { a: 1 });
    next.run(req).await
}

/// A type that is no RPC.
#[mcp_filter(rpc = SumParams)]
async fn on_type(req: TypedRequest<SumParams>, next: Next<SumParams, i64>) -> Result<i64, McpError> {
    next.run(req).await
}

#[mcp_filter(rpc = missing, order = 1)]
async fn on_missing(req: TypedRequest<SumParams>, next: Next<SumParams, i64>) -> Result<i64, McpError> {
    next.run(req).await
}

fn main() {}
