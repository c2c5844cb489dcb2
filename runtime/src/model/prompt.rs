use super::Content;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who speaks a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `user`
    User,
    /// `assistant`
    Assistant,
}

/// One prompt message: `{"role":"user"|"assistant","content":{..}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// The speaker.
    pub role: Role,
    /// One content block.
    pub content: Content,
}

impl PromptMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        PromptMessage { role: Role::User, content: Content::text(text) }
    }

    /// A user message with any content block.
    pub fn user(content: Content) -> Self {
        PromptMessage { role: Role::User, content }
    }

    /// A message from `role`.
    pub fn new(role: Role, content: Content) -> Self {
        PromptMessage { role, content }
    }

    /// An assistant message with this content.
    pub fn assistant(content: Content) -> Self {
        PromptMessage { role: Role::Assistant, content }
    }
}

/// The result of `prompts/get`: `{"description"?:..,"messages":[..]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetPromptResult {
    /// Optional description of this rendering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    #[serde(deserialize_with = "super::short_list::decode")]
    pub messages: Vec<PromptMessage>,
    /// Result `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A prompt argument as listed by `prompts/list`:
/// `{"name":..,"title"?:..,"description"?:..,"required"?:bool}` (`title` from 2025-06-18 on;
/// derived from the field's `#[schemars(title = "...")]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptArgument {
    /// The argument name.
    pub name: String,
    /// Its display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its description (from the field's doc comment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the client must supply it.
    pub required: bool,
}

impl GetPromptResult {
    /// `{"messages":[..]}`.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult { description: None, messages, meta: None }
    }

    /// Sets `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }
}

impl PromptArgument {
    /// `{"name":..,"required":..}`.
    pub fn new(name: impl Into<String>, required: bool) -> Self {
        PromptArgument { name: name.into(), title: None, description: None, required }
    }

    /// Sets `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets `title`, the name a client shows.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}
