//! The client's answers to input requests, validated per kind.

use super::request::InputKind;
use crate::jsonrpc::McpError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the user did with an elicitation (`ElicitResult.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted the form (`content` holds the values) or completed the URL flow.
    Accept,
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

/// An `ElicitResult`: `{"action":"accept"|"decline"|"cancel","content"?:{..}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only): property name → string, number,
    /// boolean or string array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// The accepted content decoded as `T`; `None` when the user declined or cancelled.
    ///
    /// Errors: `-32602` when the user accepted but the content does not decode as `T` (the
    /// client sent values that do not match the requested schema).
    pub fn parse<T: DeserializeOwned>(&self) -> Result<Option<T>, McpError> {
        if self.action != ElicitAction::Accept {
            return Ok(None);
        }
        let content = Value::Object(self.content.clone().unwrap_or_default());
        serde_json::from_value(content)
            .map(Some)
            .map_err(|e| McpError::invalid_params(format!("the elicitation answer does not match its schema: {e}")))
    }
}

/// A typed elicitation answer (see [`RequestContext::elicit`](crate::RequestContext::elicit)).
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T> {
    /// The user submitted the form; the values decoded as `T`.
    Accept(T),
    /// The user declined.
    Decline,
    /// The user cancelled.
    Cancel,
}

/// A `CreateMessageResult`: `{"role":"assistant","content":..,"model":..,"stopReason"?:..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// `"assistant"` (or `"user"`).
    pub role: String,
    /// One content block (`{"type":"text","text":..}`, image, audio, tool use) or an array of
    /// them, as the client sent it.
    pub content: Value,
    /// The model that produced the message.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// The text of the first text block, if any.
    pub fn text(&self) -> Option<&str> {
        fn first_text(b: &Value) -> Option<&str> {
            if b.get("type").and_then(Value::as_str) != Some("text") {
                return None;
            }
            b.get("text").and_then(Value::as_str)
        }
        match &self.content {
            Value::Array(blocks) => blocks.iter().find_map(first_text),
            block => first_text(block),
        }
    }
}

/// One root of a `ListRootsResult`: `{"uri":"file:///..","name"?:..}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI (`file://` in practice).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A `ListRootsResult`: `{"roots":[..]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The client's roots.
    pub roots: Vec<Root>,
}

/// A validated answer to one [`InputRequest`](super::InputRequest).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// The answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// The answer to `sampling/createMessage`.
    Sampling(CreateMessageResult),
    /// The answer to `roots/list`.
    Roots(ListRootsResult),
}

impl InputResponse {
    /// Validates the raw answer `value` to a request of `kind` sent under `key`.
    ///
    /// Errors: `-32602` naming the key when `value` is not the result type of that kind
    /// ([MRTR error handling](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#error-handling)).
    pub fn parse(key: &str, kind: InputKind, value: Value) -> Result<Self, McpError> {
        fn decode<T: DeserializeOwned>(key: &str, what: &str, v: Value) -> Result<T, McpError> {
            serde_json::from_value(v)
                .map_err(|e| McpError::invalid_params(format!("inputResponses.{key} is not a valid {what}: {e}")))
        }
        match kind {
            InputKind::ElicitationForm | InputKind::ElicitationUrl => {
                decode(key, "ElicitResult", value).map(InputResponse::Elicit)
            }
            InputKind::Sampling => decode(key, "CreateMessageResult", value).map(InputResponse::Sampling),
            InputKind::Roots => decode(key, "ListRootsResult", value).map(InputResponse::Roots),
        }
    }

    /// The elicitation answer.
    ///
    /// Errors: `-32603` when this answers another kind of request (a programming error).
    pub fn into_elicit(self) -> Result<ElicitResult, McpError> {
        match self {
            InputResponse::Elicit(r) => Ok(r),
            _ => Err(McpError::internal("this input response does not answer an elicitation")),
        }
    }

    /// The sampling answer.
    ///
    /// Errors: `-32603` when this answers another kind of request (a programming error).
    pub fn into_sampling(self) -> Result<CreateMessageResult, McpError> {
        match self {
            InputResponse::Sampling(r) => Ok(r),
            _ => Err(McpError::internal("this input response does not answer a sampling request")),
        }
    }

    /// The roots answer.
    ///
    /// Errors: `-32603` when this answers another kind of request (a programming error).
    pub fn into_roots(self) -> Result<ListRootsResult, McpError> {
        match self {
            InputResponse::Roots(r) => Ok(r),
            _ => Err(McpError::internal("this input response does not answer a roots request")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_answers_are_invalid_params() {
        let e = InputResponse::parse("user_name", InputKind::ElicitationForm, json!(12345)).expect_err("malformed");
        assert_eq!(e.code(), crate::ErrorCode::INVALID_PARAMS);
        assert!(e.message().contains("user_name"));
        let e = InputResponse::parse("r", InputKind::Roots, json!({"roots": 1})).expect_err("malformed");
        assert_eq!(e.code(), crate::ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn sampling_text_is_found_in_a_block_or_an_array() {
        let one = json!({"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m"});
        let r = InputResponse::parse("k", InputKind::Sampling, one).and_then(InputResponse::into_sampling);
        assert_eq!(r.expect("valid").text(), Some("Paris"));
        let many = json!({"role":"assistant","content":[{"type":"image","data":"","mimeType":"image/png"},
            {"type":"text","text":"Rome"}],"model":"m"});
        let r = InputResponse::parse("k", InputKind::Sampling, many).and_then(InputResponse::into_sampling);
        assert_eq!(r.expect("valid").text(), Some("Rome"));
    }
}
