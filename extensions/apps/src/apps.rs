//! The extension's builder: views and links in, resources, a capability, a listing filter and
//! build checks out.

use crate::checks::{self, Link};
use crate::negotiate::{EXTENSION, MIME_TYPE, Visibility, client_supports_apps};
use crate::view::{AppView, Source};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use switchyard::registry::ListedKind;
use switchyard::server::DynamicResource;
use switchyard::{BuildError, ReadResourceResult, RequestContext, ResourceContents, ServerBuilder};

/// The MCP Apps extension of one server: its [views](AppView) and the tools linked to them
/// ([SEP-1865](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx)).
/// Configure it, then [`install`](Self::install) it on the [`ServerBuilder`].
///
/// ```no_run
/// use switchyard::{Server, ToolError, mcp_tool};
/// use switchyard_apps::{AppView, Apps, Visibility};
///
/// #[mcp_tool(description = "Rolls one die")]
/// async fn roll_dice() -> Result<String, ToolError> {
///     Ok("You rolled a 4".into())
/// }
///
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let apps = Apps::new()
///     .view(AppView::html("ui://dice/roller", "Dice roller", "<!doctype html><p>...</p>"))
///     .link_tool("roll_dice", "ui://dice/roller", Visibility::ModelAndApp);
/// let server = apps.install(Server::builder("dice", "1.0.0")).build()?;
/// switchyard::transport::stdio::serve(server).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Apps {
    views: Vec<AppView>,
    links: Vec<Link>,
}

/// What the listing filter and the readers share: the views by URI, the links by tool name.
struct Shared {
    /// `_meta.ui` of each view (`None` when it set nothing), by URI.
    views: HashMap<String, Option<Map<String, Value>>>,
    links: HashMap<String, Link>,
}

impl Apps {
    /// An extension with no views yet.
    pub fn new() -> Self {
        Apps::default()
    }

    /// Serves `view` as a resource. Two views with one URI fail the build, naming both.
    pub fn view(mut self, view: AppView) -> Self {
        self.views.push(view);
        self
    }

    /// Links the tool `tool` to the view `view_uri`: the tool is listed with
    /// `_meta.ui = {"resourceUri": view_uri, "visibility": [..]}` to clients that render views,
    /// so their host shows the view with the tool's result
    /// ([resource discovery](https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx#resource-discovery)).
    /// To other clients it is an ordinary tool, or (for [`Visibility::AppOnly`]) not listed.
    /// The link replaces any `_meta.ui` the tool's own `meta` declared.
    ///
    /// The view may be one of these [`Apps`] or any static resource of the server with MIME
    /// type [`MIME_TYPE`]. [`build`](ServerBuilder::build) fails, naming the tool and the view,
    /// when the server has no tool `tool` (in the selected groups), no resource `view_uri`, or
    /// serves `view_uri` with another MIME type; and when one tool is linked twice.
    #[track_caller]
    pub fn link_tool(mut self, tool: impl Into<String>, view_uri: impl Into<String>, visibility: Visibility) -> Self {
        let site = std::panic::Location::caller().to_string();
        self.links.push(Link { tool: tool.into(), view: view_uri.into(), visibility, site });
        self
    }

    /// Adds the extension to `builder`:
    /// - each view as a static resource (its HTML read now for [`AppView::file`]);
    /// - `capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [MIME_TYPE]}` in
    ///   `server/discover`;
    /// - a [listing filter](switchyard::registry::ListingFilter) giving `_meta.ui` to views and
    ///   linked tools for clients that render views ([`client_supports_apps`]); for other
    ///   clients it drops `_meta.ui` from every tool, leaves app-only tools and the views out
    ///   of their lists (the spec lets servers omit UI-only resources), and `resources/read` of
    ///   a view answers without `_meta.ui`;
    /// - [build checks](ServerBuilder::build_check) for every rule above and on [`AppView`]
    ///   and [`Csp`](crate::Csp), so a mistake fails
    ///   [`build`](ServerBuilder::build) with a [`BuildError`] naming the tool and the view.
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        let mut errors = Vec::new();
        let mut builder = builder;
        let mut seen: HashMap<&str, &AppView> = HashMap::new();
        // Views whose HTML could not be loaded: links to them are not reported a second time.
        let mut unloaded = HashSet::new();
        for view in &self.views {
            errors.extend(checks::check_view(view));
            if let Some(first) = seen.insert(&view.uri, view) {
                errors.push(BuildError::Duplicate {
                    kind: "resource",
                    name: view.uri.clone(),
                    first: format!("AppView at {}", first.site),
                    second: format!("AppView at {}", view.site),
                });
            }
            match load(view) {
                Ok(html) => builder = builder.resource(resource(view, html)),
                Err(reason) => {
                    unloaded.insert(view.uri.clone());
                    errors.push(checks::view_error(view, reason));
                }
            }
        }
        let mut links = HashMap::new();
        for link in &self.links {
            if let Some(first) = links.insert(link.tool.clone(), link.clone()) {
                errors.push(BuildError::Duplicate {
                    kind: "tool",
                    name: format!("{} (linked to a view)", link.tool),
                    first: format!("Apps::link_tool to `{}` at {}", first.view, first.site),
                    second: format!("Apps::link_tool to `{}` at {}", link.view, link.site),
                });
            }
        }
        let checked_links: Vec<Link> = self.links.iter().filter(|l| !unloaded.contains(&l.view)).cloned().collect();
        let views = self.views;
        let shared = Arc::new(Shared { views: views.iter().map(|v| (v.uri.clone(), v.ui_meta())).collect(), links });
        builder
            .extension_capability(EXTENSION, json!({ "mimeTypes": [MIME_TYPE] }))
            .listing_filter(move |ctx: &RequestContext, kind: ListedKind, definition: &mut Map<String, Value>| {
                shape(&shared, client_supports_apps(ctx), kind, definition)
            })
            .build_check(move |table| {
                errors.extend(checks::check_table(table, &views, &checked_links));
                BuildError::from_all(errors).map_or(Ok(()), Err)
            })
    }
}

/// The view's HTML.
///
/// Errors: the file cannot be read or is not UTF-8, as a sentence naming it.
fn load(view: &AppView) -> Result<Arc<str>, String> {
    match &view.source {
        Source::Html(html) => Ok(Arc::from(html.as_str())),
        Source::File(path) => std::fs::read_to_string(path)
            .map(Arc::from)
            .map_err(|e| format!("the view's HTML file {} cannot be read: {e}", path.display())),
    }
}

/// The static resource serving `view`: listed as `text/html;profile=mcp-app` (its `_meta.ui`
/// is the listing filter's to add, per client), read as one text content with `_meta.ui` for
/// clients that render views.
fn resource(view: &AppView, html: Arc<str>) -> DynamicResource {
    let ui = view.ui_meta().map(|ui| {
        let mut meta = Map::new();
        meta.insert("ui".into(), Value::Object(ui));
        meta
    });
    let mut resource = DynamicResource::new(&view.uri, &view.name, move |ctx, request| {
        let html = html.clone();
        let meta = ui.clone().filter(|_| client_supports_apps(&ctx));
        async move {
            let mut contents = ResourceContents::text(request.uri, Some(MIME_TYPE), &*html);
            if let Some(meta) = meta {
                contents = contents.with_meta(meta);
            }
            Ok(ReadResourceResult::new(vec![contents]))
        }
    })
    .mime_type(MIME_TYPE);
    if let Some(title) = &view.title {
        resource = resource.title(title);
    }
    if let Some(description) = &view.description {
        resource = resource.description(description);
    }
    resource
}

/// The listing filter: what `definition` becomes for a client that renders views (`apps`) or
/// not; false leaves it out.
fn shape(shared: &Shared, apps: bool, kind: ListedKind, definition: &mut Map<String, Value>) -> bool {
    match kind {
        ListedKind::Tool => {
            let link = definition.get("name").and_then(Value::as_str).and_then(|name| shared.links.get(name));
            if apps {
                if let Some(link) = link {
                    let ui = json!({ "resourceUri": link.view, "visibility": link.visibility.as_array() });
                    set_ui(definition, ui);
                }
                true
            } else {
                // A tool's own `_meta.ui` (declared with its `meta`) says who may see it too.
                let model_may_see = match link {
                    Some(link) => link.visibility.includes_model(),
                    None => declared_for_model(definition),
                };
                strip_ui(definition);
                model_may_see
            }
        }
        ListedKind::Resource => {
            let Some(ui) = definition.get("uri").and_then(Value::as_str).and_then(|uri| shared.views.get(uri)) else {
                return true;
            };
            if !apps {
                return false;
            }
            if let Some(ui) = ui {
                set_ui(definition, Value::Object(ui.clone()));
            }
            true
        }
        _ => true,
    }
}

/// Sets `_meta.ui` of `definition`, keeping its other `_meta` keys (a `_meta` that is not an
/// object is replaced).
fn set_ui(definition: &mut Map<String, Value>, ui: Value) {
    let mut meta = match definition.remove("_meta") {
        Some(Value::Object(meta)) => meta,
        _ => Map::new(),
    };
    meta.insert("ui".into(), ui);
    definition.insert("_meta".into(), Value::Object(meta));
}

/// False when the tool's own `_meta.ui.visibility` is an array without `"model"`.
fn declared_for_model(definition: &Map<String, Value>) -> bool {
    let visibility = definition.get("_meta").and_then(|m| m.get("ui")).and_then(|ui| ui.get("visibility"));
    match visibility.and_then(Value::as_array) {
        Some(who) => who.iter().any(|w| w == "model"),
        None => true,
    }
}

/// Removes the UI keys from a tool's `_meta` (`ui` and the deprecated flat `ui/resourceUri`),
/// and `_meta` itself when nothing else is left in it.
fn strip_ui(definition: &mut Map<String, Value>) {
    if let Some(Value::Object(meta)) = definition.get_mut("_meta") {
        meta.remove("ui");
        meta.remove("ui/resourceUri");
        if meta.is_empty() {
            definition.remove("_meta");
        }
    }
}
