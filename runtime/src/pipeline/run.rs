use super::Engine;
use super::alternate::ErasedOutcome;
use super::rpc::{ErasedValue, RpcHandlerFn};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use serde_json::Value;

/// Runs a typed method's alternate and typed filters around `handler`, then encodes: the
/// method's result through `encode`, an alternate as it is.
pub(crate) async fn run_method(
    engine: &Engine,
    method: &str,
    ctx: RequestContext,
    params: ErasedValue,
    handler: RpcHandlerFn,
    encode: fn(ErasedValue) -> Result<Value, McpError>,
) -> Result<Value, McpError> {
    let outcome = match engine.pipelines.chains.get(method) {
        Some(chains) => chains.run(ctx, params, handler).await?,
        // Without filters the method's alternate chain is empty, and an alternate result
        // signalled by the handler is answered here.
        None => match handler(ctx, params).await {
            Ok(result) => ErasedOutcome::Ordinary(result),
            Err(e) => ErasedOutcome::Other(e.into_alternate_result()?),
        },
    };
    match outcome {
        ErasedOutcome::Ordinary(r) => encode(r),
        ErasedOutcome::Other(v) => Ok(v),
    }
}
