//! Who sees what: a tool's visibility, and whether a client renders views at all.

use serde_json::Value;
use switchyard::RequestContext;

/// The extension's identifier, the key of `capabilities.extensions` on both sides
/// ([SEP-1865](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx#extension-identifier)).
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an HTML view, the only kind of view SEP-1865 defines: every view resource
/// and its `resources/read` contents carry it, and a client renders views when it lists it in
/// `capabilities.extensions["io.modelcontextprotocol/ui"].mimeTypes`.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Who may use a linked tool: the spec's `_meta.ui.visibility` array
/// ([visibility](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx#visibility)).
/// Hosts enforce it: they leave tools without `"model"` out of the tool list the model sees,
/// and refuse calls from a view to tools without `"app"`.
///
/// For clients that do not render views the server itself hides app-only tools from
/// `tools/list` (nothing there could call them), and lists the rest as ordinary tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Visibility {
    /// `["model", "app"]` (the spec's default): the model may call the tool and its result is
    /// shown in the view; the view may call it too.
    #[default]
    ModelAndApp,
    /// `["app"]`: only the view calls it (a refresh button, a form's submit); hidden from the
    /// model, and not listed to clients that render no views.
    AppOnly,
    /// `["model"]`: only the model calls it; its result is shown in the view, and the view may
    /// not call it.
    ModelOnly,
}

impl Visibility {
    /// The `visibility` array.
    pub fn as_array(self) -> &'static [&'static str] {
        match self {
            Visibility::ModelAndApp => &["model", "app"],
            Visibility::AppOnly => &["app"],
            Visibility::ModelOnly => &["model"],
        }
    }

    /// True when the model may see and call the tool.
    pub fn includes_model(self) -> bool {
        self != Visibility::AppOnly
    }
}

/// True when the client of `ctx` renders MCP Apps views: it declared
/// `capabilities.extensions["io.modelcontextprotocol/ui"]` as an object whose `mimeTypes` array
/// holds [`MIME_TYPE`] (compared as media types: case and spaces around `;` do not matter). On
/// 2026-07-28 the capabilities are the request's own (`_meta`), on a legacy session those of
/// its `initialize`
/// ([capability negotiation](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx#clientserver-capability-negotiation)).
///
/// A client that declares the extension without `mimeTypes` (the spec makes it required), or
/// with other types only, renders none of this server's views and is treated as one that
/// declared nothing.
pub fn client_supports_apps(ctx: &RequestContext) -> bool {
    capabilities_support_apps(ctx.client_capabilities())
}

/// [`client_supports_apps`] over a `ClientCapabilities` object.
pub(crate) fn capabilities_support_apps(capabilities: &Value) -> bool {
    let wanted = normalize(MIME_TYPE);
    capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().filter_map(Value::as_str).any(|t| normalize(t) == wanted))
}

/// A media type with case and optional whitespace removed (RFC 9110 §8.3.1: type, subtype and
/// parameter names are case-insensitive, whitespace around `;` is optional). The profile's
/// value is compared case-insensitively too: ours is lower-case and no host sends another.
fn normalize(media_type: &str) -> String {
    media_type.split(';').map(|part| part.trim().to_ascii_lowercase()).collect::<Vec<_>>().join(";")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_client_renders_views_only_with_our_mime_type() {
        let with = |settings: Value| json!({ "extensions": { EXTENSION: settings } });
        assert!(capabilities_support_apps(&with(json!({ "mimeTypes": [MIME_TYPE] }))));
        assert!(capabilities_support_apps(&with(json!({ "mimeTypes": ["image/png", "Text/HTML; profile=mcp-app"] }))));
        assert!(!capabilities_support_apps(&with(json!({}))));
        assert!(!capabilities_support_apps(&with(json!({ "mimeTypes": ["text/html"] }))));
        assert!(!capabilities_support_apps(&with(json!({ "mimeTypes": MIME_TYPE }))));
        assert!(!capabilities_support_apps(&with(json!(true))));
        assert!(!capabilities_support_apps(&json!({})));
        assert!(!capabilities_support_apps(&json!({ "extensions": [] })));
    }

    #[test]
    fn visibility_arrays_follow_the_spec() {
        assert_eq!(Visibility::default().as_array(), ["model", "app"]);
        assert_eq!(Visibility::AppOnly.as_array(), ["app"]);
        assert_eq!(Visibility::ModelOnly.as_array(), ["model"]);
        assert!(!Visibility::AppOnly.includes_model());
    }
}
