use super::Server;
use crate::context::StateMap;
use crate::pipeline::{CacheConfig, Engine};
use crate::pipeline::{RpcMethod, methods::ToolsCall};
use crate::registry::{BuildError, DispatchTable};
use arc_swap::ArcSwap;
use std::sync::Arc;
use std::time::Duration;

/// Configures and builds a [`Server`].
///
/// ```
/// # use switchyard::Server;
/// # struct HttpClient;
/// # fn main() -> Result<(), switchyard::BuildError> {
/// let server = Server::builder("weather", "1.0.0")
///     .instructions("Weather tools for the agent")
///     .state(HttpClient)
///     .build()?;
/// # Ok(()) }
/// ```
pub struct ServerBuilder {
    name: String,
    version: String,
    title: Option<String>,
    description: Option<String>,
    website_url: Option<String>,
    icons: Vec<crate::Icon>,
    listing: Vec<Arc<dyn crate::registry::ListingFilter>>,
    build_checks: Vec<(crate::registry::BuildCheck, String)>,
    instructions: Option<String>,
    groups: Option<Vec<String>>,
    /// Groups served whatever [`groups`](Self::groups) selects (an extension's own).
    included_groups: Vec<String>,
    state: StateMap,
    cache: CacheConfig,
    page_size: usize,
    policy: std::sync::Arc<dyn crate::auth::Policy>,
    tools_call: Option<(crate::pipeline::ToolsCallReplacement, String)>,
    listen: Option<crate::subscriptions::replacement::ListenReplacement>,
    message_filters: Vec<Arc<dyn crate::pipeline::MessageFilter>>,
    raw_filters: Vec<crate::pipeline::raw::RawFilterValue>,
    hub: Arc<dyn crate::subscriptions::DeliveryHub>,
    /// Where `delivery_hub` was called, for build errors.
    hub_site: Option<String>,
    request_state_key: Option<(Vec<u8>, String)>,
    /// Keys being rotated out: states sealed with them are still opened.
    request_state_previous_keys: Vec<(Vec<u8>, String)>,
    request_state_ttl: Duration,
    extensions: serde_json::Map<String, serde_json::Value>,
    resources: Vec<super::DynamicResource>,
    tools: Vec<super::DynamicTool>,
    prompts: Vec<super::DynamicPrompt>,
    templates: Vec<super::DynamicResourceTemplate>,
    listen_limits: crate::subscriptions::ListenLimits,
    readiness_checks: Vec<(String, crate::pipeline::lifecycle::ReadinessProbe)>,
    metrics_sources: Vec<super::metrics::MetricsSource>,
    mounts: crate::registry::Mounts,
    tool_transforms: crate::registry::ToolTransforms,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    pub(crate) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerBuilder {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
            listing: Vec::new(),
            build_checks: Vec::new(),
            instructions: None,
            groups: None,
            included_groups: Vec::new(),
            state: StateMap::default(),
            cache: CacheConfig::default(),
            page_size: 100,
            policy: std::sync::Arc::new(crate::auth::RolePolicy),
            tools_call: None,
            listen: None,
            message_filters: Vec::new(),
            raw_filters: Vec::new(),
            hub: Arc::new(crate::subscriptions::InProcessHub::default()),
            hub_site: None,
            request_state_key: None,
            request_state_previous_keys: Vec::new(),
            request_state_ttl: Duration::from_secs(600),
            extensions: serde_json::Map::new(),
            resources: Vec::new(),
            tools: Vec::new(),
            prompts: Vec::new(),
            templates: Vec::new(),
            listen_limits: crate::subscriptions::ListenLimits::default(),
            readiness_checks: Vec::new(),
            metrics_sources: Vec::new(),
            mounts: Default::default(),
            tool_transforms: Default::default(),
        }
    }

    /// The server's display `title` in its `Implementation` (`serverInfo`), from 2025-06-18 on
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization>);
    /// [`build`](Self::build) refuses a blank one.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The server's `description` in `serverInfo` (2025-11-25 and later clients see it).
    /// [`server_builder!`](crate::server_builder) sets it from `Cargo.toml`'s `description`.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The server's `websiteUrl` in `serverInfo` (2025-11-25 and later): an `https:` or `http:`
    /// URL, checked by [`build`](Self::build). [`server_builder!`](crate::server_builder) sets it
    /// from `Cargo.toml`'s `homepage`, else `repository`.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Adds an icon to `serverInfo.icons` (2025-11-25 and later, SEP-973); checked by
    /// [`build`](Self::build) as [`Icon::check`](crate::Icon::check) says.
    pub fn icon(mut self, icon: crate::Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Adds a [`ListingFilter`](crate::registry::ListingFilter): it shapes every definition a
    /// list answer holds for the client asking (filters run in the order added).
    pub fn listing_filter(mut self, filter: impl crate::registry::ListingFilter) -> Self {
        self.listing.push(Arc::new(filter));
        self
    }

    /// Adds a check [`build`](Self::build) runs over the finished dispatch table (every
    /// registration and run-time resource in it): an error it returns fails the build beside
    /// every other problem found. Extensions use it for rules across definitions.
    #[track_caller]
    pub fn build_check(
        mut self,
        check: impl FnOnce(&DispatchTable) -> Result<(), BuildError> + Send + Sync + 'static,
    ) -> Self {
        let at = std::panic::Location::caller().to_string();
        self.build_checks.push((Box::new(check), at));
        self
    }

    /// Fills `description` and `websiteUrl` from a package's metadata, skipping empty values
    /// and keeping values already set; `websiteUrl` is the homepage, or the repository when the
    /// homepage is not an `http(s)` URL. Called by [`server_builder!`](crate::server_builder).
    #[doc(hidden)]
    pub fn cargo_package(mut self, description: &str, homepage: &str, repository: &str) -> Self {
        if self.description.is_none() && !description.trim().is_empty() {
            self.description = Some(description.trim().to_owned());
        }
        // A homepage that is not a web URL gives way to a repository that is; with neither
        // valid, the first stays so that `build()` names it rather than dropping it unseen.
        let given: Vec<&str> = [homepage, repository].into_iter().map(str::trim).filter(|s| !s.is_empty()).collect();
        let site = given.iter().find(|s| crate::vocab::metadata::check_web_url(s).is_ok()).or(given.first()).copied();
        if self.website_url.is_none()
            && let Some(site) = site
        {
            self.website_url = Some(site.to_owned());
        }
        self
    }

    /// The `Implementation` object (`serverInfo`) with every field set.
    ///
    /// Errors: a sentence for a blank `title` or `description` (refused as on a definition),
    /// or an icon or `websiteUrl` that breaks the rules.
    fn implementation(&self) -> Result<serde_json::Value, String> {
        for (field, value) in [("title", &self.title), ("description", &self.description)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return Err(format!("`{field}` must not be empty"));
            }
        }
        let mut info = serde_json::Map::new();
        info.insert("name".into(), self.name.clone().into());
        info.insert("version".into(), self.version.clone().into());
        if let Some(t) = &self.title {
            info.insert("title".into(), t.clone().into());
        }
        if let Some(d) = &self.description {
            info.insert("description".into(), d.clone().into());
        }
        if let Some(url) = &self.website_url {
            crate::vocab::metadata::check_web_url(url).map_err(|e| format!("websiteUrl: {e}"))?;
            info.insert("websiteUrl".into(), url.clone().into());
        }
        crate::model::check_icons(&self.icons)?;
        if !self.icons.is_empty() {
            info.insert("icons".into(), serde_json::json!(self.icons));
        }
        Ok(serde_json::Value::Object(info))
    }

    /// `instructions` sent in `server/discover` and the legacy `initialize` result.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Serves only registrations whose `group` is listed (every registration is in group
    /// `"default"` unless its attribute says `group = "..."`). Without this call every group is
    /// served. Lets one binary host several servers with different registration sets. Groups
    /// given to [`include_group`](Self::include_group) are served as well.
    pub fn groups<I, S>(mut self, groups: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups = Some(groups.into_iter().map(Into::into).collect());
        self
    }

    /// Serves the registrations of `group` whatever [`groups`](Self::groups) selects, before or
    /// after this call; without a selection every group is served anyway. An extension's
    /// `install` calls it for the group its own registrations are in (the Tasks extension's
    /// filter and `tasks/*` methods, say), so that selecting the application's groups cannot
    /// leave an installed extension half there: declared in `server/discover` while its methods
    /// answer `-32601` and its filter never runs.
    pub fn include_group(mut self, group: impl Into<String>) -> Self {
        let group = group.into();
        if !self.included_groups.contains(&group) {
            self.included_groups.push(group);
        }
        self
    }

    /// Shares `value` with handlers through the [`State<T>`](crate::State) extractor.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Sets the cache hints of cacheable results.
    pub fn cache(mut self, cache: CacheConfig) -> Self {
        self.cache = cache;
        self
    }

    /// Items per page of `tools/list`, `prompts/list`, `resources/list` and
    /// `resources/templates/list` (default 100, minimum 1); further pages via `nextCursor`.
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Sets the authorization policy (default [`RolePolicy`](crate::auth::RolePolicy): declared
    /// `roles` are enforced). See [`auth`](crate::auth).
    pub fn policy(mut self, policy: impl crate::auth::Policy) -> Self {
        self.policy = std::sync::Arc::new(policy);
        self
    }

    /// Adds a readiness check named `name` (e.g. `"tasks store"`): `check` answers `Ok(())`
    /// while what it checks (a database, a broker, a downstream service) can be used, and
    /// `Err(reason)` when it cannot. [`Server::readiness`](crate::Server::readiness) runs every
    /// check at once, each within 2 s (longer counts as failing), and the HTTP transport answers
    /// its readiness probe (`/readyz`, [`HttpConfig::probes`](crate::transport::http::HttpConfig::probes))
    /// with them: 200 when all pass, 503 otherwise. Keep checks cheap (one round trip); a load
    /// balancer may probe every second.
    ///
    /// A delivery hub that spans instances adds its own check (`"delivery hub"`, failing while
    /// the broker link is down); the Tasks extension adds `"tasks store"`.
    pub fn readiness_check<F, Fut>(mut self, name: impl Into<String>, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
    {
        self.readiness_checks.push((name.into(), Arc::new(move || Box::pin(check()))));
        self
    }

    /// Adds a source of metric readings ([`Server::metrics`](crate::Server::metrics)): `source`
    /// returns the current value of each of its metrics when an exporter collects (every
    /// export interval, e.g. 60 s over OTLP), so it must be cheap and must not block. Each name
    /// keeps one kind, unit and description for the server's life. The Tasks extension adds its
    /// own (`switchyard.tasks.*`).
    pub fn metrics_source(mut self, source: impl Fn() -> Vec<crate::server::Metric> + Send + Sync + 'static) -> Self {
        self.metrics_sources.push(Arc::new(source));
        self
    }

    /// Replaces the delivery hub between publishers and listen subscriptions (default: the
    /// in-process [`InProcessHub`](crate::subscriptions::InProcessHub)).
    ///
    /// [`build`](Self::build) fails when the hub spans instances
    /// ([`DeliveryHub::spans_instances`](crate::subscriptions::DeliveryHub::spans_instances))
    /// and no [`request_state_key`](Self::request_state_key) was given.
    #[track_caller]
    pub fn delivery_hub(mut self, hub: impl crate::subscriptions::DeliveryHub) -> Self {
        self.hub = Arc::new(hub);
        self.hub_site = Some(std::panic::Location::caller().to_string());
        self
    }

    /// Caps the `subscriptions/listen` subscriptions one transport connection and one caller
    /// may hold open (default [`ListenLimits::default`](crate::subscriptions::ListenLimits):
    /// 1 000 per connection, 10 000 per caller). A listen request over a limit fails with
    /// `-32603` and `data: {"reason": "listenLimit", "limit": N, "scope": "connection" | "principal"}`,
    /// and the connection stays usable. The command line's `--listen-max-per-connection` and
    /// `--listen-max-per-principal` override these ([`cli`](crate::cli)).
    pub fn listen_limits(mut self, limits: crate::subscriptions::ListenLimits) -> Self {
        self.listen_limits = limits;
        self
    }

    /// Declares that the server supports the extension `id` (e.g.
    /// `"io.modelcontextprotocol/tasks"`): `server/discover` then lists
    /// `capabilities.extensions[id] = settings`
    /// ([server/discover](https://modelcontextprotocol.io/specification/2026-07-28/server/discover),
    /// [extension negotiation](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#extension-negotiation)).
    /// Extensions call this when they are installed; declaring one twice keeps the last settings.
    /// The legacy `initialize` result does not carry extensions (2025-11-25 has no such
    /// capability).
    pub fn extension_capability(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Serves `resource` as a static resource from the start, beside the `#[mcp_resource]`
    /// registrations (it replaces one with the same URI). Resources whose set is only known at
    /// run time (loaded from files, say) come in this way; [`Server::add_resources`] changes them
    /// later.
    pub fn resource(mut self, resource: super::DynamicResource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Serves `tool` from the start, beside the `#[mcp_tool]` registrations (it replaces one
    /// of the same name; of two given here, the last). Tools whose set is only known at run
    /// time (from configuration, a plugin, a remote catalog) come in this way;
    /// [`Server::add_tool`](crate::Server::add_tool) and
    /// [`remove_tool`](crate::Server::remove_tool) change them later.
    ///
    /// [`build`](Self::build) fails with [`BuildError::Invalid`] (kind `tool`) when it breaks a
    /// check of [`DynamicTool`](super::DynamicTool).
    pub fn tool(mut self, tool: super::DynamicTool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Serves `prompt` from the start, beside the `#[mcp_prompt]` registrations (it replaces
    /// one of the same name; of two given here, the last);
    /// [`Server::add_prompt`](crate::Server::add_prompt) and
    /// [`remove_prompt`](crate::Server::remove_prompt) change them later.
    ///
    /// [`build`](Self::build) fails with [`BuildError::Invalid`] (kind `prompt`) when it breaks
    /// a check of [`DynamicPrompt`](super::DynamicPrompt).
    pub fn prompt(mut self, prompt: super::DynamicPrompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Serves `template` from the start, beside the `#[mcp_resource]` templates (it replaces
    /// one written the same way; of two given here, the last);
    /// [`Server::add_resource_template`](crate::Server::add_resource_template) and
    /// [`remove_resource_template`](crate::Server::remove_resource_template) change them later.
    ///
    /// [`build`](Self::build) fails with [`BuildError::Invalid`] (kind `resource`) when it
    /// breaks a check of [`DynamicResourceTemplate`](super::DynamicResourceTemplate).
    pub fn resource_template(mut self, template: super::DynamicResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds a message filter (see [`MessageFilter`](crate::pipeline::MessageFilter)); the first
    /// added is the outermost in both directions.
    pub fn message_filter(mut self, filter: impl crate::pipeline::MessageFilter) -> Self {
        self.message_filters.push(Arc::new(filter));
        self
    }

    /// Adds a raw filter value (see [`RawFilter`](crate::pipeline::RawFilter)) around every
    /// request, in the chain of the `#[mcp_filter]` raw filters: ascending `order`, the first the
    /// outermost; at equal `order`, `#[mcp_filter]` functions and values sort by name (a value's
    /// is its type name) and values of the same type keep the order they were added in.
    ///
    /// A server with no raw filter (none declared, none added) skips the chain entirely.
    pub fn raw_filter<F: crate::pipeline::RawFilter>(mut self, order: i32, filter: F) -> Self {
        self.raw_filters.push(crate::pipeline::raw::RawFilterValue {
            order,
            name: std::any::type_name::<F>(),
            filter: Arc::new(filter),
        });
        self
    }

    /// The HMAC-SHA256 key that authenticates `requestState`
    /// ([MRTR server requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#server-requirements-basic-workflow)),
    /// at least 32 bytes. Give every replica behind a load balancer the same key so that a retry
    /// may reach any of them.
    ///
    /// Without this call a random key is drawn once per process (shared by every server in
    /// it): states then survive neither a restart nor a hop to another process, and a client
    /// whose state is rejected gets `-32602` and starts the call again.
    ///
    /// [`build`](Self::build) fails when the key is shorter than 32 bytes.
    #[track_caller]
    pub fn request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.request_state_key = Some((key.into(), std::panic::Location::caller().to_string()));
        self
    }

    /// A key being rotated out: `requestState` values sealed with it are still accepted (new
    /// ones are sealed with [`request_state_key`](Self::request_state_key)). Call it once per
    /// older key. A rolling deploy that changes the key without breaking input rounds that cross
    /// old and new instances:
    ///
    /// 1. deploy every instance with the new key here, still sealing with the old one;
    /// 2. deploy every instance sealing with the new key, the old one here;
    /// 3. after the [lifetime](Self::request_state_ttl) of the last old state, drop the old key.
    ///
    /// [`build`](Self::build) fails when a key is shorter than 32 bytes, or when there is no
    /// [`request_state_key`](Self::request_state_key).
    #[track_caller]
    pub fn request_state_previous_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.request_state_previous_keys.push((key.into(), std::panic::Location::caller().to_string()));
        self
    }

    /// How long a `requestState` stays valid after it was issued (default 10 minutes); a retry
    /// with an older state gets `-32602`.
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Replaces the whole `tools/call` pipeline after matching and authorization: `handler`
    /// receives the decoded params and answers instead of the alternate filters, the ordinary
    /// filters and the tool. For servers that route calls elsewhere (a proxy, a sandbox).
    ///
    /// [`build`](Self::build) fails when typed or alternate filters are registered on
    /// `tools/call` as well: they would be skipped silently.
    #[track_caller]
    pub fn replace_tools_call<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(crate::RequestContext, crate::CallToolParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<crate::CallToolResult, crate::McpError>> + Send + 'static,
    {
        let at = std::panic::Location::caller().to_string();
        let f: crate::pipeline::ToolsCallReplacement = Arc::new(move |ctx, p| Box::pin(handler(ctx, p)));
        self.tools_call = Some((f, at));
        self
    }

    /// Replaces the built-in `subscriptions/listen` handler
    /// ([subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)):
    /// for every listen request, `handler` receives the request context and the subscription's
    /// [`ListenStream`](crate::subscriptions::ListenStream) and owns that stream. The built-in
    /// grant, acknowledgement, tracking ([`Server::open_subscriptions`]) and automatic fan-out of
    /// published events are all off for it: the handler sends the
    /// `notifications/subscriptions/acknowledged` itself, then any tagged notifications, and
    /// returns the `SubscriptionsListenResult` (a JSON object; `resultType` and
    /// `_meta["io.modelcontextprotocol/subscriptionId"]` are added when missing) when it ends.
    ///
    /// What still applies: only 2026-07-28 requests reach it (a legacy session gets `-32601`); a
    /// transport that cannot hold a stream answers `-32601`; a filter that is not an object or has
    /// a standard key of the wrong type is `-32602`
    /// ([notification filter](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#notification-filter));
    /// the [`listen_limits`](Self::listen_limits) count its subscriptions and refuse one over
    /// them before the handler runs;
    /// global raw filters run around it and may refuse the request before it runs. Listen has no
    /// typed or alternate filters (`#[mcp_filter]` cannot name `subscriptions/listen`), so nothing
    /// is skipped silently.
    ///
    /// How it ends: when the client closes the HTTP response or cancels the listen id on stdio,
    /// the handler's future is dropped and nothing is answered. On server shutdown
    /// [`ListenStream::ended`](crate::subscriptions::ListenStream::ended) resolves and the
    /// handler's result is sent (on stdio followed by `notifications/cancelled`); a handler that
    /// has not returned 2 s after shutdown began is dropped and the standard result is sent.
    /// An error it returns is sent as the listen request's JSON-RPC error.
    pub fn replace_listen<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(crate::RequestContext, crate::subscriptions::ListenStream) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, crate::McpError>> + Send + 'static,
    {
        self.listen = Some(Arc::new(move |ctx, stream| Box::pin(handler(ctx, stream))));
        self
    }

    /// Collects the registrations of the selected groups into the dispatch table.
    ///
    /// Errors: [`BuildError`] for a name registered twice (naming both definitions), a
    /// registration that is invalid at run time, a handler taking `State<T>` that was never
    /// given to [`state`](Self::state), or a setting that cannot work; every problem at once
    /// ([`BuildError::Several`]) when there are several. Nothing is served until this succeeds.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some(selected) = &mut self.groups {
            for group in std::mem::take(&mut self.included_groups) {
                if !selected.contains(&group) {
                    selected.push(group);
                }
            }
        }
        let groups = self.groups.as_deref();
        let table = DispatchTable::from_inventory_mounted(groups, &self.mounts);
        let pipelines = crate::pipeline::build(groups);
        let fields = crate::subscriptions::collect_fields(groups);
        let mut errors = super::state_check::missing_state(&self.state, groups);
        let info = self.implementation().unwrap_or_else(|reason| {
            errors.push(BuildError::Invalid {
                kind: "server",
                name: self.name.clone(),
                site: "ServerBuilder".to_owned(),
                reason,
            });
            serde_json::Value::Null
        });
        if let Some((_, at)) = &self.tools_call
            && let Some(sites) = pipelines.as_ref().ok().and_then(|p| p.filter_sites.get(ToolsCall::METHOD))
        {
            errors.push(BuildError::Invalid {
                kind: "method",
                name: ToolsCall::METHOD.to_owned(),
                site: at.clone(),
                reason: format!(
                    "a replacement handler cannot be combined with tools/call filters, which it would skip: {}",
                    sites.join(", ")
                ),
            });
        }
        if let Some((key, at)) = &self.request_state_key
            && key.len() < crate::input::MIN_KEY_BYTES
        {
            errors.push(BuildError::Invalid {
                kind: "setting",
                name: "request_state_key".to_owned(),
                site: at.clone(),
                reason: format!(
                    "the requestState key has {} bytes; use at least {} random bytes",
                    key.len(),
                    crate::input::MIN_KEY_BYTES
                ),
            });
        }
        for (key, at) in &self.request_state_previous_keys {
            let reason = if self.request_state_key.is_none() {
                "a previous requestState key needs a current one (request_state_key) to seal with".to_owned()
            } else if key.len() < crate::input::MIN_KEY_BYTES {
                format!(
                    "the previous requestState key has {} bytes; use at least {} random bytes",
                    key.len(),
                    crate::input::MIN_KEY_BYTES
                )
            } else {
                continue;
            };
            errors.push(BuildError::Invalid {
                kind: "setting",
                name: "request_state_previous_key".to_owned(),
                site: at.clone(),
                reason,
            });
        }
        if self.request_state_key.is_none() && self.hub.spans_instances() {
            errors.push(BuildError::Invalid {
                kind: "setting",
                name: "request_state_key".to_owned(),
                site: self.hub_site.clone().unwrap_or_else(|| "ServerBuilder::delivery_hub".to_owned()),
                reason: "the delivery hub is shared by several instances, so an input-required retry may reach \
                         an instance other than the one that signed its requestState; give every instance the \
                         same key with ServerBuilder::request_state_key (at least 32 random bytes, e.g. from \
                         an environment variable or a secret store)"
                    .to_owned(),
            });
        }
        let (table, pipelines, fields) = match (table, pipelines, fields) {
            (Ok(t), Ok(p), Ok(f)) => (t, p, f),
            (t, p, f) => {
                let mut all: Vec<BuildError> = [t.err(), p.err(), f.err()].into_iter().flatten().collect();
                all.append(&mut errors);
                return Err(BuildError::from_all(all).unwrap_or(BuildError::Several(Vec::new())));
            }
        };
        let invalid = |kind: &'static str, name: String, site: &str, reason: String| BuildError::Invalid {
            kind,
            name,
            site: format!("ServerBuilder::{site}"),
            reason,
        };
        let mut table = if self.resources.is_empty() {
            table
        } else {
            let mut entries = Vec::with_capacity(self.resources.len());
            for resource in self.resources {
                let uri = resource.uri().to_owned();
                match resource.into_entry() {
                    Ok(entry) => entries.push(entry),
                    Err(reason) => errors.push(invalid("resource", uri, "resource", reason)),
                }
            }
            table.with_resources(entries)
        };
        for tool in self.tools {
            let name = tool.name().to_owned();
            match tool.into_entry() {
                Ok(entry) => table = table.with_tool(entry),
                Err(reason) => errors.push(invalid("tool", name, "tool", reason)),
            }
        }
        for prompt in self.prompts {
            let name = prompt.name().to_owned();
            match prompt.into_entry() {
                Ok(entry) => table = table.with_prompt(&name, entry),
                Err(reason) => errors.push(invalid("prompt", name, "prompt", reason)),
            }
        }
        for template in self.templates {
            let key = template.uri_template().to_owned();
            match template.into_entry() {
                Ok(entry) => table = table.with_template(entry),
                Err(reason) => errors.push(invalid("resource", key, "resource_template", reason)),
            }
        }
        errors.extend(self.tool_transforms.apply_table(&mut table));
        for (check, at) in self.build_checks {
            if let Err(e) = check(&table) {
                errors.push(match e {
                    BuildError::Invalid { kind, name, site, reason } if site.is_empty() => {
                        BuildError::Invalid { kind, name, site: at, reason }
                    }
                    other => other,
                });
            }
        }
        let tool_limiter = std::sync::OnceLock::new();
        for tool in table.tools().filter(|t| !t.limits.is_none()) {
            let _ = tool_limiter.get_or_init(crate::filters::declared::limiter);
            if let Err(reason) = crate::filters::declared::unsupported(tool.limits) {
                let site = tool.site.map_or_else(|| "ServerBuilder::tool".to_owned(), |s| s.to_string());
                errors.push(BuildError::Invalid { kind: "tool", name: tool.name.clone(), site, reason });
            }
        }
        if let Some(e) = BuildError::from_all(errors) {
            return Err(e);
        }
        let request_state = Arc::new(
            crate::input::StateCodec::new(self.request_state_key.map(|(k, _)| k), self.request_state_ttl)
                .with_previous(self.request_state_previous_keys.into_iter().map(|(k, _)| k).collect()),
        );
        let raw = crate::pipeline::RawChain::new(groups, self.raw_filters);
        let mut readiness_checks = self.readiness_checks;
        if self.hub.spans_instances() {
            let hub = self.hub.clone();
            readiness_checks.push((
                "delivery hub".to_owned(),
                Arc::new(move || {
                    let health = hub.health();
                    Box::pin(async move { health })
                }),
            ));
        }
        Ok(Server {
            engine: Arc::new(Engine {
                name: self.name,
                version: self.version,
                modern_stamp: crate::pipeline::encode::modern_stamp(&info),
                info,
                listing: self.listing,
                instructions: self.instructions,
                table: ArcSwap::from_pointee(table),
                state: Arc::new(self.state),
                cache: self.cache,
                page_size: self.page_size,
                lifecycle: crate::pipeline::lifecycle::Lifecycle::new(readiness_checks, self.metrics_sources),
                policy: self.policy,
                raw,
                pipelines,
                tools_call: self.tools_call.map(|(f, _)| f),
                listen: self.listen,
                open_subscriptions: Arc::default(),
                resource_interest: Arc::default(),
                listen_slots: Arc::new(crate::subscriptions::ListenSlots::new(self.listen_limits)),
                messages: crate::pipeline::MessageFilters::new(self.message_filters),
                hub: self.hub,
                encoded_events: Default::default(),
                request_state,
                fields,
                extensions: self.extensions,
                mounts: self.mounts,
                tool_transforms: self.tool_transforms,
                tool_limiter,
            }),
        })
    }
}

/// Composition: mounted groups and tool transforms (docs/composition.md).
impl ServerBuilder {
    /// Serves the registrations of `group` (tools, prompts, resources, resource templates and
    /// completions) under the prefixes of `mount`: `.mount("billing", Mount::prefix("billing"))`
    /// serves the tool `charge` as `billing_charge` and the resource `invoice://7` as
    /// `billing+invoice://7`, in lists, calls, reads, completions and subscriptions, while each
    /// handler sees the name and URI it declared. `#[mcp_rpc]` methods keep their names; see
    /// [`Mount`](crate::Mount) for the rules and the reasons
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names>,
    /// <https://modelcontextprotocol.io/specification/2025-11-25/server/resources#resource-uris>).
    /// Mounting a group twice keeps the last mount. With [`groups`](Self::groups), the group
    /// must also be selected there.
    ///
    /// Errors, from [`build`](Self::build): [`BuildError::Duplicate`] naming both declarations
    /// (and the mounted group) when two definitions end with one public name or URI;
    /// [`BuildError::Invalid`] (kind `mount`) for a bad prefix or a group with nothing served,
    /// (kind `tool` or `resource`) for a public tool name over 128 characters or a URI without
    /// a scheme under a scheme prefix.
    #[track_caller]
    pub fn mount(mut self, group: impl Into<String>, mount: crate::Mount) -> Self {
        let at = std::panic::Location::caller();
        self.mounts.insert(group.into(), (mount, format!("ServerBuilder::mount ({at})")));
        self
    }

    /// Serves the tool `name` (its name in the table: after a [`mount`](Self::mount)'s prefix)
    /// as `transform` says: renamed, hidden, described anew, with arguments pinned or renamed
    /// ([`ToolTransform`](crate::ToolTransform)). It applies to `#[mcp_tool]`s, mounted tools,
    /// tools given to [`tool`](Self::tool), and tools added later with
    /// [`Server::add_tool`](crate::Server::add_tool) (under their own name; the transform
    /// applies each time one is added). A second transform of one name replaces the first.
    ///
    /// Errors, from [`build`](Self::build): [`BuildError::Invalid`] (kind `transform`, naming
    /// the tool and this call's site) for an unknown tool (unless
    /// [`for_run_time_tool`](crate::ToolTransform::for_run_time_tool)), an unknown argument or
    /// another rule of [`ToolTransform`](crate::ToolTransform); [`BuildError::Duplicate`] when
    /// two tools end with one name.
    #[track_caller]
    pub fn transform_tool(mut self, name: impl Into<String>, transform: crate::ToolTransform) -> Self {
        let at = std::panic::Location::caller().to_string();
        self.tool_transforms.insert(name.into(), transform, format!("ServerBuilder::transform_tool ({at})"));
        self
    }
}
