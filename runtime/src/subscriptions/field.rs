use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::registry::{BoxFuture, Site};
use serde_json::Value;

/// A grant processor shim: receives the value the client requested for its key (any JSON) and
/// returns the value granted (`None`: the key is left out of the grant).
pub type GrantFn = fn(RequestContext, Value) -> BoxFuture<Result<Option<Value>, McpError>>;

/// One `#[subscription_field("key", ...)]`: the processor of an extension-owned key of the
/// `subscriptions/listen`
/// [filter](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#notification-filter).
///
/// It runs only when the transport can deliver what it grants (never on a JSON-only HTTP
/// transport) and only for listen requests that name its key. When `extension` is set, a
/// request naming the key without declaring that extension in its capabilities gets `-32021`
/// with `data.requiredCapabilities = {"extensions": {EXT: {}}}`.
#[derive(Debug)]
pub struct SubscriptionFieldRegistration {
    /// The filter key, e.g. `taskIds`.
    pub key: &'static str,
    /// The extension that owns the key, e.g. `io.modelcontextprotocol/tasks`.
    pub extension: Option<&'static str>,
    /// Registration group.
    pub group: &'static str,
    /// The processor shim.
    pub handler: GrantFn,
    /// One [`FromRequestContext::required_state`](crate::FromRequestContext::required_state)
    /// per extractor argument of the handler, checked by `build()`.
    pub state: &'static [crate::context::StateRequirement],
    /// Where it was declared.
    pub site: Site,
}

inventory::collect!(SubscriptionFieldRegistration);
crate::registry::registrations!(SubscriptionFieldRegistration);

/// Decodes the requested value into `T` (`-32602` naming the key on failure) and encodes the
/// granted one; used by generated shims.
pub fn grant_shim<T, G, F, Fut>(
    ctx: RequestContext,
    requested: Value,
    key: &'static str,
    f: F,
) -> BoxFuture<Result<Option<Value>, McpError>>
where
    T: serde::de::DeserializeOwned,
    G: serde::Serialize,
    F: FnOnce(T, RequestContext) -> Fut,
    Fut: std::future::Future<Output = Result<G, McpError>> + Send + 'static,
{
    match serde_json::from_value::<T>(requested) {
        Ok(t) => {
            let fut = f(t, ctx);
            Box::pin(async move {
                let granted = fut.await?;
                let v = serde_json::to_value(granted)
                    .map_err(|e| McpError::internal(format!("grant of `{key}` could not be encoded: {e}")))?;
                // An empty grant (null, [] or {}) leaves the key out of the acknowledgement.
                let empty = v.is_null()
                    || v.as_array().is_some_and(Vec::is_empty)
                    || v.as_object().is_some_and(|o| o.is_empty());
                Ok((!empty).then_some(v))
            })
        }
        Err(e) => {
            Box::pin(
                async move { Err(McpError::invalid_params(format!("subscriptions/listen: notifications.{key}: {e}"))) },
            )
        }
    }
}

/// The grant processors of the selected groups, by key.
///
/// Errors: two processors for one key ([`BuildError::Duplicate`](crate::BuildError) naming both),
/// every such key at once.
pub(crate) fn collect_fields(
    groups: Option<&[String]>,
) -> Result<std::collections::HashMap<&'static str, &'static SubscriptionFieldRegistration>, crate::BuildError> {
    let mut fields = std::collections::HashMap::new();
    let mut errors = Vec::new();
    for reg in crate::registry::Groups::new(groups).select::<SubscriptionFieldRegistration>() {
        if crate::vocab::methods::LISTEN_KEYS.contains(&reg.key) {
            errors.push(crate::BuildError::Invalid {
                kind: "subscription field",
                name: reg.key.to_owned(),
                site: reg.site.to_string(),
                reason: "the runtime answers this listen key itself; choose another key".to_owned(),
            });
            continue;
        }
        if let Some(prev) = fields.insert(reg.key, reg) {
            let (a, b) = (prev.site.to_string(), reg.site.to_string());
            let (first, second) = if a <= b { (a, b) } else { (b, a) };
            errors.push(crate::BuildError::Duplicate {
                kind: "subscription field",
                name: reg.key.to_owned(),
                first,
                second,
            });
        }
    }
    match crate::BuildError::from_all(errors) {
        Some(e) => Err(e),
        None => Ok(fields),
    }
}
