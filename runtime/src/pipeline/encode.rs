use super::Engine;
use super::method::CacheRule;
use crate::protocol::META_SERVER_INFO;
use serde_json::map::Entry;
use serde_json::{Map, Value, json};

/// The hints of a `CacheableResult` under `rule`
/// ([caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching#cacheable-results)).
fn cache_hints(server: &Engine, rule: CacheRule) -> Option<(u128, &'static str)> {
    let c = &server.cache;
    match rule {
        CacheRule::Discover => Some((c.discover_ttl.as_millis(), "public")),
        CacheRule::List => Some((c.list_ttl.as_millis(), if server.lists_vary() { "private" } else { "public" })),
        CacheRule::Read => Some((c.read_ttl.as_millis(), "private")),
        CacheRule::Never => None,
    }
}

/// Stamps a 2026-07-28 result: `resultType` (default `"complete"`), the server's identity in
/// `_meta["io.modelcontextprotocol/serverInfo"]`, and `ttlMs`/`cacheScope` on cacheable
/// complete results.
pub(crate) fn stamp_modern(server: &Engine, cache: CacheRule, result: Value) -> Value {
    let mut obj = match result {
        Value::Object(o) => o,
        // Every MCP result is an object; a handler that produced something else is wrapped so
        // the wire stays schema-valid.
        other => {
            let mut o = Map::new();
            o.insert("value".into(), other);
            o
        }
    };
    // Compared in place: a clone of the value would cost an allocation per result.
    let complete = match obj.entry("resultType") {
        Entry::Vacant(v) => {
            v.insert(json!("complete"));
            true
        }
        Entry::Occupied(o) => o.get() == "complete",
    };
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = meta {
        m.entry(META_SERVER_INFO).or_insert_with(|| server.server_info());
    }
    if complete && let Some((ttl, scope)) = cache_hints(server, cache) {
        obj.entry("ttlMs").or_insert_with(|| json!(ttl as u64));
        obj.entry("cacheScope").or_insert_with(|| json!(scope));
    }
    Value::Object(obj)
}
