//! A typed RPC with a params type and extractors in any order, including a custom `#[extract]`
//! one; the marker type named after the handler carries the method's types.
#![forbid(unsafe_code)]
#![deny(warnings)]

use switchyard::prelude::*;
use switchyard::{FromRequestContext, RpcMethod};

#[derive(serde::Deserialize)]
struct SumParams {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize)]
struct SumResult {
    sum: i64,
}

struct Offset {
    by: i64,
}

/// The caller, as a custom extractor.
struct Caller(String);

impl FromRequestContext for Caller {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(Caller(ctx.method().to_owned()))
    }
}

#[mcp_rpc("acme/sum", group = "sum")]
async fn sum(
    offset: State<Offset>,
    params: SumParams,
    #[extract] caller: Caller,
    _cancel: switchyard::CancellationToken,
) -> Result<SumResult, McpError> {
    let _ = caller.0;
    Ok(SumResult { sum: params.a + params.b + offset.by })
}

fn main() {
    assert_eq!(<sum as RpcMethod>::METHOD, "acme/sum");
    let _: fn(<sum as RpcMethod>::Params) -> SumParams = |p| p;
    let _: fn(<sum as RpcMethod>::Result) -> SumResult = |r| r;
    let server = Server::builder("t", "0").groups(["sum"]).state(Offset { by: 0 }).build().expect("build");
    assert!(server.serves_modern_method("acme/sum"));
    assert_eq!(server.routing_field("acme/sum"), None);
}
