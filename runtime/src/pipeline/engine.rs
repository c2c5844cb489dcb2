//! What serving a request needs, built once by the server builder: the dispatch table, the
//! filter chains, shared state, the authorization policy and the subscription machinery.

use crate::auth::{Policy, Primitive};
use crate::context::{MessageFilters, Notifier, OutboundSender, RequestContext, StateMap};
use crate::input::StateCodec;
use crate::jsonrpc::McpError;
use crate::model::CallToolResult;
use crate::registry::ParamHeader;
use crate::registry::{BoxFuture, DispatchTable};
use crate::subscriptions::replacement::ListenReplacement;
use crate::subscriptions::{
    DeliveryHub, EncodedEvents, ListenSlots, OpenSubscriptions, ResourceInterest, SubscriptionFieldRegistration,
};
use arc_swap::ArcSwap;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::{CallToolParams, Pipelines, RawChain};

/// A handler that replaces the `tools/call` pipeline
/// ([`ServerBuilder::replace_tools_call`](crate::ServerBuilder::replace_tools_call)).
pub(crate) type ToolsCallReplacement =
    Arc<dyn Fn(RequestContext, CallToolParams) -> BoxFuture<Result<CallToolResult, McpError>> + Send + Sync>;

/// Cache hints put on cacheable 2026-07-28 results (`ttlMs`, `cacheScope`), as the
/// [caching section](https://modelcontextprotocol.io/specification/draft/basic/utilities/caching)
/// describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheConfig {
    /// `ttlMs` of `server/discover`. Default 10 minutes.
    pub discover_ttl: Duration,
    /// `ttlMs` of `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`.
    /// Default 1 minute (lists can change at run time).
    pub list_ttl: Duration,
    /// `ttlMs` of `resources/read`, sent with `cacheScope: "private"`. Default 0 (do not reuse).
    pub read_ttl: Duration,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            discover_ttl: Duration::from_secs(600),
            list_ttl: Duration::from_secs(60),
            read_ttl: Duration::ZERO,
        }
    }
}

impl CacheConfig {
    /// Sets [`discover_ttl`](Self::discover_ttl).
    pub fn discover_ttl(mut self, ttl: Duration) -> Self {
        self.discover_ttl = ttl;
        self
    }

    /// Sets [`list_ttl`](Self::list_ttl).
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Sets [`read_ttl`](Self::read_ttl).
    pub fn read_ttl(mut self, ttl: Duration) -> Self {
        self.read_ttl = ttl;
        self
    }
}

/// The running server's request-serving half; `Server` is a handle to one.
pub(crate) struct Engine {
    pub(crate) name: String,
    pub(crate) version: String,
    /// The `Implementation` object (`serverInfo`) with every field the server set.
    pub(crate) info: Value,
    /// The JSON text that stamps a 2026-07-28 result without `resultType` or `_meta` of its
    /// own ([`encode::modern_stamp`](super::encode::modern_stamp)), made from `info`.
    pub(crate) modern_stamp: String,
    /// What shapes each client's lists, in registration order.
    pub(crate) listing: Vec<Arc<dyn crate::registry::ListingFilter>>,
    pub(crate) instructions: Option<String>,
    pub(crate) table: ArcSwap<DispatchTable>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) cache: CacheConfig,
    pub(crate) page_size: usize,
    /// Serving, draining, closing, shut down; readiness checks and shutdown holds.
    pub(crate) lifecycle: super::lifecycle::Lifecycle,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) raw: RawChain,
    pub(crate) pipelines: Pipelines,
    pub(crate) tools_call: Option<ToolsCallReplacement>,
    /// The replacement `subscriptions/listen` handler, if one was installed.
    pub(crate) listen: Option<ListenReplacement>,
    /// The built-in listen subscriptions open now.
    pub(crate) open_subscriptions: Arc<OpenSubscriptions>,
    /// Open listen subscriptions per connection and caller, against the listen limits.
    pub(crate) listen_slots: Arc<ListenSlots>,
    /// The resource URIs subscribed to on this instance (legacy sessions and listen filters).
    pub(crate) resource_interest: Arc<ResourceInterest>,
    pub(crate) messages: MessageFilters,
    pub(crate) hub: Arc<dyn DeliveryHub>,
    /// The latest listen event encoded once for every subscription.
    pub(crate) encoded_events: EncodedEvents,
    pub(crate) request_state: Arc<StateCodec>,
    pub(crate) fields: HashMap<&'static str, &'static SubscriptionFieldRegistration>,
    /// Declared extensions, advertised by `server/discover` under `capabilities.extensions`.
    pub(crate) extensions: Map<String, Value>,
    /// The mounted groups ([`Server::mounted_publisher`](crate::Server::mounted_publisher)).
    pub(crate) mounts: crate::registry::Mounts,
    /// The tool transforms, applied again to every tool added at run time.
    pub(crate) tool_transforms: crate::registry::ToolTransforms,
    /// What enforces the tools' declared limits; set once the first tool declaring any is
    /// built or added.
    pub(crate) tool_limiter: std::sync::OnceLock<Arc<dyn super::tool_limits::ToolLimiter>>,
}

impl crate::subscriptions::ListenHost for Engine {
    fn table(&self) -> Arc<DispatchTable> {
        self.table.load_full()
    }

    fn field(&self, key: &str) -> Option<&'static SubscriptionFieldRegistration> {
        self.fields.get(key).copied()
    }

    fn hub(&self) -> &Arc<dyn DeliveryHub> {
        &self.hub
    }

    fn open_subscriptions(&self) -> &Arc<OpenSubscriptions> {
        &self.open_subscriptions
    }

    fn listen_slots(&self) -> &Arc<ListenSlots> {
        &self.listen_slots
    }

    fn encoded_events(&self) -> &EncodedEvents {
        &self.encoded_events
    }

    fn resource_interest(&self) -> &Arc<ResourceInterest> {
        &self.resource_interest
    }

    fn closing(&self) -> &CancellationToken {
        &self.lifecycle.closing
    }
}

impl Engine {
    /// The engine serving `ctx`'s request: the innermost steps of the built-in methods are plain
    /// functions (`RpcHandlerFn`) and find it through the context. Every context the pipeline
    /// makes carries its engine; `-32603` otherwise.
    pub(crate) fn of(ctx: &RequestContext) -> Result<&Engine, McpError> {
        ctx.runtime()
            .downcast_ref::<Engine>()
            .ok_or_else(|| McpError::internal("this request context was not made by a running server"))
    }

    /// The server's `Implementation` object (`{name, version, title?, description?,
    /// websiteUrl?, icons?}`) as 2026-07-28 and 2025-11-25 have it.
    pub(crate) fn server_info(&self) -> Value {
        self.info.clone()
    }

    /// A snapshot of the current dispatch table (lock-free).
    pub(crate) fn table(&self) -> Arc<DispatchTable> {
        self.table.load_full()
    }

    /// The `x-mcp-header` annotations of the enabled tool `name` (empty when it has none or does
    /// not exist), for the HTTP transport's `Mcp-Param-*` header checks.
    pub(crate) fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        self.table.load().tool(name).map(|t| t.param_headers.clone()).unwrap_or_default()
    }

    /// True when `ctx`'s caller may use `primitive`, whose registration declares `roles` and
    /// `scopes`: the policy allows it, and the caller's token grants every scope.
    pub(crate) fn allows(
        &self,
        ctx: &RequestContext,
        primitive: Primitive<'_>,
        roles: &[&str],
        scopes: &[&str],
    ) -> bool {
        self.policy.allows(ctx.principal(), primitive, roles) && self.missing_scopes(ctx, scopes).is_empty()
    }

    /// True when `ctx`'s caller may call the primitive `name` of `method` now (`tools/call` of
    /// an enabled tool, `prompts/get` of a prompt, `resources/read` of a URI a resource or
    /// template serves) and the policy and scopes allow it: what a result cache checks before
    /// answering with a result it kept, since the table and the policy may have changed.
    #[cfg(feature = "result-cache")]
    pub(crate) fn may_call(&self, ctx: &RequestContext, method: &str, name: &str) -> bool {
        let table = self.table();
        match method {
            "tools/call" => {
                table.tool(name).is_some_and(|t| self.allows(ctx, Primitive::Tool(name), t.roles, t.scopes))
            }
            "prompts/get" => {
                table.prompt(name).is_some_and(|p| self.allows(ctx, Primitive::Prompt(name), p.roles, p.scopes))
            }
            "resources/read" => table.resolve_resource(name).is_some_and(|(r, _)| {
                let key = r.definition.get("uri").or_else(|| r.definition.get("uriTemplate")).and_then(Value::as_str);
                self.allows(ctx, Primitive::Resource(key.unwrap_or_default()), r.roles, r.scopes)
            }),
            _ => false,
        }
    }

    /// The scopes of `scopes` the caller's token does not grant (all of them for an anonymous
    /// caller).
    fn missing_scopes<'s>(&self, ctx: &RequestContext, scopes: &[&'s str]) -> Vec<&'s str> {
        match ctx.principal() {
            _ if scopes.is_empty() => Vec::new(),
            Some(p) => scopes.iter().copied().filter(|s| !self.policy.grants(p, s)).collect(),
            None => scopes.to_vec(),
        }
    }

    /// Fails unless `ctx`'s caller may use `primitive`: with the forbidden error (`-32600`,
    /// `data.reason: "forbidden"`) when the policy refuses it, with the insufficient-scope one
    /// (`-32600`, `data.reason: "insufficient_scope"`, `data.scope`) when its token lacks one of
    /// `scopes` (all of them are named, so that one new authorization covers the call).
    pub(crate) fn authorize(
        &self,
        ctx: &RequestContext,
        primitive: Primitive<'_>,
        roles: &[&str],
        scopes: &[&str],
    ) -> Result<(), McpError> {
        let what = || match primitive {
            Primitive::Tool(n) => format!("the tool `{n}`"),
            Primitive::Prompt(n) => format!("the prompt `{n}`"),
            Primitive::Resource(u) => format!("the resource `{u}`"),
            Primitive::Method(m) => format!("the method `{m}`"),
        };
        if !self.policy.allows(ctx.principal(), primitive, roles) {
            return Err(crate::auth::forbidden(&what()));
        }
        if !self.missing_scopes(ctx, scopes).is_empty() {
            return Err(crate::auth::insufficient_scope(&what(), scopes));
        }
        Ok(())
    }

    /// True when list results depend on the caller (a policy that varies and primitives with
    /// roles): they are then cached `private`.
    pub(crate) fn lists_vary(&self) -> bool {
        self.policy.lists_vary(self.table.load().any_roles())
    }

    /// A notifier for one request: writes into `tx` until `cancel` fires, through the message
    /// filters.
    pub(crate) fn notifier(&self, tx: OutboundSender, cancel: CancellationToken) -> Notifier {
        Notifier::new(tx, cancel).with_filters(self.messages.clone())
    }

    /// The server's outgoing message filters.
    pub(crate) fn message_filters(&self) -> &MessageFilters {
        &self.messages
    }

    /// True when the extension `id` was declared.
    pub(crate) fn has_extension(&self, id: &str) -> bool {
        self.extensions.contains_key(id)
    }
}
