use crate::Server;
use crate::context::RequestContext;
use crate::handler::IntoToolOutcome;
use crate::jsonrpc::McpError;
use crate::model::{Icon, ToolAnnotations, ToolResultText};
use crate::registry::{
    Decoration, SchemaOrigin, TaskSupport, ToolCallFn, ToolEntry, ToolLimits, ToolParts, ToolTextFn, build_tool,
};
use crate::vocab::definitions::tool_name;
use futures::FutureExt;
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;

/// A tool defined at run time (not by `#[mcp_tool]`): everything the attribute can declare, and
/// a closure. Give it to [`ServerBuilder::tool`](crate::ServerBuilder::tool) before the server
/// is built, or to [`Server::add_tool`] while it runs.
///
/// The listed object is the MCP `Tool`
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool>):
/// `{name, title?, description?, inputSchema, outputSchema?, annotations?, icons?, _meta?}`.
/// Each session sees the keys its revision's schema has: 2025-03-26 none of `title`,
/// `outputSchema`, `icons` or `_meta`; 2025-06-18 no `icons`.
///
/// The checks are the macro's, run when the tool is given to the builder or added: the name is
/// 1–128 characters of `[A-Za-z0-9_.-]` and no MCP method name; `title` and `description`, when
/// given, are not blank; both schemas have `"type": "object"` at the root and compile; the
/// [annotations](ToolAnnotations::check) agree; every [icon](Icon::check) and `_meta` key
/// ([`check_meta`](crate::registry::check_meta)) follows the rules; [limits](Self::limits)
/// keep [their bounds](ToolLimits).
///
/// ```
/// # use switchyard::{Icon, Server, ToolAnnotations, ToolError, server::DynamicTool};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = Server::builder("doc", "0").groups(["none"]).build()?;
/// server.add_tool(
///     DynamicTool::new("shout", |_ctx, args: serde_json::Value| async move {
///         Ok::<_, ToolError>(args["text"].as_str().unwrap_or_default().to_uppercase())
///     })
///     .title("Shout")
///     .description("Upper-cases text")
///     .annotations(ToolAnnotations::new().read_only_hint(true))
///     .icon(Icon::new("https://example.com/shout.png")),
/// )?;
/// # Ok(()) }
/// ```
pub struct DynamicTool {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: Option<ToolAnnotations>,
    decoration: Decoration,
    call: ToolCallFn,
    text_call: Option<ToolTextFn>,
    roles: &'static [&'static str],
    scopes: &'static [&'static str],
    task_support: TaskSupport,
    limits: ToolLimits,
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool").field("name", &self.name).finish_non_exhaustive()
    }
}

impl DynamicTool {
    /// A tool `name` whose handler receives the context and the raw `arguments` object and
    /// returns anything a `#[mcp_tool]` function may return. The input schema defaults to an
    /// object with no declared properties.
    pub fn new<F, Fut, R>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolOutcome,
    {
        let handler = Arc::new(handler);
        DynamicTool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: json!({ "type": "object", "properties": {} }),
            output_schema: None,
            annotations: None,
            decoration: Decoration::default(),
            roles: &[],
            scopes: &[],
            task_support: TaskSupport::Forbidden,
            limits: ToolLimits::NONE,
            text_call: None,
            call: Arc::new(move |ctx, args| {
                // `map`, not an async block around the future: the block would hold it twice (as
                // captured and as awaited), doubling the boxed size a call allocates and moves.
                Box::pin(handler(ctx, args.into_value()).map(|out| out.into_tool_outcome()))
            }),
        }
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the display `title` (as `#[mcp_tool(title = "..")]`; 2025-06-18 and later sessions
    /// see it).
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Sets the `annotations` (as `#[mcp_tool(read_only, destructive = false, ..)]`).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Adds an icon (as `#[mcp_tool(icons = [..])]`; 2025-11-25 and later sessions see it).
    pub fn icon(mut self, icon: Icon) -> Self {
        self.decoration.icons.push(icon);
        self
    }

    /// Sets the listed `_meta` (as `#[mcp_tool(meta = ..)]`; 2025-06-18 and later sessions see
    /// it); its keys follow the naming rules and use no reserved prefix.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.decoration.meta = Some(meta);
        self
    }

    /// Restricts the tool to callers holding one of `roles` (as `#[mcp_tool(roles = [..])]`).
    pub fn roles(mut self, roles: &'static [&'static str]) -> Self {
        self.roles = roles;
        self
    }

    /// Restricts the tool to callers whose token grants all of `scopes` (as
    /// `#[mcp_tool(scopes = [..])]`).
    pub fn scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// Lets the tool run as a task of the Tasks extension (as `#[mcp_tool(task_support = ..)]`;
    /// default [`TaskSupport::Forbidden`]).
    pub fn task_support(mut self, mode: TaskSupport) -> Self {
        self.task_support = mode;
        self
    }

    /// Sets the tool's timeout, rate limit and concurrency cap (as `#[mcp_tool(timeout = "30s",
    /// rate_limit = "10/min", max_concurrency = 4)]`; default [`ToolLimits::NONE`]). Bounds
    /// broken (see [`ToolLimits`]) make the add fail.
    pub fn limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the input schema (must have `"type": "object"` at the root); every call's
    /// `arguments` are validated against it.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Sets `outputSchema`, the JSON Schema of the result's `structuredContent` (what
    /// `#[mcp_tool]` derives for a tool returning [`Json<T>`](crate::Json)); it must have
    /// `"type": "object"` at the root and compile (checked in every build). In debug builds, as
    /// for a macro tool, a result whose `structuredContent` does not match it is answered with
    /// `-32603`; release builds send results unchecked. 2025-06-18 and later sessions see it.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Gives the tool a second entry point, `handler`, whose result may be JSON text a peer
    /// sent ([`ToolResultText`]), for a tool that relays its calls to another server (the
    /// gateway's mirrored tools): the server writes such text as it came, and neither decodes
    /// nor encodes the result.
    ///
    /// The server calls `handler` instead of the handler given to [`new`](Self::new) only when
    /// nothing on its side needs the result typed:
    /// - no typed or alternate filter on `tools/call` (one reads and may change the
    ///   [`CallToolResult`](crate::CallToolResult)), and no replacement of the method
    ///   ([`ServerBuilder::replace_tools_call`](crate::ServerBuilder::replace_tools_call),
    ///   which runs neither entry point);
    /// - no raw filter, and a client whose revision's schema has every key of the result;
    /// - no declared [limits](Self::limits) (a timeout, rate or concurrency cap runs around the
    ///   typed handler);
    /// - no [transform](crate::ServerBuilder::transform_tool) rewriting its arguments.
    ///
    /// Otherwise the typed handler runs, so `handler` must do what it does. It receives the
    /// same context and `arguments` object (checked against the input schema), and may return a
    /// typed result ([`ToolResultText::from`]) when it has no text to pass on; a typed result is
    /// shaped and checked against the [output schema](Self::output_schema) as the typed
    /// handler's is. Kept text has no `structuredContent`, so there is nothing of it to check.
    ///
    /// Errors: those of the typed handler, as it would return them (`Err` an `McpError`; a
    /// failed call an `isError` result).
    ///
    /// Spec: [calling tools](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#calling-tools).
    pub fn text_call<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResultText, McpError>> + Send + 'static,
    {
        let call: ToolTextFn = Arc::new(move |ctx, args| Box::pin(handler(ctx, args.into_value())));
        self.text_call = Some(call);
        self
    }

    /// The dispatch-table entry.
    ///
    /// Errors: the first rule of the [type docs](DynamicTool) it breaks, as a sentence.
    pub(crate) fn into_entry(self) -> Result<ToolEntry, String> {
        tool_name(&self.name)?;
        super::non_blank("title", self.title.as_deref())?;
        super::non_blank("description", self.description.as_deref())?;
        if let Some(schema) = &self.output_schema
            && schema.get("type").and_then(Value::as_str) != Some("object")
        {
            return Err("the output schema must have `\"type\": \"object\"` at its root: `structuredContent` is \
                        a JSON object"
                .to_owned());
        }
        let annotations = match self.annotations {
            Some(annotations) => {
                annotations.check()?;
                Some(json!(annotations))
            }
            None => None,
        };
        let parts = ToolParts {
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            input_schema: self.input_schema,
            schema_origin: SchemaOrigin::Written,
            output_schema: self.output_schema,
            annotations,
            decoration: self.decoration,
            roles: self.roles,
            scopes: self.scopes,
            task_support: self.task_support,
            limits: self.limits,
            site: None,
        };
        let mut entry = build_tool(parts, self.call)?;
        entry.text_call = self.text_call;
        Ok(entry)
    }
}

impl Server {
    /// Adds a tool while the server runs, replacing the tool of the same name (a `#[mcp_tool]`
    /// one too), and publishes `notifications/tools/list_changed`
    /// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#list-changed-notification>).
    /// The new table is swapped in atomically; a request resolves its tool when it is matched
    /// and again right before the body runs, so a change can reach a request in flight.
    /// Replacing a tool replaces its roles too: give the new one [`roles`](DynamicTool::roles)
    /// if the old one had any.
    ///
    /// Errors: `-32602` naming the tool when it breaks one of the checks in the
    /// [`DynamicTool`] docs (a bad name, a blank title, an input or output schema whose root is
    /// not `type: "object"`, disagreeing annotations, a bad icon or `_meta` key,
    /// [limits](DynamicTool::limits) out of bounds, a rate limit without the runtime's
    /// `rate-limit` feature); then nothing changes.
    ///
    /// A [transform](crate::ServerBuilder::transform_tool) of the tool's name applies here: the
    /// tool enters the table renamed, re-described or with its arguments rewritten, or not at
    /// all when hidden (then nothing is published). A transform it breaks (an argument its
    /// schema lacks, say) is `-32602` naming the tool and the argument, and nothing changes.
    pub fn add_tool(&self, tool: DynamicTool) -> Result<(), McpError> {
        let name = tool.name.clone();
        let entry = tool
            .into_entry()
            .and_then(|entry| self.engine().tool_transforms.apply(entry))
            .map_err(|e| McpError::invalid_params(format!("tool {name:?}: {e}")))?;
        let Some(entry) = entry else { return Ok(()) };
        if !entry.limits.is_none() {
            crate::filters::declared::unsupported(entry.limits)
                .map_err(|e| McpError::invalid_params(format!("tool {name:?}: {e}")))?;
            let _ = self.engine().tool_limiter.get_or_init(crate::filters::declared::limiter);
        }
        self.engine().table.rcu(|t| Arc::new(t.with_tool(entry.clone())));
        self.publisher().tools_list_changed();
        Ok(())
    }

    /// Removes the tool `name` (a `#[mcp_tool]` one too) and publishes
    /// `notifications/tools/list_changed`; returns false, and publishes nothing, when there was
    /// none. A tool a [transform](crate::ServerBuilder::transform_tool) renamed is found by
    /// either name; a hidden one is never in the table.
    pub fn remove_tool(&self, name: &str) -> bool {
        let name = self.served_tool_name(name);
        self.swap_table(|t| t.without_tool(name), |p| p.tools_list_changed())
    }

    /// Enables or disables the tool `name` (a disabled tool is neither listed nor callable) and
    /// publishes `notifications/tools/list_changed`; returns false when there is no such tool.
    /// A renamed tool is found by either name, as by [`remove_tool`](Self::remove_tool).
    pub fn set_tool_enabled(&self, name: &str, enabled: bool) -> bool {
        let name = self.served_tool_name(name);
        self.swap_table(|t| t.with_tool_enabled(name, enabled), |p| p.tools_list_changed())
    }

    /// The name the table holds the tool `name` under: `name` when the table has it, else the
    /// name a transform gave it (a hidden tool's: `name`, which the table lacks).
    fn served_tool_name<'a>(&'a self, name: &'a str) -> &'a str {
        if self.engine().table().tool_any(name) {
            return name;
        }
        self.engine().tool_transforms.public_name(name).unwrap_or(name)
    }
}
