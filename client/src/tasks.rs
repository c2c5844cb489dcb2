//! Tasks: a `tools/call` the server may turn into a task, followed with `tasks/get` at the
//! server's poll interval, stopped with `tasks/cancel`. On 2026-07-28 it is the
//! `io.modelcontextprotocol/tasks` extension, answered with `tasks/update` when it needs input
//! ([tasks](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md));
//! on a 2025-11-25 session the core tasks of that revision, the call carrying a `task` param and
//! the result read with `tasks/result`
//! ([tasks](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks)).

use crate::client::{Client, answer_with, arguments_object, meta_mut};
use crate::decode::decode;
use crate::error::ClientError;
use crate::listen::Subscription;
use crate::options::{ProgressUpdate, RequestOptions};
use futures::{Stream, StreamExt};
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::call::{CallOutput, CallParams, ToolDeclaration, ToolOutput, ToolReturn, decode_tool_result};
use switchyard::{CallToolResult, McpError};

/// The extension's key in capabilities.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The poll interval when the server suggests none: 1 s.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The bounds a server's suggested poll interval is held to.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(60);

impl Client {
    /// Calls tool `name` so that the server may make a task of it: [`ToolCall::Completed`]
    /// when it answered at once, else [`ToolCall::Task`], whose
    /// [`result`](crate::TaskHandle::result) follows it to the end.
    ///
    /// - On 2026-07-28 the call declares the Tasks extension in its capabilities
    ///   ([tasks](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md));
    ///   the server decides. Over HTTP, arguments the tool's schema marks with `x-mcp-header`
    ///   go in `Mcp-Param-*` headers, and a refusal of them (`-32020`) lists the tools again
    ///   and sends the call once more, as [`call_tool`](Self::call_tool) does.
    /// - On a 2025-11-25 session the call carries a `task` param (`{}`: the server's TTL) when
    ///   the server declares `tasks.requests.tools.call` and the tool's
    ///   `execution.taskSupport` is `optional` or `required`, read from a `tools/list`
    ///   first (a mismatch is `-32601` there); otherwise it is a plain call
    ///   ([tasks](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks)).
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
    /// Errors: [`ClientError::Protocol`] for a task result without a `taskId`; as
    /// [`call_tool`](Self::call_tool) and [`list_tools`](Self::list_tools) otherwise.
    pub async fn call_tool_as_task(&self, name: &str, arguments: impl Serialize) -> Result<ToolCall, ClientError> {
        self.call_tool_as_task_with(name, arguments, RequestOptions::default()).await
    }

    /// [`call_tool_as_task`](Self::call_tool_as_task) with [`RequestOptions`] for the call
    /// that creates the task (or answers at once): its timeout, cancellation, progress and
    /// input handler. On 2026-07-28 the capabilities an input handler declares get the Tasks
    /// extension added. Following the task afterwards ([`TaskHandle::result`]) is not bound by
    /// them.
    ///
    /// Errors: as [`call_tool_as_task`](Self::call_tool_as_task);
    /// [`ClientError::Cancelled`] when the token is cancelled before the answer.
    pub async fn call_tool_as_task_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        mut options: RequestOptions,
    ) -> Result<ToolCall, ClientError> {
        let arguments = arguments_object(arguments)?;
        let mut params = json!({ "name": name, "arguments": arguments });
        if !self.session().modern {
            return self.call_tool_as_session_task(name, params, options).await;
        }
        self.declare_tasks("tools/call", &mut params)?;
        // The input handler's capabilities replace the request's: they must name the extension too.
        if let Some((capabilities, _)) = options.input.as_mut() {
            add_tasks_extension(capabilities);
        }
        let result = self
            .relisting_on_header_mismatch(params, options, |params, options| {
                self.request_with("tools/call", params, options)
            })
            .await?;
        if result.get("resultType").and_then(Value::as_str) == Some("task") {
            return TaskHandle::new(self.clone(), &result, true).map(ToolCall::Task);
        }
        decode("tools/call", result).map(ToolCall::Completed)
    }

    /// A handle on task `id`, made earlier: to follow it, read its result or cancel it
    /// elsewhere in the program, or from a new connection where the server allows it (a server
    /// whose tasks outlive the connection, with the same credentials; many servers, the MCP
    /// reference server among them, know a task only on the session that made it). Nothing is
    /// sent until it is used; a task the server does not know fails there with `-32602`. It
    /// polls every second until the server suggests an interval.
    pub fn task(&self, id: impl Into<String>) -> TaskHandle {
        TaskHandle { client: self.clone(), id: id.into(), poll: DEFAULT_POLL, modern: self.session().modern }
    }

    /// [`call_tool_as_task`](Self::call_tool_as_task) on a 2025-11-25 session. A `-32601`
    /// (a mismatch with the tool's `taskSupport`, which may have changed since it was listed)
    /// lists the tools again and, when that changes the answer, sends the call once more.
    async fn call_tool_as_session_task(
        &self,
        name: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<ToolCall, ClientError> {
        let offered = self.capabilities().pointer("/tasks/requests/tools/call").is_some();
        let mut as_task = offered && self.session_task_support(name, false).await;
        let mut relisted = false;
        loop {
            let mut sent = params.clone();
            if as_task {
                sent["task"] = json!({});
            }
            let result = match self.request_with("tools/call", sent, options.clone()).await {
                Err(ClientError::Rpc { error, .. })
                    if offered && !relisted && error.code() == switchyard::ErrorCode::METHOD_NOT_FOUND =>
                {
                    relisted = true;
                    let fresh = self.session_task_support(name, true).await;
                    if fresh != as_task {
                        as_task = fresh;
                        continue;
                    }
                    return Err(ClientError::Rpc { method: "tools/call".into(), error });
                }
                other => other?,
            };
            // Only a call that asked for a task can be answered with one.
            return match result.get("task").filter(|_| as_task) {
                Some(task) => TaskHandle::new(self.clone(), task, false).map(ToolCall::Task),
                None => decode("tools/call", result).map(ToolCall::Completed),
            };
        }
    }

    /// Whether a session's `tools/call` of `name` may carry a `task` param: its
    /// `execution.taskSupport` is `optional` or `required` (absent means `forbidden`). Read
    /// from the last listing when it named the tool (unless `fresh`), else from a new one,
    /// read only as far as the tool. A tool no listing names, or a listing that fails, means a
    /// plain call, for the server to judge.
    async fn session_task_support(&self, name: &str, fresh: bool) -> bool {
        if !fresh && let Some(known) = self.known_task_support(name) {
            return known;
        }
        let mut tools = std::pin::pin!(self.tools());
        while let Some(tool) = tools.next().await {
            match tool {
                Ok(tool) if tool.name == name => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(target: "switchyard_client", tool = name, error = %e, "no taskSupport: tools/list failed");
                    break;
                }
            }
        }
        self.known_task_support(name).unwrap_or(false)
    }

    /// [`call_tool_as_task`](Self::call_tool_as_task) of the tool `K` declares (a typed call's
    /// type, `greet` of `greet::call`): `client.call_as_task::<greet>(GreetArgs { .. })`, whose
    /// [`ToolCall::output`] decodes the result as `greet::call` does.
    ///
    /// Errors: as [`call_tool_as_task`](Self::call_tool_as_task).
    pub async fn call_as_task<K>(&self, params: K::Params) -> Result<ToolCall, ClientError>
    where
        K: ToolDeclaration,
        K::Params: CallParams,
    {
        self.call_tool_as_task(K::NAME, params).await
    }

    /// A request declaring the Tasks extension besides the client's own capabilities.
    pub(crate) async fn tasks_request(&self, method: &str, mut params: Value) -> Result<Value, ClientError> {
        self.declare_tasks(method, &mut params)?;
        self.request(method, params).await
    }

    /// Puts the client's capabilities with the Tasks extension into `params._meta`.
    ///
    /// Errors: [`ClientError::Protocol`] on a session (the extension is 2026-07-28's).
    fn declare_tasks(&self, method: &str, params: &mut Value) -> Result<(), ClientError> {
        if !self.session().modern {
            return Err(ClientError::Protocol(format!(
                "{method} with the Tasks extension needs 2026-07-28, not a {} session",
                self.session().version
            )));
        }
        let mut capabilities = self.session().client_capabilities.clone();
        add_tasks_extension(&mut capabilities);
        meta_mut(params).insert(switchyard::protocol::META_CLIENT_CAPABILITIES.to_owned(), capabilities);
        Ok(())
    }
}

/// Adds the Tasks extension to the `extensions` of client capabilities (an object).
fn add_tasks_extension(capabilities: &mut Value) {
    if let Some(object) = capabilities.as_object_mut() {
        let extensions = object.entry("extensions").or_insert_with(|| json!({}));
        if let Some(extensions) = extensions.as_object_mut() {
            extensions.insert(TASKS_EXTENSION.to_owned(), json!({}));
        }
    }
}

impl ToolCall {
    /// The result decoded as tool `K`'s typed output (as `K::call` decodes it), following the
    /// task to its end first when the server made one.
    ///
    /// Errors: [`ClientError::ToolFailed`] for an `isError: true` result,
    /// [`ClientError::Protocol`] for a result of another shape; as [`TaskHandle::result`].
    pub async fn output<K>(self) -> Result<ToolOutput<K>, ClientError>
    where
        K: ToolDeclaration,
        K::Return: ToolReturn,
        ToolOutput<K>: CallOutput,
    {
        let result = match self {
            ToolCall::Completed(result) => result,
            ToolCall::Task(task) => task.result().await?,
        };
        Ok(decode_tool_result::<K>(result)?)
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
    /// Whether it is a 2026-07-28 task (the extension) rather than a session's core task.
    modern: bool,
}

/// A task's state as `tasks/get` reports it (`DetailedTask` on 2026-07-28, `Task` on a
/// 2025-11-25 session).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TaskState {
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A human-readable note, when the server gives one.
    pub status_message: Option<String>,
    /// The whole `tasks/get` result, as sent (2026-07-28: `result`, `error`, `inputRequests`,
    /// `ttlMs`, ...; a session: `createdAt`, `lastUpdatedAt`, `ttl`, `pollInterval`, ...).
    pub raw: Value,
}

impl TaskHandle {
    /// The handle of the task `created` describes (the 2026-07-28 `CreateTaskResult`, or a
    /// session's `CreateTaskResult.task`).
    pub(crate) fn new(client: Client, created: &Value, modern: bool) -> Result<TaskHandle, ClientError> {
        let id = created
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| ClientError::Protocol("tools/call: a task result without taskId".into()))?
            .to_owned();
        Ok(TaskHandle { client, id, poll: poll_interval(created), modern })
    }

    /// A request about this task: with the Tasks extension declared on 2026-07-28, plain on a
    /// session.
    async fn task_request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        if self.modern {
            self.client.tasks_request(method, params).await
        } else {
            self.client.request(method, params).await
        }
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
        let raw = self.task_request("tasks/get", json!({ "taskId": self.id })).await?;
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
        let status = text("status").ok_or_else(|| ClientError::Protocol("tasks/get: no status".into()))?;
        Ok(TaskState { status, status_message: text("statusMessage"), raw })
    }

    /// Asks the server to cancel the task (`tasks/cancel`); cooperative: the task may still end
    /// `completed` or `failed`.
    ///
    /// Errors: as [`Client::request`].
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.task_request("tasks/cancel", json!({ "taskId": self.id })).await.map(drop)
    }

    /// The task's states as they change, as a [`Stream`]: the state now first, then each
    /// change, ending after a terminal one (`completed`, `failed`, `cancelled`).
    ///
    /// Where the server offers them (2026-07-28), changes come as they happen: a
    /// `subscriptions/listen` for the task's `notifications/tasks` (`taskIds`, [status
    /// notifications](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md));
    /// `tasks/get` at the server's poll interval (`pollIntervalMs`, or a session's
    /// `pollInterval`: 100 ms to 60 s, 1 s when it suggests none) is the baseline either way, so a server that grants no subscription, or one that
    /// notifies only some changes, is followed all the same. A state equal to the one before
    /// is not repeated (`_meta`, and the keys a result carries besides the task's, aside), and a
    /// terminal notification without the task's result or error is completed by one `tasks/get`.
    ///
    /// Errors: an item [`ClientError::Rpc`] `-32602` for a task the server no longer knows, and
    /// whatever else `tasks/get` fails with; the stream ends after it.
    pub fn updates(&self) -> impl Stream<Item = Result<TaskState, ClientError>> + Send + 'static {
        let follow =
            Follow { task: self.clone(), subscription: None, started: false, last: None, next_poll: None, done: false };
        futures::stream::unfold(follow, |mut follow| async move {
            let item = follow.next().await?;
            Some((item, follow))
        })
    }

    /// Follows the task to its end and gives its result.
    ///
    /// - On 2026-07-28 it follows [`updates`](Self::updates), and the result comes with the
    ///   terminal state; an `input_required` task's questions go to the client's input
    ///   handlers and their answers back with `tasks/update`.
    /// - On a session it polls `tasks/get`, and asks `tasks/result` once the task is terminal
    ///   or `input_required`: the server sends its questions as requests of its own while that
    ///   request is open (the handlers answer them) and answers it when the task ends. Asked
    ///   for input, that request waits as long as the task may live (its `ttl`), at least the
    ///   request timeout; should it time out first, polling goes on and `tasks/result` is
    ///   asked again while the task still wants input.
    ///
    /// It waits as long as the task runs: a task that never ends is followed forever. Bound it
    /// with `tokio::time::timeout` (dropping the future stops following; the task goes on
    /// until [`cancel`](Self::cancel)).
    ///
    /// Errors: [`ClientError::Rpc`] with the task's error when it `failed` with one (on a
    /// session, a tool that failed with an `isError: true` result is `Ok`, as from
    /// [`Client::call_tool`]); [`ClientError::Cancelled`] when it was cancelled, also while
    /// `tasks/result` waited; [`ClientError::Protocol`] for a result that is no
    /// `CallToolResult`, or (2026-07-28) input no handler gives; as [`Client::request`]
    /// otherwise.
    pub async fn result(&self) -> Result<CallToolResult, ClientError> {
        self.result_with(RequestOptions::new()).await
    }

    /// [`result`](Self::result), followed with `options`, as a gateway follows a task it
    /// started for its own client:
    ///
    /// - the input handler of [`RequestOptions::on_input`] answers the task's questions in
    ///   place of the client's handlers: on 2026-07-28 each `input_required` state's
    ///   `inputRequests` (the answers go back with `tasks/update`), on a session the server's
    ///   requests that belong to `tasks/result`;
    /// - [`RequestOptions::cancel_with`]'s token stops following: the result is then
    ///   [`ClientError::Cancelled`], and the task goes on until [`cancel`](Self::cancel);
    /// - [`RequestOptions::on_progress`] gets the task's progress: on 2026-07-28 each new
    ///   `statusMessage` of a running task (where the Tasks extension puts a task's progress
    ///   reports) as a report whose `progress` counts the messages (1, 2, ..; no `total`) and
    ///   whose `message` is the status message; on a session the progress reports of
    ///   `tasks/result`;
    /// - on a session, [`RequestOptions::timeout`] is the least that `tasks/result` waits (at
    ///   least as long as a task that wants input may live, its `ttl`).
    ///
    /// Errors: as [`result`](Self::result); an input handler's refusal is
    /// [`ClientError::Rpc`] naming the input method (`elicitation/create`, ..).
    pub async fn result_with(&self, options: RequestOptions) -> Result<CallToolResult, ClientError> {
        let Some(cancel) = options.cancel.clone() else { return self.follow(&options).await };
        tokio::select! {
            result = self.follow(&options) => result,
            () = cancel.cancelled() => Err(ClientError::Cancelled { method: "tools/call".into() }),
        }
    }

    /// The work of [`result_with`](Self::result_with).
    async fn follow(&self, options: &RequestOptions) -> Result<CallToolResult, ClientError> {
        if !self.modern {
            return self.session_result(options).await;
        }
        let mut updates = std::pin::pin!(self.updates());
        // The Tasks extension turns a task's progress into its `statusMessage`; each new one is
        // a progress report of ours, counted (a report's `progress` must rise).
        let mut reported: (u32, Option<String>) = (0, None);
        while let Some(state) = updates.next().await {
            let state = state?;
            if let (Some(progress), Some(message)) = (&options.progress, &state.status_message)
                && !is_terminal(&state.status)
                && reported.1.as_ref() != Some(message)
            {
                reported = (reported.0 + 1, Some(message.clone()));
                progress(ProgressUpdate { progress: f64::from(reported.0), total: None, message: reported.1.clone() });
            }
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
                    let responses = match &options.input {
                        Some((_, handler)) => answer_with(handler, "tasks/get", &state.raw).await?,
                        None => self.client.answer_inputs("tasks/get", &state.raw).await?,
                    };
                    let update = json!({ "taskId": self.id, "inputResponses": responses });
                    self.client.tasks_request("tasks/update", update).await?;
                }
                _ => {}
            }
        }
        Err(ClientError::Protocol(format!("task {}: its updates ended before a terminal state", self.id)))
    }

    /// [`result`](Self::result) of a session's task: `tasks/get` at the suggested interval,
    /// `tasks/result` when the task is terminal or wants input.
    async fn session_result(&self, options: &RequestOptions) -> Result<CallToolResult, ClientError> {
        loop {
            let state = self.state().await?;
            match state.status.as_str() {
                "cancelled" => return Err(ClientError::Cancelled { method: "tools/call".into() }),
                "completed" | "failed" | "input_required" => match self.ask_result(&state, options).await {
                    Err(ClientError::Timeout { .. }) if state.status == "input_required" => {}
                    other => return other,
                },
                _ => {}
            }
            tokio::time::sleep(suggested_poll(&state.raw).unwrap_or(self.poll)).await;
        }
    }

    /// A session's `tasks/result`: what the `tools/call` would have answered (its result, or
    /// its JSON-RPC error as [`ClientError::Rpc`] of `tools/call`, with a failed task's
    /// `statusMessage` as `data` when the error has none). An error there from a task that was
    /// cancelled meanwhile is [`ClientError::Cancelled`].
    async fn ask_result(&self, state: &TaskState, options: &RequestOptions) -> Result<CallToolResult, ClientError> {
        // A terminal task's result is there at once; one that wants input may take as long as
        // it lives.
        let lives = state.raw.get("ttl").and_then(Value::as_f64).filter(|ms| *ms > 0.0);
        let lives =
            lives.filter(|_| state.status == "input_required").map(|ms| Duration::from_secs_f64(ms.min(1e15) / 1e3));
        let least = options.timeout.unwrap_or_else(|| self.client.request_timeout());
        let options = options.clone().timeout(lives.unwrap_or_default().max(least));
        match self.client.request_with("tasks/result", json!({ "taskId": self.id }), options).await {
            Ok(result) => decode("tasks/result", result),
            Err(ClientError::Rpc { mut error, .. }) => match self.state().await {
                Ok(now) if now.status == "cancelled" => Err(ClientError::Cancelled { method: "tools/call".into() }),
                Ok(now) => {
                    // A store that keeps no result for a failed task says why in the status.
                    if let (Some(message), None) = (now.status_message.filter(|_| now.status == "failed"), error.data())
                    {
                        error = Box::new(error.with_data(json!({ "statusMessage": message })));
                    }
                    Err(ClientError::Rpc { method: "tools/call".into(), error })
                }
                Err(_) => Err(ClientError::Rpc { method: "tools/call".into(), error }),
            },
            Err(e) => Err(e),
        }
    }

    /// The task's output decoded as tool `K`'s (see [`ToolCall::output`]).
    ///
    /// Errors: as [`result`](Self::result) and [`ToolCall::output`].
    pub async fn output<K>(&self) -> Result<ToolOutput<K>, ClientError>
    where
        K: ToolDeclaration,
        K::Return: ToolReturn,
        ToolOutput<K>: CallOutput,
    {
        Ok(decode_tool_result::<K>(self.result().await?)?)
    }

    /// A `subscriptions/listen` for this task's `notifications/tasks`, when the server grants
    /// it; `None` when it refuses or grants other ids (polling then carries on alone).
    async fn subscribe(&self) -> Option<Subscription> {
        if !self.modern {
            return None;
        }
        let mut params = json!({ "notifications": { TASK_IDS: [self.id] } });
        self.client.declare_tasks("subscriptions/listen", &mut params).ok()?;
        // A server that neither acknowledges nor refuses cannot hold the first state long.
        match tokio::time::timeout(SUBSCRIBE_WAIT, self.client.listen_with(params)).await.unwrap_or_else(|_| {
            Err(ClientError::Timeout { method: "subscriptions/listen".into(), timeout: SUBSCRIBE_WAIT })
        }) {
            Ok(subscription) => {
                let granted = subscription.granted().extra.get(TASK_IDS).and_then(Value::as_array);
                granted.is_some_and(|ids| ids.iter().any(|id| id.as_str() == Some(&self.id))).then_some(subscription)
            }
            Err(e) => {
                tracing::debug!(target: "switchyard_client", task = %self.id, error = %e, "no task notifications; polling");
                None
            }
        }
    }
}

/// How long a task's subscription may take to be acknowledged before polling goes on alone.
const SUBSCRIBE_WAIT: Duration = Duration::from_secs(5);

/// The Tasks extension's key of `SubscriptionFilter`.
const TASK_IDS: &str = "taskIds";

/// The state of [`TaskHandle::updates`].
struct Follow {
    task: TaskHandle,
    subscription: Option<Subscription>,
    /// Whether the first state was given (and the subscription tried).
    started: bool,
    /// The last state given, without `_meta`.
    last: Option<Value>,
    /// When the next `tasks/get` is due.
    next_poll: Option<tokio::time::Instant>,
    done: bool,
}

impl Follow {
    /// The next state that differs from the last one, or `None` after a terminal one or an
    /// error.
    async fn next(&mut self) -> Option<Result<TaskState, ClientError>> {
        if self.done {
            return None;
        }
        if !self.started {
            self.started = true;
            // Subscribed before the first `tasks/get`, so no change falls between the two.
            self.subscription = self.task.subscribe().await;
            let first = self.task.state().await;
            return Some(self.give(first));
        }
        loop {
            // The next poll is due at a fixed time, however many notifications come before it.
            let poll = self.last.as_ref().and_then(suggested_poll).unwrap_or(self.task.poll);
            let due = *self.next_poll.get_or_insert_with(|| tokio::time::Instant::now() + poll);
            let state = match self.subscription.as_mut() {
                Some(subscription) => tokio::select! {
                    note = subscription.next() => match note {
                        Some(Ok(note)) => match task_note(&note, &self.task.id) {
                            // A terminal state is given with its result or error: a notification
                            // that carries neither is followed by one `tasks/get`.
                            Some(state) if is_terminal(&state.status) && !has_outcome(&state.raw) => {
                                self.task.state().await
                            }
                            Some(state) => Ok(state),
                            None => continue,
                        },
                        // The subscription ended or failed: polling carries on alone.
                        _ => {
                            self.subscription = None;
                            continue;
                        }
                    },
                    () = tokio::time::sleep_until(due) => {
                        self.next_poll = None;
                        self.task.state().await
                    }
                },
                None => {
                    tokio::time::sleep_until(due).await;
                    self.next_poll = None;
                    self.task.state().await
                }
            };
            let unchanged = state.as_ref().is_ok_and(|s| self.last.as_ref() == Some(&without_meta(&s.raw)));
            if !unchanged {
                return Some(self.give(state));
            }
        }
    }

    /// Records `state` as the last one given, and ends the stream after an error or a terminal
    /// status.
    fn give(&mut self, state: Result<TaskState, ClientError>) -> Result<TaskState, ClientError> {
        match &state {
            Ok(s) => {
                self.last = Some(without_meta(&s.raw));
                self.done = is_terminal(&s.status);
            }
            Err(_) => self.done = true,
        }
        if self.done {
            // Ends the listen request at once rather than when the stream is dropped.
            self.subscription = None;
        }
        state
    }
}

/// The state a `notifications/tasks` of task `id` carries (a `DetailedTask`), or `None` for
/// another notification.
fn task_note(note: &switchyard::jsonrpc::Notification, id: &str) -> Option<TaskState> {
    if note.method != "notifications/tasks" {
        return None;
    }
    let raw = note.params.clone()?;
    if raw.get("taskId").and_then(Value::as_str) != Some(id) {
        return None;
    }
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(TaskState { status: text("status")?, status_message: text("statusMessage"), raw: Value::Object(raw) })
}

/// `task` without what differs between a `tasks/get` result and a notification of the same
/// state: `_meta`, and what the 2026-07-28 wire adds to a result (`resultType`, `ttlMs`,
/// `cacheScope`; a task's own TTL is `ttlMs` as well, and never changes).
fn without_meta(task: &Value) -> Value {
    let mut task = task.clone();
    if let Some(object) = task.as_object_mut() {
        for key in ["_meta", "resultType", "ttlMs", "cacheScope"] {
            object.remove(key);
        }
    }
    task
}

/// Whether a task in `status` never changes again.
fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// Whether a terminal task's report carries what it ended with (`result` when completed,
/// `error` when failed; a cancelled task has neither).
fn has_outcome(task: &Value) -> bool {
    match task.get("status").and_then(Value::as_str) {
        Some("completed") => task.get("result").is_some(),
        Some("failed") => task.get("error").is_some(),
        _ => true,
    }
}

/// The poll interval a task result suggests (`pollIntervalMs` on 2026-07-28, `pollInterval`
/// on a session, both in milliseconds), held to 100 ms..60 s.
fn suggested_poll(task: &Value) -> Option<Duration> {
    let ms = task.get("pollIntervalMs").or_else(|| task.get("pollInterval")).and_then(Value::as_f64)?;
    let ms = ms.clamp(MIN_POLL.as_secs_f64() * 1e3, MAX_POLL.as_secs_f64() * 1e3);
    Some(Duration::from_secs_f64(ms / 1e3))
}

/// The poll interval of a new task: its suggestion, else 1 s.
fn poll_interval(task: &Value) -> Duration {
    suggested_poll(task).unwrap_or(DEFAULT_POLL)
}
