//! Typed filters on an RPC, named through its handler (any path to it), in any group; they may
//! change the params or the result.
#![deny(warnings)]

use switchyard::prelude::*;

mod rpcs {
    use switchyard::prelude::*;

    #[derive(serde::Deserialize)]
    pub struct SumParams {
        pub a: i64,
        pub b: i64,
    }

    #[derive(serde::Serialize)]
    pub struct SumResult {
        pub sum: i64,
    }

    #[mcp_rpc("acme/sum", group = "typed")]
    pub async fn sum(params: SumParams) -> Result<SumResult, McpError> {
        Ok(SumResult { sum: params.a + params.b })
    }
}

use rpcs::{SumParams, SumResult};

/// Limits the operands.
#[mcp_filter(rpc = rpcs::sum, order = 20, group = "typed")]
async fn limit(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    if req.params.a.abs() > 1000 {
        return Err(McpError::invalid_params("a is too large"));
    }
    next.run(req).await
}

/// Doubles the result; imported through `use`, the handler's name works as well.
use rpcs::sum;
#[mcp_filter(rpc = sum, order = -1, group = "typed")]
async fn double(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    let SumResult { sum } = next.run(req).await?;
    Ok(SumResult { sum: sum * 2 })
}

/// Another group: runs only when that group is selected as well.
#[mcp_filter(rpc = sum, group = "typed-audit")]
async fn audit(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
    next.run(req).await
}

fn main() {
    Server::builder("t", "0").groups(["typed"]).build().expect("build");
    Server::builder("t", "0").groups(["typed", "typed-audit"]).build().expect("build");
    let err = Server::builder("t", "0").groups(["typed-audit"]).build().err().expect("the filter has no method");
    assert!(err.to_string().contains("acme/sum"), "{err}");
}
