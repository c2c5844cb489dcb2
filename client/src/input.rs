//! The application's answers to a server that asks for input: elicitation (form and URL
//! modes), sampling and roots. Registered once on the builder, they answer however the server
//! asks: server→client requests on a session, `inputRequests` of an `input_required` result on
//! 2026-07-28 ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
//! A kind without a handler is not declared in the client's capabilities, so a server keeps to
//! what the client can answer.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;
use switchyard::McpError;
use switchyard::input::{CreateMessageResult, ElicitAction, ElicitResult, ListRootsResult, Root};

/// An `elicitation/create` request's params
/// ([elicitation](https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation)):
/// `{"mode"?:"form"|"url","message":..,"requestedSchema"?:{..},"url"?:..,"elicitationId"?:..}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequest {
    /// `"form"` (the default when absent) or `"url"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to show the user.
    pub message: String,
    /// Form mode: a flat object schema of primitive properties
    /// (`{"type":"object","properties":{..},"required":[..]}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// URL mode: the page the user completes out of band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode on a session: the id `notifications/elicitation/complete` refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Any other field (`_meta`, ...), as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ElicitRequest {
    /// Whether this is a URL-mode elicitation (`mode: "url"`).
    pub fn is_url(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }
}

/// A `sampling/createMessage` request's params
/// ([sampling](https://modelcontextprotocol.io/specification/2025-11-25/client/sampling)):
/// the conversation so far and how to continue it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The messages, each `{"role":"user"|"assistant","content":..}` (content one block or an
    /// array of blocks, as sent).
    pub messages: Vec<Value>,
    /// The most tokens to generate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// A system prompt the server asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Model preferences (`hints`, cost/speed/intelligence priorities), as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// Any other field (`temperature`, `stopSequences`, `tools`, `toolChoice`, `_meta`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

type ElicitFn = Arc<dyn Fn(ElicitRequest) -> BoxFuture<'static, Result<ElicitResult, McpError>> + Send + Sync>;
type SamplingFn =
    Arc<dyn Fn(SamplingRequest) -> BoxFuture<'static, Result<CreateMessageResult, McpError>> + Send + Sync>;
type RootsFn = Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<Root>, McpError>> + Send + Sync>;

/// Which elicitation modes the application's handler serves (`ElicitationCapability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitationModes {
    /// Forms only: `{"elicitation":{"form":{}}}`.
    Form,
    /// Forms, and URLs the user opens (`{"elicitation":{"form":{},"url":{}}}`).
    FormAndUrl,
}

/// The registered handlers.
#[derive(Clone, Default)]
pub(crate) struct InputHandlers {
    elicitation: Option<(ElicitFn, ElicitationModes)>,
    sampling: Option<SamplingFn>,
    roots: Option<RootsFn>,
}

impl std::fmt::Debug for InputHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputHandlers")
            .field("elicitation", &self.elicitation.as_ref().map(|(_, modes)| modes))
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

impl InputHandlers {
    pub(crate) fn set_elicitation<F, Fut>(&mut self, modes: ElicitationModes, handler: F)
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.elicitation = Some((Arc::new(move |request| Box::pin(handler(request))), modes));
    }

    pub(crate) fn set_sampling<F, Fut>(&mut self, handler: F)
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, McpError>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |request| Box::pin(handler(request))));
    }

    pub(crate) fn set_roots<F, Fut>(&mut self, handler: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, McpError>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(handler())));
    }

    /// The `ClientCapabilities` the handlers make true: `elicitation` (with its modes),
    /// `sampling`, `roots`.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        match self.elicitation.as_ref().map(|(_, modes)| *modes) {
            Some(ElicitationModes::Form) => {
                caps.insert("elicitation".into(), json!({ "form": {} }));
            }
            Some(ElicitationModes::FormAndUrl) => {
                caps.insert("elicitation".into(), json!({ "form": {}, "url": {} }));
            }
            None => {}
        }
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            // Roots are read when asked; no `notifications/roots/list_changed` is sent.
            caps.insert("roots".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// Whether a handler serves `method`.
    pub(crate) fn serves(&self, method: &str) -> bool {
        match method {
            "elicitation/create" => self.elicitation.is_some(),
            "sampling/createMessage" => self.sampling.is_some(),
            "roots/list" => self.roots.is_some(),
            _ => false,
        }
    }

    /// The answer to the server's input request `method` with `params`: the result object.
    ///
    /// Errors: `-32601` for a method no handler serves; `-32602` for params that are not the
    /// method's (or a URL elicitation when only forms were declared); the handler's own error.
    pub(crate) async fn answer(&self, method: &str, params: Value) -> Result<Value, McpError> {
        match method {
            "elicitation/create" => {
                let Some((handler, modes)) = &self.elicitation else { return Err(unknown(method)) };
                let request: ElicitRequest = decode(method, params)?;
                if request.is_url() && *modes == ElicitationModes::Form {
                    return Err(McpError::invalid_params(
                        "elicitation/create: this client declared form mode only, not url",
                    ));
                }
                let schema = request.requested_schema.clone();
                let mut result = handler(request).await?;
                if let Some(schema) = &schema {
                    apply_defaults(&mut result, schema);
                }
                encode(&result)
            }
            "sampling/createMessage" => {
                let Some(handler) = &self.sampling else { return Err(unknown(method)) };
                encode(&handler(decode(method, params)?).await?)
            }
            "roots/list" => {
                let Some(handler) = &self.roots else { return Err(unknown(method)) };
                encode(&ListRootsResult { roots: handler().await? })
            }
            other => Err(unknown(other)),
        }
    }
}

/// Fills the properties an accepted form left out with the `default` its schema gives them
/// ([SEP-1034](https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#requested-schema)):
/// the user saw those values pre-filled and submitted them.
fn apply_defaults(result: &mut ElicitResult, schema: &Value) {
    if result.action != ElicitAction::Accept {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    let content = result.content.get_or_insert_with(Map::new);
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

fn unknown(method: &str) -> McpError {
    // Cut short: the answer must not grow with what the server sends.
    McpError::method_not_found(&method.chars().take(64).collect::<String>())
}

fn decode<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T, McpError> {
    serde_json::from_value(params).map_err(|e| McpError::invalid_params(format!("{method}: {e}")))
}

fn encode<T: Serialize>(result: &T) -> Result<Value, McpError> {
    serde_json::to_value(result).map_err(|e| McpError::internal(format!("the answer could not be encoded: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_forms_get_the_schema_defaults_they_left_out() {
        let mut handlers = InputHandlers::default();
        handlers.set_elicitation(ElicitationModes::Form, |_| async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(Map::from_iter([("age".into(), json!(41))])),
            })
        });
        let params = json!({"message": "who?", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}
        }}});
        let answer = handlers.answer("elicitation/create", params).await.expect("answered");
        assert_eq!(answer, json!({"action": "accept", "content": {"name": "John Doe", "age": 41}}));
    }

    #[tokio::test]
    async fn declined_forms_stay_empty_and_unknown_kinds_are_refused() {
        let mut handlers = InputHandlers::default();
        handlers.set_elicitation(ElicitationModes::Form, |_| async {
            Ok(ElicitResult { action: ElicitAction::Decline, content: None })
        });
        let params = json!({"message": "m", "requestedSchema": {"properties": {"a": {"default": 1}}}});
        assert_eq!(
            handlers.answer("elicitation/create", params).await.expect("answered"),
            json!({"action": "decline"})
        );
        let url = json!({"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"});
        let e = handlers.answer("elicitation/create", url).await.expect_err("form only");
        assert_eq!(e.code(), switchyard::ErrorCode::INVALID_PARAMS);
        let e = handlers.answer("sampling/createMessage", json!({"messages": []})).await.expect_err("no handler");
        assert_eq!(e.code(), switchyard::ErrorCode::METHOD_NOT_FOUND);
        let e = handlers.answer("elicitation/create", json!({"message": 5})).await.expect_err("malformed");
        assert_eq!(e.code(), switchyard::ErrorCode::INVALID_PARAMS);
        assert_eq!(handlers.capabilities(), json!({"elicitation": {"form": {}}}));
    }
}
