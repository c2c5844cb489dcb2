//! The server: builder, dispatch of every MCP method for both eras, run-time tool changes.

mod builder;
mod dispatch;
mod dynamic;
mod encode;
mod legacy_meta;
mod methods;
mod session;
mod state_check;

pub use builder::{CacheConfig, ServerBuilder};
pub use dispatch::TASKS_EXTENSION;
pub use dynamic::DynamicTool;
pub use session::LegacySession;

use crate::context::StateMap;
use crate::registry::{DispatchTable, ParamHeader};
use arc_swap::ArcSwap;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A handler that replaces the `tools/call` pipeline (see [`ServerBuilder::replace_tools_call`]).
pub(crate) type ToolsCallReplacement = Arc<
    dyn Fn(
            crate::RequestContext,
            crate::CallToolParams,
        ) -> crate::registry::BoxFuture<Result<crate::CallToolResult, crate::McpError>>
        + Send
        + Sync,
>;

/// A built MCP server: the dispatch table, server identity, configuration and shared state.
///
/// Cheap to clone (one `Arc`); every clone is the same server. Serve it with
/// [`transport::stdio::serve`](crate::transport::stdio::serve) or
/// [`transport::http::router`](crate::transport::http::router), or drive it in-process with
/// [`testing::TestClient`](crate::testing::TestClient).
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

pub(crate) struct ServerInner {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) table: ArcSwap<DispatchTable>,
    pub(crate) state: Arc<StateMap>,
    pub(crate) cache: CacheConfig,
    pub(crate) page_size: usize,
    pub(crate) shutdown: CancellationToken,
    pub(crate) policy: std::sync::Arc<dyn crate::auth::Policy>,
    pub(crate) raw: crate::pipeline::RawChain,
    pub(crate) pipelines: crate::pipeline::Pipelines,
    pub(crate) tools_call: Option<ToolsCallReplacement>,
    /// The replacement `subscriptions/listen` handler (C22), if one was installed.
    pub(crate) listen: Option<crate::subscriptions::replacement::ListenReplacement>,
    /// The built-in listen subscriptions open now (C20).
    pub(crate) open_subscriptions: Arc<crate::subscriptions::OpenSubscriptions>,
    pub(crate) messages: crate::pipeline::MessageFilters,
    pub(crate) hub: Arc<dyn crate::subscriptions::DeliveryHub>,
    /// The latest listen event encoded once for every subscription.
    pub(crate) encoded_events: crate::subscriptions::EncodedEvents,
    pub(crate) request_state: Arc<crate::input::StateCodec>,
    pub(crate) fields:
        std::collections::HashMap<&'static str, &'static crate::subscriptions::SubscriptionFieldRegistration>,
    /// Declared extensions, advertised by `server/discover` under `capabilities.extensions`.
    pub(crate) extensions: serde_json::Map<String, Value>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.inner.name).field("version", &self.inner.version).finish()
    }
}

impl Server {
    /// Starts a builder for a server that identifies itself as `name` / `version`
    /// (`serverInfo` / `io.modelcontextprotocol/serverInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    /// The server's `Implementation` object `{name, version}`.
    pub fn server_info(&self) -> Value {
        json!({ "name": self.inner.name, "version": self.inner.version })
    }

    /// A snapshot of the current dispatch table (lock-free).
    pub fn table(&self) -> Arc<DispatchTable> {
        self.inner.table.load_full()
    }

    /// The `x-mcp-header` annotations of the enabled tool `name` (empty when it has none or does
    /// not exist). Used by the HTTP transport to check `Mcp-Param-*` headers.
    pub fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        self.inner.table.load().tool(name).map(|t| t.param_headers.clone()).unwrap_or_default()
    }

    /// A token cancelled when [`shutdown`](Self::shutdown) is called; every request's own
    /// cancellation token is a child of it.
    pub fn shutdown_token(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    /// True when `ctx`'s caller may use `primitive`, whose registration declares `roles`.
    pub fn allows(&self, ctx: &crate::RequestContext, primitive: crate::auth::Primitive<'_>, roles: &[&str]) -> bool {
        self.inner.policy.allows(ctx.principal(), primitive, roles)
    }

    /// Fails with the forbidden error (`-32600`, HTTP 403) unless `ctx`'s caller may use
    /// `primitive`.
    pub(crate) fn authorize(
        &self,
        ctx: &crate::RequestContext,
        primitive: crate::auth::Primitive<'_>,
        roles: &[&str],
    ) -> Result<(), crate::McpError> {
        if self.allows(ctx, primitive, roles) {
            return Ok(());
        }
        let what = match primitive {
            crate::auth::Primitive::Tool(n) => format!("the tool `{n}`"),
            crate::auth::Primitive::Prompt(n) => format!("the prompt `{n}`"),
            crate::auth::Primitive::Resource(u) => format!("the resource `{u}`"),
            crate::auth::Primitive::Method(m) => format!("the method `{m}`"),
        };
        Err(crate::auth::forbidden(&what))
    }

    /// True when list results depend on the caller (a policy that varies and primitives with
    /// roles): they are then cached `private`.
    pub(crate) fn lists_vary(&self) -> bool {
        self.inner.policy.lists_vary(self.inner.table.load().any_roles())
    }

    /// A handle that publishes list changes, resource updates and extension events to the
    /// server's listen subscriptions.
    pub fn publisher(&self) -> crate::subscriptions::Publisher {
        crate::subscriptions::Publisher { hub: self.inner.hub.clone() }
    }

    /// How many built-in `subscriptions/listen` subscriptions this server is serving now, over
    /// every transport and connection. A subscription leaves the count when it ends for any
    /// reason: its result was sent, the client cancelled it, or its transport broke (the HTTP
    /// connection closed, requirement C20). Subscriptions served by a handler installed with
    /// [`ServerBuilder::replace_listen`] are not counted: the author tracks those.
    pub fn open_subscriptions(&self) -> usize {
        self.inner.open_subscriptions.count()
    }

    /// The server's message filters (for transports).
    pub fn message_filters(&self) -> &crate::pipeline::MessageFilters {
        &self.inner.messages
    }

    /// A notifier for one request: writes into `tx` until `cancel` fires, through the message
    /// filters.
    pub fn notifier(
        &self,
        tx: tokio::sync::mpsc::Sender<crate::context::Outbound>,
        cancel: CancellationToken,
    ) -> crate::context::Notifier {
        crate::context::Notifier::new(tx, cancel).with_filters(self.inner.messages.clone())
    }

    /// [`notifier`](Self::notifier) over the HTTP transport's own request queue.
    pub(crate) fn queued_notifier(
        &self,
        tx: crate::context::queue::Sender<crate::context::Queued>,
        cancel: CancellationToken,
    ) -> crate::context::Notifier {
        crate::context::Notifier::queued(tx, cancel).with_filters(self.inner.messages.clone())
    }

    /// True when the extension `id` was declared with
    /// [`ServerBuilder::extension_capability`] (it is then advertised by `server/discover`).
    pub fn has_extension(&self, id: &str) -> bool {
        self.inner.extensions.contains_key(id)
    }

    /// Begins a graceful shutdown: in-flight requests are cancelled and transports stop accepting.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }
}
