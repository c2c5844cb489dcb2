//! Where tasks live: the [`TaskStore`] trait, the in-memory store, the durable SQLite store and
//! (feature `postgres`) the PostgreSQL store shared by many instances, with its job queue.

mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;

pub use memory::InMemoryTaskStore;
#[cfg(feature = "postgres")]
pub use postgres::{Job, PostgresJobExecutor, PostgresTaskStore};
pub use sqlite::SqliteTaskStore;

use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use serde_json::Value;

/// A store failure (the store is down, the database is locked or corrupt, ...). The extension
/// answers a failed `create` with `-32603` and, when recording an outcome fails, tries once more to
/// mark the task `failed`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

/// What a state change did.
#[derive(Debug, Clone, PartialEq)]
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
    /// the lease when `state` is terminal: nobody runs the task any more.
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
}

/// The column values of a state: its wire status and, for the states that carry data, that data
/// as JSON text (`inputRequests`, the result, or the error object). Shared by the SQL stores.
///
/// Errors: [`StoreError`] when the data cannot be encoded as JSON.
pub(crate) fn encode_state(state: &TaskState) -> Result<(&'static str, Option<String>), StoreError> {
    let payload = match state {
        TaskState::Working | TaskState::Cancelled => None,
        TaskState::InputRequired(m) => Some(serde_json::to_string(m)),
        TaskState::Completed(v) => Some(serde_json::to_string(v)),
        TaskState::Failed(e) => Some(serde_json::to_string(e)),
    };
    let payload = payload.transpose().map_err(|e| StoreError(format!("task state could not be encoded: {e}")))?;
    Ok((state.status(), payload))
}

/// The inverse of [`encode_state`].
///
/// Errors: [`StoreError`] for an unknown status or a payload that does not fit it (a row
/// written by something else).
pub(crate) fn decode_state(status: &str, payload: Option<&str>) -> Result<TaskState, StoreError> {
    let bad = |e: String| StoreError(format!("stored task state is unreadable ({status}): {e}"));
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
pub(crate) fn to_sql(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// The inverse of [`to_sql`]; a negative value (written by something else) reads as 0.
pub(crate) fn from_sql(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}
