//! The seam between `ctx.input` and the path that obtains answers: the 2026-07-28 retry
//! (MRTR), a legacy session's server→client requests, or a task's `tasks/update`.

use super::request::InputRequest;
use super::response::InputResponse;
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;

/// The future an [`InputChannel`] returns: every key of the round answered (raw JSON, validated
/// by the caller), or an error that ends the request.
pub type InputFuture<'a> = Pin<Box<dyn Future<Output = Result<Map<String, Value>, McpError>> + Send + 'a>>;

/// How a [`RequestContext`] obtains the client's answers to input requests.
///
/// [`RequestContext::input`] and [`RequestContext::input_round`] check the client capabilities,
/// then hand the whole round to the context's channel and validate what comes back, so every
/// channel gets capability-checked rounds and returns raw answers. Channels of this crate:
///
/// - **2026-07-28 wire** (set by the dispatcher on `tools/call`, `prompts/get` and
///   `resources/read`): answers come from the retry's `inputResponses` (and from the answers of
///   earlier rounds carried in the verified `requestState`); when one is missing the channel
///   fails with [`McpError::input_required`], which travels through the filters like any error
///   and is turned into `{"resultType":"input_required",...}` by the dispatcher.
/// - **legacy session** (2025-11-25 and older): each request is sent to the client as a real
///   JSON-RPC request on the request's stream, and the channel awaits the responses.
///
/// A task runtime plugs in here: it gives the detached context of a background task its own
/// channel with [`RequestContext::set_input_channel`], whose `ask` records the round's
/// requests on the task (status `input_required`, `inputRequests`), waits for `tasks/update`
/// to deliver `inputResponses` for the keys, and resolves with them. The handler's code does
/// not change. Keys are unique per context (the context rejects a key asked twice), so a task
/// context's keys are unique for the task's life.
///
/// Object safe: stored as `Arc<dyn InputChannel>`.
pub trait InputChannel: Send + Sync + std::fmt::Debug + 'static {
    /// Obtains answers for every request of `round` (non-empty, keys unique, every kind
    /// declared by the client). Resolves with a map holding at least those keys, or fails with
    /// the error that ends the request (`McpError::input_required` on the 2026-07-28 wire).
    fn ask<'a>(&'a self, ctx: &'a RequestContext, round: &'a InputRound) -> InputFuture<'a>;

    /// Data the handler stored in an earlier round
    /// ([`RequestContext::request_state_data`]); `None` by default.
    fn carried_data(&self) -> Option<Value> {
        None
    }

    /// Stores handler data for the next round ([`RequestContext::set_request_state_data`]).
    /// Channels without rounds (legacy, tasks) keep nothing: the handler still runs.
    fn carry_data(&self, data: Value) {
        let _ = data;
    }
}

/// Several input requests asked together, in one round, under keys the server chooses
/// ([`InputRequests`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#inputrequests)).
/// Keys must be unique within the request.
///
/// ```
/// # use switchyard::input::{InputRequest, InputRound};
/// let round = InputRound::new()
///     .ask("user_name", InputRequest::elicit_form("Your name?", serde_json::json!({
///         "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})))
///     .ask("client_roots", InputRequest::list_roots());
/// assert_eq!(round.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRound {
    requests: Vec<(String, InputRequest)>,
}

impl InputRound {
    /// An empty round.
    pub fn new() -> Self {
        InputRound::default()
    }

    /// Adds `request` under `key`. A key added twice is reported by
    /// [`RequestContext::input_round`] (`-32603`).
    pub fn ask(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.push((key.into(), request));
        self
    }

    /// The requests in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &InputRequest)> {
        self.requests.iter().map(|(k, r)| (k.as_str(), r))
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// True when the round asks nothing.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The `inputRequests` object `{key: {"method":..,"params":..}}` of the whole round.
    pub fn to_input_requests(&self) -> Value {
        Value::Object(self.requests.iter().map(|(k, r)| (k.clone(), r.to_json())).collect())
    }
}

/// The validated answers of one round, by key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputAnswers {
    pub(crate) answers: Map<String, Value>,
    pub(crate) parsed: Vec<(String, InputResponse)>,
}

impl InputAnswers {
    /// The answer under `key`.
    pub fn get(&self, key: &str) -> Option<&InputResponse> {
        self.parsed.iter().find(|(k, _)| k == key).map(|(_, r)| r)
    }

    /// Removes and returns the answer under `key`.
    ///
    /// Errors: `-32603` when the round had no such key (a programming error).
    pub fn take(&mut self, key: &str) -> Result<InputResponse, McpError> {
        let at = self
            .parsed
            .iter()
            .position(|(k, _)| k == key)
            .ok_or_else(|| McpError::internal(format!("no input was asked under the key `{key}`")))?;
        Ok(self.parsed.remove(at).1)
    }

    /// The raw JSON answers, by key.
    pub fn raw(&self) -> &Map<String, Value> {
        &self.answers
    }
}
