//! What a handler can ask the client for: elicitation (form or URL), sampling and roots.

use crate::jsonrpc::McpError;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

/// One request for client input
/// ([`InputRequests`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#inputrequests)):
/// an `ElicitRequest` (`elicitation/create`), a `CreateMessageRequest` (`sampling/createMessage`)
/// or a `ListRootsRequest` (`roots/list`).
///
/// On the 2026-07-28 wire it travels as `{"method":..,"params":..}` inside
/// `InputRequiredResult.inputRequests`; on a legacy session as a real JSON-RPC request. Build
/// one with [`elicit_form`](Self::elicit_form), [`elicit_form_for`](Self::elicit_form_for),
/// [`elicit_url`](Self::elicit_url), [`sampling`](Self::sampling),
/// [`sample_text`](Self::sample_text) or [`list_roots`](Self::list_roots).
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    kind: InputKind,
    params: Map<String, Value>,
}

/// The kind of an [`InputRequest`], which decides the client capability it needs and the shape
/// of its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// `elicitation/create` in form mode; needs `elicitation`; answered by an `ElicitResult`.
    ElicitationForm,
    /// `elicitation/create` in URL mode; needs `elicitation.url`; answered by an `ElicitResult`.
    ElicitationUrl,
    /// `sampling/createMessage`; needs `sampling` (and `sampling.tools` when the request offers
    /// tools); answered by a `CreateMessageResult`.
    Sampling,
    /// `roots/list`; needs `roots`; answered by a `ListRootsResult`.
    Roots,
}

impl InputKind {
    /// The MCP method name of requests of this kind.
    pub fn method(self) -> &'static str {
        match self {
            InputKind::ElicitationForm | InputKind::ElicitationUrl => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }
}

impl InputRequest {
    /// A form-mode elicitation: `{"mode":"form","message":..,"requestedSchema":..}`.
    /// `requested_schema` is a flat object schema of primitive properties
    /// (`{"type":"object","properties":{..},"required":[..]}`); it is sent as given.
    pub fn elicit_form(message: impl Into<String>, requested_schema: Value) -> Self {
        let mut params = Map::new();
        params.insert("mode".into(), json!("form"));
        params.insert("message".into(), json!(message.into()));
        params.insert("requestedSchema".into(), requested_schema);
        InputRequest { kind: InputKind::ElicitationForm, params }
    }

    /// A form-mode elicitation whose `requestedSchema` is generated from the schemars type `T`
    /// (doc comments become descriptions, `Option` fields are not required). Read the answer as
    /// a `T` with [`ElicitResult::parse`](super::ElicitResult::parse) or ask with
    /// [`RequestContext::elicit`](crate::RequestContext::elicit).
    pub fn elicit_form_for<T: JsonSchema>(message: impl Into<String>) -> Self {
        Self::elicit_form(message, requested_schema::<T>())
    }

    /// A URL-mode elicitation: `{"mode":"url","message":..,"url":..}`; the user completes it
    /// out of band (a browser). On 2026-07-28 there is no `elicitationId`: correlate through
    /// [`RequestContext::set_request_state_data`](crate::RequestContext::set_request_state_data).
    pub fn elicit_url(message: impl Into<String>, url: impl Into<String>) -> Self {
        let mut params = Map::new();
        params.insert("mode".into(), json!("url"));
        params.insert("message".into(), json!(message.into()));
        params.insert("url".into(), json!(url.into()));
        InputRequest { kind: InputKind::ElicitationUrl, params }
    }

    /// A `sampling/createMessage` request with the given `CreateMessageRequest.params`
    /// (`{"messages":[..],"maxTokens":n,...}`), sent as given.
    ///
    /// Errors: `-32603` when `params` is not a JSON object (a programming error).
    pub fn sampling(params: Value) -> Result<Self, McpError> {
        match params {
            Value::Object(params) => Ok(InputRequest { kind: InputKind::Sampling, params }),
            _ => Err(McpError::internal("sampling/createMessage params must be a JSON object")),
        }
    }

    /// A `sampling/createMessage` request with one user text message and `max_tokens`.
    pub fn sample_text(prompt: impl Into<String>, max_tokens: u32) -> Self {
        let mut params = Map::new();
        params.insert(
            "messages".into(),
            json!([{ "role": "user", "content": { "type": "text", "text": prompt.into() } }]),
        );
        params.insert("maxTokens".into(), json!(max_tokens));
        InputRequest { kind: InputKind::Sampling, params }
    }

    /// A `roots/list` request (no params).
    pub fn list_roots() -> Self {
        InputRequest { kind: InputKind::Roots, params: Map::new() }
    }

    /// The kind of this request.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// The MCP method name (`elicitation/create`, `sampling/createMessage`, `roots/list`).
    pub fn method(&self) -> &'static str {
        self.kind.method()
    }

    /// The request's params object.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The `ClientCapabilities` this request needs, e.g. `{"elicitation":{"url":{}}}`.
    pub fn required_capabilities(&self) -> Value {
        match self.kind {
            InputKind::ElicitationForm => json!({ "elicitation": {} }),
            InputKind::ElicitationUrl => json!({ "elicitation": { "url": {} } }),
            InputKind::Sampling if self.params.get("tools").is_some_and(|t| !t.is_null()) => {
                json!({ "sampling": { "tools": {} } })
            }
            InputKind::Sampling => json!({ "sampling": {} }),
            InputKind::Roots => json!({ "roots": {} }),
        }
    }

    /// `{"method":..,"params":..}`: the `InputRequest` value of `inputRequests` (no `jsonrpc`,
    /// no `id`).
    pub fn to_json(&self) -> Value {
        json!({ "method": self.method(), "params": self.params })
    }
}

/// The `requestedSchema` of a form elicitation for `T`: the object schema schemars generates,
/// reduced to what an elicitation schema may hold (`type`, `properties`, `required`).
pub fn requested_schema<T: JsonSchema>() -> Value {
    let full = crate::model::input_schema::<T>();
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), full.get("properties").cloned().unwrap_or_else(|| json!({})));
    if let Some(required) = full.get("required") {
        out.insert("required".into(), required.clone());
    }
    Value::Object(out)
}

/// True when every key of `need` (recursively, for objects) is declared as an object in `have`.
pub(crate) fn declares(have: &Value, need: &Value) -> bool {
    match need.as_object() {
        Some(need) => need.iter().all(|(k, v)| have.get(k).is_some_and(|h| h.is_object() && declares(h, v))),
        None => true,
    }
}

/// Adds the keys of `add` into `into` (both `ClientCapabilities` objects), recursively.
pub(crate) fn merge_capabilities(into: &mut Value, add: &Value) {
    let (Some(into), Some(add)) = (into.as_object_mut(), add.as_object()) else { return };
    for (k, v) in add {
        let slot = into.entry(k.clone()).or_insert_with(|| json!({}));
        merge_capabilities(slot, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_per_kind() {
        assert_eq!(InputRequest::elicit_form("m", json!({})).required_capabilities(), json!({"elicitation":{}}));
        assert_eq!(
            InputRequest::elicit_url("m", "https://x").required_capabilities(),
            json!({"elicitation":{"url":{}}})
        );
        assert_eq!(InputRequest::sample_text("p", 10).required_capabilities(), json!({"sampling":{}}));
        assert_eq!(InputRequest::list_roots().required_capabilities(), json!({"roots":{}}));
        let tools = InputRequest::sampling(json!({"messages":[],"maxTokens":1,"tools":[]})).expect("object");
        assert_eq!(tools.required_capabilities(), json!({"sampling":{"tools":{}}}));
    }

    #[test]
    fn url_mode_needs_the_url_sub_capability() {
        let need = InputRequest::elicit_url("m", "https://x").required_capabilities();
        assert!(!declares(&json!({"elicitation":{}}), &need));
        assert!(declares(&json!({"elicitation":{"url":{}}}), &need));
    }
}
