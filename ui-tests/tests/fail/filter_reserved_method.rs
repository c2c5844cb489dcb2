use switchyard::prelude::*;

/// MCP's own method.
#[mcp_filter(method = "tools/call")]
async fn calls(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

/// A vendor method named by string: its types cannot be checked.
#[mcp_filter(method = "acme/sum", order = 1)]
async fn sums(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

/// `rpc` takes the handler, not the method name.
#[mcp_filter(rpc = "acme/sum")]
async fn by_name(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

fn main() {}
