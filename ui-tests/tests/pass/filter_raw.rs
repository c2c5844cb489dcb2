//! Global raw filters: any order (negative too), any group, short-circuiting or passing on.
#![deny(warnings)]

use switchyard::prelude::*;

/// Passes every request on.
#[mcp_filter(order = -10, group = "filters")]
async fn audit(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

/// Refuses requests without a principal; the default order is 0.
#[mcp_filter(group = "filters")]
async fn guard(req: RawRequest, next: RawNext) -> switchyard::RawResponse {
    if req.params.contains_key("deny") {
        return Err(McpError::invalid_params("denied"));
    }
    next.run(req).await
}

/// The request may be destructured in the signature.
#[mcp_filter(order = 2_000_000_000)]
async fn pattern(
    RawRequest { ctx, params }: RawRequest,
    next: switchyard::RawNext,
) -> Result<switchyard::__private::serde_json::Value, McpError> {
    next.run(RawRequest { ctx, params }).await
}

fn main() {
    Server::builder("t", "0").groups(["filters"]).build().expect("build");
}
