//! MCP's method names and who may take them. The macros refuse a name at compile time and
//! `ServerBuilder::build` refuses the same names in registrations the macros never saw (written
//! by hand, or built by an older macro), so both decide with these functions.
//!
//! # Who may take a method name
//! - A name of [`CORE_METHODS`] is MCP's own method: no RPC, tool or filter naming a method by
//!   string may take it, whatever extension it declares, since clients and the dispatcher
//!   already give it a meaning.
//! - A name in one of [`MCP_NAMESPACES`] belongs to MCP and its official extensions (those
//!   whose identifier begins with `io.modelcontextprotocol/`, see [`is_official_extension`]).
//!   Only an RPC declared with `extension = "io.modelcontextprotocol/<name>"` may take it: the
//!   method of an official extension, e.g. `tasks/get` of `io.modelcontextprotocol/tasks`, or a
//!   future `resources/directory/read` of `io.modelcontextprotocol/skills`. Which official
//!   extension defines which method is left to MCP: a namespace is not tied to one extension,
//!   so a new official extension needs no change here.
//! - Every other name is a vendor's (`acme/sum`).

/// The methods of MCP itself, in either era (2025-11-25 sessions and 2026-07-28 requests),
/// including those a server sends to its client.
pub const CORE_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
];

/// The method namespaces of MCP and of its official extensions: a name beginning with one of
/// them is not a vendor's to take (see the [module docs](self)).
pub const MCP_NAMESPACES: &[&str] = &["tools/", "prompts/", "resources/", "notifications/", "tasks/", "skills/"];

/// The vendor prefix of MCP's official extensions, e.g. `io.modelcontextprotocol/tasks`.
pub const OFFICIAL_EXTENSION_PREFIX: &str = "io.modelcontextprotocol/";

/// Why a method name is not free for a vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// One of [`CORE_METHODS`]: nobody else may take it.
    Core,
    /// In this namespace of [`MCP_NAMESPACES`] (e.g. `"tasks/"`): only an official extension's
    /// RPC may take it.
    Namespace(&'static str),
}

/// Who owns `name`, or `None` for a vendor's name. The exact list comes first: `tools/call` is
/// [`Owner::Core`] although it is also under `tools/`.
pub fn method_owner(name: &str) -> Option<Owner> {
    if CORE_METHODS.contains(&name) {
        return Some(Owner::Core);
    }
    MCP_NAMESPACES.iter().find(|ns| name.starts_with(**ns)).map(|ns| Owner::Namespace(ns))
}

/// An extension identifier is `vendor-prefix/name`: both parts non-empty, without whitespace.
///
/// Errors: a sentence beginning with the identifier (quoted), for the caller to prefix with what
/// it was given as, e.g. "`extension` ".
pub fn extension_id(id: &str) -> Result<(), String> {
    let well_formed = id.split_once('/').is_some_and(|(vendor, name)| !vendor.is_empty() && !name.is_empty());
    if !well_formed || id.contains(char::is_whitespace) {
        return Err(format!(
            "{id:?} is not an extension identifier; they read `vendor-prefix/name`, e.g. `io.example/ext`"
        ));
    }
    Ok(())
}

/// True when `id` names one of MCP's official extensions: a well-formed identifier (see
/// [`extension_id`]) under [`OFFICIAL_EXTENSION_PREFIX`].
pub fn is_official_extension(id: &str) -> bool {
    id.starts_with(OFFICIAL_EXTENSION_PREFIX) && extension_id(id).is_ok()
}

/// Whether an RPC declared with `extension` may take the method `name` (see the
/// [module docs](self)). The extension's own shape is [`extension_id`]'s to check.
///
/// Errors: why not, and what to write instead.
pub fn rpc_may_take(name: &str, extension: Option<&str>) -> Result<(), String> {
    match (method_owner(name), extension) {
        (None, _) => Ok(()),
        (Some(Owner::Core), None) => {
            Err(format!("`{name}` is a method of MCP itself; choose a vendor-prefixed name such as `acme/...`"))
        }
        (Some(Owner::Core), Some(_)) => Err(format!(
            "`{name}` is a method of MCP itself, which no extension may take; choose a vendor-prefixed name \
             such as `acme/...`"
        )),
        (Some(Owner::Namespace(_)), Some(ext)) if is_official_extension(ext) => Ok(()),
        (Some(Owner::Namespace(ns)), None) => Err(format!(
            "`{name}` is in MCP's `{ns}` namespace, where only MCP's official extensions add methods: declare the \
             one that defines it with `extension = \"{OFFICIAL_EXTENSION_PREFIX}...\"`, or choose a vendor-prefixed \
             name such as `acme/...`"
        )),
        (Some(Owner::Namespace(ns)), Some(ext)) => Err(format!(
            "`{name}` is in MCP's `{ns}` namespace, where only MCP's official extensions \
             (`{OFFICIAL_EXTENSION_PREFIX}...`) add methods, and `{ext}` is not one of them; choose a \
             vendor-prefixed name such as `acme/...`"
        )),
    }
}

/// `toolsListChanged`: a boolean key of the `subscriptions/listen` filter.
pub const TOOLS_LIST_CHANGED: &str = "toolsListChanged";
/// `promptsListChanged`: a boolean key of the `subscriptions/listen` filter.
pub const PROMPTS_LIST_CHANGED: &str = "promptsListChanged";
/// `resourcesListChanged`: a boolean key of the `subscriptions/listen` filter.
pub const RESOURCES_LIST_CHANGED: &str = "resourcesListChanged";
/// `resourceSubscriptions`: the key of the `subscriptions/listen` filter listing resource URIs.
pub const RESOURCE_SUBSCRIPTIONS: &str = "resourceSubscriptions";

/// The keys of the `subscriptions/listen` filter that the runtime answers itself; an
/// extension's subscription field takes a key of its own.
pub const LISTEN_KEYS: &[&str] =
    &[TOOLS_LIST_CHANGED, PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, RESOURCE_SUBSCRIPTIONS];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_methods_are_core_even_under_a_namespace() {
        for name in CORE_METHODS {
            assert_eq!(method_owner(name), Some(Owner::Core), "{name}");
        }
        assert_eq!(method_owner("tools/call"), Some(Owner::Core));
        assert_eq!(method_owner("resources/templates/list"), Some(Owner::Core));
    }

    #[test]
    fn names_under_a_namespace_name_it() {
        let cases = [
            ("tools/anything", "tools/"),
            ("prompts/x", "prompts/"),
            ("resources/directory/read", "resources/"),
            ("notifications/progress", "notifications/"),
            ("tasks/get", "tasks/"),
            ("skills/list", "skills/"),
        ];
        for (name, ns) in cases {
            assert_eq!(method_owner(name), Some(Owner::Namespace(ns)), "{name}");
        }
    }

    #[test]
    fn vendor_names_have_no_owner() {
        for name in ["acme/sum", "tool/call", "acme/tools/call", "tools", "pings", "io.example/ext/run", "taskss/x"] {
            assert_eq!(method_owner(name), None, "{name}");
        }
    }

    #[test]
    fn extension_ids_read_vendor_slash_name() {
        for id in ["io.modelcontextprotocol/tasks", "io.example/ext", "acme/x/y"] {
            assert_eq!(extension_id(id), Ok(()), "{id}");
        }
        for id in ["", "ext", "/ext", "io.x/", "io.x/a b", " io.x/a"] {
            let err = extension_id(id).expect_err(id);
            assert!(err.starts_with(&format!("{id:?} is not an extension identifier")), "{err}");
        }
    }

    #[test]
    fn official_extensions_are_well_formed_and_under_the_mcp_prefix() {
        assert!(is_official_extension("io.modelcontextprotocol/tasks"));
        assert!(is_official_extension("io.modelcontextprotocol/skills"));
        for id in ["io.modelcontextprotocol/", "io.modelcontextprotocol/a b", "io.example/tasks", "acme/x", "tasks"] {
            assert!(!is_official_extension(id), "{id}");
        }
    }

    #[test]
    fn official_extensions_take_names_in_mcp_namespaces() {
        assert_eq!(rpc_may_take("tasks/get", Some("io.modelcontextprotocol/tasks")), Ok(()));
        assert_eq!(rpc_may_take("resources/directory/read", Some("io.modelcontextprotocol/skills")), Ok(()));
    }

    #[test]
    fn namespaced_names_without_an_official_extension_say_how_to_declare_one() {
        let err = rpc_may_take("tasks/get", None).expect_err("no extension");
        assert!(err.contains("MCP's `tasks/` namespace"), "{err}");
        assert!(err.contains("`extension = \"io.modelcontextprotocol/...\"`"), "{err}");
        let err = rpc_may_take("tasks/get", Some("acme/x")).expect_err("vendor extension");
        assert!(err.contains("`acme/x` is not one of them"), "{err}");
        let err = rpc_may_take("resources/watch", Some("io.modelcontextprotocol/")).expect_err("malformed");
        assert!(err.contains("not one of them"), "{err}");
    }

    #[test]
    fn core_names_are_refused_with_or_without_an_extension() {
        for name in ["tools/call", "ping", "initialize", "subscriptions/listen"] {
            let err = rpc_may_take(name, None).expect_err(name);
            assert!(err.contains("is a method of MCP itself; choose"), "{err}");
            let err = rpc_may_take(name, Some("io.modelcontextprotocol/tasks")).expect_err(name);
            assert!(err.contains("which no extension may take"), "{err}");
        }
    }

    #[test]
    fn vendor_names_are_free_with_any_extension() {
        for ext in [None, Some("io.example/ext"), Some("io.modelcontextprotocol/tasks")] {
            assert_eq!(rpc_may_take("acme/sum", ext), Ok(()), "{ext:?}");
        }
    }

    #[test]
    fn listen_keys_are_the_four_core_keys() {
        assert_eq!(
            LISTEN_KEYS,
            ["toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"]
        );
    }
}
