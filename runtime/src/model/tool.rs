use super::Content;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The result of `tools/call` (schema `CallToolResult`).
///
/// JSON: `{"content":[..],"structuredContent"?:..,"isError"?:bool,"_meta"?:{..}}`; on the
/// 2026-07-28 wire the server adds `resultType` and `_meta.serverInfo`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallToolResult {
    /// Unstructured content blocks.
    #[serde(deserialize_with = "super::short_list::decode")]
    pub content: Vec<Content>,
    /// Structured output; matches the tool's `outputSchema` when it has one.
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// True when the tool ran and failed (a tool error, not a protocol error).
    #[serde(rename = "isError", skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// A successful result with these content blocks.
    pub fn success(content: Vec<Content>) -> Self {
        CallToolResult { content, ..Default::default() }
    }

    /// A tool-error result: `isError: true` with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult { content: vec![Content::text(message)], is_error: Some(true), ..Default::default() }
    }

    /// Sets `structuredContent` (a JSON object matching the tool's `outputSchema`).
    pub fn with_structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Structured tool output: `Json(value)` becomes `structuredContent` plus a text block holding the
/// serialized JSON, and the tool's `outputSchema` is generated from `T`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);
