use super::rpc::{ErasedValue, RpcHandlerFn};
use super::typed::{TypedChain, TypedRequest};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::registry::{BoxFuture, Site};
use serde_json::Value;
use std::any::TypeId;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

/// What an alternate-result filter returns: the method's own result, or an alternate result
/// with its own shape (e.g. a `CreateTaskResult` with `resultType: "task"`), sent as it is.
///
/// An alternate should carry its own `resultType`; one without gets `"complete"`.
#[derive(Debug, Clone, PartialEq)]
pub enum Alternate<R> {
    /// The method's ordinary result.
    Ordinary(R),
    /// A different result object, serialized by the filter.
    Other(Value),
}

/// An erased outcome of the alternate chain.
pub enum ErasedOutcome {
    /// The method's result, erased.
    Ordinary(ErasedValue),
    /// An alternate result.
    Other(Value),
}

/// An alternate-result filter, type-erased (see [`TypedFilterFn`](super::typed::TypedFilterFn)).
pub type AlternateFilterFn =
    fn(RequestContext, ErasedValue, ErasedAltNext) -> BoxFuture<Result<ErasedOutcome, McpError>>;

/// One `#[mcp_filter(alternate, rpc = ...)]`: an alternate-result filter on one method.
/// Alternate filters of a method wrap all of its typed filters, whatever their `order`.
#[derive(Debug)]
pub struct AlternateFilterRegistration {
    /// The method it filters.
    pub method: &'static str,
    /// Position among the method's alternate filters: lower runs outside higher.
    pub order: i32,
    /// Fully qualified name, the tie-breaker for equal `order`.
    pub name: &'static str,
    /// Registration group.
    pub group: &'static str,
    /// `TypeId` of the params type it expects.
    pub params_type: fn() -> TypeId,
    /// `TypeId` of the result type it expects.
    pub result_type: fn() -> TypeId,
    /// The shim.
    pub handler: AlternateFilterFn,
    /// Where it was declared.
    pub site: Site,
}

/// The type-erased rest of an alternate chain: further alternate filters, then the typed
/// filters and the handler.
pub struct ErasedAltNext {
    filters: Arc<[AlternateFilterFn]>,
    index: usize,
    typed: TypedChain,
    handler: RpcHandlerFn,
}

impl std::fmt::Debug for ErasedAltNext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErasedAltNext").field("remaining", &(self.filters.len() - self.index)).finish()
    }
}

impl ErasedAltNext {
    /// Runs the inner alternate filters, then the typed chain and the handler.
    pub async fn run(self, ctx: RequestContext, params: ErasedValue) -> Result<ErasedOutcome, McpError> {
        match self.filters.get(self.index) {
            Some(filter) => {
                let next = ErasedAltNext { index: self.index + 1, ..self.clone_parts() };
                filter(ctx, params, next).await
            }
            // The innermost alternate layer is where an alternate result signalled from inside
            // (`McpError::alternate_result`) becomes the success it is.
            None => match self.typed.run(ctx, params, self.handler).await {
                Ok(result) => Ok(ErasedOutcome::Ordinary(result)),
                Err(e) => e.into_alternate_result().map(ErasedOutcome::Other),
            },
        }
    }

    fn clone_parts(&self) -> ErasedAltNext {
        ErasedAltNext {
            filters: self.filters.clone(),
            index: self.index,
            typed: self.typed.clone(),
            handler: self.handler,
        }
    }
}

/// The rest of an alternate chain for params `P` and result `R`.
pub struct AltNext<P, R> {
    inner: ErasedAltNext,
    _types: PhantomData<fn(P) -> R>,
}

impl<P, R> std::fmt::Debug for AltNext<P, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<P: Send + 'static, R: Send + 'static> AltNext<P, R> {
    /// Runs the inner alternate filters, the typed filters and the handler.
    ///
    /// Errors: whatever they return.
    pub async fn run(self, req: TypedRequest<P>) -> Result<Alternate<R>, McpError> {
        match self.inner.run(req.ctx, Box::new(req.params)).await? {
            ErasedOutcome::Ordinary(r) => r.downcast::<R>().map(|b| Alternate::Ordinary(*b)).map_err(|_| mismatch()),
            ErasedOutcome::Other(v) => Ok(Alternate::Other(v)),
        }
    }
}

fn mismatch() -> McpError {
    McpError::internal("alternate filter chain: params or result type mismatch")
}

/// Adapts an alternate-result filter function to [`AlternateFilterFn`]; called by generated
/// shims.
pub fn alternate_filter_shim<P, R, F, Fut>(
    ctx: RequestContext,
    params: ErasedValue,
    next: ErasedAltNext,
    filter: F,
) -> BoxFuture<Result<ErasedOutcome, McpError>>
where
    P: Send + 'static,
    R: Send + 'static,
    F: FnOnce(TypedRequest<P>, AltNext<P, R>) -> Fut,
    Fut: Future<Output = Result<Alternate<R>, McpError>> + Send + 'static,
{
    match params.downcast::<P>() {
        Ok(p) => {
            let fut = filter(TypedRequest { ctx, params: *p }, AltNext { inner: next, _types: PhantomData });
            Box::pin(async move {
                Ok(match fut.await? {
                    Alternate::Ordinary(r) => ErasedOutcome::Ordinary(Box::new(r)),
                    Alternate::Other(v) => ErasedOutcome::Other(v),
                })
            })
        }
        Err(_) => Box::pin(async { Err(mismatch()) }),
    }
}

/// The alternate and typed filters of one method.
#[derive(Clone, Default)]
pub(crate) struct MethodChains {
    alternate: Arc<[AlternateFilterFn]>,
    typed: TypedChain,
}

impl MethodChains {
    pub(crate) fn new(mut alternate: Vec<&AlternateFilterRegistration>, typed: TypedChain) -> Self {
        alternate.sort_by(|a, b| (a.order, a.name).cmp(&(b.order, b.name)));
        MethodChains { alternate: alternate.iter().map(|r| r.handler).collect(), typed }
    }

    /// Runs alternate filters, typed filters and `handler`.
    pub(crate) async fn run(
        &self,
        ctx: RequestContext,
        params: ErasedValue,
        handler: RpcHandlerFn,
    ) -> Result<ErasedOutcome, McpError> {
        ErasedAltNext { filters: self.alternate.clone(), index: 0, typed: self.typed.clone(), handler }
            .run(ctx, params)
            .await
    }
}
