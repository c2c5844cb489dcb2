//! The upstream's listings as run-time items of our server: built from what the upstream
//! lists, added, replaced when their listing changed, removed when gone.

use crate::relay::Link;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use switchyard::registry::TaskSupport;
use switchyard::server::{DynamicPrompt, DynamicResource, DynamicResourceTemplate, DynamicTool};
use switchyard::{Annotations, CompletionRef, Icon, McpError, PromptArgument, Server, ToolAnnotations};
use switchyard_client::{Client, ClientError, Prompt, Resource, ResourceTemplate, Tool};

/// Which kind of listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tools,
    Prompts,
    Resources,
    Templates,
}

/// What is mirrored of one upstream: per kind, our name (or URI, or template) → the
/// upstream's listed object it was built from.
#[derive(Debug, Default)]
pub(crate) struct Mirror {
    tools: HashMap<String, Value>,
    prompts: HashMap<String, Value>,
    resources: HashMap<String, Value>,
    templates: HashMap<String, Value>,
}

impl Mirror {
    /// How many items are mirrored now.
    pub(crate) fn len(&self) -> usize {
        self.tools.len() + self.prompts.len() + self.resources.len() + self.templates.len()
    }

    fn map(&mut self, kind: Kind) -> &mut HashMap<String, Value> {
        match kind {
            Kind::Tools => &mut self.tools,
            Kind::Prompts => &mut self.prompts,
            Kind::Resources => &mut self.resources,
            Kind::Templates => &mut self.templates,
        }
    }

    /// Lists `kind` upstream (when the upstream declares that capability) and brings our
    /// items in line: new and changed ones added, vanished ones removed. Each change
    /// publishes our `notifications/*/list_changed`.
    ///
    /// Errors: the listing's [`ClientError`]; then nothing changed.
    pub(crate) async fn sync(
        &mut self,
        server: &Server,
        link: &Arc<Link>,
        client: &Client,
        kind: Kind,
    ) -> Result<(), ClientError> {
        let capability = match kind {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources | Kind::Templates => "resources",
        };
        let listed: Vec<(String, Value)> = if client.capabilities().get(capability).is_none() {
            Vec::new()
        } else {
            let prefix = &link.upstream.prefix;
            let uri_prefix = &link.upstream.uri_prefix;
            match kind {
                Kind::Tools => keyed(client.list_tools().await?, |t: &Tool| format!("{prefix}{}", t.name)),
                Kind::Prompts => keyed(client.list_prompts().await?, |p: &Prompt| format!("{prefix}{}", p.name)),
                Kind::Resources => {
                    keyed(client.list_resources().await?, |r: &Resource| format!("{uri_prefix}{}", r.uri))
                }
                Kind::Templates => keyed(client.list_resource_templates().await?, |t: &ResourceTemplate| {
                    format!("{uri_prefix}{}", t.uri_template)
                }),
            }
        };
        // Our prompts and templates complete through the upstream only when it offers that.
        let completes = client.capabilities().get("completions").is_some();
        let table = server.table();
        let mirrored = self.map(kind);
        let mut next = HashMap::with_capacity(listed.len());
        for (ours, listing) in listed {
            if next.contains_key(&ours) {
                tracing::warn!(target: "switchyard_gateway", upstream = link.name(), "{ours} is listed twice; the first is served");
                continue;
            }
            if mirrored.get(&ours) == Some(&listing) {
                next.insert(ours, listing);
                continue;
            }
            let taken = !mirrored.contains_key(&ours)
                && match kind {
                    Kind::Tools => table.tool(&ours).is_some(),
                    Kind::Prompts => table.prompt(&ours).is_some(),
                    Kind::Resources => table.resource(&ours).is_some(),
                    Kind::Templates => table.template(&ours).is_some(),
                };
            if taken {
                tracing::warn!(
                    target: "switchyard_gateway",
                    upstream = link.name(),
                    "{ours} is not served from the upstream: the server serves an item of that name already \
                     (give the upstream a prefix)"
                );
                continue;
            }
            match add(server, link, kind, &ours, &listing, completes) {
                Ok(()) => {
                    next.insert(ours, listing);
                }
                Err(e) => {
                    tracing::warn!(target: "switchyard_gateway", upstream = link.name(), "{ours} is not served: {e}");
                    // What was served under this name before no longer matches the upstream.
                    if mirrored.contains_key(&ours) {
                        remove(server, kind, &ours);
                    }
                }
            }
        }
        for gone in mirrored.keys().filter(|k| !next.contains_key(*k)) {
            remove(server, kind, gone);
        }
        if matches!(kind, Kind::Resources | Kind::Templates) {
            link.set_served(kind == Kind::Templates, next.keys());
        }
        *mirrored = next;
        Ok(())
    }

    /// Removes every mirrored item (the upstream is gone).
    pub(crate) fn clear(&mut self, server: &Server, link: &Link) {
        for kind in [Kind::Tools, Kind::Prompts, Kind::Resources, Kind::Templates] {
            for (ours, _) in self.map(kind).drain() {
                remove(server, kind, &ours);
            }
        }
        link.set_served(false, std::iter::empty());
        link.set_served(true, std::iter::empty());
    }
}

/// Each listed item with its key here, as the JSON the upstream sent.
fn keyed<T: serde::Serialize>(items: Vec<T>, key: impl Fn(&T) -> String) -> Vec<(String, Value)> {
    items.into_iter().filter_map(|item| Some((key(&item), serde_json::to_value(&item).ok()?))).collect()
}

fn remove(server: &Server, kind: Kind, ours: &str) {
    match kind {
        Kind::Tools => {
            server.remove_tool(ours);
        }
        Kind::Prompts => {
            server.remove_prompt(ours);
        }
        Kind::Resources => {
            server.remove_resources([ours]);
        }
        Kind::Templates => {
            server.remove_resource_template(ours);
        }
    }
}

/// Adds (or replaces) the item `ours` built from the upstream's `listing`: with everything
/// the listing says first, and when our checks refuse that (annotations, icons or `_meta`
/// that break a rule), with the parts a call needs only.
///
/// Errors: the server's `-32602` when even that is refused (an invalid name, a schema that
/// does not compile, a listing that is not the kind's shape).
///
/// A prompt or template gets a completion handler relaying to the upstream when `completes`
/// (the upstream declares the `completions` capability).
fn add(
    server: &Server,
    link: &Arc<Link>,
    kind: Kind,
    ours: &str,
    listing: &Value,
    completes: bool,
) -> Result<(), McpError> {
    let item = Item { kind, ours, listing, completes };
    add_one(server, link, &item, true).or_else(|e| {
        tracing::debug!(target: "switchyard_gateway", upstream = link.name(), "{ours}: {e}; served without its decoration");
        add_one(server, link, &item, false)
    })
}

/// One item to add: what [`add`] was given.
struct Item<'a> {
    kind: Kind,
    ours: &'a str,
    listing: &'a Value,
    completes: bool,
}

fn add_one(server: &Server, link: &Arc<Link>, item: &Item<'_>, decorated: bool) -> Result<(), McpError> {
    let Item { kind, ours, listing, completes } = *item;
    let object = listing.as_object().cloned().unwrap_or_default();
    let text = |key: &str| object.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_owned);
    let decoration = Decoration::of(&object, decorated);
    match kind {
        Kind::Tools => {
            let Some(name) = text("name") else { return Err(McpError::invalid_params("a tool without a name")) };
            let handler_link = link.clone();
            let upstream_name: Arc<str> = name.into();
            // A session upstream lists how the tool may run; a 2026-07-28 one says so only by
            // refusing a plain call (the relay learns it then).
            let task_support = match object.get("execution").and_then(|e| e.get("taskSupport")).and_then(Value::as_str)
            {
                Some("required") => TaskSupport::Required,
                Some("optional") => TaskSupport::Optional,
                _ => TaskSupport::Forbidden,
            };
            let as_task = Arc::new(AtomicBool::new(task_support == TaskSupport::Required));
            let text_call = (link.clone(), upstream_name.clone(), as_task.clone());
            let mut tool = DynamicTool::new(ours, move |ctx, args| {
                let (link, name, as_task) = (handler_link.clone(), upstream_name.clone(), as_task.clone());
                async move { link.call_tool(ctx, &name, args, &as_task).await }
            })
            .task_support(task_support)
            .roles(link.upstream.roles)
            .scopes(link.upstream.scopes);
            if let Some(schema) = object.get("inputSchema") {
                tool = tool.input_schema(schema.clone());
            }
            match object.get("outputSchema").filter(|s| !s.is_null()) {
                Some(schema) => tool = tool.output_schema(schema.clone()),
                // A tool with an output schema answers `structuredContent`, which is never kept
                // as text: checking its results for that first would only add to their decode.
                None => {
                    let (link, name, as_task) = text_call;
                    tool = tool.text_call(move |ctx, args| {
                        let (link, name, as_task) = (link.clone(), name.clone(), as_task.clone());
                        async move { link.call_tool_text(ctx, &name, args, &as_task).await }
                    });
                }
            }
            if let Some(d) = text("description") {
                tool = tool.description(d);
            }
            if decorated && let Some(a) = decode::<ToolAnnotations>(object.get("annotations")) {
                tool = tool.annotations(a);
            }
            server.add_tool(decoration.apply(tool))
        }
        Kind::Prompts => {
            let Some(name) = text("name") else { return Err(McpError::invalid_params("a prompt without a name")) };
            let handler_link = link.clone();
            let upstream_name: Arc<str> = name.into();
            let completion = CompletionRef::Prompt { name: upstream_name.to_string() };
            let mut prompt = DynamicPrompt::new(ours, move |ctx, args| {
                let link = handler_link.clone();
                let name = upstream_name.clone();
                async move { link.get_prompt(ctx, &name, args).await }
            })
            .roles(link.upstream.roles)
            .scopes(link.upstream.scopes);
            if completes {
                let completion_link = link.clone();
                prompt = prompt.complete(move |ctx, request| {
                    let (link, upstream) = (completion_link.clone(), completion.clone());
                    async move { link.complete(ctx, request, upstream).await }
                });
            }
            if let Some(d) = text("description") {
                prompt = prompt.description(d);
            }
            for argument in object.get("arguments").and_then(Value::as_array).into_iter().flatten() {
                let mut argument = argument.clone();
                if let Some(a) = argument.as_object_mut() {
                    a.entry("required").or_insert(Value::Bool(false));
                }
                match serde_json::from_value::<PromptArgument>(argument) {
                    Ok(a) => prompt = prompt.argument(a),
                    Err(e) => {
                        return Err(McpError::invalid_params(format!("a prompt argument that does not decode: {e}")));
                    }
                }
            }
            server.add_prompt(decoration.apply(prompt))
        }
        Kind::Resources => {
            let Some(uri) = text("uri") else { return Err(McpError::invalid_params("a resource without a uri")) };
            let name = text("name").unwrap_or_else(|| uri.clone());
            let handler_link = link.clone();
            let upstream_uri: Arc<str> = uri.into();
            let mut resource = DynamicResource::new(ours, name, move |ctx, _request| {
                let link = handler_link.clone();
                let uri = upstream_uri.clone();
                async move { link.read_resource(ctx, &uri).await }
            })
            .roles(link.upstream.roles)
            .scopes(link.upstream.scopes);
            if let Some(d) = text("description") {
                resource = resource.description(d);
            }
            if let Some(m) = text("mimeType") {
                resource = resource.mime_type(m);
            }
            if let Some(size) = object.get("size").and_then(Value::as_u64) {
                resource = resource.size(size);
            }
            if decorated && let Some(a) = decode::<Annotations>(object.get("annotations")) {
                resource = resource.annotations(a);
            }
            server.add_resources([decoration.apply(resource)]).map(|_| ())
        }
        Kind::Templates => {
            let Some(template) = text("uriTemplate") else {
                return Err(McpError::invalid_params("a resource template without a uriTemplate"));
            };
            let name = text("name").unwrap_or_else(|| template.clone());
            let handler_link = link.clone();
            let completion = CompletionRef::Resource { uri: template };
            let mut resource = DynamicResourceTemplate::new(ours, name, move |ctx, request| {
                let link = handler_link.clone();
                async move {
                    let uri = request.uri.strip_prefix(link.upstream.uri_prefix.as_str()).unwrap_or(&request.uri);
                    link.read_resource(ctx, uri).await
                }
            })
            .roles(link.upstream.roles)
            .scopes(link.upstream.scopes);
            if completes {
                let completion_link = link.clone();
                resource = resource.complete(move |ctx, request| {
                    let (link, upstream) = (completion_link.clone(), completion.clone());
                    async move { link.complete(ctx, request, upstream).await }
                });
            }
            if let Some(d) = text("description") {
                resource = resource.description(d);
            }
            if let Some(m) = text("mimeType") {
                resource = resource.mime_type(m);
            }
            if decorated && let Some(a) = decode::<Annotations>(object.get("annotations")) {
                resource = resource.annotations(a);
            }
            server.add_resource_template(decoration.apply(resource))
        }
    }
}

/// The title, icons and `_meta` of a listing: what every kind of item takes the same way.
struct Decoration {
    title: Option<String>,
    icons: Vec<Icon>,
    meta: Option<Map<String, Value>>,
}

impl Decoration {
    fn of(object: &Map<String, Value>, decorated: bool) -> Decoration {
        if !decorated {
            return Decoration { title: None, icons: Vec::new(), meta: None };
        }
        Decoration {
            title: object.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty()).map(str::to_owned),
            icons: decode::<Vec<Icon>>(object.get("icons")).unwrap_or_default(),
            meta: object.get("_meta").and_then(Value::as_object).cloned(),
        }
    }

    /// `item` with this title, these icons and this `_meta`.
    fn apply<T: Decorate>(self, mut item: T) -> T {
        if let Some(title) = self.title {
            item = item.title(title);
        }
        for icon in self.icons {
            item = item.icon(icon);
        }
        if let Some(meta) = self.meta {
            item = item.meta(meta);
        }
        item
    }
}

/// The setters the four run-time item types share, under one name for [`Decoration::apply`].
trait Decorate: Sized {
    fn title(self, title: String) -> Self;
    fn icon(self, icon: Icon) -> Self;
    fn meta(self, meta: Map<String, Value>) -> Self;
}

macro_rules! decorate {
    ($($item:ty),*) => {$(
        impl Decorate for $item {
            fn title(self, title: String) -> Self {
                <$item>::title(self, title)
            }
            fn icon(self, icon: Icon) -> Self {
                <$item>::icon(self, icon)
            }
            fn meta(self, meta: Map<String, Value>) -> Self {
                <$item>::meta(self, meta)
            }
        }
    )*};
}

decorate!(DynamicTool, DynamicPrompt, DynamicResource, DynamicResourceTemplate);

/// `value` as a `T`, when it is there and has the shape.
fn decode<T: DeserializeOwned>(value: Option<&Value>) -> Option<T> {
    serde_json::from_value(value?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::Upstream;
    use serde_json::json;
    use switchyard::transport::stdio::{StdioConfig, serve_io};
    use switchyard::{ReadResourceResult, ResourceContents, ToolError};
    use switchyard_client::ClientBuilder;

    fn tool(name: &str, description: &str) -> DynamicTool {
        DynamicTool::new(name, |_ctx, _args: Value| async { Ok::<_, ToolError>("ok") }).description(description)
    }

    /// An upstream served in this process over a pipe, and a client on it.
    async fn upstream(server: Server) -> Client {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (reader, writer) = tokio::io::split(theirs);
        tokio::spawn(serve_io(server, reader, writer, StdioConfig::default()));
        let (reader, writer) = tokio::io::split(ours);
        ClientBuilder::new("test", "0").connect_io(reader, writer).await.expect("connects")
    }

    fn description(server: &Server, name: &str) -> Option<Value> {
        server.table().tool(name).map(|t| t.definition["description"].clone())
    }

    #[tokio::test]
    async fn listings_are_served_under_the_prefix_and_follow_the_upstream() {
        let notes = DynamicResource::new("notes://a", "a", |_ctx, req| async move {
            Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, Some("text/plain"), "hi")]))
        });
        let annotated = tool("annotated", "Has a title and annotations")
            .title("Annotated")
            .annotations(ToolAnnotations::new().read_only_hint(true));
        let up = Server::builder("up", "0")
            .groups(["none"])
            .tool(tool("echo", "Echoes"))
            .tool(annotated)
            .resource(notes)
            .build()
            .expect("builds");
        let client = upstream(up.clone()).await;
        let ours =
            Server::builder("ours", "0").groups(["none"]).tool(tool("up_taken", "Our own")).build().expect("builds");
        let link = Link::new(Upstream::stdio("up", "unused", [""; 0]).prefix("up_").uri_prefix("up+"));
        link.set_client(Some(client.clone()));
        let mut mirror = Mirror::default();
        for kind in [Kind::Tools, Kind::Prompts, Kind::Resources, Kind::Templates] {
            mirror.sync(&ours, &link, &client, kind).await.expect("lists");
        }
        assert_eq!(description(&ours, "up_echo"), Some(json!("Echoes")));
        let annotated = ours.table().tool("up_annotated").map(|t| t.definition.clone()).expect("mirrored");
        assert_eq!(annotated["title"], "Annotated");
        assert_eq!(annotated["annotations"]["readOnlyHint"], true);
        assert!(ours.table().resource("up+notes://a").is_some(), "the resource under the URI prefix");
        assert_eq!(link.our_uri("notes://a").as_deref(), Some("up+notes://a"));
        assert_eq!(link.upstream_uri("up+notes://a").as_deref(), Some("notes://a"));
        assert_eq!(link.upstream_uri("up+notes://b"), None, "not served from the upstream");
        assert_eq!(link.upstream_uri("notes://a"), None, "not under the URI prefix");
        assert_eq!(mirror.len(), 3);

        // A name the server serves already stays the server's; a vanished tool goes.
        up.add_tool(tool("taken", "The upstream's")).expect("adds");
        up.remove_tool("echo");
        mirror.sync(&ours, &link, &client, Kind::Tools).await.expect("lists");
        assert_eq!(description(&ours, "up_taken"), Some(json!("Our own")));
        assert_eq!(description(&ours, "up_echo"), None);
        assert!(ours.table().tool("up_annotated").is_some());

        // The upstream gone: everything of it goes, the server's own stays.
        mirror.clear(&ours, &link);
        assert_eq!(mirror.len(), 0);
        assert_eq!(link.our_uri("notes://a"), None, "nothing is served from it");
        assert!(ours.table().tool("up_annotated").is_none() && ours.table().resource("up+notes://a").is_none());
        assert_eq!(description(&ours, "up_taken"), Some(json!("Our own")));
    }
}
