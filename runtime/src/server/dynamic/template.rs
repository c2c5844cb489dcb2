use crate::Server;
use crate::context::RequestContext;
use crate::handler::{IntoCompletion, IntoReadResult};
use crate::jsonrpc::McpError;
use crate::model::{Annotations, CompletionRequest, Icon, ReadResourceResult};
use crate::registry::{
    BoxFuture, CompletionFn, Decoration, ResourceEntry, ResourceReadFn, ResourceRequest, UriTemplate,
};
use crate::vocab::definitions::mime_type;
use futures::FutureExt;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;

/// A resource template defined at run time (not by `#[mcp_resource(uri = "..{var}..")]`):
/// everything the attribute can declare for a template, and a closure that reads the resources
/// it matches. Give it to [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template)
/// before the server is built, or to [`Server::add_resource_template`] while it runs.
///
/// The listed object is the MCP `ResourceTemplate`
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/resources#resource-templates>):
/// `{uriTemplate, name, title?, description?, mimeType?, annotations?, icons?, _meta?}`.
/// Each session sees the keys its revision's schema has: 2025-03-26 none of `title`, `icons`,
/// `_meta` or `annotations.lastModified`; 2025-06-18 no `icons`.
///
/// The URI template takes the RFC 6570 expressions the macro takes, `{var}` and `{+var}` (see
/// [`UriTemplate`] for what each matches). A `resources/read` of a URI no static resource
/// serves is matched against the templates in sorted order; the first match's handler receives
/// the URI and its variables ([`ResourceRequest`]).
///
/// The checks are the macro's, run when the template is given to the builder or added: the
/// template parses ([`UriTemplate::parse`]) and has at least one variable; the name, and
/// `title` and `description` when given, are not blank; `mimeType` is `type/subtype`; the
/// [annotations](Annotations) have a `priority` in 0..=1 and an ISO 8601 `lastModified`; every
/// [icon](Icon::check) and `_meta` key ([`check_meta`](crate::registry::check_meta)) follows
/// the rules.
///
/// ```
/// # use switchyard::{Server, server::DynamicResourceTemplate};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = Server::builder("doc", "0").groups(["none"]).build()?;
/// server.add_resource_template(
///     DynamicResourceTemplate::new("notes://day/{day}", "day", |_ctx, req| async move {
///         format!("notes of {}", req.variables["day"].as_str().unwrap_or_default())
///     })
///     .mime_type("text/plain"),
/// )?;
/// # Ok(()) }
/// ```
pub struct DynamicResourceTemplate {
    uri_template: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    annotations: Option<Annotations>,
    decoration: Decoration,
    roles: &'static [&'static str],
    scopes: &'static [&'static str],
    read: TemplateReadFn,
    complete: Option<CompletionFn>,
}

/// The reader before it is added: the MIME type that a `String` or bytes result is given is
/// only known once every setter has run.
type TemplateReadFn = Arc<
    dyn Fn(RequestContext, ResourceRequest, Option<Arc<str>>) -> BoxFuture<Result<ReadResourceResult, McpError>>
        + Send
        + Sync,
>;

impl std::fmt::Debug for DynamicResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicResourceTemplate")
            .field("uri_template", &self.uri_template)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl DynamicResourceTemplate {
    /// The template `uri_template` (e.g. `notes://day/{day}`), listed under `name`, read by
    /// `read`: it receives the request context and the requested URI with the template's
    /// variables, and returns anything a `#[mcp_resource]` function may return (a
    /// [`ReadResourceResult`](crate::ReadResourceResult), [`ResourceContents`](crate::ResourceContents),
    /// `Vec<ResourceContents>`, a `String` (text of the template's MIME type) or `Vec<u8>` (a
    /// blob), optionally inside `Result<_, McpError>`). An empty `contents` is answered as not
    /// found, `-32602`.
    pub fn new<F, Fut, R>(uri_template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(RequestContext, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoReadResult,
    {
        DynamicResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            decoration: Decoration::default(),
            roles: &[],
            scopes: &[],
            read: Arc::new(move |ctx, req, mime| {
                let uri = req.uri.clone();
                // `map`: an async block would hold the future twice (see `DynamicTool::new`).
                Box::pin(read(ctx, req).map(move |out| out.into_read_result(&uri, mime.as_deref())))
            }),
            complete: None,
        }
    }

    /// The URI template, as written.
    pub fn uri_template(&self) -> &str {
        &self.uri_template
    }

    /// Sets the display `title`.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Sets the MIME type of the resources it matches (`type/subtype`); a handler returning a
    /// `String` or bytes gets contents of this type.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    /// Sets the listed `annotations` (audience, priority, lastModified); checked when the
    /// template is added (`priority` in 0..=1, `lastModified` ISO 8601).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Adds an icon (as `#[mcp_resource(icons = [..])]`).
    pub fn icon(mut self, icon: Icon) -> Self {
        self.decoration.icons.push(icon);
        self
    }

    /// Sets the listed `_meta` (as `#[mcp_resource(meta = ..)]`); its keys follow the naming
    /// rules and use no reserved prefix.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.decoration.meta = Some(meta);
        self
    }

    /// Restricts the template to callers holding one of `roles` (as
    /// `#[mcp_resource(roles = [..])]`).
    pub fn roles(mut self, roles: &'static [&'static str]) -> Self {
        self.roles = roles;
        self
    }

    /// Restricts the template to callers whose token grants all of `scopes` (as
    /// `#[mcp_resource(scopes = [..])]`).
    pub fn scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// Sets the handler of `completion/complete`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion>)
    /// for this template's variables, `{"ref": {"type": "ref/resource", "uri": ..}}` where `uri`
    /// is the URI template exactly as written here; one handler for all variables, which reads
    /// `req.argument.name`. Setting it again replaces it.
    ///
    /// The handler receives the request context and the `completion/complete` params as the
    /// client sent them ([`CompletionRequest`](crate::CompletionRequest): `{ref, argument:
    /// {name, value}, context?: {arguments: {name: value}}}`, `ref` naming this template as
    /// the client wrote it), and returns anything a `#[mcp_completion]` function may return: a
    /// [`Completion`](crate::Completion) (`{values, total?, hasMore?}`) or `Vec<String>`,
    /// optionally inside `Result<_, McpError>`. The answer is `{"completion": ..}`; at most
    /// 100 values are sent: beyond that the list is cut to 100, `hasMore` is `true` and
    /// `total` at least the number returned. The handler is used in place of any
    /// `#[mcp_completion]` for the same template; a template with neither answers
    /// `{"completion": {"values": [], "total": 0, "hasMore": false}}`.
    ///
    /// Errors, checked before the handler runs as for a `#[mcp_completion]`: `-32602` for
    /// params that are not a `CompletionRequest` or a `ref` to no template; `-32600` with
    /// `data.reason` `forbidden` (a caller without one of the template's `roles`) or
    /// `insufficient_scope` (a token without its `scopes`), as a `resources/read` gets. An `McpError`
    /// of the handler is the answer as it is (its code, message and `data`).
    ///
    /// A server with such a handler declares the `completions` capability, also when the template
    /// is added while the server runs: capabilities are computed from the current table for
    /// each `initialize` and `server/discover`. A session initialized before the first
    /// completion handler existed was not told of it, but its `completion/complete` requests
    /// are served.
    ///
    /// ```
    /// # use switchyard::{Server, server::DynamicResourceTemplate};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = Server::builder("doc", "0").groups(["none"]).build()?;
    /// server.add_resource_template(
    ///     DynamicResourceTemplate::new("notes://day/{day}", "day", |_ctx, _req| async move { String::new() })
    ///         .complete(|_ctx, req| async move {
    ///             let days = ["monday", "tuesday", "wednesday"];
    ///             let prefix = req.argument.value;
    ///             days.iter().filter(|d| d.starts_with(&prefix)).map(|d| d.to_string()).collect::<Vec<_>>()
    ///         }),
    /// )?;
    /// assert!(server.table().has_completions());
    /// # Ok(()) }
    /// ```
    pub fn complete<F, Fut, R>(mut self, handler: F) -> Self
    where
        F: Fn(RequestContext, CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        self.complete = Some(super::prompt::completion_fn(handler));
        self
    }

    /// The dispatch-table entry.
    ///
    /// Errors: the first rule of the [type docs](DynamicResourceTemplate) it breaks, as a
    /// sentence.
    pub(crate) fn into_entry(self) -> Result<ResourceEntry, String> {
        let template = UriTemplate::parse(&self.uri_template)?;
        if template.variables().next().is_none() {
            return Err(format!(
                "URI template {:?} has no variable (`{{var}}` or `{{+var}}`); a fixed URI is a static \
                 resource: use DynamicResource",
                self.uri_template
            ));
        }
        super::non_blank("name", Some(&self.name))?;
        super::non_blank("title", self.title.as_deref())?;
        super::non_blank("description", self.description.as_deref())?;
        self.mime_type.as_deref().map_or(Ok(()), mime_type)?;
        let mut def = Map::new();
        def.insert("uriTemplate".into(), json!(self.uri_template));
        def.insert("name".into(), json!(self.name));
        for (key, value) in [("title", &self.title), ("description", &self.description), ("mimeType", &self.mime_type)]
        {
            if let Some(v) = value {
                def.insert(key.into(), json!(v));
            }
        }
        if let Some(annotations) = self.annotations {
            annotations.check()?;
            def.insert("annotations".into(), json!(annotations));
        }
        self.decoration.apply(&mut def)?;
        let (read, mime) = (self.read, self.mime_type.as_deref().map(Arc::<str>::from));
        let handler: ResourceReadFn = Arc::new(move |ctx, req| read(ctx, req, mime.clone()));
        Ok(ResourceEntry {
            definition: Value::Object(def),
            template: Some(template),
            handler,
            completion: self.complete,
            roles: self.roles,
            scopes: self.scopes,
        })
    }
}

impl Server {
    /// Adds a resource template while the server runs, replacing the template written the same
    /// way (a `#[mcp_resource]` one too), and publishes `notifications/resources/list_changed`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/resources#list-changed-notification>).
    /// The table is swapped atomically; a `resources/read` resolves its URI when it is matched
    /// and again right before the handler runs.
    ///
    /// Errors: `-32602` naming the template when it breaks one of the checks in the
    /// [`DynamicResourceTemplate`] docs; then nothing changes.
    pub fn add_resource_template(&self, template: DynamicResourceTemplate) -> Result<(), McpError> {
        let key = template.uri_template.clone();
        let entry =
            template.into_entry().map_err(|e| McpError::invalid_params(format!("resource template {key:?}: {e}")))?;
        self.engine().table.rcu(|t| Arc::new(t.with_template(entry.clone())));
        self.publisher().resources_list_changed();
        Ok(())
    }

    /// Removes the resource template `uri_template` (compared as written; a `#[mcp_resource]`
    /// one too) and publishes `notifications/resources/list_changed`; returns false, and
    /// publishes nothing, when there was none. A later `resources/read` of a URI only it
    /// matched is `-32602` (resource not found).
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.swap_table(|t| t.without_template(uri_template), |p| p.resources_list_changed())
    }
}
