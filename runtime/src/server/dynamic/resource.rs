use crate::Server;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::ReadResourceResult;
use crate::registry::{ResourceEntry, ResourceRequest};
use crate::vocab::definitions::mime_type;
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;

/// A static resource defined at run time (not by `#[mcp_resource]`): its URI, listing
/// metadata and a closure that reads it. Give it to [`ServerBuilder::resource`](crate::ServerBuilder::resource)
/// before the server is built, or to [`Server::add_resources`] while it runs. Extensions whose
/// resources come from data (files, a database) use it.
///
/// The listed object is the MCP `Resource`
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/resources#resource>):
/// `{uri, name, title?, description?, mimeType?, size?, annotations?, icons?, _meta?}`. Each
/// session sees the keys its revision's schema has: 2025-03-26 none of `title`, `icons`, `_meta`
/// or `annotations.lastModified`; 2025-06-18 no `icons`.
///
/// ```
/// # use switchyard::{ReadResourceResult, ResourceContents, Server, server::DynamicResource};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let notes = DynamicResource::new("notes://today", "today", |_ctx, req| async move {
///     Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, Some("text/plain"), "buy milk")]))
/// })
/// .mime_type("text/plain");
/// let server = Server::builder("doc", "0").groups(["none"]).resource(notes).build()?;
/// assert!(server.table().resource("notes://today").is_some());
/// # Ok(()) }
/// ```
pub struct DynamicResource {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    size: Option<u64>,
    annotations: Option<crate::Annotations>,
    decoration: crate::registry::Decoration,
    roles: &'static [&'static str],
    scopes: &'static [&'static str],
    read: crate::registry::ResourceReadFn,
}

impl std::fmt::Debug for DynamicResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicResource").field("uri", &self.uri).field("name", &self.name).finish_non_exhaustive()
    }
}

impl DynamicResource {
    /// The resource `uri`, listed under `name`, read by `read` (which receives the request
    /// context and the requested URI; an empty `contents` is answered as not found, `-32602`).
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(RequestContext, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, McpError>> + Send + 'static,
    {
        DynamicResource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            decoration: crate::registry::Decoration::default(),
            roles: &[],
            scopes: &[],
            read: Arc::new(move |ctx, req| Box::pin(read(ctx, req))),
        }
    }

    /// Sets the display title.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Sets the MIME type of the contents.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    /// Sets `size`, the contents' size in bytes (as `#[mcp_resource(size = ..)]`).
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Sets the listed `annotations` (audience, priority, lastModified); checked when the
    /// resource is added (`priority` in 0..=1, `lastModified` ISO 8601).
    pub fn annotations(mut self, annotations: crate::Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Adds an icon (as `#[mcp_resource(icons = [..])]`), checked when the resource is added.
    pub fn icon(mut self, icon: crate::Icon) -> Self {
        self.decoration.icons.push(icon);
        self
    }

    /// Sets the listed `_meta` (as `#[mcp_resource(meta = ..)]`); its keys are checked when the
    /// resource is added (naming rules, no reserved prefix).
    pub fn meta(mut self, meta: serde_json::Map<String, Value>) -> Self {
        self.decoration.meta = Some(meta);
        self
    }

    /// Restricts the resource to callers holding one of `roles` (as `#[mcp_resource(roles = [..])]`).
    pub fn roles(mut self, roles: &'static [&'static str]) -> Self {
        self.roles = roles;
        self
    }

    /// Restricts the resource to callers whose token grants all of `scopes` (as
    /// `#[mcp_resource(scopes = [..])]`).
    pub fn scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The dispatch-table entry.
    ///
    /// Errors: a blank `uri`, `name`, `title` or `description`, a `mimeType` that is not
    /// `type/subtype`, annotations out of the schema's bounds, an icon or `_meta` key that
    /// breaks the rules, as a sentence.
    pub(crate) fn into_entry(self) -> Result<ResourceEntry, String> {
        super::non_blank("uri", Some(&self.uri))?;
        super::non_blank("name", Some(&self.name))?;
        super::non_blank("title", self.title.as_deref())?;
        super::non_blank("description", self.description.as_deref())?;
        self.mime_type.as_deref().map_or(Ok(()), mime_type)?;
        let mut def = serde_json::Map::new();
        def.insert("uri".into(), json!(self.uri));
        def.insert("name".into(), json!(self.name));
        for (key, value) in [("title", self.title), ("description", self.description), ("mimeType", self.mime_type)] {
            if let Some(v) = value {
                def.insert(key.into(), json!(v));
            }
        }
        if let Some(size) = self.size {
            def.insert("size".into(), json!(size));
        }
        if let Some(annotations) = self.annotations {
            annotations.check()?;
            def.insert("annotations".into(), json!(annotations));
        }
        self.decoration.apply(&mut def)?;
        Ok(ResourceEntry {
            definition: Value::Object(def),
            template: None,
            handler: self.read,
            completion: None,
            roles: self.roles,
            scopes: self.scopes,
        })
    }
}

impl Server {
    /// Adds (or replaces, by URI) static resources while the server runs, in one atomic swap of
    /// the table; a resource replacing one of the same URI (also a `#[mcp_resource]`) takes
    /// over its reads. Publishes `notifications/resources/list_changed` once when the listing
    /// changed (a resource is new, or its listed object differs); replacing only the reader
    /// announces nothing (publish [`resource_updated`](crate::subscriptions::Publisher::resource_updated)
    /// for changed contents). Returns whether the listing changed.
    ///
    /// Errors: `-32602` naming the resource when one breaks a rule the macros check: a blank
    /// `uri`, `name`, `title` or `description`, a `mimeType` that is not `type/subtype`,
    /// [annotations](crate::Annotations) with a `priority` outside 0..=1 or a `lastModified`
    /// that is not ISO 8601, an icon or
    /// `_meta` key that breaks the rules ([`Icon::check`](crate::Icon::check),
    /// [`check_meta`](crate::registry::check_meta)); then none of them is added.
    pub fn add_resources(&self, resources: impl IntoIterator<Item = DynamicResource>) -> Result<bool, McpError> {
        let mut entries: Vec<ResourceEntry> = Vec::new();
        for resource in resources {
            let uri = resource.uri.clone();
            let entry = resource.into_entry().map_err(|e| McpError::invalid_params(format!("resource {uri}: {e}")))?;
            entries.push(entry);
        }
        if entries.is_empty() {
            return Ok(false);
        }
        let mut listing_changed = false;
        self.engine().table.rcu(|t| {
            listing_changed = entries.iter().any(|e| {
                let uri = e.definition.get("uri").and_then(Value::as_str).unwrap_or_default();
                t.resource(uri)
                    .is_none_or(|old| old.definition != e.definition || old.roles != e.roles || old.scopes != e.scopes)
            });
            Arc::new(t.with_resources(entries.clone()))
        });
        if listing_changed {
            self.publisher().resources_list_changed();
        }
        Ok(listing_changed)
    }

    /// Removes the static resources `uris` (those a `#[mcp_resource]` declared too); publishes
    /// `notifications/resources/list_changed` once when any was served. Returns how many were.
    pub fn remove_resources<'a>(&self, uris: impl IntoIterator<Item = &'a str>) -> usize {
        let mut uris: Vec<&str> = uris.into_iter().collect();
        uris.sort_unstable();
        uris.dedup();
        let mut removed = 0;
        self.engine().table.rcu(|t| {
            removed = uris.iter().filter(|u| t.resource(u).is_some()).count();
            match t.without_resources(&uris) {
                Some(next) => Arc::new(next),
                None => t.clone(),
            }
        });
        if removed > 0 {
            self.publisher().resources_list_changed();
        }
        removed
    }
}
