//! The 2026-07-28 channel: answers come with the retry; a missing one ends the request with an
//! `InputRequiredResult`
//! ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).

use super::state::{Binding, Carried, StateCodec};
use super::{InputChannel, InputFuture, InputRound};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The methods that may answer with an `InputRequiredResult`
/// ([supported requests](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#supported-requests)).
pub(crate) const INPUT_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The input of one 2026-07-28 request: the retry's `inputResponses`, what its verified
/// `requestState` carried, and what this run consumed so far.
#[derive(Debug)]
pub(crate) struct ModernChannel {
    codec: Arc<StateCodec>,
    binding: Binding,
    responses: Map<String, Value>,
    carried: Carried,
    run: Mutex<Run>,
}

#[derive(Debug, Default)]
struct Run {
    /// Answers handed to the handler in this run: carried into the next state.
    consumed: Map<String, Value>,
    /// Handler data set in this run (else the carried data is kept).
    data: Option<Value>,
}

impl ModernChannel {
    /// Takes `inputResponses` and `requestState` out of `params` and verifies the state.
    ///
    /// Errors: `-32602` when `inputResponses` is neither an object nor `null`, `requestState`
    /// is not a string, or the state does not verify against this request (tampered, expired,
    /// issued for another method, primitive, arguments or principal).
    pub(crate) fn from_params(
        codec: Arc<StateCodec>,
        method: &str,
        params: &mut Map<String, Value>,
        principal: Option<&str>,
    ) -> Result<Self, McpError> {
        let responses = match params.remove("inputResponses") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(McpError::invalid_params("inputResponses must be an object of answers by key")),
        };
        let state = params.remove("requestState");
        let binding = Binding::of(method, params, principal);
        let carried = match state {
            None | Some(Value::Null) => Carried::default(),
            Some(Value::String(s)) => codec.open(&s, &binding, SystemTime::now())?,
            Some(_) => return Err(McpError::invalid_params("requestState must be the string the server sent")),
        };
        Ok(ModernChannel { codec, binding, responses, carried, run: Mutex::new(Run::default()) })
    }

    fn lookup(&self, key: &str) -> Option<&Value> {
        self.responses.get(key).or_else(|| self.carried.answers.get(key))
    }

    /// Every answer a handler can look up: the carried ones, overridden by this retry's
    /// `inputResponses` (the order [`lookup`](Self::lookup) consults them in).
    pub(crate) fn visible_answers(&self) -> Map<String, Value> {
        let mut all = self.carried.answers.clone();
        all.extend(self.responses.iter().map(|(k, v)| (k.clone(), v.clone())));
        all
    }
}

impl InputChannel for ModernChannel {
    fn ask<'a>(&'a self, _ctx: &'a RequestContext, round: &'a InputRound) -> InputFuture<'a> {
        Box::pin(async move {
            let mut run = self.run.lock().unwrap_or_else(|e| e.into_inner());
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
                Carried { answers: run.consumed.clone(), data: run.data.clone().or_else(|| self.carried.data.clone()) };
            let state = self.codec.seal(&self.binding, &carried, SystemTime::now());
            Err(McpError::input_required(json!({
                "resultType": "input_required",
                "inputRequests": missing,
                "requestState": state,
            })))
        })
    }

    fn carried_data(&self) -> Option<Value> {
        let run = self.run.lock().unwrap_or_else(|e| e.into_inner());
        run.data.clone().or_else(|| self.carried.data.clone())
    }

    fn carry_data(&self, data: Value) {
        self.run.lock().unwrap_or_else(|e| e.into_inner()).data = Some(data);
    }
}
