//! The built-in MCP methods in one table: what the dispatcher, the HTTP routing check, the
//! cache hints, the input-required rounds, the request span and the filter checks of `build()`
//! know of each method is read from its [`MethodDescriptor`], so a method is added with one row
//! (and its handler). The names follow the
//! [2026-07-28 schema](https://modelcontextprotocol.io/specification/2026-07-28/schema) and the
//! [2025-11-25 schema](https://modelcontextprotocol.io/specification/2025-11-25/schema); each is
//! also one of [`CORE_METHODS`](crate::vocab::methods::CORE_METHODS), which keeps vendors off it.

use super::builtin::methods::{PromptsGet, ResourcesRead, ToolsCall};
use super::rpc::{Eras, RpcMethod};
use std::any::TypeId;

/// A built-in method; its discriminant is its row in [`METHODS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    TemplatesList,
    ResourcesRead,
    Complete,
    Ping,
    SetLevel,
    Subscribe,
    Unsubscribe,
    Listen,
}

/// What a server must have for a built-in method to exist (`-32601` otherwise, as for a name
/// it does not know).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServedWith {
    /// Every server.
    Always,
    /// At least one tool.
    Tools,
    /// At least one prompt.
    Prompts,
    /// At least one resource or resource template.
    Resources,
    /// At least one completion.
    Completions,
    /// A subscription source: a delivery hub, or a list that can change.
    Listen,
}

/// Which cache hints (`ttlMs`, `cacheScope`) a complete 2026-07-28 result of the method carries
/// ([caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheRule {
    /// None.
    Never,
    /// `server/discover`: the discover TTL, public.
    Discover,
    /// A `*/list`: the list TTL, private when lists vary by caller.
    List,
    /// `resources/read`: the read TTL, private.
    Read,
}

/// One built-in method.
#[derive(Debug)]
pub(crate) struct MethodDescriptor {
    pub(crate) method: Method,
    /// The JSON-RPC method name.
    pub(crate) name: &'static str,
    /// The protocol eras that have it.
    pub(crate) eras: Eras,
    pub(crate) served_with: ServedWith,
    /// The params field naming the primitive the request is for, which the HTTP `Mcp-Name`
    /// header mirrors (`name`, `uri`).
    pub(crate) routing_field: Option<&'static str>,
    /// The request span's attribute for that primitive, as the OpenTelemetry semantic
    /// conventions for MCP name it (<https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/>).
    pub(crate) span_field: Option<&'static str>,
    pub(crate) cache: CacheRule,
    /// Whether a 2026-07-28 request may end with an `InputRequiredResult`
    /// ([supported requests](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#supported-requests)).
    pub(crate) asks_input: bool,
    /// The params and result types its typed and alternate filters take, for the methods that
    /// take them.
    pub(crate) filter_types: Option<fn() -> (TypeId, TypeId)>,
}

fn types<M: RpcMethod>() -> (TypeId, TypeId) {
    (TypeId::of::<M::Params>(), TypeId::of::<M::Result>())
}

const fn plain(method: Method, name: &'static str, eras: Eras, served_with: ServedWith) -> MethodDescriptor {
    MethodDescriptor {
        method,
        name,
        eras,
        served_with,
        routing_field: None,
        span_field: None,
        cache: CacheRule::Never,
        asks_input: false,
        filter_types: None,
    }
}

const fn cached(mut d: MethodDescriptor, cache: CacheRule) -> MethodDescriptor {
    d.cache = cache;
    d
}

/// A method about one primitive, which takes typed and alternate filters and may ask for input.
const fn primitive(
    method: Method,
    name: &'static str,
    served_with: ServedWith,
    (routing_field, span_field): (&'static str, &'static str),
    filter_types: fn() -> (TypeId, TypeId),
) -> MethodDescriptor {
    MethodDescriptor {
        routing_field: Some(routing_field),
        span_field: Some(span_field),
        asks_input: true,
        filter_types: Some(filter_types),
        ..plain(method, name, Eras::Both, served_with)
    }
}

/// Every built-in method, in the order of [`Method`].
pub(crate) const METHODS: [MethodDescriptor; 14] = [
    cached(plain(Method::Discover, "server/discover", Eras::Modern, ServedWith::Always), CacheRule::Discover),
    cached(plain(Method::ToolsList, "tools/list", Eras::Both, ServedWith::Tools), CacheRule::List),
    primitive(
        Method::ToolsCall,
        ToolsCall::METHOD,
        ServedWith::Tools,
        ("name", "gen_ai.tool.name"),
        types::<ToolsCall>,
    ),
    cached(plain(Method::PromptsList, "prompts/list", Eras::Both, ServedWith::Prompts), CacheRule::List),
    primitive(
        Method::PromptsGet,
        PromptsGet::METHOD,
        ServedWith::Prompts,
        ("name", "gen_ai.prompt.name"),
        types::<PromptsGet>,
    ),
    cached(plain(Method::ResourcesList, "resources/list", Eras::Both, ServedWith::Resources), CacheRule::List),
    cached(
        plain(Method::TemplatesList, "resources/templates/list", Eras::Both, ServedWith::Resources),
        CacheRule::List,
    ),
    cached(
        primitive(
            Method::ResourcesRead,
            ResourcesRead::METHOD,
            ServedWith::Resources,
            ("uri", "mcp.resource.uri"),
            types::<ResourcesRead>,
        ),
        CacheRule::Read,
    ),
    plain(Method::Complete, "completion/complete", Eras::Both, ServedWith::Completions),
    plain(Method::Ping, "ping", Eras::Legacy, ServedWith::Always),
    plain(Method::SetLevel, "logging/setLevel", Eras::Legacy, ServedWith::Always),
    plain(Method::Subscribe, "resources/subscribe", Eras::Legacy, ServedWith::Resources),
    plain(Method::Unsubscribe, "resources/unsubscribe", Eras::Legacy, ServedWith::Resources),
    plain(Method::Listen, "subscriptions/listen", Eras::Modern, ServedWith::Listen),
];

// `Method::descriptor` indexes the table by discriminant.
const _: () = {
    let mut i = 0;
    while i < METHODS.len() {
        assert!(METHODS[i].method as usize == i, "METHODS must list the methods in the order of `Method`");
        i += 1;
    }
};

impl Method {
    /// Its row of [`METHODS`].
    pub(crate) fn descriptor(self) -> &'static MethodDescriptor {
        &METHODS[self as usize]
    }
}

/// The built-in method called `name` in the given era, if there is one.
pub(crate) fn lookup(name: &str, modern: bool) -> Option<&'static MethodDescriptor> {
    METHODS.iter().find(|d| d.name == name && d.eras.serves(modern))
}

/// The built-in method called `name` in either era.
pub(crate) fn named(name: &str) -> Option<&'static MethodDescriptor> {
    METHODS.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::methods::CORE_METHODS;

    #[test]
    fn every_built_in_method_is_reserved_once_and_found_in_its_eras_only() {
        for d in &METHODS {
            assert!(CORE_METHODS.contains(&d.name), "{} must be reserved in CORE_METHODS", d.name);
            assert_eq!(METHODS.iter().filter(|o| o.name == d.name).count(), 1, "{}", d.name);
            assert_eq!(lookup(d.name, true).is_some(), d.eras.serves(true), "{}", d.name);
            assert_eq!(lookup(d.name, false).is_some(), d.eras.serves(false), "{}", d.name);
            assert_eq!(d.method.descriptor().name, d.name);
            // A method that names a primitive reports it on the span, and the rounds and
            // filters that need the primitive exist only for such methods.
            assert_eq!(d.routing_field.is_some(), d.span_field.is_some(), "{}", d.name);
            assert!(!d.asks_input || d.routing_field.is_some(), "{}", d.name);
        }
        assert!(lookup("initialize", false).is_none(), "initialize is the session's, not the dispatcher's");
        assert!(lookup("ping", true).is_none() && lookup("server/discover", false).is_none());
    }

    #[test]
    fn the_typed_methods_take_filters_of_their_marker_types() {
        let typed: Vec<_> = METHODS.iter().filter(|d| d.filter_types.is_some()).map(|d| d.name).collect();
        assert_eq!(typed, ["tools/call", "prompts/get", "resources/read"]);
        let call = named("tools/call").and_then(|d| d.filter_types).map(|f| f());
        assert_eq!(call, Some(types::<ToolsCall>()));
    }
}
