use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What `completion/complete` completes for: `{"type":"ref/prompt","name":..}` or
/// `{"type":"ref/resource","uri":..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum CompletionRef {
    /// A prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt name.
        name: String,
    },
    /// A resource template, by URI template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template, e.g. `test://template/{id}/data`.
        uri: String,
    },
}

/// The argument being completed: `{"name":..,"value":..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionArgument {
    /// The argument name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// The params of `completion/complete` (without `_meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Values of other arguments already chosen, `{"arguments":{name: value}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Value>,
}

/// The `completion` object of a `completion/complete` result: `{"values":[..],"total"?,"hasMore"?}`.
/// At most 100 values are sent; the rest set `hasMore`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Completion {
    /// Suggested values.
    pub values: Vec<String>,
    /// Total number of matches, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were sent.
    #[serde(rename = "hasMore", skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// `{"values":[..]}` without `total` or `hasMore` (at most 100 values are sent).
    pub fn new(values: Vec<String>) -> Self {
        Completion { values, total: None, has_more: None }
    }

    /// Sets `total`, the number of matches there are in all.
    pub fn with_total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets `hasMore`: more matches exist than were sent.
    pub fn with_has_more(mut self, has_more: bool) -> Self {
        self.has_more = Some(has_more);
        self
    }
}

impl CompletionArgument {
    /// `{"name":..,"value":..}`: the argument being completed and what the user typed so far.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        CompletionArgument { name: name.into(), value: value.into() }
    }
}

impl CompletionRequest {
    /// A `completion/complete` request for `argument` of `reference`, without `context` (to
    /// call a completion handler directly, in a unit test say).
    pub fn new(reference: CompletionRef, argument: CompletionArgument) -> Self {
        CompletionRequest { reference, argument, context: None }
    }

    /// Sets `context` (`{"arguments":{..}}`: the values of the other arguments so far).
    pub fn with_context(mut self, context: Value) -> Self {
        self.context = Some(context);
        self
    }
}
