//! A view: the `ui://` resource a host renders in a sandboxed iframe, and its `_meta.ui`
//! (content security policy, permissions, dedicated domain, border preference).

use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The content security policy a view asks its host for: the origins it may reach, per kind of
/// request (the spec's `McpUiResourceCsp`,
/// [UI resource format](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx#ui-resource-format)).
/// Written as `_meta.ui.csp = {connectDomains?, resourceDomains?, frameDomains?, baseUriDomains?}`,
/// each list left out when empty; an empty list is the spec's restrictive default for its
/// directive (no external connections, resources or frames; `base-uri 'self'`).
///
/// Each entry is an origin, `scheme://host[:port]` with no path, query or user: `https` or
/// `http` (`wss` and `ws` as well in `connect_domains`, for WebSockets), the host a DNS name,
/// IPv4 address or bracketed IPv6 address, optionally starting with the wildcard label `*.`
/// (`https://*.example.com`). [`ServerBuilder::build`](switchyard::ServerBuilder::build) fails
/// naming the view and the entry otherwise.
///
/// Non-exhaustive, as the spec may add directives: built with [`Csp::new`] and the setters.
///
/// ```
/// use switchyard_apps::Csp;
/// let csp = Csp::new()
///     .connect_domains(["https://api.example.com"])
///     .resource_domains(["https://cdn.jsdelivr.net"]);
/// # assert!(csp.frame_domains.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Csp {
    /// `connectDomains`: origins for `fetch`, XHR and WebSocket (CSP `connect-src`).
    pub connect_domains: Vec<String>,
    /// `resourceDomains`: origins for images, scripts, stylesheets, fonts and media (CSP
    /// `img-src`, `script-src`, `style-src`, `font-src`, `media-src`).
    pub resource_domains: Vec<String>,
    /// `frameDomains`: origins for nested iframes (CSP `frame-src`).
    pub frame_domains: Vec<String>,
    /// `baseUriDomains`: origins allowed as the document's base URI (CSP `base-uri`).
    pub base_uri_domains: Vec<String>,
}

impl Csp {
    /// An empty policy: every list empty, the spec's restrictive default for each directive.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `connectDomains` (CSP `connect-src`), replacing what was set.
    pub fn connect_domains(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.connect_domains = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `resourceDomains` (CSP `img-src`, `script-src`, `style-src`, `font-src`,
    /// `media-src`), replacing what was set.
    pub fn resource_domains(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.resource_domains = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `frameDomains` (CSP `frame-src`), replacing what was set.
    pub fn frame_domains(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.frame_domains = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `baseUriDomains` (CSP `base-uri`), replacing what was set.
    pub fn base_uri_domains(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.base_uri_domains = origins.into_iter().map(Into::into).collect();
        self
    }

    /// The lists by their wire names, in the spec's order.
    pub(crate) fn lists(&self) -> [(&'static str, &[String]); 4] {
        [
            ("connectDomains", &self.connect_domains),
            ("resourceDomains", &self.resource_domains),
            ("frameDomains", &self.frame_domains),
            ("baseUriDomains", &self.base_uri_domains),
        ]
    }

    fn to_json(&self) -> Map<String, Value> {
        self.lists()
            .into_iter()
            .filter(|(_, list)| !list.is_empty())
            .map(|(key, list)| (key.to_owned(), json!(list)))
            .collect()
    }
}

/// The browser features a view asks its host to allow in its iframe (the spec's
/// `permissions`, mapped by hosts to the iframe's Permission Policy `allow` attribute). Hosts
/// MAY grant them; a view feature-detects rather than assuming. Written as
/// `_meta.ui.permissions = {camera?: {}, microphone?: {}, geolocation?: {}, clipboardWrite?: {}}`
/// with one empty object per feature asked for.
///
/// Non-exhaustive, as the spec may add features: built with [`Permissions::new`] and the
/// setters.
///
/// ```
/// use switchyard_apps::Permissions;
/// let permissions = Permissions::new().clipboard_write();
/// # assert!(!permissions.camera);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Permissions {
    /// `camera`.
    pub camera: bool,
    /// `microphone`.
    pub microphone: bool,
    /// `geolocation`.
    pub geolocation: bool,
    /// `clipboardWrite` (Permission Policy `clipboard-write`).
    pub clipboard_write: bool,
}

impl Permissions {
    /// No feature asked for.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for `camera`.
    pub fn camera(mut self) -> Self {
        self.camera = true;
        self
    }

    /// Asks for `microphone`.
    pub fn microphone(mut self) -> Self {
        self.microphone = true;
        self
    }

    /// Asks for `geolocation`.
    pub fn geolocation(mut self) -> Self {
        self.geolocation = true;
        self
    }

    /// Asks for `clipboardWrite` (Permission Policy `clipboard-write`).
    pub fn clipboard_write(mut self) -> Self {
        self.clipboard_write = true;
        self
    }

    fn to_json(self) -> Map<String, Value> {
        [
            ("camera", self.camera),
            ("microphone", self.microphone),
            ("geolocation", self.geolocation),
            ("clipboardWrite", self.clipboard_write),
        ]
        .into_iter()
        .filter(|(_, asked)| *asked)
        .map(|(key, _)| (key.to_owned(), Value::Object(Map::new())))
        .collect()
    }
}

/// Where a view's HTML comes from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Carried by the program (`include_str!`).
    Html(String),
    /// Read from this file when the view is installed.
    File(PathBuf),
}

/// A view of the MCP Apps extension: an HTML document served as the resource `uri` (scheme
/// `ui://`) with MIME type [`MIME_TYPE`](crate::MIME_TYPE), which hosts that render MCP Apps
/// show in a sandboxed iframe when a [linked](crate::Apps::link_tool) tool is called
/// ([SEP-1865](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx#ui-resource-format)).
///
/// Listed by `resources/list` as `{uri, name, title?, description?, mimeType, _meta?: {ui}}` and
/// read by `resources/read` as one text content `{uri, mimeType, text, _meta?: {ui}}`; `ui`
/// holds what the builder set (`csp`, `permissions`, `domain`, `prefersBorder`) and is left out
/// when nothing was. Both carry it only for clients that render views
/// ([`client_supports_apps`](crate::client_supports_apps)).
///
/// ```
/// use switchyard_apps::{AppView, Csp};
/// let view = AppView::html("ui://dice/roller", "Dice roller", "<!doctype html><p>hi</p>")
///     .description("Rolls dice on a button press")
///     .csp(Csp::new().connect_domains(["https://api.example.com"]))
///     .prefers_border(true);
/// assert_eq!(view.uri(), "ui://dice/roller");
/// ```
#[derive(Debug, Clone)]
pub struct AppView {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) source: Source,
    pub(crate) csp: Option<Csp>,
    pub(crate) permissions: Option<Permissions>,
    pub(crate) domain: Option<String>,
    pub(crate) prefers_border: Option<bool>,
    /// Where the view was declared, for build errors.
    pub(crate) site: String,
}

impl AppView {
    #[track_caller]
    fn new(uri: String, name: String, source: Source) -> Self {
        AppView {
            uri,
            name,
            title: None,
            description: None,
            source,
            csp: None,
            permissions: None,
            domain: None,
            prefers_border: None,
            site: std::panic::Location::caller().to_string(),
        }
    }

    /// A view whose HTML the program carries, typically `include_str!("view/dist/app.html")`: a
    /// single HTML5 document with its scripts and styles inlined (the host loads nothing else
    /// unless the [CSP](Self::csp) allows it).
    #[track_caller]
    pub fn html(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        Self::new(uri.into(), name.into(), Source::Html(html.into()))
    }

    /// A view whose HTML is the UTF-8 file `path` (relative to the working directory), read
    /// once when [`Apps::install`](crate::Apps::install) runs; later changes to the file are
    /// not served. A file that cannot be read, or is not UTF-8, fails
    /// [`build`](switchyard::ServerBuilder::build) with an error naming the view and the file.
    #[track_caller]
    pub fn file(uri: impl Into<String>, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self::new(uri.into(), name.into(), Source::File(path.into()))
    }

    /// The resource URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Sets the listed `title`.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.title = Some(text.into());
        self
    }

    /// Sets the listed `description`: what the view shows and when it is useful.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Sets `_meta.ui.csp`: the external origins the view needs. Without it the host applies the
    /// spec's restrictive default (inline scripts and styles, no external origins at all).
    pub fn csp(mut self, csp: Csp) -> Self {
        self.csp = Some(csp);
        self
    }

    /// Sets `_meta.ui.permissions`: the browser features the view asks for.
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Sets `_meta.ui.domain`: a dedicated sandbox origin for the view (for OAuth callbacks or
    /// API key allowlists). Its format is the host's to define (the spec names
    /// `{hash}.claudemcpcontent.com` and `www-example-com.oaiusercontent.com` as patterns), so it
    /// is passed on as given; an empty string fails the build.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Sets `_meta.ui.prefersBorder`: whether the host should draw a visible border and
    /// background around the view (hosts' defaults differ, so saying it is recommended).
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.prefers_border = Some(prefers);
        self
    }

    /// The `_meta.ui` object, `None` when the view set nothing.
    pub(crate) fn ui_meta(&self) -> Option<Map<String, Value>> {
        let mut ui = Map::new();
        if let Some(csp) = self.csp.as_ref().map(Csp::to_json).filter(|c| !c.is_empty()) {
            ui.insert("csp".into(), Value::Object(csp));
        }
        if let Some(permissions) = self.permissions.map(Permissions::to_json).filter(|p| !p.is_empty()) {
            ui.insert("permissions".into(), Value::Object(permissions));
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), domain.clone().into());
        }
        if let Some(prefers) = self.prefers_border {
            ui.insert("prefersBorder".into(), prefers.into());
        }
        (!ui.is_empty()).then_some(ui)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_holds_only_what_was_set() {
        let bare = AppView::html("ui://a/b", "b", "<p>");
        assert_eq!(bare.ui_meta(), None);
        let full = bare
            .csp(Csp::new().frame_domains(["https://www.youtube.com"]))
            .permissions(Permissions::new().camera().clipboard_write())
            .domain("abc.example.com")
            .prefers_border(false);
        assert_eq!(
            Value::Object(full.ui_meta().expect("set")),
            json!({
                "csp": {"frameDomains": ["https://www.youtube.com"]},
                "permissions": {"camera": {}, "clipboardWrite": {}},
                "domain": "abc.example.com",
                "prefersBorder": false,
            })
        );
    }

    #[test]
    fn empty_csp_and_permissions_are_left_out() {
        let view = AppView::html("ui://a/b", "b", "<p>").csp(Csp::default()).permissions(Permissions::default());
        assert_eq!(view.ui_meta(), None);
    }
}
