use crate::jsonrpc::{McpError, ToolArguments};
use crate::model::{CallToolResult, PromptArgument};
use crate::registry::{ResourceRequest, argument_error, problem};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::str::FromStr;

/// The input schema of a params type `T` ([`model::input_schema`](crate::model::input_schema)).
/// Whether the root is `type: "object"` is checked when the server is built.
pub use crate::model::input_schema;

/// The output schema of a structured result type `T` (same settings as [`input_schema`]).
pub fn output_schema<T: JsonSchema>() -> Value {
    input_schema::<T>()
}

/// `{"type":"object","properties":{}}`: the input schema of a tool without params.
pub fn empty_object_schema() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// A hand-written schema given as JSON text, passed through unchanged (key order kept).
///
/// The macro validated the text at compile time; should it still fail to parse, the result is
/// `null`, which the server build rejects with the tool's name.
pub fn raw_schema(text: &'static str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Decodes a prompt's `arguments` or an RPC's params into `T`.
///
/// Errors: `-32602` naming `what`, the member that failed (`items[2].name`) and serde's reason
/// (missing field, wrong type, ...).
pub fn decode_arguments<T: DeserializeOwned>(what: &str, value: Value) -> Result<T, McpError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| McpError::invalid_params(format!("invalid arguments for {what}: {}", path_problem(&e))))
}

/// Decodes a tool's `arguments` into `T`.
///
/// Errors: the `{"content":[{"type":"text","text":..}],"isError":true}` result the client
/// receives, naming the argument and what was wrong with it: arguments the tool rejects are a
/// tool execution error the model can correct, not a protocol error (2025-11-25 and
/// 2026-07-28 server/tools "Error Handling",
/// <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling>).
///
/// Decoded from the arguments' JSON text while no filter changed them
/// ([`ToolArguments::decode`]).
pub fn decode_tool_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: ToolArguments,
) -> Result<T, Box<CallToolResult>> {
    arguments.decode().map_err(|e| Box::new(argument_error(tool, &[path_problem(&e)])))
}

/// `` `path`: reason ``, or the reason alone when the root failed.
fn path_problem(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let path = if path == "." { "" } else { path.as_str() };
    problem(path, &e.inner().to_string())
}

/// The `arguments` list of a prompt whose params type is `T`: one entry per top-level property,
/// required when listed in the schema's `required`.
pub fn prompt_arguments<T: JsonSchema>() -> Vec<PromptArgument> {
    let schema = input_schema::<T>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    props
        .iter()
        .map(|(name, prop)| PromptArgument {
            name: name.clone(),
            title: prop.get("title").and_then(Value::as_str).map(str::to_owned),
            description: prop.get("description").and_then(Value::as_str).map(str::to_owned),
            required: required.contains(&name.as_str()),
        })
        .collect()
}

/// Reads the template variable `name` of a resource request as `T`.
///
/// Errors: `-32602` with `data.uri` when the variable is absent or does not parse as `T`.
pub fn template_var<T: FromStr>(req: &ResourceRequest, name: &str) -> Result<T, McpError> {
    req.variables.get(name).and_then(Value::as_str).and_then(|s| s.parse().ok()).ok_or_else(|| {
        McpError::invalid_params(format!("resource URI {}: template variable `{name}` is not valid", req.uri))
            .with_data(json!({ "uri": req.uri }))
    })
}
