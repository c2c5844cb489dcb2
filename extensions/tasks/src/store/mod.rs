//! Where tasks live: the [`TaskStore`] trait, the in-memory store and the durable SQLite store.

mod memory;
mod sqlite;

pub use memory::InMemoryTaskStore;
pub use sqlite::SqliteTaskStore;

use crate::model::{TaskRecord, TaskState};
use futures::future::BoxFuture;

/// A store failure (the store is down, the database is locked or corrupt, ...). The extension
/// answers a failed `create` with `-32603` (requirement D26) and, when recording an outcome
/// fails, tries once more to mark the task `failed` (D25).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("task store: {0}")]
pub struct StoreError(pub String);

/// What a state change did.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    /// The task moved to the new state; the updated record.
    Applied(TaskRecord),
    /// The task is already terminal and was left unchanged (terminal states never change,
    /// spec digest §3.10); its current record.
    Terminal(TaskRecord),
    /// No such task.
    Unknown,
}

/// Persistence of task records, shared by every request of a server (and, for a durable store,
/// by other processes).
///
/// Object-safe: the extension holds an `Arc<dyn TaskStore>`. Implementations must make
/// [`create`](Self::create) visible to [`get`](Self::get) before it returns (the
/// `CreateTaskResult` is sent right after, spec digest §3.5), and must apply
/// [`transition`](Self::transition) atomically: check "not terminal" and write in one step, so
/// that a late completion never overwrites `cancelled`.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task.
    ///
    /// Errors: [`StoreError`] when it could not be stored (the caller gets `-32603`).
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>>;

    /// The task `id`, expired or not (the extension applies the TTL); `None` when unknown.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Moves the non-terminal task `id` to `state` (with `status_message`, and
    /// `lastUpdatedAt = now_ms`).
    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>>;

    /// Deletes every task whose TTL has passed at `now_ms`; returns how many were deleted.
    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>>;
}
