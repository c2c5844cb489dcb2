//! [`Server`]: the handle transports serve and applications hold.

use super::{LegacySession, ServerBuilder};
use crate::context::{FromRequestContext, Notifier, Origin, RequestContext};
use crate::jsonrpc::{McpError, Request, ResultObject};
use crate::pipeline::Engine;
use crate::registry::DispatchTable;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A built MCP server: the dispatch table, server identity, configuration and shared state.
///
/// Cheap to clone (one `Arc`); every clone is the same server. Serve it with
/// [`transport::stdio::serve`](crate::transport::stdio::serve) or
/// [`transport::http::router`](crate::transport::http::router), or drive it in-process with
/// [`testing::TestClient`](crate::testing::TestClient).
#[derive(Clone)]
pub struct Server {
    // The builder (a sibling module) makes the one `Engine` a server holds.
    pub(super) engine: Arc<Engine>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.engine().name).field("version", &self.engine().version).finish()
    }
}

impl Server {
    /// Starts a builder for a server that identifies itself as `name` / `version`
    /// (`serverInfo` / `io.modelcontextprotocol/serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    /// The engine behind the handle; outside `server/`, transports and the command line reach
    /// it only through the public methods (`connection.rs` holds the transports' seam).
    pub(super) fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The server's `Implementation` object as the newest revisions see it:
    /// `{"name","version","title"?,"description"?,"websiteUrl"?,"icons"?}` (older sessions are
    /// sent the keys their schema has).
    pub fn server_info(&self) -> Value {
        self.engine().server_info()
    }

    /// A snapshot of the current dispatch table (lock-free).
    pub fn table(&self) -> Arc<DispatchTable> {
        self.engine().table()
    }

    /// The `ServerCapabilities` object that `server/discover` and the legacy `initialize`
    /// result advertise: `tools`/`prompts`/`resources` when any are registered, each with
    /// `listChanged` (and `resources.subscribe`), `completions`, `logging`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#capability-negotiation>).
    pub fn capabilities(&self) -> Value {
        self.engine().capabilities_for(true)
    }

    /// The params field that the HTTP `Mcp-Name` header mirrors for `method`, if any
    /// (`name` for `tools/call` and `prompts/get`, `uri` for `resources/read`, an RPC's
    /// routing name). A parsed `tools/call` may carry its `name` apart from `params`: read it
    /// with [`Request::tool_name`](crate::jsonrpc::Request::tool_name).
    pub fn routing_field(&self, method: &str) -> Option<&'static str> {
        self.engine().routing_field(method)
    }

    /// True when a 2026-07-28 request for `method` would be dispatched (not `-32601`).
    pub fn serves_modern_method(&self, method: &str) -> bool {
        self.engine().serves_modern_method(method)
    }

    /// A token cancelled when [`shutdown`](Self::shutdown) is called; every request's own
    /// cancellation token is a child of it.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.engine().lifecycle.shutdown
    }

    /// True when `ctx`'s caller may use `primitive`, whose registration declares `roles` and
    /// `scopes` (the server's [`Policy`](crate::auth::Policy) decides on roles and on what a
    /// token's scopes grant).
    pub fn allows(
        &self,
        ctx: &RequestContext,
        primitive: crate::auth::Primitive<'_>,
        roles: &[&str],
        scopes: &[&str],
    ) -> bool {
        self.engine().allows(ctx, primitive, roles, scopes)
    }

    /// Every OAuth scope a primitive of this server declares (`scopes = [...]`), sorted, once
    /// each: what protected resource metadata lists in `scopes_supported`.
    pub fn declared_scopes(&self) -> Vec<String> {
        let mut all: std::collections::BTreeSet<String> = self.engine().table().declared_scopes().into_iter().collect();
        all.extend(self.engine().pipelines.rpcs.values().flat_map(|r| r.scopes.iter().map(|s| (*s).to_owned())));
        all.into_iter().collect()
    }

    /// A handle that publishes list changes, resource updates and extension events to the
    /// server's listen subscriptions.
    pub fn publisher(&self) -> crate::subscriptions::Publisher {
        crate::subscriptions::Publisher { hub: self.engine().hub.clone(), mount: None }
    }

    /// The publisher for the code of a group mounted with
    /// [`ServerBuilder::mount`](crate::ServerBuilder::mount): like [`publisher`](Self::publisher),
    /// but [`resource_updated`](crate::subscriptions::Publisher::resource_updated) takes the URI
    /// the group declared and announces the public one, so `invoice://7` of a group mounted with
    /// `Mount::prefix("billing")` reaches clients subscribed to `billing+invoice://7`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions>).
    /// Hand it to the mounted crate's start-up code. `None` when `group` is not mounted.
    pub fn mounted_publisher(&self, group: &str) -> Option<crate::subscriptions::Publisher> {
        let (mount, _) = self.engine().mounts.get(group)?;
        Some(crate::subscriptions::Publisher { hub: self.engine().hub.clone(), mount: Some(Arc::new(mount.clone())) })
    }

    /// How many built-in `subscriptions/listen` subscriptions this server is serving now, over
    /// every transport and connection. A subscription leaves the count when it ends for any reason:
    /// its result was sent, the client cancelled it, or its transport broke (the HTTP connection
    /// closed). Subscriptions served by a handler installed with
    /// [`ServerBuilder::replace_listen`] are not counted: the author tracks those.
    pub fn open_subscriptions(&self) -> usize {
        self.engine().open_subscriptions.count()
    }

    /// The resource URIs that clients of this server instance are subscribed to now, as a
    /// [`watch`](tokio::sync::watch) of a `BTreeSet<String>` that changes when a URI gains its
    /// first subscriber or loses its last: code that produces
    /// [`resource_updated`](crate::subscriptions::Publisher::resource_updated) events can
    /// watch (or poll upstream) only what someone listens to.
    ///
    /// A URI counts while a legacy session holds a `resources/subscribe` of it
    /// ([2025-11-25](https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions);
    /// until `resources/unsubscribe` or the session ends) or an open built-in
    /// `subscriptions/listen` was granted it in `resourceSubscriptions`
    /// ([2026-07-28](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions);
    /// until the subscription ends). The URIs are as clients sent them (public URIs of mounted
    /// groups), whether or not a resource of that URI exists. Subscriptions served by a handler
    /// installed with [`ServerBuilder::replace_listen`] are not counted, nor those of other
    /// instances behind a shared [`DeliveryHub`](crate::subscriptions::DeliveryHub): each
    /// instance follows its own subscribers, and an update published on any reaches all.
    pub fn subscribed_resources(&self) -> tokio::sync::watch::Receiver<std::collections::BTreeSet<String>> {
        self.engine().resource_interest.watch()
    }

    /// True when the extension `id` was declared with
    /// [`ServerBuilder::extension_capability`] (it is then advertised by `server/discover`).
    pub fn has_extension(&self, id: &str) -> bool {
        self.engine().has_extension(id)
    }

    /// A notifier for one request of a transport written outside this crate: it writes into
    /// `tx` (see [`outbound_channel`](crate::context::outbound_channel)) until `cancel` fires,
    /// through the server's outgoing message filters.
    pub fn notifier(&self, tx: crate::context::OutboundSender, cancel: CancellationToken) -> Notifier {
        self.engine().notifier(tx, cancel)
    }

    /// Serves one JSON-RPC request: the one entry point of the request pipeline, for every
    /// transport (docs/filters.md draws the stages it runs; docs/architecture.md lists each
    /// stage's errors).
    ///
    /// With a legacy `session` (one that began with `initialize`) the request is served under
    /// the session's revision; without one it is served statelessly (2026-07-28), except a
    /// `ping` without the 2026-07-28 `_meta`, which answers `{}` as the legacy lifecycle allows
    /// before `initialize`. `origin` carries the request's cancellation token, its notifier,
    /// the authenticated caller, the transport's trace context and the connection the request
    /// came on (which the listen limits count subscriptions per).
    ///
    /// Returns the result object (stamped for its era; a [`ResultObject`], of which
    /// [`write_json`](ResultObject::write_json) writes the JSON and
    /// [`into_value`](ResultObject::into_value) makes the `Value`) or the JSON-RPC error to send:
    /// `-32601` for a method this server does not serve, `-32602` for params that do not
    /// decode, `-32022` for an unsupported `_meta` protocol version, `-32603` when a handler
    /// panicked. The checks run when this is called; the returned future owns everything it
    /// needs (`'static`), borrows neither `self` nor `session` (`use<>`), so it can be made
    /// and then stored or spawned, and runs the filters and the handler.
    pub fn handle_request(
        &self,
        req: Request,
        session: Option<&Arc<LegacySession>>,
        origin: Origin,
    ) -> impl Future<Output = Result<ResultObject, McpError>> + Send + 'static + use<> {
        self.engine().handle_request(req, session, origin)
    }

    /// Shuts down at once: in-flight requests are cancelled, transports stop accepting and
    /// streams end with their results. [`drain`](Self::drain) stops without cancelling.
    pub fn shutdown(&self) {
        self.engine().lifecycle.shutdown.cancel();
    }
}

impl RequestContext {
    /// The running server: change its tools at run time, publish events, look up its table
    /// from inside a handler.
    pub fn server(&self) -> Server {
        // Every context is made by the pipeline with its engine as the runtime handle
        // (`Engine::of` is the fallible form for the pipeline's own steps).
        Server::of(self).unwrap_or_else(|| unreachable!("request contexts carry their server's engine"))
    }
}

impl Server {
    /// The server behind `ctx`: the engine the pipeline made the context with.
    fn of(ctx: &RequestContext) -> Option<Server> {
        ctx.runtime().clone().downcast::<Engine>().ok().map(|engine| Server { engine })
    }
}

impl FromRequestContext for Server {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Server::of(ctx).ok_or_else(|| McpError::internal("no server behind this request context"))
    }
}
