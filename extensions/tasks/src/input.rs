//! The seam for input requests inside tasks: a tool running as a task asks the client something;
//! the task shows `input_required` with `inputRequests` until `tasks/update` answers. The
//! input-required API of the runtime builds elicitation/sampling/roots requests on top of
//! [`request_input`].

use crate::CurrentTask;
use crate::model::TaskState;
use crate::tasks::{Tasks, installed};
use serde_json::{Map, Value};
use switchyard::{McpError, RequestContext};

/// Publishes `requests` (`{key: {method, params}}`, keys unique for the task's whole life) as the
/// task's outstanding `inputRequests`, waits until `tasks/update` has answered every key (a
/// partial answer keeps the rest outstanding; the update that answers the last key sets the
/// task back to `working`) and returns the answers by key
/// ([task update requests](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-update-requests)).
///
/// The answers are taken from the task store, where `tasks/update` on any instance keeps them
/// ([`TaskStore::put_input_responses`](crate::TaskStore::put_input_responses)): an update on
/// this instance wakes the task at once, one on another instance through the server's hub, and
/// without a working hub the task finds them when it next reads the store (every third of a
/// lease, at most every second). A store failure while waiting is logged and the next read
/// tries again.
///
/// Errors: `-32600` when `ctx` is not the context of a running task; `-32603` when the store
/// fails while publishing the requests; `-32603` "cancelled" when the task is cancelled or ends
/// while waiting.
pub async fn request_input(ctx: &RequestContext, requests: Map<String, Value>) -> Result<Map<String, Value>, McpError> {
    let id = ctx.extensions().get::<CurrentTask>().map(|t| t.id.clone());
    let (Some(id), Some(tasks)) = (id, installed(ctx)) else {
        return Err(McpError::invalid_request("input requests need a request that runs as a task"));
    };
    if requests.is_empty() {
        return Ok(Map::new());
    }
    let wake = tasks.input_waker(&id);
    let answers = wait_for_answers(ctx, &tasks, &id, &wake, requests).await;
    tasks.drop_input_waker(&id);
    answers
}

async fn wait_for_answers(
    ctx: &RequestContext,
    tasks: &Tasks,
    id: &str,
    wake: &tokio::sync::Notify,
    mut outstanding: Map<String, Value>,
) -> Result<Map<String, Value>, McpError> {
    if !tasks.set_state(&ctx.server(), id, TaskState::InputRequired(outstanding.clone())).await? {
        return Err(McpError::internal("the task ended while waiting for input"));
    }
    let poll = tasks.input_poll_interval();
    let mut answers = Map::new();
    loop {
        match tasks.store.input_responses(id).await {
            Ok(stored) => {
                let mut taken = Vec::new();
                for (key, answer) in stored {
                    if outstanding.remove(&key).is_some() {
                        taken.push(key.clone());
                        answers.insert(key, answer);
                    }
                }
                // Removed only now that they are held here: a read whose answer was lost
                // leaves them in the store for the next one. Answers for keys this call does
                // not wait for stay (another wait of the same task may); whatever is left is
                // dropped when the task ends.
                if !taken.is_empty()
                    && let Err(e) = tasks.store.remove_input_responses(id, &taken).await
                {
                    tasks.store_failed();
                    tracing::warn!(task = id, error = %e, "tasks: removing taken input responses failed");
                }
                if outstanding.is_empty() {
                    return Ok(answers);
                }
            }
            Err(e) => {
                tasks.store_failed();
                tracing::warn!(task = id, error = %e, "tasks: reading input responses failed; trying again");
            }
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(poll) => {}
            _ = ctx.cancellation().cancelled() => {
                return Err(McpError::internal("the task was cancelled while waiting for input"));
            }
        }
    }
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
