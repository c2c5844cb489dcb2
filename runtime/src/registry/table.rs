use super::UriTemplate;
use super::items::{
    BoxFuture, CompletionHandler, CompletionRegistration, CompletionTarget, PromptRegistration, ResourceRegistration,
    ResourceRequest, SchemaOrigin, Site, ToolRegistration,
};
use super::mount_links::GroupUris;
use super::tool_schema::{ToolSchemas, legacy_output_schema};
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ToolArguments};
use crate::model::{
    CallToolResult, Completion, CompletionRequest, GetPromptResult, Icon, PromptArgument, ReadResourceResult,
    check_icons, check_meta,
};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// A start-up error: the registrations cannot form a server. Returned by
/// [`ServerBuilder::build`](crate::ServerBuilder::build) before any request is served; when
/// there is more than one problem, all of them at once ([`BuildError::Several`]), as a compiler
/// reports every error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two registrations claim one name (tool name, prompt name, resource URI or template).
    #[error("{kind} `{name}` is registered twice: at {first} and at {second}")]
    Duplicate {
        /// `tool`, `prompt`, `resource` or `completion`.
        kind: &'static str,
        /// The contested name.
        name: String,
        /// One definition.
        first: String,
        /// The other.
        second: String,
    },
    /// A registration is invalid in a way only visible once the program runs (e.g. a tool input
    /// schema whose root is not `type: "object"`).
    #[error("{kind} `{name}` at {site}: {reason}")]
    Invalid {
        /// `tool`, `prompt`, `resource` or `completion`.
        kind: &'static str,
        /// The registration's name.
        name: String,
        /// Where it was declared.
        site: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Every problem found, in the order found (two or more; one is reported as itself).
    #[error("{} problems:{}", .0.len(), .0.iter().map(|e| format!("\n  - {e}")).collect::<String>())]
    Several(Vec<BuildError>),
}

impl BuildError {
    /// `None` for no problems, the problem itself for one, [`BuildError::Several`] (flattened)
    /// otherwise.
    pub fn from_all(errors: Vec<BuildError>) -> Option<BuildError> {
        let mut flat: Vec<BuildError> = Vec::with_capacity(errors.len());
        for e in errors {
            match e {
                BuildError::Several(inner) => flat.extend(inner),
                other => flat.push(other),
            }
        }
        match flat.len() {
            0 => None,
            1 => flat.pop(),
            _ => Some(BuildError::Several(flat)),
        }
    }

    /// The single problems this error stands for (itself, or the members of `Several`).
    pub fn problems(&self) -> &[BuildError] {
        match self {
            BuildError::Several(all) => all,
            one => std::slice::from_ref(one),
        }
    }
}

/// A tool call function: the generated shim of a `#[mcp_tool]`, or a closure added at run time.
pub type ToolCallFn =
    Arc<dyn Fn(RequestContext, ToolArguments) -> BoxFuture<Result<CallToolResult, McpError>> + Send + Sync>;

/// A tool's second entry point, which may answer with a result kept as text
/// ([`DynamicTool::text_call`](crate::server::DynamicTool::text_call)).
pub(crate) type ToolTextFn = Arc<
    dyn Fn(RequestContext, ToolArguments) -> BoxFuture<Result<crate::model::ToolResultText, McpError>> + Send + Sync,
>;

/// The reader of a resource: a `#[mcp_resource]` function's shim or a run-time resource's
/// closure ([`DynamicResource`](crate::server::DynamicResource)).
pub type ResourceReadFn =
    Arc<dyn Fn(RequestContext, ResourceRequest) -> BoxFuture<Result<ReadResourceResult, McpError>> + Send + Sync>;

/// The renderer of a prompt: a `#[mcp_prompt]` function's shim or a run-time prompt's closure
/// ([`DynamicPrompt`](crate::server::DynamicPrompt)); receives the context and the `arguments`
/// map (string values).
pub type PromptGetFn =
    Arc<dyn Fn(RequestContext, Map<String, Value>) -> BoxFuture<Result<GetPromptResult, McpError>> + Send + Sync>;

/// The completion handler of a run-time prompt or resource template
/// ([`DynamicPrompt::complete`](crate::server::DynamicPrompt::complete),
/// [`DynamicResourceTemplate::complete`](crate::server::DynamicResourceTemplate::complete)):
/// one for every argument of its item. Receives the context and the `completion/complete`
/// params as the client sent them
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion>) and
/// returns the `completion` object, `{values, total?, hasMore?}`.
pub type CompletionFn =
    Arc<dyn Fn(RequestContext, CompletionRequest) -> BoxFuture<Result<Completion, McpError>> + Send + Sync>;

/// A `Mcp-Param-{name}` header declared by an `x-mcp-header` annotation on a top-level property.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamHeader {
    /// The header suffix (`Mcp-Param-{header}`), as written in the schema.
    pub header: String,
    /// The property it mirrors.
    pub property: String,
}

impl ParamHeader {
    /// The `x-mcp-header` annotations of a tool's input schema, checked against the
    /// [schema extension](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#schema-extension)'s
    /// rules: each name a non-empty RFC 9110 token, unique ignoring case, on a top-level
    /// `string`, `integer` or `boolean` property. A server builds its tools with this check; a
    /// client uses it to drop a listed tool whose annotations break the rules, and to know which
    /// arguments of a `tools/call` it mirrors in `Mcp-Param-{header}`.
    ///
    /// Errors: the reason, naming the property or header, for the first annotation that breaks a
    /// rule.
    pub fn from_input_schema(schema: &Value) -> Result<Vec<ParamHeader>, String> {
        param_headers(schema)
    }
}

/// One tool in the dispatch table.
#[derive(Clone)]
pub struct ToolEntry {
    /// The tool name.
    pub name: String,
    /// The `Tool` object listed by `tools/list` on 2026-07-28.
    pub definition: Value,
    /// The `Tool` object session clients see, when it differs (a non-object `outputSchema`
    /// wrapped as `{"result": ..}`, which 2025-06-18 and 2025-11-25 require).
    pub legacy_definition: Option<Value>,
    /// The call function.
    pub call: ToolCallFn,
    /// Disabled tools are neither listed nor callable.
    pub enabled: bool,
    /// `x-mcp-header` annotations of the input schema.
    pub param_headers: Vec<ParamHeader>,
    /// Where it was declared (`None` for tools added at run time).
    pub site: Option<Site>,
    /// Roles a caller needs (any one); empty: anyone.
    pub roles: &'static [&'static str],
    /// OAuth scopes a caller's token must grant (all); empty: none.
    pub scopes: &'static [&'static str],
    /// Whether the tool may run as a task of the Tasks extension
    /// ([the server alone decides](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#polymorphic-results);
    /// not on the wire).
    pub task_support: super::TaskSupport,
    /// Timeout, rate limit and concurrency cap declared on the tool (not on the wire).
    pub limits: super::ToolLimits,
    /// The compiled argument and output checks.
    pub(crate) schemas: ToolSchemas,
    /// The entry point that may answer with text, taken when nothing needs the result typed.
    pub(crate) text_call: Option<ToolTextFn>,
}

impl ToolEntry {
    /// The `Tool` object for a client of `modern` (2026-07-28) or a session era.
    pub fn definition_for(&self, modern: bool) -> &Value {
        match (&self.legacy_definition, modern) {
            (Some(legacy), false) => legacy,
            _ => &self.definition,
        }
    }
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry").field("name", &self.name).field("enabled", &self.enabled).finish()
    }
}

/// One prompt in the dispatch table.
#[derive(Clone)]
pub struct PromptEntry {
    /// The `Prompt` object listed by `prompts/list`.
    pub definition: Value,
    /// Its arguments (for the required-argument check).
    pub arguments: Vec<PromptArgument>,
    /// The renderer.
    pub handler: PromptGetFn,
    /// The completion handler of a run-time prompt, for all its arguments; tried before a
    /// `#[mcp_completion]` one.
    pub completion: Option<CompletionFn>,
    /// Roles a caller needs (any one); empty: anyone.
    pub roles: &'static [&'static str],
    /// OAuth scopes a caller's token must grant (all); empty: none.
    pub scopes: &'static [&'static str],
}

impl std::fmt::Debug for PromptEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptEntry")
            .field("definition", &self.definition)
            .field("arguments", &self.arguments)
            .field("roles", &self.roles)
            .finish_non_exhaustive()
    }
}

/// One resource or resource template in the dispatch table.
#[derive(Clone)]
pub struct ResourceEntry {
    /// The `Resource` or `ResourceTemplate` object listed.
    pub definition: Value,
    /// The parsed template (`None` for a static resource).
    pub template: Option<UriTemplate>,
    /// The reader.
    pub handler: ResourceReadFn,
    /// The completion handler of a run-time template, for all its variables; tried before a
    /// `#[mcp_completion]` one (always `None` for a static resource).
    pub completion: Option<CompletionFn>,
    /// Roles a caller needs (any one); empty: anyone.
    pub roles: &'static [&'static str],
    /// OAuth scopes a caller's token must grant (all); empty: none.
    pub scopes: &'static [&'static str],
}

impl std::fmt::Debug for ResourceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceEntry")
            .field("definition", &self.definition)
            .field("template", &self.template)
            .field("roles", &self.roles)
            .finish_non_exhaustive()
    }
}

/// Positions by name (or URI) in one of the table's lists. Looked up with a client's string on
/// every request, but only the server's own names are ever inserted, so a client cannot crowd
/// one bucket: foldhash rather than SipHash, which cost ~150 instructions a lookup, and a
/// `tools/call` looks its tool up two or three times. The keys are shared (`Arc<str>`) so
/// that a request can keep the name of the tool it matched without copying it
/// ([`DispatchTable::tool_and_name`]).
type NameIndex = HashMap<Arc<str>, usize, foldhash::fast::RandomState>;

/// The immutable dispatch table of one server: every tool, prompt, resource and completion,
/// sorted by name so that lists are deterministic. Run-time tool changes build a new table and
/// swap it in atomically; readers never lock.
#[derive(Debug, Clone, Default)]
pub struct DispatchTable {
    tools: Vec<ToolEntry>,
    tool_index: NameIndex,
    prompts: Vec<(String, PromptEntry)>,
    prompt_index: NameIndex,
    resources: Vec<(String, ResourceEntry)>,
    resource_index: NameIndex,
    templates: Vec<(String, ResourceEntry)>,
    completions: HashMap<(CompletionKey, Option<String>), CompletionHandler>,
    /// The declared target of each completion of a mounted group, by its public key: the
    /// handler is shown the reference it declared.
    completion_targets: HashMap<CompletionKey, CompletionTarget>,
    /// The kinds of which a definition was removed at run time: their capability was declared
    /// (sessions were told it, `list_changed` announced the removal), so their list methods
    /// stay served, answering an empty list once the last one is gone.
    removed: Removed,
}

/// What [`DispatchTable`] remembers of run-time removals.
#[derive(Debug, Clone, Copy, Default)]
struct Removed {
    tools: bool,
    prompts: bool,
    resources: bool,
    /// A run-time prompt or template with a completion handler was removed or replaced: the
    /// `completions` capability stays declared, as for the kinds above.
    completions: bool,
}

/// What a completion handler is keyed on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CompletionKey {
    /// A prompt name.
    Prompt(String),
    /// A resource template.
    Resource(String),
}

/// The icons and `_meta` a definition declares, checked: at `build()` for a registration, when
/// it is added for a run-time definition.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Decoration {
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<Map<String, Value>>,
}

impl Decoration {
    /// Reads the JSON text a macro wrote for `icons` and `meta`.
    ///
    /// Errors: what is wrong, as a sentence (the macro checked the same, so only a hand-made
    /// registration gets here).
    pub(crate) fn from_json_text(icons: Option<&str>, meta: Option<&str>) -> Result<Decoration, String> {
        let icons = match icons {
            Some(text) => serde_json::from_str(text).map_err(|e| format!("icons are not an array of icons: {e}"))?,
            None => Vec::new(),
        };
        let meta = match meta {
            Some(text) => Some(serde_json::from_str(text).map_err(|e| format!("_meta is not a JSON object: {e}"))?),
            None => None,
        };
        Ok(Decoration { icons, meta })
    }

    /// Checks the icons and the `_meta` keys, then writes them into `def`.
    ///
    /// Errors: the first icon field or `_meta` key that breaks the rules, as a sentence.
    pub(crate) fn apply(self, def: &mut Map<String, Value>) -> Result<(), String> {
        check_icons(&self.icons)?;
        if !self.icons.is_empty() {
            def.insert("icons".into(), json!(self.icons));
        }
        if let Some(meta) = self.meta {
            check_meta(&meta)?;
            def.insert("_meta".into(), Value::Object(meta));
        }
        Ok(())
    }
}

fn set_opt(obj: &mut Map<String, Value>, key: &str, v: Option<&str>) {
    if let Some(v) = v {
        obj.insert(key.to_owned(), Value::String(v.to_owned()));
    }
}

impl DispatchTable {
    /// Builds the table from every registration in `groups` (`None`: every group).
    ///
    /// Errors: [`BuildError::Duplicate`] naming both sites when two registrations share a tool
    /// name, prompt name, resource URI or completion target; [`BuildError::Invalid`] for a tool
    /// schema that is not an object schema or a bad URI template; every one of them at once
    /// ([`BuildError::Several`]) when there are several.
    pub fn from_inventory(groups: Option<&[String]>) -> Result<DispatchTable, BuildError> {
        DispatchTable::from_inventory_mounted(groups, &super::Mounts::new())
    }

    /// [`from_inventory`](Self::from_inventory) with the groups of `mounts` served under their
    /// prefixes ([`Mount`](crate::Mount)); collisions are checked on the public names.
    pub(crate) fn from_inventory_mounted(
        groups: Option<&[String]>,
        mounts: &super::Mounts,
    ) -> Result<DispatchTable, BuildError> {
        let groups = super::Groups::new(groups);
        let mut table = DispatchTable::default();
        let mut errors = Vec::new();
        // Sorted, so that the errors come in one order whatever the map's.
        let mut mount_groups: Vec<(&String, &(super::Mount, String))> = mounts.iter().collect();
        mount_groups.sort_by(|a, b| a.0.cmp(b.0));
        for (group, (mount, site)) in &mount_groups {
            if let Err(reason) = mount.check() {
                errors.push(BuildError::Invalid { kind: "mount", name: (*group).clone(), site: site.clone(), reason });
            }
        }
        let mounted = |group: &str| mounts.get(group).map(|(m, _)| m);
        let links = group_uris(groups, mounts);
        let mut tool_sites: HashMap<String, Declared> = HashMap::new();
        for reg in groups.select::<ToolRegistration>() {
            let mount = mounted(reg.group);
            let name = public_name(mount, reg.name);
            let here = Declared { site: reg.site, mount: mount.map(|_| reg.group) };
            if mount.is_some()
                && let Err(reason) = crate::vocab::definitions::tool_name(&name)
            {
                errors.push(BuildError::Invalid {
                    kind: "tool",
                    name: name.into_owned(),
                    site: here.to_string(),
                    reason,
                });
                continue;
            }
            if let Some(prev) = tool_sites.insert(name.clone().into_owned(), here) {
                errors.push(duplicate("tool", &name, prev, here));
                continue;
            }
            let handler = reg.handler;
            let call: ToolCallFn = match links.get(reg.group) {
                None => Arc::new(move |ctx, args| handler(ctx, args)),
                Some(links) => {
                    let links = links.clone();
                    Arc::new(move |ctx, args| {
                        let call = handler(ctx, args);
                        let links = links.clone();
                        Box::pin(async move {
                            let mut result = call.await?;
                            links.public_blocks(&mut result.content);
                            Ok(result)
                        })
                    })
                }
            };
            match tool_entry(reg, &name, call) {
                Ok(entry) => table.tools.push(entry),
                Err(e) => errors.push(e),
            }
        }
        let mut prompt_sites: HashMap<String, Declared> = HashMap::new();
        for reg in groups.select::<PromptRegistration>() {
            let mount = mounted(reg.group);
            let name = public_name(mount, reg.name);
            let here = Declared { site: reg.site, mount: mount.map(|_| reg.group) };
            if let Some(prev) = prompt_sites.insert(name.clone().into_owned(), here) {
                errors.push(duplicate("prompt", &name, prev, here));
                continue;
            }
            match prompt_entry(reg, &name) {
                Ok(mut entry) => {
                    if let Some(links) = links.get(reg.group) {
                        entry.handler = public_prompt_links(links.clone(), entry.handler);
                    }
                    table.prompts.push((name.into_owned(), entry))
                }
                Err(e) => errors.push(e),
            }
        }
        let mut resource_sites: HashMap<String, Declared> = HashMap::new();
        for reg in groups.select::<ResourceRegistration>() {
            let mount = mounted(reg.group);
            let here = Declared { site: reg.site, mount: mount.map(|_| reg.group) };
            let (uri, handler): (Cow<'_, str>, ResourceReadFn) = match mount {
                None => (Cow::Borrowed(reg.uri), Arc::new(reg.handler)),
                Some(m) => {
                    if let Err(reason) = m.check_uri(reg.uri) {
                        let name = reg.uri.to_owned();
                        errors.push(BuildError::Invalid { kind: "resource", name, site: here.to_string(), reason });
                        continue;
                    }
                    (m.public_uri(reg.uri), mounted_reader(m.clone(), links.get(reg.group).cloned(), reg.handler))
                }
            };
            if let Some(prev) = resource_sites.insert(uri.clone().into_owned(), here) {
                errors.push(duplicate("resource", &uri, prev, here));
                continue;
            }
            let (key, entry) = match resource_entry(reg, &uri, handler) {
                Ok(built) => built,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            if entry.template.is_some() {
                table.templates.push((key, entry))
            } else {
                table.resources.push((key, entry))
            }
        }
        let mut completion_sites: HashMap<(CompletionKey, Option<String>), Declared> = HashMap::new();
        for reg in groups.select::<CompletionRegistration>() {
            let mount = mounted(reg.group);
            let key = match reg.target {
                CompletionTarget::Prompt(p) => CompletionKey::Prompt(public_name(mount, p).into_owned()),
                CompletionTarget::ResourceTemplate(u) => {
                    CompletionKey::Resource(mount.map_or(Cow::Borrowed(u), |m| m.public_uri(u)).into_owned())
                }
            };
            let here = Declared { site: reg.site, mount: mount.map(|_| reg.group) };
            let full = (key, reg.argument.map(str::to_owned));
            if let Some(prev) = completion_sites.insert(full.clone(), here) {
                let name = format!("{:?}/{}", full.0, reg.argument.unwrap_or("*"));
                errors.push(duplicate("completion", &name, prev, here));
                continue;
            }
            if mount.is_some() {
                table.completion_targets.insert(full.0.clone(), reg.target);
            }
            table.completions.insert(full, reg.handler);
        }
        for (group, (_, site)) in mount_groups {
            let declared = |g: &str| g == group;
            let any = groups.select::<ToolRegistration>().any(|r| declared(r.group))
                || groups.select::<PromptRegistration>().any(|r| declared(r.group))
                || groups.select::<ResourceRegistration>().any(|r| declared(r.group))
                || groups.select::<CompletionRegistration>().any(|r| declared(r.group));
            if !any {
                errors.push(BuildError::Invalid {
                    kind: "mount",
                    name: group.clone(),
                    site: site.clone(),
                    reason: format!(
                        "no tool, prompt, resource or completion of group `{group}` is served (is the group \
                         spelled right, and selected by ServerBuilder::groups?)"
                    ),
                });
            }
        }
        if let Some(e) = BuildError::from_all(errors) {
            return Err(e);
        }
        table.reindex();
        Ok(table)
    }

    fn reindex(&mut self) {
        self.tools.sort_by(|a, b| a.name.cmp(&b.name));
        self.prompts.sort_by(|a, b| a.0.cmp(&b.0));
        self.resources.sort_by(|a, b| a.0.cmp(&b.0));
        self.templates.sort_by(|a, b| a.0.cmp(&b.0));
        self.tool_index = self.tools.iter().enumerate().map(|(i, t)| (Arc::from(t.name.as_str()), i)).collect();
        self.prompt_index = self.prompts.iter().enumerate().map(|(i, p)| (Arc::from(p.0.as_str()), i)).collect();
        self.resource_index = self.resources.iter().enumerate().map(|(i, r)| (Arc::from(r.0.as_str()), i)).collect();
    }

    /// Every enabled tool, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolEntry> {
        self.tools.iter().filter(|t| t.enabled)
    }

    /// The enabled tool `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolEntry> {
        self.tool_and_name(name).map(|(tool, _)| tool)
    }

    /// [`tool`](Self::tool), with the table's shared copy of its name: what a request records
    /// as its matched primitive without allocating one of its own.
    pub(crate) fn tool_and_name(&self, name: &str) -> Option<(&ToolEntry, &Arc<str>)> {
        let (shared, &i) = self.tool_index.get_key_value(name)?;
        Some((&self.tools[i], shared)).filter(|(t, _)| t.enabled)
    }

    /// True when the table has the tool `name`, enabled or not.
    pub(crate) fn tool_any(&self, name: &str) -> bool {
        self.tool_index.contains_key(name)
    }

    /// True when the table has any tool (enabled or not), or had one that was removed at run
    /// time: the `tools` capability.
    pub fn has_tools(&self) -> bool {
        !self.tools.is_empty() || self.removed.tools
    }

    /// True when the table has any prompt, or had one that was removed at run time: the
    /// `prompts` capability.
    pub(crate) fn has_prompts(&self) -> bool {
        !self.prompts.is_empty() || self.removed.prompts
    }

    /// Every prompt, sorted by name.
    pub fn prompts(&self) -> impl Iterator<Item = &PromptEntry> {
        self.prompts.iter().map(|p| &p.1)
    }

    /// The prompt `name`.
    pub fn prompt(&self, name: &str) -> Option<&PromptEntry> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i].1)
    }

    /// Every static resource, sorted by URI.
    pub fn resources(&self) -> impl Iterator<Item = &ResourceEntry> {
        self.resources.iter().map(|r| &r.1)
    }

    /// The static resource `uri` (templates are not consulted).
    pub fn resource(&self, uri: &str) -> Option<&ResourceEntry> {
        self.resource_index.get(uri).map(|&i| &self.resources[i].1)
    }

    /// Every resource template, sorted by template.
    pub fn templates(&self) -> impl Iterator<Item = &ResourceEntry> {
        self.templates.iter().map(|r| &r.1)
    }

    /// The resource serving `uri`: an exact static match first, then the first matching
    /// template (in sorted order), with its variables.
    pub fn resolve_resource(&self, uri: &str) -> Option<(&ResourceEntry, Map<String, Value>)> {
        if let Some(&i) = self.resource_index.get(uri) {
            return Some((&self.resources[i].1, Map::new()));
        }
        self.templates.iter().find_map(|(_, e)| e.template.as_ref()?.matches(uri).map(|vars| (e, vars)))
    }

    /// True when any resource or template is registered, or one was removed at run time: the
    /// `resources` capability.
    pub fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty() || self.removed.resources
    }

    /// Every scope a tool, prompt, resource or template declares, sorted, once each (RPC
    /// methods are not in the table; the server adds theirs).
    pub fn declared_scopes(&self) -> Vec<String> {
        let tools = self.tools.iter().flat_map(|t| t.scopes.iter());
        let prompts = self.prompts.iter().flat_map(|p| p.1.scopes.iter());
        let resources = self.resources.iter().chain(&self.templates).flat_map(|r| r.1.scopes.iter());
        let all: std::collections::BTreeSet<&str> = tools.chain(prompts).chain(resources).copied().collect();
        all.into_iter().map(str::to_owned).collect()
    }

    /// True when any primitive declares roles (lists then depend on the caller).
    pub fn any_roles(&self) -> bool {
        self.tools.iter().any(|t| !t.roles.is_empty())
            || self.prompts.iter().any(|p| !p.1.roles.is_empty())
            || self.resources.iter().chain(&self.templates).any(|r| !r.1.roles.is_empty())
    }

    /// True when any completion handler is registered (a `#[mcp_completion]`, or a run-time
    /// prompt's or template's), or a run-time one was removed: the `completions` capability.
    pub fn has_completions(&self) -> bool {
        !self.completions.is_empty()
            || self.removed.completions
            || self.prompts.iter().any(|p| p.1.completion.is_some())
            || self.templates.iter().any(|t| t.1.completion.is_some())
    }

    /// The completion handler for `key` and `argument` (an argument-specific one first).
    pub fn completion(&self, key: CompletionKey, argument: &str) -> Option<CompletionHandler> {
        let mut full = (key, Some(argument.to_owned()));
        if let Some(h) = self.completions.get(&full) {
            return Some(*h);
        }
        full.1 = None;
        self.completions.get(&full).copied()
    }

    /// The reference a mounted completion handler declared for the public `key` (`None` for one
    /// that is not mounted): the handler is shown its own prompt name or URI template.
    pub(crate) fn declared_completion_target(&self, key: &CompletionKey) -> Option<CompletionTarget> {
        self.completion_targets.get(key).copied()
    }

    /// Every tool, enabled or not, taken out of the table (for transforms at `build()`).
    pub(crate) fn take_tools(&mut self) -> Vec<ToolEntry> {
        let tools = std::mem::take(&mut self.tools);
        self.reindex();
        tools
    }

    /// Puts `tools` in the table, replacing all it had (for transforms at `build()`).
    pub(crate) fn set_tools(&mut self, tools: Vec<ToolEntry>) {
        self.tools = tools;
        self.reindex();
    }

    /// A copy with `tool` added or replaced.
    pub fn with_tool(&self, tool: ToolEntry) -> DispatchTable {
        let mut t = self.clone();
        t.tools.retain(|e| e.name != tool.name);
        t.tools.push(tool);
        t.reindex();
        t
    }

    /// A copy with the static resources `entries` added, each replacing the static resource
    /// with the same URI (the `uri` of its definition).
    pub fn with_resources(&self, entries: Vec<ResourceEntry>) -> DispatchTable {
        // Keyed once, so adding a skills folder's thousands of files stays linear; of two
        // entries with one URI the last wins.
        let mut incoming: HashMap<String, ResourceEntry> = HashMap::with_capacity(entries.len());
        for entry in entries {
            let uri = entry.definition.get("uri").and_then(Value::as_str).unwrap_or_default().to_owned();
            incoming.insert(uri, entry);
        }
        let mut t = self.clone();
        t.resources.retain(|(u, _)| !incoming.contains_key(u));
        t.resources.extend(incoming);
        t.reindex();
        t
    }

    /// A copy without the static resources `uris`; `None` when none of them was served.
    pub fn without_resources(&self, uris: &[&str]) -> Option<DispatchTable> {
        if !uris.iter().any(|u| self.resource_index.contains_key(*u)) {
            return None;
        }
        let gone: std::collections::HashSet<&str> = uris.iter().copied().collect();
        let mut t = self.clone();
        t.removed.resources = true;
        t.resources.retain(|(u, _)| !gone.contains(u.as_str()));
        t.reindex();
        Some(t)
    }

    /// A copy with the prompt `name` added or replaced.
    pub fn with_prompt(&self, name: &str, prompt: PromptEntry) -> DispatchTable {
        let mut t = self.clone();
        t.removed.completions |= self.prompt(name).is_some_and(|p| p.completion.is_some());
        t.prompts.retain(|(n, _)| n != name);
        t.prompts.push((name.to_owned(), prompt));
        t.reindex();
        t
    }

    /// A copy without the prompt `name`; `None` when there was no such prompt.
    pub fn without_prompt(&self, name: &str) -> Option<DispatchTable> {
        self.prompt_index.get(name)?;
        let mut t = self.clone();
        t.removed.prompts = true;
        t.removed.completions |= self.prompt(name).is_some_and(|p| p.completion.is_some());
        t.prompts.retain(|(n, _)| n != name);
        t.reindex();
        Some(t)
    }

    /// A copy with the resource template `entry` added, replacing the one with the same
    /// `uriTemplate` (compared as written).
    pub fn with_template(&self, entry: ResourceEntry) -> DispatchTable {
        let key = entry.definition.get("uriTemplate").and_then(Value::as_str).unwrap_or_default().to_owned();
        let mut t = self.clone();
        t.removed.completions |= self.template(&key).is_some_and(|e| e.completion.is_some());
        t.templates.retain(|(k, _)| *k != key);
        t.templates.push((key, entry));
        t.reindex();
        t
    }

    /// The resource template whose `uriTemplate` is `template` (compared as written).
    pub fn template(&self, template: &str) -> Option<&ResourceEntry> {
        self.templates.iter().find(|(k, _)| k == template).map(|(_, e)| e)
    }

    /// A copy without the resource template `template` (compared as written); `None` when
    /// there was no such template.
    pub fn without_template(&self, template: &str) -> Option<DispatchTable> {
        self.template(template)?;
        let mut t = self.clone();
        t.removed.resources = true;
        t.removed.completions |= self.template(template).is_some_and(|e| e.completion.is_some());
        t.templates.retain(|(k, _)| k != template);
        t.reindex();
        Some(t)
    }

    /// A copy without the tool `name`; `None` when there was no such tool.
    pub fn without_tool(&self, name: &str) -> Option<DispatchTable> {
        self.tool_index.get(name)?;
        let mut t = self.clone();
        t.removed.tools = true;
        t.tools.retain(|e| e.name != name);
        t.reindex();
        Some(t)
    }

    /// A copy with the tool `name` enabled or disabled; `None` when there was no such tool.
    pub fn with_tool_enabled(&self, name: &str, enabled: bool) -> Option<DispatchTable> {
        let &i = self.tool_index.get(name)?;
        let mut t = self.clone();
        t.tools[i].enabled = enabled;
        Some(t)
    }
}

/// Where a registration was declared, and the group it was mounted from, if any.
#[derive(Debug, Clone, Copy)]
struct Declared {
    site: Site,
    mount: Option<&'static str>,
}

impl std::fmt::Display for Declared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.mount {
            Some(group) => write!(f, "{} (mounted group `{group}`)", self.site),
            None => self.site.fmt(f),
        }
    }
}

/// The public name of `name` under `mount`.
fn public_name<'a>(mount: Option<&super::Mount>, name: &'a str) -> Cow<'a, str> {
    mount.map_or(Cow::Borrowed(name), |m| Cow::Owned(m.public_name(name)))
}

/// Two declarations of one public name, each with its mount named; inventory order is
/// unspecified, so the two are sorted by file and line for a stable message.
fn duplicate(kind: &'static str, name: &str, first: Declared, second: Declared) -> BuildError {
    let key = |d: &Declared| (d.site.file, d.site.line);
    let (a, b) = if key(&first) <= key(&second) { (first, second) } else { (second, first) };
    BuildError::Duplicate { kind, name: name.to_owned(), first: a.to_string(), second: b.to_string() }
}

/// The resources and templates of each mounted group that serves them under a scheme prefix,
/// for [`mount_links`](super::mount_links): links in its results to them are made public.
fn group_uris(groups: super::Groups<'_>, mounts: &super::Mounts) -> HashMap<&'static str, Arc<GroupUris>> {
    let mut by_group: HashMap<&'static str, GroupUris> = HashMap::new();
    for reg in groups.select::<ResourceRegistration>() {
        let Some((mount, _)) = mounts.get(reg.group) else { continue };
        by_group.entry(reg.group).or_insert_with(|| GroupUris::new(mount.clone())).add(reg.uri, reg.is_template);
    }
    by_group.into_iter().filter(|(_, uris)| uris.rewrites()).map(|(group, uris)| (group, Arc::new(uris))).collect()
}

/// `get` with the links in the messages it renders made public.
fn public_prompt_links(links: Arc<GroupUris>, get: PromptGetFn) -> PromptGetFn {
    Arc::new(move |ctx, args| {
        let render = get(ctx, args);
        let links = links.clone();
        Box::pin(async move {
            let mut result = render.await?;
            links.public_blocks(result.messages.iter_mut().map(|m| &mut m.content));
            Ok(result)
        })
    })
}

/// The reader of a mounted resource: the handler sees the URI it declared, and contents that
/// carry that URI, or another the group serves (`links`), are answered with the public one.
fn mounted_reader(
    mount: super::Mount,
    links: Option<Arc<GroupUris>>,
    handler: super::items::ResourceHandler,
) -> ResourceReadFn {
    Arc::new(move |ctx: RequestContext, mut req: ResourceRequest| -> BoxFuture<Result<ReadResourceResult, McpError>> {
        let public = std::mem::take(&mut req.uri);
        req.uri = mount.original_uri(&public).unwrap_or(&public).to_owned();
        let declared = req.uri.clone();
        let read = handler(ctx, req);
        let links = links.clone();
        Box::pin(async move {
            let mut result = read.await?;
            for contents in &mut result.contents {
                let uri = contents.uri_mut();
                if *uri == declared {
                    uri.clone_from(&public);
                } else if let Some(links) = &links {
                    links.public(uri);
                }
            }
            Ok(result)
        })
    })
}

/// What a tool entry is built from: a `#[mcp_tool]` registration or a run-time tool.
pub(crate) struct ToolParts<'a> {
    pub(crate) name: &'a str,
    pub(crate) title: Option<&'a str>,
    pub(crate) description: Option<&'a str>,
    pub(crate) input_schema: Value,
    pub(crate) schema_origin: SchemaOrigin,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Option<Value>,
    pub(crate) decoration: Decoration,
    pub(crate) roles: &'static [&'static str],
    pub(crate) scopes: &'static [&'static str],
    pub(crate) task_support: super::TaskSupport,
    pub(crate) limits: super::ToolLimits,
    pub(crate) site: Option<Site>,
}

/// Builds a tool entry, checking the input schema (object root, valid `x-mcp-header`s) and
/// compiling the schemas the calls are checked against.
///
/// Errors: what is wrong, as a sentence for the caller to wrap.
pub(crate) fn build_tool(parts: ToolParts<'_>, call: ToolCallFn) -> Result<ToolEntry, String> {
    if parts.input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(
            "the input schema must have `\"type\": \"object\"` at its root; use a struct with named fields as params"
                .to_owned(),
        );
    }
    parts.limits.check()?;
    let param_headers = param_headers(&parts.input_schema)?;
    let output_schema = parts.output_schema.map(schema_object);
    let schemas = ToolSchemas::compile(&parts.input_schema, parts.schema_origin, output_schema.as_ref())?;
    let legacy_output = output_schema.as_ref().and_then(legacy_output_schema);
    let mut def = Map::new();
    def.insert("name".into(), json!(parts.name));
    set_opt(&mut def, "title", parts.title);
    set_opt(&mut def, "description", parts.description);
    def.insert("inputSchema".into(), parts.input_schema);
    if let Some(out) = output_schema {
        def.insert("outputSchema".into(), out);
    }
    if let Some(ann) = parts.annotations {
        def.insert("annotations".into(), ann);
    }
    parts.decoration.apply(&mut def)?;
    let legacy_definition = legacy_output.map(|out| {
        let mut legacy = def.clone();
        legacy.insert("outputSchema".into(), out);
        Value::Object(legacy)
    });
    Ok(ToolEntry {
        name: parts.name.to_owned(),
        definition: Value::Object(def),
        legacy_definition,
        schemas,
        call,
        text_call: None,
        enabled: true,
        param_headers,
        site: parts.site,
        roles: parts.roles,
        scopes: parts.scopes,
        task_support: parts.task_support,
        limits: parts.limits,
    })
}

/// `outputSchema` must be a JSON object: schemars writes the schema of `serde_json::Value` (any
/// value) as `true`, which is `{}` as an object; `false` is `{"not": {}}`.
fn schema_object(schema: Value) -> Value {
    match schema {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({ "not": {} }),
        other => other,
    }
}

/// The entry of a `#[mcp_tool]` registration.
fn tool_entry(reg: &ToolRegistration, name: &str, call: ToolCallFn) -> Result<ToolEntry, BuildError> {
    let invalid =
        |reason| BuildError::Invalid { kind: "tool", name: name.to_owned(), site: reg.site.to_string(), reason };
    let decoration = Decoration::from_json_text(reg.icons, reg.meta).map_err(invalid)?;
    let parts = ToolParts {
        name,
        title: reg.title,
        description: reg.description,
        input_schema: (reg.input_schema)(),
        schema_origin: reg.schema_origin,
        output_schema: reg.output_schema.map(|f| f()),
        annotations: reg.annotations.map(|f| f()),
        decoration,
        roles: reg.roles,
        scopes: reg.scopes,
        task_support: reg.task_support,
        limits: reg.limits,
        site: Some(reg.site),
    };
    build_tool(parts, call).map_err(invalid)
}

/// Reads `x-mcp-header` annotations from top-level properties and checks the constraints of the
/// [schema extension](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#schema-extension)
/// (token name, unique ignoring case, on string/integer/boolean only).
fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut out: Vec<ParamHeader> = Vec::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return Ok(out) };
    for (prop, def) in props {
        let Some(h) = def.get("x-mcp-header") else { continue };
        let header = h.as_str().ok_or_else(|| format!("x-mcp-header on `{prop}` must be a string"))?;
        let is_token =
            !header.is_empty() && header.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !is_token {
            return Err(format!("x-mcp-header {header:?} on `{prop}` is not an HTTP token"));
        }
        if out.iter().any(|p| p.header.eq_ignore_ascii_case(header)) {
            return Err(format!("x-mcp-header {header:?} is used twice (names are case-insensitive)"));
        }
        let ty = def.get("type").and_then(Value::as_str);
        if !matches!(ty, Some("string" | "integer" | "boolean")) {
            return Err(format!("x-mcp-header on `{prop}` needs a string, integer or boolean property"));
        }
        out.push(ParamHeader { header: header.to_owned(), property: prop.clone() });
    }
    Ok(out)
}

fn prompt_entry(reg: &PromptRegistration, name: &str) -> Result<PromptEntry, BuildError> {
    let invalid =
        |reason| BuildError::Invalid { kind: "prompt", name: name.to_owned(), site: reg.site.to_string(), reason };
    let arguments = (reg.arguments)();
    let mut def = Map::new();
    def.insert("name".into(), json!(name));
    set_opt(&mut def, "title", reg.title);
    set_opt(&mut def, "description", reg.description);
    if !arguments.is_empty() {
        def.insert("arguments".into(), json!(arguments));
    }
    Decoration::from_json_text(reg.icons, reg.meta).and_then(|d| d.apply(&mut def)).map_err(invalid)?;
    Ok(PromptEntry {
        definition: Value::Object(def),
        arguments,
        handler: Arc::new(reg.handler),
        completion: None,
        roles: reg.roles,
        scopes: reg.scopes,
    })
}

/// The entry of a `#[mcp_resource]` registration served as `uri` (its own, or its mounted URI)
/// by `handler`.
fn resource_entry(
    reg: &ResourceRegistration,
    uri: &str,
    handler: ResourceReadFn,
) -> Result<(String, ResourceEntry), BuildError> {
    let mut def = Map::new();
    let template = if reg.is_template {
        let t = UriTemplate::parse(uri).map_err(|reason| BuildError::Invalid {
            kind: "resource",
            name: uri.to_owned(),
            site: reg.site.to_string(),
            reason,
        })?;
        def.insert("uriTemplate".into(), json!(uri));
        Some(t)
    } else {
        def.insert("uri".into(), json!(uri));
        None
    };
    def.insert("name".into(), json!(reg.name));
    set_opt(&mut def, "title", reg.title);
    set_opt(&mut def, "description", reg.description);
    set_opt(&mut def, "mimeType", reg.mime_type);
    if let Some(size) = reg.size {
        def.insert("size".into(), json!(size));
    }
    let invalid =
        |reason| BuildError::Invalid { kind: "resource", name: uri.to_owned(), site: reg.site.to_string(), reason };
    if let Some(text) = reg.annotations {
        let annotations: crate::model::Annotations =
            serde_json::from_str(text).map_err(|e| invalid(format!("annotations do not parse: {e}")))?;
        def.insert("annotations".into(), json!(annotations));
    }
    Decoration::from_json_text(reg.icons, reg.meta).and_then(|d| d.apply(&mut def)).map_err(invalid)?;
    Ok((
        uri.to_owned(),
        ResourceEntry {
            definition: Value::Object(def),
            template,
            handler,
            completion: None,
            roles: reg.roles,
            scopes: reg.scopes,
        },
    ))
}
