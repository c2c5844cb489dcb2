//! The seam for input requests inside tasks: a tool running as a task asks the client something;
//! the task shows `input_required` with `inputRequests` until `tasks/update` answers. The
//! input-required API of the runtime builds elicitation/sampling/roots requests on top of
//! [`request_input`].

use crate::CurrentTask;
use crate::model::TaskState;
use crate::tasks::installed;
use serde_json::{Map, Value};
use switchyard::{McpError, RequestContext};

/// Publishes `requests` (`{key: {method, params}}`, keys unique for the task's whole life) as the
/// task's outstanding `inputRequests`, waits until `tasks/update` has answered every key (a
/// partial answer keeps the rest outstanding), sets the task back to `working` and returns the
/// answers by key.
///
/// Errors: `-32600` when `ctx` is not the context of a running task; `-32603` when the store
/// fails; `-32603` "cancelled" when the task is cancelled or ends while waiting.
pub async fn request_input(ctx: &RequestContext, requests: Map<String, Value>) -> Result<Map<String, Value>, McpError> {
    let id = ctx.extensions().get::<CurrentTask>().map(|t| t.id.clone());
    let (Some(id), Some(tasks)) = (id, installed(ctx)) else {
        return Err(McpError::invalid_request("input requests need a request that runs as a task"));
    };
    let mut rx = tasks.input_channel(&id);
    let mut outstanding = requests;
    let mut answers = Map::new();
    // `tasks/update` moves the task back to `working` (or to the keys still outstanding).
    if !outstanding.is_empty()
        && !tasks.set_state(&ctx.server(), &id, TaskState::InputRequired(outstanding.clone())).await?
    {
        return Err(McpError::internal("the task ended while waiting for input"));
    }
    while !outstanding.is_empty() {
        let got = tokio::select! {
            got = rx.recv() => got,
            _ = ctx.cancellation().cancelled() => None,
        };
        let Some(got) = got else { return Err(McpError::internal("the task was cancelled while waiting for input")) };
        for (k, v) in got {
            if outstanding.remove(&k).is_some() {
                answers.insert(k, v);
            }
        }
    }
    Ok(answers)
}

/// The [`InputChannel`](switchyard::input::InputChannel) of a task's request context, installed
/// when the task is created: `ctx.input(..)`, `ctx.input_round(..)` and `ctx.elicit(..)` inside a
/// task move it to `input_required` with the round's `inputRequests` and resume it when
/// `tasks/update` has answered every key. The handler's code is the same as on the 2026-07-28 wire
/// or a legacy session.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskInputChannel;

impl switchyard::input::InputChannel for TaskInputChannel {
    fn ask<'a>(
        &'a self,
        ctx: &'a RequestContext,
        round: &'a switchyard::input::InputRound,
    ) -> switchyard::input::InputFuture<'a> {
        Box::pin(async move {
            let requests = match round.to_input_requests() {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            request_input(ctx, requests).await
        })
    }
}
