use switchyard::prelude::*;

/// A typed `next` in a raw filter.
#[mcp_filter]
async fn typed_next(req: RawRequest, next: Next<(), ()>) -> RawResponse {
    let _ = (req, next);
    Err(McpError::internal("unreachable"))
}

/// A typed request without `rpc = ...`.
#[mcp_filter(order = 1)]
async fn typed_request(req: TypedRequest<String>, next: RawNext) -> RawResponse {
    let _ = (req, next);
    Err(McpError::internal("unreachable"))
}

/// Returns something other than a `RawResponse`.
#[mcp_filter(order = 2)]
async fn wrong_return(req: RawRequest, next: RawNext) -> Result<String, McpError> {
    next.run(req).await.map(|v| v.to_string())
}

fn main() {}
