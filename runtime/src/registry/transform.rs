//! Tool transforms: a tool served under another name, hidden, described anew, with arguments
//! pinned or renamed, declared on the builder and applied to the dispatch-table entry, so a
//! tool nobody transforms costs nothing.

use super::tool_schema::ToolSchemas;
use super::{BoxFuture, SchemaOrigin, ToolCallFn, ToolEntry, argument_error, problem};
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, ToolArguments};
use crate::model::CallToolResult;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// How one tool is served differently from how it was declared: under another name, hidden,
/// with another title or description, with arguments pinned to fixed values or renamed.
/// Given to [`ServerBuilder::transform_tool`](crate::ServerBuilder::transform_tool) with the
/// name the tool has in the table (after a [`Mount`](crate::Mount)'s prefix); it applies to a
/// `#[mcp_tool]`, a mounted tool, a [`DynamicTool`](crate::server::DynamicTool) given to the
/// builder, and one added later with [`Server::add_tool`](crate::Server::add_tool).
///
/// ```
/// # use switchyard::{Server, ToolTransform};
/// # use serde_json::json;
/// let builder = Server::builder("weather", "1.0.0").transform_tool(
///     "forecast",
///     ToolTransform::new()
///         .rename("weather_forecast")
///         .describe("Forecast for a city, in metric units")
///         .pin_argument("units", json!("metric"))
///         .rename_argument("q", "city"),
/// );
/// ```
///
/// The tool `{"name":"forecast","inputSchema":{"type":"object","properties":{"q":{..},
/// "units":{..}},"required":["q"]}}` is then listed as
/// `{"name":"weather_forecast","description":"Forecast for a city, in metric units",
/// "inputSchema":{"type":"object","properties":{"city":{..}},"required":["city"]}}`
/// ([Tool](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool)), and a
/// call `{"name":"weather_forecast","arguments":{"city":"Oslo"}}` reaches the tool as
/// `{"q":"Oslo","units":"metric"}`.
///
/// **Calls with a hidden argument.** A client that sends a pinned argument, or a renamed
/// argument under its old name, gets a tool execution error (`isError: true`, naming the
/// argument), as for any argument the advertised schema refuses: the model reads it and
/// corrects the call
/// ([error handling](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling)).
/// A transformed tool's arguments are always validated against the advertised schema, before
/// they are rewritten.
///
/// **Errors.** [`build`](crate::ServerBuilder::build) fails with
/// [`BuildError::Invalid`](crate::BuildError::Invalid) (kind `transform`) for a transform of a
/// tool the table does not have (unless marked [`for_run_time_tool`](Self::for_run_time_tool)),
/// an argument the input schema's `properties` do not have, an argument both pinned and
/// renamed or renamed onto an existing one, a pinned value the argument's schema refuses, a
/// new name that is not a valid tool name, and with
/// [`BuildError::Duplicate`](crate::BuildError::Duplicate) when two tools end with one name.
/// For a tool added at run time the same checks run in
/// [`Server::add_tool`](crate::Server::add_tool), which answers `-32602` and changes nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolTransform {
    rename: Option<String>,
    hide: bool,
    title: Option<String>,
    description: Option<String>,
    pins: Vec<(String, Value)>,
    /// `(declared, public)` argument names.
    arguments: Vec<(String, String)>,
    run_time: bool,
}

impl ToolTransform {
    /// A transform that changes nothing yet.
    pub fn new() -> Self {
        ToolTransform::default()
    }

    /// Serves the tool as `name` (listed and called by it; the old name is no longer served).
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.rename = Some(name.into());
        self
    }

    /// Neither lists nor serves the tool (`tools/call` answers `-32602 unknown tool`).
    pub fn hide(mut self) -> Self {
        self.hide = true;
        self
    }

    /// Replaces the listed `description`.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Replaces the listed `title` (2025-06-18 and later sessions see it).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Fixes the argument `name` to `value`: it leaves the advertised `inputSchema` (its
    /// property and its `required` entry) and every call reaches the tool with it set.
    pub fn pin_argument(mut self, name: impl Into<String>, value: Value) -> Self {
        self.pins.push((name.into(), value));
        self
    }

    /// Advertises and accepts the argument `from` as `to`; the tool still receives `from`.
    pub fn rename_argument(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.arguments.push((from.into(), to.into()));
        self
    }

    /// The tool is expected to arrive at run time
    /// ([`Server::add_tool`](crate::Server::add_tool), e.g. from a gateway's upstream):
    /// [`build`](crate::ServerBuilder::build) does not require it to exist. Until it is added
    /// the transform waits; once added, it is transformed as it enters the table.
    pub fn for_run_time_tool(mut self) -> Self {
        self.run_time = true;
        self
    }

    /// True when the call or schema change (pins or argument renames).
    fn rewrites_arguments(&self) -> bool {
        !self.pins.is_empty() || !self.arguments.is_empty()
    }

    /// `entry` as this transform serves it; `None` when hidden.
    ///
    /// Errors: a sentence naming the argument or name that breaks a rule of the type docs.
    pub(crate) fn apply(&self, mut entry: ToolEntry) -> Result<Option<ToolEntry>, String> {
        if self.hide {
            return Ok(None);
        }
        for (field, value) in [("title", &self.title), ("description", &self.description)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return Err(format!("`{field}` must not be empty"));
            }
        }
        let name = match &self.rename {
            Some(name) => {
                crate::vocab::definitions::tool_name(name)?;
                name.clone()
            }
            None => entry.name.clone(),
        };
        let input = if self.rewrites_arguments() {
            let declared = entry.definition.get("inputSchema").cloned().unwrap_or_default();
            Some(self.input_schema(&declared)?)
        } else {
            None
        };
        for def in std::iter::once(&mut entry.definition).chain(entry.legacy_definition.as_mut()) {
            let Some(def) = def.as_object_mut() else { continue };
            def.insert("name".into(), Value::String(name.clone()));
            if let Some(title) = &self.title {
                def.insert("title".into(), Value::String(title.clone()));
            }
            if let Some(description) = &self.description {
                def.insert("description".into(), Value::String(description.clone()));
            }
            if let Some(input) = &input {
                def.insert("inputSchema".into(), input.clone());
            }
        }
        if let Some(input) = input {
            let output = entry.definition.get("outputSchema");
            entry.schemas = ToolSchemas::compile(&input, SchemaOrigin::Written, output)
                .map_err(|e| format!("the transformed schema does not compile: {e}"))?;
            entry.param_headers = super::ParamHeader::from_input_schema(&input)?;
            entry.call = self.call(&name, entry.call);
            // The text entry point would receive the arguments as the client sent them.
            entry.text_call = None;
        }
        entry.name = name;
        Ok(Some(entry))
    }

    /// The advertised input schema: pinned properties removed, renamed ones moved (in place),
    /// `required` following.
    ///
    /// Errors: an argument `properties` does not have, one named twice, or a pinned value the
    /// declared schema refuses.
    fn input_schema(&self, declared: &Value) -> Result<Value, String> {
        let mut schema = declared.clone();
        let Some(obj) = schema.as_object_mut() else { return Err("the input schema is not an object".to_owned()) };
        let props = match obj.get("properties") {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let has = |arg: &str| props.contains_key(arg);
        for (arg, value) in &self.pins {
            if !has(arg) {
                return Err(format!("cannot pin `{arg}`: the input schema has no such argument"));
            }
            if self.arguments.iter().any(|(from, _)| from == arg) {
                return Err(format!("`{arg}` is both pinned and renamed"));
            }
            check_pinned(declared, arg, value)?;
        }
        for (i, (from, to)) in self.arguments.iter().enumerate() {
            if !has(from) {
                return Err(format!("cannot rename `{from}`: the input schema has no such argument"));
            }
            let taken = has(to) || self.arguments[..i].iter().any(|(f, t)| t == to || f == from);
            if taken || to.is_empty() {
                return Err(format!("cannot rename `{from}` to `{to}`: that name is taken or empty"));
            }
        }
        let public = |arg: &str| -> Option<String> {
            if self.pins.iter().any(|(p, _)| p == arg) {
                return None;
            }
            Some(self.arguments.iter().find(|(f, _)| f == arg).map_or_else(|| arg.to_owned(), |(_, t)| t.clone()))
        };
        let renamed: Map<String, Value> = props.into_iter().filter_map(|(k, v)| public(&k).map(|k| (k, v))).collect();
        obj.insert("properties".into(), Value::Object(renamed));
        if let Some(Value::Array(required)) = obj.get_mut("required") {
            let kept: Vec<Value> =
                required.iter().filter_map(|r| r.as_str().and_then(public)).map(Value::String).collect();
            *required = kept;
        }
        Ok(schema)
    }

    /// Wraps the call: refuses pinned arguments and old names (an `isError` result), moves the
    /// renamed ones back, sets the pinned ones.
    fn call(&self, tool: &str, inner: ToolCallFn) -> ToolCallFn {
        let tool: Arc<str> = Arc::from(tool);
        let pins: Arc<[(String, Value)]> = self.pins.clone().into();
        let renames: Arc<[(String, String)]> = self.arguments.clone().into();
        Arc::new(move |ctx: RequestContext, mut args: ToolArguments| -> BoxFuture<Result<CallToolResult, McpError>> {
            let hidden = pins
                .iter()
                .map(|(p, _)| (p, "is fixed by the server; leave it out"))
                .chain(renames.iter().map(|(from, _)| (from, "is not an argument of this tool")));
            let problems: Vec<String> =
                hidden.filter(|(arg, _)| args.contains_key(arg.as_str())).map(|(arg, why)| problem(arg, why)).collect();
            if !problems.is_empty() {
                let refused = argument_error(&tool, &problems);
                return Box::pin(async move { Ok(refused) });
            }
            for (from, to) in renames.iter() {
                if let Some(v) = args.remove(to) {
                    args.insert(from.clone(), v);
                }
            }
            for (arg, value) in pins.iter() {
                args.insert(arg.clone(), value.clone());
            }
            inner(ctx, args)
        })
    }
}

/// Checks a pinned value against the declared schema: the schema without `required`, applied
/// to an object holding only the pinned argument, so only that argument's rules can fail.
///
/// Errors: what the schema says is wrong with the value.
fn check_pinned(declared: &Value, arg: &str, value: &Value) -> Result<(), String> {
    let mut schema = declared.clone();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("required");
    }
    let validator =
        jsonschema::validator_for(&schema).map_err(|e| format!("the input schema does not compile: {e}"))?;
    let instance = Value::Object(Map::from_iter([(arg.to_owned(), value.clone())]));
    match validator.iter_errors(&instance).next() {
        None => Ok(()),
        Some(e) => Err(format!("the pinned value of `{arg}` does not match its schema: {e}")),
    }
}

/// The transforms of one server, by the name they apply to, each with where it was declared.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolTransforms(HashMap<String, (ToolTransform, String)>);

impl ToolTransforms {
    /// Adds (or replaces) the transform of `name`, declared at `site`.
    pub(crate) fn insert(&mut self, name: String, transform: ToolTransform, site: String) {
        self.0.insert(name, (transform, site));
    }

    /// The name the tool declared as `name` is served under: itself when no transform renames
    /// it; `None` when hidden.
    pub(crate) fn public_name<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        match self.0.get(name) {
            Some((t, _)) if t.hide => None,
            Some((t, _)) => Some(t.rename.as_deref().unwrap_or(name)),
            None => Some(name),
        }
    }

    /// `entry` as served: transformed when a transform names it; `None` when hidden.
    ///
    /// Errors: the transform's problem, as a sentence naming the tool.
    pub(crate) fn apply(&self, entry: ToolEntry) -> Result<Option<ToolEntry>, String> {
        match self.0.get(&entry.name) {
            Some((t, _)) => {
                let name = entry.name.clone();
                t.apply(entry).map_err(|e| format!("transform of tool `{name}`: {e}"))
            }
            None => Ok(Some(entry)),
        }
    }

    /// Transforms the tools of `table` (at `build()`).
    ///
    /// Errors: every transform that names no tool (unless for a run-time tool) or breaks a
    /// rule, and every two tools that end with one name.
    pub(crate) fn apply_table(&self, table: &mut super::DispatchTable) -> Vec<crate::BuildError> {
        if self.0.is_empty() {
            return Vec::new();
        }
        let mut errors = Vec::new();
        let invalid = |name: &str, site: &str, reason: String| crate::BuildError::Invalid {
            kind: "transform",
            name: name.to_owned(),
            site: site.to_owned(),
            reason,
        };
        let tools = table.take_tools();
        let mut names: Vec<&str> = self.0.keys().map(String::as_str).collect();
        names.sort_unstable();
        for name in names {
            let (t, site) = &self.0[name];
            if !t.run_time && !tools.iter().any(|e| e.name == name) {
                let reason = "no tool of this name is served; mark the transform `for_run_time_tool()` if the tool \
                              is added later with Server::add_tool"
                    .to_owned();
                errors.push(invalid(name, site, reason));
            }
        }
        let mut served: Vec<(ToolEntry, String)> = Vec::with_capacity(tools.len());
        for entry in tools {
            let origin = match (self.0.get(&entry.name), entry.site) {
                (Some((_, at)), Some(site)) => format!("{site}, transformed at {at}"),
                (Some((_, at)), None) => format!("run-time tool `{}`, transformed at {at}", entry.name),
                (None, Some(site)) => site.to_string(),
                (None, None) => format!("run-time tool `{}` (ServerBuilder::tool)", entry.name),
            };
            let name = entry.name.clone();
            match self.apply(entry) {
                Ok(Some(entry)) => served.push((entry, origin)),
                Ok(None) => {}
                Err(reason) => {
                    let site = self.0.get(&name).map_or("", |(_, at)| at.as_str());
                    errors.push(invalid(&name, site, reason));
                }
            }
        }
        served.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        for pair in served.windows(2) {
            if pair[0].0.name == pair[1].0.name {
                errors.push(crate::BuildError::Duplicate {
                    kind: "tool",
                    name: pair[0].0.name.clone(),
                    first: pair[0].1.clone(),
                    second: pair[1].1.clone(),
                });
            }
        }
        table.set_tools(served.into_iter().map(|(e, _)| e).collect());
        errors
    }
}
