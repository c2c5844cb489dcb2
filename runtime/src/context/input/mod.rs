//! `RequestContext`'s side of client input: the one API handlers call on every path.

pub(crate) mod channel;
pub(crate) mod request;
pub(crate) mod response;

pub use channel::{InputAnswers, InputChannel, InputFuture, InputRound};
pub use request::{InputKind, InputRequest, requested_schema};
pub(crate) use request::{declares, merge_capabilities};
pub use response::{CreateMessageResult, ElicitAction, ElicitResult, Elicited, InputResponse, ListRootsResult, Root};

use super::RequestContext;
use crate::jsonrpc::McpError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;

/// The input channel of one context and the keys it asked.
#[derive(Debug, Default)]
pub(crate) struct InputSlot {
    channel: Option<InputSource>,
    asked: HashSet<String>,
}

/// What serves a context's input: a channel, or the maker of one that needs the context's
/// notifier, made the first time something asks (most requests never do).
#[derive(Debug)]
pub(crate) enum InputSource {
    /// A channel made already (a 2026-07-28 request's, a task's, one a filter installed).
    Ready(Arc<dyn InputChannel>),
    /// A channel made from the context's notifier on first use (a legacy session's).
    Deferred(Arc<dyn DeferredChannel>),
}

/// Makes the input channel of a context from its notifier: a legacy session's, whose requests
/// to the client travel on the request's own stream.
pub(crate) trait DeferredChannel: Send + Sync + std::fmt::Debug {
    /// The channel of a context whose notifier is `notifier`.
    fn channel(self: Arc<Self>, notifier: &super::Notifier) -> Arc<dyn InputChannel>;
}

impl InputSlot {
    /// The channel, made now if it was deferred (`notifier`: the context's).
    fn channel(&mut self, notifier: &super::Notifier) -> Option<Arc<dyn InputChannel>> {
        let channel = match self.channel.as_ref()? {
            InputSource::Ready(channel) => return Some(channel.clone()),
            InputSource::Deferred(maker) => maker.clone().channel(notifier),
        };
        self.channel = Some(InputSource::Ready(channel.clone()));
        Some(channel)
    }
}

impl RequestContext {
    /// Asks the client for one input under `key` and returns the validated answer.
    ///
    /// On 2026-07-28 `tools/call`, `prompts/get` and `resources/read`, an answer in the retry's
    /// `inputResponses` (or carried from an earlier round) is returned; otherwise the call ends
    /// with an `InputRequiredResult` asking for it (this returns
    /// [`McpError::input_required`]; pass it on with `?`). On a legacy session the request is
    /// sent to the client and its response awaited. Inside a task, the task's
    /// [`InputChannel`] decides.
    ///
    /// Errors: `-32021` with `data.requiredCapabilities` when the client did not declare the
    /// capability the request needs (for this request on 2026-07-28, in `initialize` on legacy
    /// sessions); `-32602` when the answer is malformed; `-32603` when `key` was already asked
    /// in this request, when this request cannot ask for input (a 2026-07-28 method other than
    /// the three above), or when the client answered a legacy request with an error.
    pub async fn input(&self, key: impl Into<String>, request: InputRequest) -> Result<InputResponse, McpError> {
        let key = key.into();
        let mut answers = self.input_round(InputRound::new().ask(key.clone(), request)).await?;
        answers.take(&key)
    }

    /// Asks for every request of `round` at once (one MRTR round, or concurrent legacy
    /// requests) and returns all answers. Errors as for [`input`](Self::input); the capability
    /// error names every missing capability of the round.
    pub async fn input_round(&self, round: InputRound) -> Result<InputAnswers, McpError> {
        if round.is_empty() {
            return Ok(InputAnswers::default());
        }
        let mut missing = json!({});
        for (_, request) in round.iter() {
            let need = request.required_capabilities();
            if !declares(self.client_capabilities(), &need) {
                merge_capabilities(&mut missing, &need);
            }
        }
        if missing.as_object().is_some_and(|m| !m.is_empty()) {
            return Err(McpError::missing_capability(
                format!("asking the client for input needs client capabilities it did not declare: {missing}"),
                missing,
            ));
        }
        let channel = {
            let mut slot = self.input_slot();
            let mut seen = HashSet::new();
            for (key, _) in round.iter() {
                if !seen.insert(key) || slot.asked.contains(key) {
                    return Err(McpError::internal(format!(
                        "the input key `{key}` was used twice in one request; keys must be unique"
                    )));
                }
            }
            slot.asked.extend(round.iter().map(|(k, _)| k.to_owned()));
            slot.channel(self.notifier()).ok_or_else(|| {
                McpError::internal(format!(
                    "{} cannot ask the client for input: on 2026-07-28 only tools/call, prompts/get and \
                     resources/read can",
                    self.method()
                ))
            })?
        };
        let raw = channel.ask(self, &round).await?;
        let mut parsed = Vec::with_capacity(round.len());
        for (key, request) in round.iter() {
            let value = raw
                .get(key)
                .cloned()
                .ok_or_else(|| McpError::internal(format!("the input channel returned no answer for `{key}`")))?;
            parsed.push((key.to_owned(), InputResponse::parse(key, request.kind(), value)?));
        }
        Ok(InputAnswers { answers: raw, parsed })
    }

    /// Asks the user to fill in a form generated from `T` (see
    /// [`InputRequest::elicit_form_for`]) and decodes the accepted content as `T`.
    ///
    /// Errors as for [`input`](Self::input); `-32602` when accepted content does not decode
    /// as `T`.
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        &self,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, McpError> {
        let answer = self.input(key, InputRequest::elicit_form_for::<T>(message)).await?.into_elicit()?;
        Ok(match answer.action {
            ElicitAction::Accept => match answer.parse::<T>()? {
                Some(v) => Elicited::Accept(v),
                None => Elicited::Cancel,
            },
            ElicitAction::Decline => Elicited::Decline,
            ElicitAction::Cancel => Elicited::Cancel,
        })
    }

    /// True when the client declared the capability `request` needs, so that asking it cannot
    /// fail with `-32021`. Lets a handler ask only what this client supports.
    pub fn can_ask(&self, request: &InputRequest) -> bool {
        declares(self.client_capabilities(), &request.required_capabilities())
    }

    /// The data this handler stored with
    /// [`set_request_state_data`](Self::set_request_state_data) in an earlier round (read back
    /// from the verified `requestState` on 2026-07-28), or in this run; `None` otherwise and on
    /// paths without rounds.
    pub fn request_state_data(&self) -> Option<Value> {
        let channel = self.input_slot().channel(self.notifier());
        channel.and_then(|c| c.carried_data())
    }

    /// Stores `data` to be read back with [`request_state_data`](Self::request_state_data)
    /// when the client retries after an input-required result. It travels inside
    /// `requestState`: authenticated (the client cannot change it) but not encrypted (the
    /// client can read it), so keep secrets out.
    ///
    /// Errors: `-32603` when `data` does not serialize to JSON.
    pub fn set_request_state_data(&self, data: impl Serialize) -> Result<(), McpError> {
        let value = serde_json::to_value(data)
            .map_err(|e| McpError::internal(format!("request state data could not be serialized: {e}")))?;
        let channel = self.input_slot().channel(self.notifier());
        if let Some(c) = channel {
            c.carry_data(value);
        }
        Ok(())
    }

    /// Routes this context's input requests through `channel` from now on (replacing the
    /// transport's). This is the seam for task runtimes: a background task's detached context
    /// gets a channel that records the requests on the task and awaits `tasks/update`.
    pub fn set_input_channel(&self, channel: Arc<dyn InputChannel>) {
        self.input_slot().channel = Some(InputSource::Ready(channel));
    }

    /// Routes this context's input requests through `source` ([`set_input_channel`] for a
    /// ready channel).
    ///
    /// [`set_input_channel`]: Self::set_input_channel
    pub(crate) fn set_input_source(&self, source: InputSource) {
        self.input_slot().channel = Some(source);
    }

    /// The input channel currently serving this context, if any.
    pub fn input_channel(&self) -> Option<Arc<dyn InputChannel>> {
        self.input_slot().channel(self.notifier())
    }
}
