use super::rpc::{ErasedValue, RpcHandlerFn};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::registry::{BoxFuture, Site};
use std::any::TypeId;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

/// What a typed filter sees: the request context and the decoded params of its method.
#[derive(Debug)]
pub struct TypedRequest<P> {
    /// The request's context.
    pub ctx: RequestContext,
    /// The decoded params (without `_meta`, which stays readable through `ctx.meta()`).
    pub params: P,
}

/// A typed filter, type-erased so filters of every method fit one registry. Generated shims
/// downcast to the method's types, which the macro checked at compile time.
pub type TypedFilterFn = fn(RequestContext, ErasedValue, ErasedNext) -> BoxFuture<Result<ErasedValue, McpError>>;

/// One `#[mcp_filter(rpc = ...)]`: a typed filter on one method.
#[derive(Debug)]
pub struct TypedFilterRegistration {
    /// The method it filters (`acme/sum`).
    pub method: &'static str,
    /// Position: lower runs outside higher.
    pub order: i32,
    /// Fully qualified name, the tie-breaker for equal `order`.
    pub name: &'static str,
    /// Registration group.
    pub group: &'static str,
    /// `TypeId` of the params type it expects; checked against the method when the server is built.
    pub params_type: fn() -> TypeId,
    /// `TypeId` of the result type it expects.
    pub result_type: fn() -> TypeId,
    /// The shim.
    pub handler: TypedFilterFn,
    /// Where it was declared.
    pub site: Site,
}

/// The type-erased rest of a typed chain.
pub struct ErasedNext {
    filters: Arc<[TypedFilterFn]>,
    index: usize,
    handler: RpcHandlerFn,
}

impl std::fmt::Debug for ErasedNext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErasedNext").field("remaining", &(self.filters.len() - self.index)).finish()
    }
}

impl ErasedNext {
    /// Runs the inner filters and the handler.
    pub async fn run(self, ctx: RequestContext, params: ErasedValue) -> Result<ErasedValue, McpError> {
        match self.filters.get(self.index) {
            Some(filter) => {
                let next = ErasedNext { filters: self.filters.clone(), index: self.index + 1, handler: self.handler };
                filter(ctx, params, next).await
            }
            None => (self.handler)(ctx, params).await,
        }
    }
}

/// The rest of a typed chain for params `P` and result `R`: call [`run`](Self::run) to go on,
/// or return without calling it to short-circuit (the handler does not run).
pub struct Next<P, R> {
    inner: ErasedNext,
    _types: PhantomData<fn(P) -> R>,
}

impl<P, R> std::fmt::Debug for Next<P, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<P: Send + 'static, R: Send + 'static> Next<P, R> {
    /// Runs the inner filters and the handler with (possibly changed) params.
    ///
    /// Errors: whatever the inner filters or the handler return.
    pub async fn run(self, req: TypedRequest<P>) -> Result<R, McpError> {
        let out = self.inner.run(req.ctx, Box::new(req.params)).await?;
        out.downcast::<R>().map(|b| *b).map_err(|_| mismatch())
    }
}

fn mismatch() -> McpError {
    // Unreachable when the build-time type checks passed; an error rather than a panic anyway.
    McpError::internal("typed filter chain: params or result type mismatch")
}

/// Adapts a typed filter function to [`TypedFilterFn`]; called by generated shims.
pub fn typed_filter_shim<P, R, F, Fut>(
    ctx: RequestContext,
    params: ErasedValue,
    next: ErasedNext,
    filter: F,
) -> BoxFuture<Result<ErasedValue, McpError>>
where
    P: Send + 'static,
    R: Send + 'static,
    F: FnOnce(TypedRequest<P>, Next<P, R>) -> Fut,
    Fut: Future<Output = Result<R, McpError>> + Send + 'static,
{
    match params.downcast::<P>() {
        Ok(p) => {
            let fut = filter(TypedRequest { ctx, params: *p }, Next { inner: next, _types: PhantomData });
            Box::pin(async move { fut.await.map(|r| Box::new(r) as ErasedValue) })
        }
        Err(_) => Box::pin(async { Err(mismatch()) }),
    }
}

/// The sorted typed filters of one method.
#[derive(Clone, Default)]
pub(crate) struct TypedChain {
    filters: Arc<[TypedFilterFn]>,
}

impl TypedChain {
    pub(crate) fn new(mut regs: Vec<&TypedFilterRegistration>) -> TypedChain {
        regs.sort_by(|a, b| (a.order, a.name).cmp(&(b.order, b.name)));
        TypedChain { filters: regs.iter().map(|r| r.handler).collect() }
    }

    pub(crate) async fn run(
        &self,
        ctx: RequestContext,
        params: ErasedValue,
        handler: RpcHandlerFn,
    ) -> Result<ErasedValue, McpError> {
        ErasedNext { filters: self.filters.clone(), index: 0, handler }.run(ctx, params).await
    }
}
