//! [`ResultCache`]: results of cacheable tools, prompts and resource reads reused within
//! their TTL, per caller where they vary by caller.

use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::pipeline::{CacheConfig, RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Who may be served an entry: the values of `cacheScope` in the
/// [caching section](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// Any caller with the same roles and scopes (see [`ResultCache`] on authorization).
    Public,
    /// Only the caller (principal id) it was made for; anonymous calls are not cached.
    Private,
}

/// How one primitive's results are cached: for `ttl`, shared by `scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    /// How long an entry is served (milliseconds on the wire: `ttlMs`).
    pub ttl: Duration,
    /// Who shares an entry.
    pub scope: CacheScope,
}

impl CachePolicy {
    /// Results the same for every caller, reused for `ttl`.
    pub fn public(ttl: Duration) -> CachePolicy {
        CachePolicy { ttl, scope: CacheScope::Public }
    }

    /// Results that vary by caller, reused for `ttl` by the same caller only.
    pub fn private(ttl: Duration) -> CachePolicy {
        CachePolicy { ttl, scope: CacheScope::Private }
    }
}

/// How long an entry whose TTL is past the clock's range is kept: about a century.
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 86_400);

#[derive(Debug, Clone)]
struct Entry {
    /// On tokio's clock, so that tests with paused time see entries expire.
    expires: Instant,
    result: Arc<Value>,
}

/// Results of cacheable primitives kept in memory and answered again, without running the
/// handler, to the same call within their TTL (a [`moka`](https://docs.rs/moka) cache of at
/// most `max_entries` entries, least-recently-and-frequently used evicted first).
///
/// What is cacheable is said here, per primitive: [`tool`](Self::tool) and
/// [`prompt`](Self::prompt) with a [`CachePolicy`]; [`resources`](Self::resources) caches
/// `resources/read` as the server advertises it, for [`CacheConfig::read_ttl`] (`ttlMs` of
/// the result) with `cacheScope: "private"`, so a server whose `read_ttl` is 0 (the default,
/// "do not reuse") caches no read. A result that carries `ttlMs` or `cacheScope` of its own
/// (a handler may set them; the era's stamping keeps them) is held no longer than its `ttlMs`
/// (0: not at all), and privately when it says `"private"`.
///
/// The key is the method, the tool or prompt name (resource URI), the protocol version, the
/// canonical JSON of `arguments` (object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
/// are one call), and the caller:
/// - `Private`: the principal's id; anonymous calls are neither served from nor put in the
///   cache.
/// - `Public`: the caller's roles and scopes, what the default
///   [`RolePolicy`](crate::auth::RolePolicy) decides on.
///
/// The cache runs among the raw filters, before the server's authorization, so a hit is
/// answered only once the server's [`Policy`](crate::auth::Policy) and scopes allow the caller
/// and while the primitive is served (an enabled tool, a URI a resource serves): a tool
/// disabled, removed or restricted since, or a caller the policy refuses, runs the call
/// instead, which answers as an uncached call would.
///
/// Never cached: errors, `isError: true` tool results, results whose `resultType` is not
/// `complete` (input required, a task), and calls that answer input requests
/// (`inputResponses` or `requestState` in the params).
///
/// Cost: on a call of a cacheable primitive, the key (one canonical serialization of the
/// arguments) and a lookup; on a hit, a clone of the result instead of the handler; every
/// other call, one hash lookup of the name.
#[derive(Clone)]
pub struct ResultCache {
    cache: moka::future::Cache<String, Entry>,
    tools: Arc<HashMap<String, CachePolicy>>,
    prompts: Arc<HashMap<String, CachePolicy>>,
    resource_reads: Option<CachePolicy>,
}

impl std::fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultCache")
            .field("entries", &self.cache.entry_count())
            .field("tools", &self.tools)
            .field("prompts", &self.prompts)
            .field("resource_reads", &self.resource_reads)
            .finish()
    }
}

impl ResultCache {
    /// An empty cache of at most `max_entries` results; nothing is cacheable until marked.
    pub fn new(max_entries: u64) -> ResultCache {
        ResultCache {
            cache: moka::future::Cache::builder().max_capacity(max_entries).build(),
            tools: Arc::default(),
            prompts: Arc::default(),
            resource_reads: None,
        }
    }

    /// Caches the results of tool `name` by `policy`.
    pub fn tool(mut self, name: impl Into<String>, policy: CachePolicy) -> ResultCache {
        Arc::make_mut(&mut self.tools).insert(name.into(), policy);
        self
    }

    /// Caches the results of prompt `name` by `policy`.
    pub fn prompt(mut self, name: impl Into<String>, policy: CachePolicy) -> ResultCache {
        Arc::make_mut(&mut self.prompts).insert(name.into(), policy);
        self
    }

    /// Caches `resources/read` as `config` advertises it: for `read_ttl`, privately. Give it
    /// the [`CacheConfig`] given to [`ServerBuilder::cache`](crate::ServerBuilder::cache).
    pub fn resources(mut self, config: &CacheConfig) -> ResultCache {
        self.resource_reads = (!config.read_ttl.is_zero()).then_some(CachePolicy::private(config.read_ttl));
        self
    }

    /// Entries held (moka counts lazily: pending work is run first).
    pub async fn entries(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.entry_count()
    }

    /// The policy of a call of `method` to `name`, if cacheable.
    fn policy(&self, method: &str, name: &str) -> Option<CachePolicy> {
        match method {
            "resources/read" => self.resource_reads,
            "tools/call" => self.tools.get(name).copied(),
            "prompts/get" => self.prompts.get(name).copied(),
            _ => None,
        }
    }

    /// The key of a call with the canonical `arguments`, `None` when it is not to be cached
    /// (anonymous and private).
    fn key(ctx: &RequestContext, method: &str, name: &str, arguments: &str, scope: CacheScope) -> Option<String> {
        let mut key = String::with_capacity(128);
        for part in [method, name, ctx.protocol_version()] {
            key.push_str(part);
            key.push('\0');
        }
        let principal = ctx.principal();
        match scope {
            CacheScope::Private => {
                key.push_str("private\0");
                key.push_str(&principal?.id);
            }
            CacheScope::Public => {
                key.push_str("public\0");
                if let Some(p) = principal {
                    // BTreeSets: sorted, so one set of roles is one key. Each name is
                    // length-prefixed: a role named "admin,staff" is not the roles "admin"
                    // and "staff", whatever characters the token's claims hold.
                    for part in [&p.roles, &p.scopes] {
                        key.push_str(&part.len().to_string());
                        key.push(';');
                        for name in part {
                            key.push_str(&name.len().to_string());
                            key.push(':');
                            key.push_str(name);
                        }
                    }
                }
            }
        }
        key.push('\0');
        key.push_str(arguments);
        Some(key)
    }

    /// The canonical `arguments` of a call's `params`, `None` when the call answers input
    /// requests (its result depends on the answers: never cached).
    fn arguments(params: &Map<String, Value>) -> Option<String> {
        if params.contains_key("inputResponses") || params.contains_key("requestState") {
            return None;
        }
        let mut out = String::new();
        canonical(params.get("arguments").unwrap_or(&Value::Null), &mut out);
        Some(out)
    }

    /// The cached result of a call of `method` to `name` (tool, prompt or URI) with `params`
    /// (the request's params object: `arguments` is read), if there is a live one: what a typed
    /// filter asks first.
    pub async fn lookup(
        &self,
        ctx: &RequestContext,
        method: &str,
        name: &str,
        params: &Map<String, Value>,
    ) -> Option<Value> {
        let policy = self.policy(method, name)?;
        let key = Self::key(ctx, method, name, &Self::arguments(params)?, policy.scope)?;
        self.get(ctx, method, name, &key).await
    }

    /// The live entry of `key`, if the primitive it answers (`method` of `name`) is still
    /// served to the caller of `ctx`: a tool disabled or removed since, or a caller the policy
    /// now refuses, runs the call instead, which answers as an uncached call would.
    async fn get(&self, ctx: &RequestContext, method: &str, name: &str, key: &str) -> Option<Value> {
        let entry = self.cache.get(key).await?;
        if Instant::now() >= entry.expires {
            self.cache.invalidate(key).await;
            return None;
        }
        let served = crate::pipeline::Engine::of(ctx).is_ok_and(|engine| engine.may_call(ctx, method, name));
        served.then(|| Value::clone(&entry.result))
    }

    /// Keeps `result` of a call of `method` to `name` with `params`, if cacheable (see the
    /// type): what a typed filter does after `next.run(req)`.
    pub async fn store(
        &self,
        ctx: &RequestContext,
        method: &str,
        name: &str,
        params: &Map<String, Value>,
        result: &Value,
    ) {
        let Some(mut policy) = self.policy(method, name) else { return };
        let Some(arguments) = Self::arguments(params) else { return };
        if let Some(key) = Self::admit(ctx, method, name, &arguments, result, &mut policy) {
            self.put(key, policy.ttl, result.clone()).await;
        }
    }

    /// The key to keep `result` under, `None` when it is not to be kept; narrows `policy` to
    /// the result's own hints.
    fn admit(
        ctx: &RequestContext,
        method: &str,
        name: &str,
        arguments: &str,
        result: &Value,
        policy: &mut CachePolicy,
    ) -> Option<String> {
        let obj = result.as_object()?;
        if obj.get("isError") == Some(&Value::Bool(true)) || obj.get("resultType").is_some_and(|t| t != "complete") {
            return None;
        }
        if let Some(ms) = obj.get("ttlMs").and_then(Value::as_u64) {
            policy.ttl = policy.ttl.min(Duration::from_millis(ms));
        }
        if obj.get("cacheScope").and_then(Value::as_str) == Some("private") {
            policy.scope = CacheScope::Private;
        }
        if policy.ttl.is_zero() {
            return None;
        }
        Self::key(ctx, method, name, arguments, policy.scope)
    }

    async fn put(&self, key: String, ttl: Duration, result: Value) {
        // A TTL past the clock's range (`Duration::MAX` for "keep it") is kept for a century
        // rather than overflowing the instant (a panic, failing every call of the primitive).
        let now = Instant::now();
        let expires = now.checked_add(ttl).unwrap_or_else(|| now + FAR_FUTURE);
        self.cache.insert(key, Entry { expires, result: Arc::new(result) }).await;
    }
}

/// `value` as JSON with every object's keys sorted.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

impl RawFilter for ResultCache {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        let method = req.ctx.method();
        let Some(name) = super::primitive(&req) else { return Box::pin(next.run(req)) };
        let Some(policy) = self.policy(method, name) else { return Box::pin(next.run(req)) };
        let this = self.clone();
        Box::pin(async move {
            let method = req.ctx.method().to_owned();
            let name = super::primitive(&req).unwrap_or_default().to_owned();
            let Some(arguments) = Self::arguments(&req.params) else { return next.run(req).await };
            if let Some(key) = Self::key(&req.ctx, &method, &name, &arguments, policy.scope)
                && let Some(hit) = this.get(&req.ctx, &method, &name, &key).await
            {
                tracing::debug!(target: "switchyard::filters", method, name, "result cache hit");
                // A hit answers before the dispatch that records the matched primitive: record
                // it as a miss would, for the span (`gen_ai.tool.name`, ...) and for filters
                // outside this one that read `matched_primitive()`.
                let field = crate::pipeline::method::named(&method).and_then(|d| d.span_field);
                req.ctx.set_matched(field, name);
                return Ok(hit);
            }
            let ctx = req.ctx.clone();
            let out: Result<Value, McpError> = next.run(req).await;
            if let Ok(result) = &out {
                let mut policy = policy;
                if let Some(key) = Self::admit(&ctx, &method, &name, &arguments, result, &mut policy) {
                    this.put(key, policy.ttl, result.clone()).await;
                }
            }
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let mut a = String::new();
        canonical(&json!({ "b": [ { "y": 1, "x": "\"q\"" } ], "a": null }), &mut a);
        assert_eq!(a, r#"{"a":null,"b":[{"x":"\"q\"","y":1}]}"#);
        let mut b = String::new();
        canonical(&json!({ "a": null, "b": [ { "x": "\"q\"", "y": 1 } ] }), &mut b);
        assert_eq!(a, b);
    }
}
