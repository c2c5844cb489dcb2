//! What the lists return, as the server sent it. Fields the schema names are typed; everything
//! else (annotations, icons, `_meta`, fields of later revisions) is kept in `extra`, so an
//! entry serializes back to what the server said (a gateway can pass it on).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A server's or client's identity (schema `Implementation`).
///
/// JSON: `{"name":..,"version":..,"title"?:..,...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Implementation {
    /// The programmatic name.
    pub name: String,
    /// The version string.
    pub version: String,
    /// Everything else the server sent (`title`, `icons`, `websiteUrl`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool as `tools/list` describes it (schema `Tool`,
/// [tools](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#listing-tools)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tool {
    /// The name to call it by.
    pub name: String,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, exactly as sent.
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    /// The JSON Schema of its `structuredContent`, when it declares one.
    #[serde(rename = "outputSchema", default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Everything else (`title`, `annotations`, `execution`, `icons`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A prompt as `prompts/list` describes it (schema `Prompt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Prompt {
    /// The name to get it by.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments: `[{"name":..,"description"?:..,"required"?:bool}]`, as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<Value>,
    /// Everything else (`title`, `icons`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource as `resources/list` describes it (schema `Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resource {
    /// Its URI, to read it by.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its MIME type, when known.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Everything else (`title`, `description`, `size`, `annotations`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template as `resources/templates/list` describes it (schema
/// `ResourceTemplate`, an RFC 6570 URI template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The URI template, e.g. `file:///{path}`.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// The MIME type of what it names, when known.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Everything else (`title`, `description`, `annotations`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
