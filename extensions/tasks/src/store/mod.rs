//! Where tasks live: the [`TaskStore`] trait, the in-memory store, the durable SQLite store and
//! (feature `postgres`) the PostgreSQL store shared by many instances, with its job queue.

mod memory;
pub(crate) mod metered;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use memory::InMemoryTaskStore;
#[cfg(feature = "postgres")]
pub use postgres::{Job, PostgresTaskStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTaskStore;

use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// A store failure. The extension answers a request whose store call failed with `-32603`; an
/// outcome it could not record is written again with backoff while the process lives (see
/// [`TaskStore::transition`]). Its `Display` is `task store: <message>`; a store outside this
/// crate reports with [`StoreError::unavailable`], [`StoreError::data`] or [`StoreError::other`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The backend failed or could not be reached (connection refused or lost, pool timeout, a
    /// database error, a locked file): the same call may succeed later. `message` says what
    /// could not be done and why; `source` is the backend's own error (a `tokio_postgres::Error`,
    /// a `rusqlite::Error`) for code that inspects it.
    #[error("task store: {message}")]
    Unavailable {
        /// What failed, and the backend's reason.
        message: String,
        /// The backend's error, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// `put` of a task id the store holds already.
    #[error("task store: task id {0} exists already")]
    Exists(String),
    /// Data that cannot be encoded, or a stored record that cannot be read back: retrying does
    /// not help.
    #[error("task store: {0}")]
    Data(String),
    /// The store was set up with something it cannot use (an invalid URL, an empty pool).
    #[error("task store: {0}")]
    Config(String),
    /// Anything else, in the store's own words.
    #[error("task store: {0}")]
    Other(String),
}

impl StoreError {
    /// [`StoreError::Unavailable`] with the backend's error as its source.
    pub fn unavailable(message: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Unavailable { message: message.into(), source: Some(Box::new(source)) }
    }

    /// [`StoreError::Unavailable`] without a source error.
    pub fn unavailable_because(message: impl Into<String>) -> Self {
        StoreError::Unavailable { message: message.into(), source: None }
    }

    /// [`StoreError::Data`].
    pub fn data(message: impl Into<String>) -> Self {
        StoreError::Data(message.into())
    }

    /// [`StoreError::Other`].
    pub fn other(message: impl Into<String>) -> Self {
        StoreError::Other(message.into())
    }

    /// Whether the same call may succeed later (the backend was unreachable or failed).
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}

/// What a state change did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Transition {
    /// The task moved to the new state; the updated record.
    Applied(TaskRecord),
    /// The task is already terminal and was left unchanged (terminal states never change,
    /// [task status](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-status));
    /// its current record.
    Terminal(TaskRecord),
    /// No such task.
    Unknown,
}

/// Persistence of task records, shared by every request of a server (and, for a durable store,
/// by other processes).
///
/// Object-safe: the extension holds an `Arc<dyn TaskStore>`. Implementations must make
/// [`create`](Self::create) visible to [`get`](Self::get) before it returns (the
/// `CreateTaskResult` is sent right after,
/// [task creation](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-creation)),
/// and must apply [`transition`](Self::transition) atomically: check "not terminal" and write in
/// one step, so that a late completion never overwrites `cancelled`.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task.
    ///
    /// Errors: [`StoreError`] when it could not be stored (the caller gets `-32603`).
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>>;

    /// The task `id`, expired or not (the extension applies the TTL); `None` when unknown.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Moves the non-terminal task `id` to `state` (with `status_message`, and
    /// `lastUpdatedAt = now_ms`, never moving it back in time). Stores that keep leases clear
    /// the lease when `state` is terminal: nobody runs the task any more; a terminal state also
    /// drops the task's stored input responses (see
    /// [`put_input_responses`](Self::put_input_responses)).
    ///
    /// The extension writes a task's outcome (a terminal state) again and again, backing off
    /// from 100 ms to 5 s, for as long as this answers [`StoreError`] and the process lives, and
    /// keeps renewing the task's lease meanwhile: a store outage delays an outcome, it does not
    /// lose it. So a write whose answer was lost may be repeated; it then answers `Terminal`
    /// with the state written the first time.
    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>>;

    /// Deletes every task whose TTL has passed at `now_ms`; returns how many were deleted.
    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>>;

    /// Sets the lease of the non-terminal task `id` to `until_ms` (milliseconds since the Unix
    /// epoch), or clears it with `None` (the task waits in a queue and nobody runs it yet).
    /// Returns `false`, changing nothing, when the task is terminal or unknown: the process
    /// running it stops the work then (a `tasks/cancel` on another instance ends up here).
    ///
    /// The default keeps no leases and only reports whether the task is still running; stores
    /// shared by several processes must implement it (see [`TaskRecord::lease_expires_at_ms`]).
    ///
    /// Errors: [`StoreError`] on a store failure.
    fn renew_lease<'a>(&'a self, id: &'a str, until_ms: Option<u64>) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = until_ms;
        Box::pin(async move { Ok(self.get(id).await?.is_some_and(|t| !t.state.is_terminal())) })
    }

    /// Moves every non-terminal task whose lease has passed at `now_ms` to `failed` with
    /// `error` (its process died without recording an outcome), atomically per task as
    /// [`transition`](Self::transition) does; returns the updated records so that the caller
    /// can announce them. Tasks without a lease are left alone.
    ///
    /// The default keeps no leases and fails nothing.
    ///
    /// Errors: [`StoreError`] on a store failure.
    fn fail_expired_leases(&self, now_ms: u64, error: TaskError) -> BoxFuture<'_, Result<Vec<TaskRecord>, StoreError>> {
        let _ = (now_ms, error);
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Sets the `statusMessage` of the task `id` (`None` clears it) and `lastUpdatedAt = now_ms`
    /// (never moving it back), in one atomic step and only while the task is `working`: a task
    /// that waits for input keeps the message of its `input_required` round, and a terminal
    /// task never changes ([task status](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-status)).
    /// Returns the updated record, which the extension announces with `notifications/tasks`,
    /// or `None` when nothing changed: the task is not `working`, or is unknown.
    ///
    /// The extension calls it for a task's progress reports and
    /// [`set_status_message`](crate::set_status_message), at most once per task every 250 ms.
    /// The default changes nothing and answers `None`: a store without it shows no status
    /// messages while tasks run, and loses nothing else.
    ///
    /// Errors: [`StoreError`] on a store failure; nothing changed then.
    fn set_status_message<'a>(
        &'a self,
        id: &'a str,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let _ = (id, status_message, now_ms);
        Box::pin(async { Ok(None) })
    }

    /// Keeps `responses` (the `inputResponses` of a `tasks/update`: `{key: response}`, any JSON
    /// values) for the task `id` until its runner takes them, in one atomic step
    /// ([task update requests](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-update-requests)):
    /// - only while the task is `input_required`, and only the responses whose key is among its
    ///   outstanding `inputRequests`; the others are ignored;
    /// - they are merged with responses stored before and not yet removed;
    /// - their keys leave `inputRequests`; when none is left the task moves to `working`;
    ///   `lastUpdatedAt = now_ms`, never moving back.
    ///
    /// Two `tasks/update` calls for different keys of one task, on any instances, both keep
    /// their responses, and the task ends up with neither key outstanding. The stored responses
    /// stay until [`remove_input_responses`](Self::remove_input_responses), a terminal state or
    /// the TTL purge drops them. Required, with no default: a store that cannot keep them would
    /// lose a client's answers.
    ///
    /// Errors: [`StoreError`] on a store failure; nothing changed then (the extension answers the
    /// `tasks/update` with `-32603`, and the client may send it again).
    fn put_input_responses<'a>(
        &'a self,
        id: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<PutInput, StoreError>>;

    /// The input responses stored for the task `id` by
    /// [`put_input_responses`](Self::put_input_responses) and not yet removed, by key; empty
    /// when there are none or the task is unknown. Reading does not remove them: the runner
    /// removes what it took with [`remove_input_responses`](Self::remove_input_responses) once
    /// it holds them, so an answer lost on the way back from the store (a timed-out statement
    /// that the database still commits) loses no response.
    ///
    /// Errors: [`StoreError`] on a store failure, or stored responses that cannot be read.
    fn input_responses<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Map<String, Value>, StoreError>>;

    /// Removes the stored input responses for `keys` of the task `id`, atomically with respect
    /// to [`put_input_responses`](Self::put_input_responses) (responses for other keys stored
    /// meanwhile stay). Keys without a stored response, and unknown tasks, are no error.
    ///
    /// Errors: [`StoreError`] on a store failure.
    fn remove_input_responses<'a>(&'a self, id: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// What [`TaskStore::put_input_responses`] did with the answers of one `tasks/update`
/// ([task update requests](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-update-requests)).
/// The extension acknowledges `tasks/update` with `{}` in every case but `Unknown`, which it
/// answers with `-32602`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PutInput {
    /// The responses for `keys` (each outstanding until now) are stored; `record` is the task
    /// after the change: `input_required` with the keys still outstanding, or `working`.
    Stored {
        /// The keys whose responses were stored, in the order of the `tasks/update`.
        keys: Vec<String>,
        /// The updated record.
        record: TaskRecord,
    },
    /// Nothing changed: the task is not `input_required` (it runs, or is terminal), or no
    /// response was for an outstanding key; its current record.
    Ignored(TaskRecord),
    /// No such task.
    Unknown,
}

/// The one rule of [`TaskStore::put_input_responses`], for a record and its stored responses
/// read under the store's lock: the task's new state, the merged stored responses and the
/// keys that were stored, or `None` when nothing is to be stored.
pub(crate) fn merge_input(
    record: &TaskRecord,
    stored: &Map<String, Value>,
    responses: Map<String, Value>,
) -> Option<(TaskState, Map<String, Value>, Vec<String>)> {
    let TaskState::InputRequired(outstanding) = &record.state else { return None };
    let mut merged = stored.clone();
    let mut keys = Vec::new();
    for (key, response) in responses {
        if outstanding.contains_key(&key) && !keys.contains(&key) {
            keys.push(key.clone());
            merged.insert(key, response);
        }
    }
    if keys.is_empty() {
        return None;
    }
    let remaining: Map<String, Value> =
        outstanding.iter().filter(|(k, _)| !keys.contains(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let state = if remaining.is_empty() { TaskState::Working } else { TaskState::InputRequired(remaining) };
    Some((state, merged, keys))
}

/// Stored input responses as JSON text (`None` for none), for the SQL stores.
///
/// Errors: [`StoreError`] when they cannot be encoded.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn encode_responses(responses: &Map<String, Value>) -> Result<Option<String>, StoreError> {
    if responses.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(responses)
        .map(Some)
        .map_err(|e| StoreError::data(format!("input responses could not be encoded: {e}")))
}

/// The inverse of [`encode_responses`].
///
/// Errors: [`StoreError`] for text that is not a JSON object (written by something else).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn decode_responses(text: Option<&str>) -> Result<Map<String, Value>, StoreError> {
    match text.map(serde_json::from_str::<Value>) {
        None => Ok(Map::new()),
        Some(Ok(Value::Object(m))) => Ok(m),
        Some(Ok(other)) => Err(StoreError::data(format!("stored input responses are not an object: {other}"))),
        Some(Err(e)) => Err(StoreError::data(format!("stored input responses are unreadable: {e}"))),
    }
}

/// The column values of a state: its wire status and, for the states that carry data, that data
/// as JSON text (`inputRequests`, the result, or the error object). Shared by the SQL stores.
///
/// Errors: [`StoreError`] when the data cannot be encoded as JSON.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn encode_state(state: &TaskState) -> Result<(&'static str, Option<String>), StoreError> {
    let payload = match state {
        TaskState::Working | TaskState::Cancelled => None,
        TaskState::InputRequired(m) => Some(serde_json::to_string(m)),
        TaskState::Completed(v) => Some(serde_json::to_string(v)),
        TaskState::Failed(e) => Some(serde_json::to_string(e)),
    };
    let payload = payload.transpose().map_err(|e| StoreError::data(format!("task state could not be encoded: {e}")))?;
    Ok((state.status(), payload))
}

/// The inverse of [`encode_state`].
///
/// Errors: [`StoreError`] for an unknown status or a payload that does not fit it (a row
/// written by something else).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn decode_state(status: &str, payload: Option<&str>) -> Result<TaskState, StoreError> {
    let bad = |e: String| StoreError::data(format!("stored task state is unreadable ({status}): {e}"));
    let json = || -> Result<Value, StoreError> {
        serde_json::from_str(payload.unwrap_or("null")).map_err(|e| bad(e.to_string()))
    };
    Ok(match status {
        "working" => TaskState::Working,
        "cancelled" => TaskState::Cancelled,
        "input_required" => match json()? {
            Value::Object(m) => TaskState::InputRequired(m),
            other => return Err(bad(format!("inputRequests is not an object: {other}"))),
        },
        "completed" => TaskState::Completed(json()?),
        "failed" => TaskState::Failed(serde_json::from_value(json()?).map_err(|e| bad(e.to_string()))?),
        other => return Err(bad(format!("unknown status {other:?}"))),
    })
}

/// A time or duration in milliseconds as an SQL `BIGINT`. Values past `i64::MAX` (292 million
/// years) are stored as `i64::MAX` rather than wrapping to a negative number, which would make
/// a task expire at once.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn to_sql(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The inverse of [`to_sql`]; a negative value (written by something else) reads as 0.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn from_sql(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}
