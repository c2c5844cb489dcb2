//! A tool's input and output schemas as the server enforces them, compiled once when the tool
//! enters the dispatch table.
//!
//! - Arguments are validated against the advertised `inputSchema` with a JSON Schema 2020-12
//!   validator. A failure is a tool execution error (`isError: true` result naming the
//!   argument), not a protocol error, so the model can correct itself: 2025-11-25 and
//!   2026-07-28 server/tools "Error Handling"
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling>).
//!   A schema derived from the params type by schemars says nothing the type's `Deserialize`
//!   does not already check when it only uses the keywords [`serde_checks_all`] accepts; such a
//!   tool is not validated twice, and its decoding error is worded as a validation error is.
//! - `outputSchema` may describe any JSON value on 2026-07-28, but 2025-06-18 and 2025-11-25
//!   require an object root and an object `structuredContent`. A non-object output schema is
//!   therefore advertised to session clients wrapped as `{"result": <schema>}`, and their
//!   `structuredContent` is wrapped the same way.

use super::SchemaOrigin;
use crate::jsonrpc::{McpError, ToolArguments};
use crate::model::{CallToolResult, Content};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// How many validation errors one `isError` result lists; the rest are counted.
const MAX_LISTED_ERRORS: usize = 5;

/// The longest description of one problem, in characters.
const MAX_PROBLEM_CHARS: usize = 300;

/// The property that holds a non-object `structuredContent` for session clients.
pub(crate) const WRAPPED_RESULT_KEY: &str = "result";

/// What a tool entry enforces; cheap to clone (compiled validators are shared).
#[derive(Clone, Default)]
pub(crate) struct ToolSchemas {
    /// `None` when serde's decoding of the params type checks everything the schema says.
    arguments: Option<Arc<jsonschema::Validator>>,
    /// The advertised output schema, compiled only in debug builds, where every
    /// `structuredContent` is checked against it.
    output: Option<Arc<jsonschema::Validator>>,
    /// True when session clients see the output schema and `structuredContent` wrapped.
    wrap_output: bool,
}

impl ToolSchemas {
    /// Compiles the schemas of a tool.
    ///
    /// Errors: a sentence naming the schema that is not valid JSON Schema (or refers to one
    /// that cannot be resolved without network or file access).
    pub(crate) fn compile(input: &Value, origin: SchemaOrigin, output: Option<&Value>) -> Result<Self, String> {
        let needs_validation = match origin {
            SchemaOrigin::Derived => !serde_checks_all(input),
            SchemaOrigin::Written => true,
        };
        let arguments = if needs_validation {
            let v = jsonschema::validator_for(input).map_err(|e| format!("the input schema is not valid: {e}"))?;
            Some(Arc::new(v))
        } else {
            None
        };
        // A hand-written output schema (a run-time tool's) is checked in every build, so a
        // release server refuses what a debug one refuses; the validator is kept for debug only.
        let output_validator = match output {
            Some(schema) if cfg!(debug_assertions) || origin == SchemaOrigin::Written => {
                let v =
                    jsonschema::validator_for(schema).map_err(|e| format!("the output schema is not valid: {e}"))?;
                cfg!(debug_assertions).then(|| Arc::new(v))
            }
            _ => None,
        };
        Ok(ToolSchemas { arguments, output: output_validator, wrap_output: output.is_some_and(|s| !is_object_root(s)) })
    }

    /// True when the arguments are validated here rather than by decoding alone.
    #[cfg(test)]
    pub(crate) fn validates_arguments(&self) -> bool {
        self.arguments.is_some()
    }

    /// Validates `arguments` of tool `tool`.
    ///
    /// Errors: the `isError: true` result the client receives, listing what is wrong with which
    /// argument.
    pub(crate) fn check_arguments(&self, tool: &str, arguments: &mut ToolArguments) -> Result<(), Box<CallToolResult>> {
        let Some(validator) = &self.arguments else { return Ok(()) };
        arguments.with_value(|arguments| Self::validate(validator, tool, arguments))
    }

    fn validate(validator: &jsonschema::Validator, tool: &str, arguments: &Value) -> Result<(), Box<CallToolResult>> {
        if validator.is_valid(arguments) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .map(|e| {
                let path = pointer_path(arguments, e.instance_path().as_str());
                problem(&path, &e.to_string())
            })
            .collect();
        Err(Box::new(argument_error(tool, &problems)))
    }

    /// Prepares a successful result for a client of `modern` (2026-07-28) or a session era:
    /// checks `structuredContent` against the output schema in debug builds, then wraps it for
    /// session clients when the schema's root is not an object.
    ///
    /// Errors: `-32603` (debug builds only) when `structuredContent` does not match the
    /// advertised output schema: a server bug the spec forbids ("Servers MUST provide
    /// structured results that conform to this schema").
    pub(crate) fn finish_output(&self, tool: &str, modern: bool, result: &mut CallToolResult) -> Result<(), McpError> {
        if result.is_error == Some(true) {
            return Ok(());
        }
        let Some(structured) = result.structured_content.take() else { return Ok(()) };
        if let Some(validator) = &self.output
            && let Err(e) = validator.validate(&structured)
        {
            let path = pointer_path(&structured, e.instance_path().as_str());
            return Err(McpError::internal(format!(
                "tool `{tool}` returned structuredContent that does not match its outputSchema: {}",
                problem(&path, &e.to_string())
            )));
        }
        if !self.wrap_output || modern {
            result.structured_content = Some(structured);
            return Ok(());
        }
        // The text block mirroring the value (2025-06-18: SHOULD be the serialized structured
        // content) mirrors the wrapped value the session client receives.
        let unwrapped_text = structured.to_string();
        let wrapped = wrap_structured_content(structured);
        for block in &mut result.content {
            if let Content::Text { text, .. } = block
                && *text == unwrapped_text
            {
                *text = wrapped.to_string();
            }
        }
        result.structured_content = Some(wrapped);
        Ok(())
    }
}

/// The `isError: true` result for arguments that failed validation or decoding:
/// `Invalid arguments for tool `{tool}`: {problem}; {problem}...`.
pub(crate) fn argument_error(tool: &str, problems: &[String]) -> CallToolResult {
    let mut text = format!("Invalid arguments for tool `{tool}`: ");
    let listed = problems.len().min(MAX_LISTED_ERRORS);
    text.push_str(&problems[..listed].join("; "));
    if problems.len() > listed {
        text.push_str(&format!("; and {} more", problems.len() - listed));
    }
    CallToolResult::error(text)
}

/// One problem as the model reads it: `` `path`: what is wrong ``, or only what is wrong at the
/// root. Validators and serde quote the offending value before the reason; a description longer
/// than [`MAX_PROBLEM_CHARS`] keeps its start and its end (where the reason is: "is not of type
/// ...", "expected u8") around an ellipsis, so a large argument is not echoed back whole.
pub(crate) fn problem(path: &str, what: &str) -> String {
    let count = what.chars().count();
    let what = if count > MAX_PROBLEM_CHARS {
        let keep = MAX_PROBLEM_CHARS / 2;
        let head: String = what.chars().take(keep).collect();
        let tail: String = what.chars().skip(count - keep).collect();
        format!("{head} … {tail}")
    } else {
        what.to_owned()
    };
    if path.is_empty() { what } else { format!("`{path}`: {what}") }
}

/// A JSON pointer into `instance` written as a Rust-like path (`items[2].name`), the form serde's
/// decoding errors use too.
fn pointer_path(instance: &Value, pointer: &str) -> String {
    let mut out = String::new();
    let mut at = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match at {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{segment}]"));
                at = segment.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if !out.is_empty() {
                    out.push('.');
                }
                at = other.and_then(|v| v.get(&segment));
                out.push_str(&segment);
            }
        }
    }
    out
}

/// True when the schema's root declares `"type": "object"` (what 2025-11-25 requires of
/// `outputSchema`).
fn is_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The output schema a session client sees: unchanged when its root is an object, otherwise
/// `{"type":"object","properties":{"result":<schema>},"required":["result"]}` with the
/// schema's `$schema` and `$defs` kept at the root, where its `$ref`s point.
pub(crate) fn legacy_output_schema(schema: &Value) -> Option<Value> {
    if is_object_root(schema) {
        return None;
    }
    let mut inner = schema.as_object().cloned().unwrap_or_default();
    let mut root = Map::new();
    for key in ["$schema", "$defs", "definitions"] {
        if let Some(v) = inner.remove(key) {
            root.insert(key.to_owned(), v);
        }
    }
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), json!({ WRAPPED_RESULT_KEY: Value::Object(inner) }));
    root.insert("required".into(), json!([WRAPPED_RESULT_KEY]));
    Some(Value::Object(root))
}

/// `{"result": value}`.
fn wrap_structured_content(value: Value) -> Value {
    let mut map = Map::new();
    map.insert(WRAPPED_RESULT_KEY.to_owned(), value);
    Value::Object(map)
}

/// True when a schemars-derived schema says nothing the type's `Deserialize` does not check:
/// only structural keywords (types, properties, required members, items, enums, references),
/// annotations, and the bounds schemars writes for Rust's own types (an integer format's range,
/// `char`'s length of one, a tuple's length). Anything else (`pattern`, `uniqueItems`, a
/// `range` or `length` attribute, `minProperties`, ...) needs the validator.
pub(crate) fn serde_checks_all(schema: &Value) -> bool {
    match schema {
        Value::Bool(_) => true,
        Value::Object(node) => node.iter().all(|(key, value)| match key.as_str() {
            "$schema" | "$id" | "$comment" | "title" | "description" | "default" | "examples" | "deprecated"
            | "readOnly" | "writeOnly" | "format" | "type" | "required" | "enum" | "const" | "$ref" => true,
            k if k.starts_with("x-") => true,
            "properties" | "$defs" | "definitions" => {
                value.as_object().is_some_and(|m| m.values().all(serde_checks_all))
            }
            "items" | "additionalProperties" => serde_checks_all(value),
            "prefixItems" | "oneOf" | "anyOf" | "allOf" => {
                value.as_array().is_some_and(|a| a.iter().all(serde_checks_all))
            }
            "minimum" | "maximum" => integer_bound_of_format(node, key, value),
            "minLength" | "maxLength" => is_char(node),
            "minItems" | "maxItems" => is_tuple(node),
            _ => false,
        }),
        _ => false,
    }
}

/// `minimum`/`maximum` equal to the range of the node's integer `format` (what schemars writes
/// for `u8`, `i16`, `u64`, ...), which decoding into that type enforces.
fn integer_bound_of_format(node: &Map<String, Value>, key: &str, value: &Value) -> bool {
    let Some(format) = node.get("format").and_then(Value::as_str) else { return false };
    let (min, max): (i128, i128) = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        _ => return false,
    };
    let bound = if key == "minimum" { min } else { max };
    value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from)) == Some(bound)
}

/// `minLength == maxLength == 1` on a string (or a string-or-null): schemars' `char`.
fn is_char(node: &Map<String, Value>) -> bool {
    let string = match node.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    string
        && node.get("minLength").and_then(Value::as_u64) == Some(1)
        && node.get("maxLength").and_then(Value::as_u64) == Some(1)
}

/// `minItems == maxItems == prefixItems.len()`: schemars' tuple, whose length serde checks.
fn is_tuple(node: &Map<String, Value>) -> bool {
    let Some(len) = node.get("prefixItems").and_then(Value::as_array).map(|a| a.len() as u64) else { return false };
    node.get("minItems").and_then(Value::as_u64) == Some(len)
        && node.get("maxItems").and_then(Value::as_u64) == Some(len)
}

#[cfg(test)]
mod tests;
