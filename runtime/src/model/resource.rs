use super::ResourceContents;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The result of `resources/read`: `{"contents":[..]}` (never empty; a missing resource is a
/// `-32602` error with `data.uri`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// The contents (one or more).
    #[serde(deserialize_with = "super::short_list::decode")]
    pub contents: Vec<ResourceContents>,
    /// Result `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ReadResourceResult {
    /// `{"contents":[..]}`.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        ReadResourceResult { contents, meta: None }
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }
}
