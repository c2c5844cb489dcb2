use super::Engine;
use super::alternate::ErasedOutcome;
use super::rpc::{ErasedValue, RpcHandlerFn};
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ResultObject};

/// Runs a typed method's alternate and typed filters around `handler`, then encodes: the
/// method's result through `encode`, an alternate as it is.
pub(crate) async fn run_method<E>(
    engine: &Engine,
    method: &str,
    ctx: RequestContext,
    params: ErasedValue,
    handler: RpcHandlerFn,
    encode: E,
) -> Result<ResultObject, McpError>
where
    E: FnOnce(ErasedValue) -> Result<ResultObject, McpError>,
{
    let outcome = match engine.pipelines.chains.get(method) {
        Some(chains) => chains.run(ctx, params, handler).await,
        None => handler(ctx, params).await.map(ErasedOutcome::Ordinary),
    };
    match outcome {
        Ok(ErasedOutcome::Ordinary(r)) => encode(r),
        Ok(ErasedOutcome::Other(v)) => Ok(v.into()),
        // An alternate result signalled by the handler of a method without filters, or by an
        // alternate filter itself, is answered here.
        Err(e) => e.into_alternate_result().map(ResultObject::Value),
    }
}
