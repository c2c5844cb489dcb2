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

type Terminal = Arc<dyn Fn(RawRequest) -> BoxFuture<RawResponse> + Send + Sync>;

/// The rest of the raw chain: call [`run`](Self::run) to pass the request on, or return
/// without calling it to short-circuit (the id is echoed by the transport either way).
pub struct RawNext {
    filters: Arc<[RawFilterFn]>,
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
            Some(filter) => {
                let next = RawNext { filters: self.filters.clone(), index: self.index + 1, terminal: self.terminal };
                filter(req, next).await
            }
            None => (self.terminal)(req).await,
        }
    }
}

/// The sorted raw filters of a server.
#[derive(Clone, Default)]
pub(crate) struct RawChain {
    filters: Arc<[RawFilterFn]>,
}

impl RawChain {
    pub(crate) fn from_inventory(groups: Option<&[String]>) -> RawChain {
        let mut regs: Vec<&RawFilterRegistration> =
            crate::registry::Groups::new(groups).select::<RawFilterRegistration>().collect();
        regs.sort_by(|a, b| (a.order, a.name).cmp(&(b.order, b.name)));
        RawChain { filters: regs.iter().map(|r| r.handler).collect() }
    }

    /// Runs `req` through every raw filter, then `terminal`.
    /// True when no raw filter is registered: callers may then run the terminal step directly.
    pub(crate) fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    pub(crate) async fn run(&self, req: RawRequest, terminal: Terminal) -> RawResponse {
        RawNext { filters: self.filters.clone(), index: 0, terminal }.run(req).await
    }
}
