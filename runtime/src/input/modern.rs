//! The 2026-07-28 channel: answers come with the retry; a missing one ends the request with an
//! `InputRequiredResult`
//! ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).

use super::state::{Binding, BindingInput, Carried, StateCodec};
use super::{InputChannel, InputFuture, InputRound};
use crate::context::RequestContext;
use crate::jsonrpc::{McpError, TakenOut, small_map};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The input of one 2026-07-28 request: the retry's `inputResponses`, what its verified
/// `requestState` carried, and what this run consumed so far.
///
/// Every `tools/call`, `prompts/get` and `resources/read` makes one, and most never ask for
/// input: what only a retry or a round of questions fills is boxed apart, made when needed,
/// so the channel itself stays a few words to build and move.
#[derive(Debug)]
pub(crate) struct ModernChannel {
    codec: Arc<StateCodec>,
    binding: LazyBinding,
    /// `None` when the request brought neither answers nor a state (a first try).
    retry: Option<Box<Retry>>,
    /// `None` until the handler asks or sets data.
    run: Mutex<Option<Box<Run>>>,
}

/// What a retry brought.
#[derive(Debug)]
struct Retry {
    responses: Map<String, Value>,
    carried: Carried,
}

#[derive(Debug, Default)]
struct Run {
    /// Answers handed to the handler in this run: carried into the next state.
    consumed: Map<String, Value>,
    /// Handler data set in this run (else the carried data is kept).
    data: Option<Value>,
}

/// The request's binding: digested at once when a state arrived (to open it), else only
/// when a state is sealed. Not kept: a state is sealed when a round misses an answer, which
/// ends the request through `input_round`; only a handler calling the channel itself again
/// after that digests twice.
#[derive(Debug)]
enum LazyBinding {
    Now(Binding),
    Later(BindingInput),
}

impl LazyBinding {
    fn get(&self) -> Cow<'_, Binding> {
        match self {
            LazyBinding::Now(b) => Cow::Borrowed(b),
            LazyBinding::Later(input) => Cow::Owned(input.bind()),
        }
    }
}

impl ModernChannel {
    /// Takes `inputResponses` and `requestState` out of `params` and verifies the state.
    ///
    /// Errors: `-32602` when `inputResponses` is neither an object nor `null`, `requestState`
    /// is not a string, or the state does not verify against this request (tampered, expired,
    /// issued for another method, primitive, arguments or principal).
    pub(crate) fn from_params(
        codec: Arc<StateCodec>,
        method: &'static str,
        params: &mut Map<String, Value>,
        taken: &TakenOut,
        principal: Option<&str>,
    ) -> Result<Self, McpError> {
        let responses = match small_map::remove(params, "inputResponses") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(McpError::invalid_params("inputResponses must be an object of answers by key")),
        };
        let input = BindingInput::of(method, params, taken, principal);
        let (binding, carried) = match small_map::remove(params, "requestState") {
            None | Some(Value::Null) => (LazyBinding::Later(input), Carried::default()),
            Some(Value::String(s)) => {
                let binding = input.bind();
                let carried = codec.open(&s, &binding, SystemTime::now())?;
                (LazyBinding::Now(binding), carried)
            }
            Some(_) => return Err(McpError::invalid_params("requestState must be the string the server sent")),
        };
        let first_try = responses.is_empty() && carried.answers.is_empty() && carried.data.is_none();
        let retry = (!first_try).then(|| Box::new(Retry { responses, carried }));
        Ok(ModernChannel { codec, binding, retry, run: Mutex::new(None) })
    }

    fn lookup(&self, key: &str) -> Option<&Value> {
        let retry = self.retry.as_deref()?;
        retry.responses.get(key).or_else(|| retry.carried.answers.get(key))
    }

    /// The handler's data carried in by the retry's state.
    fn carried_in(&self) -> Option<Value> {
        self.retry.as_deref().and_then(|retry| retry.carried.data.clone())
    }

    /// Every answer a handler can look up: the carried ones, overridden by this retry's
    /// `inputResponses` (the order [`lookup`](Self::lookup) consults them in).
    #[cfg(feature = "fuzzing")]
    pub(crate) fn visible_answers(&self) -> Map<String, Value> {
        let Some(retry) = self.retry.as_deref() else { return Map::new() };
        let mut all = retry.carried.answers.clone();
        all.extend(retry.responses.iter().map(|(k, v)| (k.clone(), v.clone())));
        all
    }
}

impl InputChannel for ModernChannel {
    fn ask<'a>(&'a self, _ctx: &'a RequestContext, round: &'a InputRound) -> InputFuture<'a> {
        Box::pin(async move {
            let mut run = self.run.lock().unwrap_or_else(|e| e.into_inner());
            let run = run.get_or_insert_with(Box::default);
            let mut found = Map::new();
            let mut missing = Map::new();
            for (key, request) in round.iter() {
                match self.lookup(key) {
                    Some(v) => {
                        found.insert(key.to_owned(), v.clone());
                    }
                    None => {
                        missing.insert(key.to_owned(), request.to_json());
                    }
                }
            }
            // Answers of this round that did arrive are kept too, so the client need not send
            // them again.
            run.consumed.extend(found.clone());
            if missing.is_empty() {
                return Ok(found);
            }
            let carried =
                Carried { answers: run.consumed.clone(), data: run.data.clone().or_else(|| self.carried_in()) };
            let state = self.codec.seal(&self.binding.get(), &carried, SystemTime::now());
            Err(McpError::input_required(json!({
                "resultType": "input_required",
                "inputRequests": missing,
                "requestState": state,
            })))
        })
    }

    fn carried_data(&self) -> Option<Value> {
        let run = self.run.lock().unwrap_or_else(|e| e.into_inner());
        run.as_ref().and_then(|run| run.data.clone()).or_else(|| self.carried_in())
    }

    fn carry_data(&self, data: Value) {
        self.run.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(Box::default).data = Some(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    /// The binding digested late (no state arrived) is the one digested at once from the
    /// request as it came, even when the handler's copy of the params changes meanwhile.
    #[test]
    fn the_late_binding_is_the_binding_of_the_request_as_it_came() {
        let codec = Arc::new(StateCodec::new(Some(vec![1u8; 32]), Duration::from_secs(60)));
        for (method, original) in [
            ("tools/call", json!({"name": "ask", "arguments": {"z": [1, {"b": 2, "a": 1}], "a": "é"}})),
            ("tools/call", json!({"name": "ask"})),
            ("tools/call", json!({"name": "ask", "arguments": null})),
            ("resources/read", json!({"uri": "file:///a"})),
        ] {
            let eager = Binding::of(method, &params(original.clone()), Some("alice"));
            let mut p = params(original.clone());
            let channel = ModernChannel::from_params(codec.clone(), method, &mut p, &Default::default(), Some("alice"))
                .expect("no state");
            p.insert("arguments".into(), json!({"changed": true}));
            assert!(matches!(channel.binding, LazyBinding::Later(..)), "{original}");
            assert_eq!(*channel.binding.get(), eager, "{original}");
        }
    }

    /// A state sealed by a late binding opens against the retry, which binds at once.
    #[test]
    fn a_state_sealed_late_opens_on_the_retry() {
        let codec = Arc::new(StateCodec::new(Some(vec![2u8; 32]), Duration::from_secs(60)));
        let request = json!({"name": "ask", "arguments": {"x": 1}});
        let mut first = params(request.clone());
        let channel = ModernChannel::from_params(codec.clone(), "tools/call", &mut first, &Default::default(), None)
            .expect("no state");
        let state = codec.seal(&channel.binding.get(), &Carried::default(), SystemTime::now());
        let mut retry = params(request);
        retry.insert("requestState".into(), Value::String(state));
        let reopened = ModernChannel::from_params(codec.clone(), "tools/call", &mut retry, &Default::default(), None)
            .expect("verifies");
        assert!(matches!(reopened.binding, LazyBinding::Now(_)));
        let mut other = params(json!({"name": "ask", "arguments": {"x": 2}}));
        other.insert(
            "requestState".into(),
            Value::String(codec.seal(&channel.binding.get(), &Carried::default(), SystemTime::now())),
        );
        let err = ModernChannel::from_params(codec, "tools/call", &mut other, &Default::default(), None)
            .expect_err("other arguments");
        assert!(err.message().contains("different arguments"), "{}", err.message());
    }
}
