use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::registry::{BoxFuture, Site};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a global raw filter sees: the request context (id, method, era, client capabilities,
/// principal, ...) and the undecoded `params` object (with `_meta`).
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// The request's context.
    pub ctx: RequestContext,
    /// The raw `params` object (empty when the request had none).
    pub params: Map<String, Value>,
}

/// What a raw filter returns: the raw result object, or the JSON-RPC error to send. The era's
/// stamping (`resultType`, `serverInfo`, cache hints) happens after the outermost filter.
pub type RawResponse = Result<Value, McpError>;

/// A raw filter function: `async fn f(req: RawRequest, next: RawNext) -> RawResponse`, shimmed.
pub type RawFilterFn = fn(RawRequest, RawNext) -> BoxFuture<RawResponse>;

/// One `#[mcp_filter]` without a method: a global raw filter around every request.
#[derive(Debug)]
pub struct RawFilterRegistration {
    /// Position: lower runs outside higher.
    pub order: i32,
    /// Fully qualified name (`module_path!()::fn`), the tie-breaker for equal `order`.
    pub name: &'static str,
    /// Registration group (see [`ServerBuilder::groups`](crate::ServerBuilder::groups)).
    pub group: &'static str,
    /// The shim.
    pub handler: RawFilterFn,
    /// Where it was declared.
    pub site: Site,
}

/// A raw filter held as a value, for filters with state of their own (a rate limiter, a cache)
/// or configuration chosen at run time, which a `#[mcp_filter]` function cannot carry. Given to
/// [`ServerBuilder::raw_filter`](crate::ServerBuilder::raw_filter) with an `order`, it runs in the
/// same chain as the `#[mcp_filter]` raw filters, by the same rule (ascending `order`, the
/// outermost first).
///
/// Any `Fn(RawRequest, RawNext) -> impl Future<Output = RawResponse>` closure is a `RawFilter`.
///
/// ```rust,ignore
/// let server = Server::builder("demo", "1.0.0")
///     .raw_filter(10, |req: RawRequest, next: RawNext| async move {
///         if req.ctx.method() == "tools/call" && req.params.get("name").is_none() {
///             return Err(McpError::invalid_params("tools/call needs a `name`"));
///         }
///         next.run(req).await
///     })
///     .build()?;
/// ```
pub trait RawFilter: Send + Sync + 'static {
    /// Filters one request: call `next.run(req)` to pass it on, or return without calling it to
    /// answer in its place (the transport echoes the request id either way).
    ///
    /// Errors: whatever the filter decides, and whatever `next` returns.
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse>;
}

impl<F, Fut> RawFilter for F
where
    F: Fn(RawRequest, RawNext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = RawResponse> + Send + 'static,
{
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        Box::pin(self(req, next))
    }
}

/// One raw filter of a server's chain: a `#[mcp_filter]` function (called directly, as before
/// values existed) or a [`RawFilter`] value.
#[derive(Clone)]
enum Link {
    Function(RawFilterFn),
    Value(Arc<dyn RawFilter>),
}

/// A raw filter value with its place in the chain, as the builder keeps it.
#[derive(Clone)]
pub(crate) struct RawFilterValue {
    pub(crate) order: i32,
    /// The value's type name, the tie-breaker for equal `order` (after the functions' names).
    pub(crate) name: &'static str,
    pub(crate) filter: Arc<dyn RawFilter>,
}

type Terminal = Arc<dyn Fn(RawRequest) -> BoxFuture<RawResponse> + Send + Sync>;

/// The rest of the raw chain: call [`run`](Self::run) to pass the request on, or return
/// without calling it to short-circuit (the id is echoed by the transport either way).
pub struct RawNext {
    filters: Arc<[Link]>,
    index: usize,
    terminal: Terminal,
}

impl std::fmt::Debug for RawNext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawNext").field("remaining", &(self.filters.len() - self.index)).finish()
    }
}

impl RawNext {
    /// Runs the inner filters and the method.
    pub async fn run(self, req: RawRequest) -> RawResponse {
        match self.filters.get(self.index) {
            Some(link) => {
                let next = RawNext { filters: self.filters.clone(), index: self.index + 1, terminal: self.terminal };
                match link {
                    Link::Function(filter) => filter(req, next).await,
                    Link::Value(filter) => filter.filter(req, next).await,
                }
            }
            None => (self.terminal)(req).await,
        }
    }
}

/// The sorted raw filters of a server.
#[derive(Clone, Default)]
pub(crate) struct RawChain {
    filters: Arc<[Link]>,
}

impl RawChain {
    /// The chain of the selected groups' `#[mcp_filter]` raw filters and the builder's values,
    /// sorted by `(order, name)`; the sort is stable, so equal values keep the builder's order.
    pub(crate) fn new(groups: Option<&[String]>, values: Vec<RawFilterValue>) -> RawChain {
        let mut links: Vec<(i32, &'static str, Link)> = crate::registry::Groups::new(groups)
            .select::<RawFilterRegistration>()
            .map(|r| (r.order, r.name, Link::Function(r.handler)))
            .collect();
        links.extend(values.into_iter().map(|v| (v.order, v.name, Link::Value(v.filter))));
        links.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        RawChain { filters: links.into_iter().map(|(_, _, link)| link).collect() }
    }

    /// True when no raw filter is registered: callers may then run the terminal step directly.
    pub(crate) fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// Runs `req` through every raw filter, then `terminal`.
    pub(crate) async fn run(&self, req: RawRequest, terminal: Terminal) -> RawResponse {
        RawNext { filters: self.filters.clone(), index: 0, terminal }.run(req).await
    }
}
