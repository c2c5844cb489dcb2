//! Tasks (the `io.modelcontextprotocol/tasks` extension, 2026-07-28): a `tools/call` the server
//! may turn into a task, followed with `tasks/get` at the server's poll interval, answered with
//! `tasks/update` when it needs input, stopped with `tasks/cancel`
//! ([tasks](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md)).

use crate::client::{Client, arguments_object, decode, meta_mut};
use crate::error::ClientError;
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::{CallToolResult, McpError};

/// The extension's key in capabilities.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The poll interval when the server suggests none: 1 s.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The bounds a server's suggested poll interval is held to.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(60);

impl Client {
    /// Calls tool `name` declaring the Tasks extension, so the server may make a task of it
    /// (2026-07-28, [tasks](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md)):
    /// [`ToolCall::Completed`] when it answered at once, else [`ToolCall::Task`], whose
    /// [`result`](crate::TaskHandle::result) follows it to the end.
    ///
    /// ```no_run
    /// # async fn run(client: switchyard_client::Client) -> Result<(), switchyard_client::ClientError> {
    /// use switchyard_client::ToolCall;
    ///
    /// let result = match client.call_tool_as_task("slow_compute", serde_json::json!({ "seconds": 30 })).await? {
    ///     ToolCall::Completed(result) => result,
    ///     ToolCall::Task(task) => {
    ///         println!("task {}", task.id());
    ///         task.result().await?
    ///     }
    ///     _ => unreachable!("a new kind of answer"),
    /// };
    /// # let _ = result; Ok(()) }
    /// ```
    ///
    /// Errors: [`ClientError::Protocol`] on a session (the extension is 2026-07-28's); as
    /// [`call_tool`](Self::call_tool) otherwise.
    pub async fn call_tool_as_task(&self, name: &str, arguments: impl Serialize) -> Result<ToolCall, ClientError> {
        let arguments = arguments_object(arguments)?;
        let result = self.tasks_request("tools/call", json!({ "name": name, "arguments": arguments })).await?;
        if result.get("resultType").and_then(Value::as_str) == Some("task") {
            return TaskHandle::new(self.clone(), &result).map(ToolCall::Task);
        }
        decode("tools/call", result).map(ToolCall::Completed)
    }

    /// A request declaring the Tasks extension besides the client's own capabilities.
    pub(crate) async fn tasks_request(&self, method: &str, mut params: Value) -> Result<Value, ClientError> {
        if !self.session().modern {
            return Err(ClientError::Protocol(format!(
                "{method} with the Tasks extension needs 2026-07-28, not a {} session",
                self.session().version
            )));
        }
        let mut capabilities = self.session().client_capabilities.clone();
        if let Some(object) = capabilities.as_object_mut() {
            let extensions = object.entry("extensions").or_insert_with(|| json!({}));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(TASKS_EXTENSION.to_owned(), json!({}));
            }
        }
        meta_mut(&mut params).insert(switchyard::protocol::META_CLIENT_CAPABILITIES.to_owned(), capabilities);
        self.request(method, params).await
    }
}

/// What [`Client::call_tool_as_task`] got back: the result at once, or a task to follow.
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolCall {
    /// The server answered synchronously.
    Completed(CallToolResult),
    /// The server made a task of the call.
    Task(TaskHandle),
}

/// A task on the server (`CreateTaskResult`): its id, and the calls that follow it.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    client: Client,
    id: String,
    poll: Duration,
}

/// A task's state as `tasks/get` reports it (`DetailedTask`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskState {
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A human-readable note, when the server gives one.
    pub status_message: Option<String>,
    /// The whole `tasks/get` result, as sent (`result`, `error`, `inputRequests`, `ttlMs`, ...).
    pub raw: Value,
}

impl TaskHandle {
    pub(crate) fn new(client: Client, created: &Value) -> Result<TaskHandle, ClientError> {
        let id = created
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::Protocol("tools/call: a task result without taskId".into()))?
            .to_owned();
        Ok(TaskHandle { client, id, poll: poll_interval(created) })
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The task's state now (`tasks/get`).
    ///
    /// Errors: [`ClientError::Rpc`] `-32602` for a task the server no longer knows (expired);
    /// as [`Client::request`] otherwise.
    pub async fn state(&self) -> Result<TaskState, ClientError> {
        let raw = self.client.tasks_request("tasks/get", json!({ "taskId": self.id })).await?;
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
        let status = text("status").ok_or_else(|| ClientError::Protocol("tasks/get: no status".into()))?;
        Ok(TaskState { status, status_message: text("statusMessage"), raw })
    }

    /// Asks the server to cancel the task (`tasks/cancel`); cooperative: the task may still end
    /// `completed` or `failed`.
    ///
    /// Errors: as [`Client::request`].
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.client.tasks_request("tasks/cancel", json!({ "taskId": self.id })).await.map(drop)
    }

    /// Follows the task to its end: `tasks/get` at the server's poll interval (100 ms to 60 s,
    /// 1 s when it suggests none); an `input_required` task's questions go to the client's input
    /// handlers and their answers back with `tasks/update`.
    ///
    /// Errors: [`ClientError::Rpc`] with the task's error when it `failed`;
    /// [`ClientError::Cancelled`] when it was cancelled; [`ClientError::Protocol`] for input no
    /// handler gives or a result that is no `CallToolResult`; as [`Client::request`] otherwise.
    pub async fn result(&self) -> Result<CallToolResult, ClientError> {
        let mut poll = self.poll;
        loop {
            let state = self.state().await?;
            match state.status.as_str() {
                "completed" => {
                    let result = state.raw.get("result").cloned().unwrap_or(Value::Null);
                    return serde_json::from_value(result).map_err(|e| {
                        ClientError::Protocol(format!("tasks/get: the task's result does not decode: {e}"))
                    });
                }
                "failed" => {
                    let error = state.raw.get("error").cloned().unwrap_or(Value::Null);
                    let code = error.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok());
                    let message = error.get("message").and_then(Value::as_str).unwrap_or("the task failed");
                    let mut error_value = McpError::new(switchyard::ErrorCode(code.unwrap_or(-32603)), message);
                    if let Some(data) = error.get("data") {
                        error_value = error_value.with_data(data.clone());
                    }
                    return Err(ClientError::Rpc { method: "tools/call".into(), error: Box::new(error_value) });
                }
                "cancelled" => return Err(ClientError::Cancelled { method: "tools/call".into() }),
                "input_required" => {
                    let responses = self.client.answer_inputs("tasks/get", &state.raw).await?;
                    let update = json!({ "taskId": self.id, "inputResponses": responses });
                    self.client.tasks_request("tasks/update", update).await?;
                }
                _ => {
                    // The interval may change over the task's life; the last one given holds.
                    if let Some(suggested) = suggested_poll(&state.raw) {
                        poll = suggested;
                    }
                    tokio::time::sleep(poll).await;
                }
            }
        }
    }
}

/// The poll interval a task result suggests (`pollIntervalMs`), held to 100 ms..60 s.
fn suggested_poll(task: &Value) -> Option<Duration> {
    task.get("pollIntervalMs").and_then(Value::as_u64).map(|ms| Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL))
}

/// The poll interval of a new task: its suggestion, else 1 s.
fn poll_interval(task: &Value) -> Duration {
    suggested_poll(task).unwrap_or(DEFAULT_POLL)
}
