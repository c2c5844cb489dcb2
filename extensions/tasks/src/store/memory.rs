//! The process-local store: a map behind a mutex. Fast, and lost when the process ends.

use super::{StoreError, TaskStore, Transition};
use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::Mutex;

/// Tasks in memory (the default store). Nothing survives a restart; use
/// [`SqliteTaskStore`](super::SqliteTaskStore) for that.
#[derive(Debug, Default)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        // A poisoned lock only means a panic elsewhere mid-update of one entry; the map is intact.
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut tasks = self.lock();
        let result = if tasks.contains_key(&task.id) {
            Err(StoreError(format!("task id {} exists already", task.id)))
        } else {
            tasks.insert(task.id.clone(), task);
            Ok(())
        };
        Box::pin(async move { result })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let found = self.lock().get(id).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let mut tasks = self.lock();
        let outcome = match tasks.get_mut(id) {
            None => Transition::Unknown,
            Some(t) if t.state.is_terminal() => Transition::Terminal(t.clone()),
            Some(t) => {
                if state.is_terminal() {
                    // Nobody runs a finished task: a lease would only mislead a reader.
                    t.lease_expires_at_ms = None;
                }
                t.state = state;
                t.status_message = status_message;
                t.last_updated_at_ms = now_ms.max(t.last_updated_at_ms);
                Transition::Applied(t.clone())
            }
        };
        Box::pin(async move { Ok(outcome) })
    }

    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        let mut tasks = self.lock();
        let before = tasks.len();
        tasks.retain(|_, t| !t.is_expired(now_ms));
        let n = before - tasks.len();
        Box::pin(async move { Ok(n) })
    }

    fn renew_lease<'a>(&'a self, id: &'a str, until_ms: Option<u64>) -> BoxFuture<'a, Result<bool, StoreError>> {
        let renewed = match self.lock().get_mut(id) {
            Some(t) if !t.state.is_terminal() => {
                t.lease_expires_at_ms = until_ms;
                true
            }
            _ => false,
        };
        Box::pin(async move { Ok(renewed) })
    }

    fn fail_expired_leases(&self, now_ms: u64, error: TaskError) -> BoxFuture<'_, Result<Vec<TaskRecord>, StoreError>> {
        let mut failed = Vec::new();
        for t in self.lock().values_mut() {
            if !t.state.is_terminal() && t.lease_expires_at_ms.is_some_and(|until| until <= now_ms) {
                t.status_message = Some(error.message.clone());
                t.state = TaskState::Failed(error.clone());
                t.lease_expires_at_ms = None;
                t.last_updated_at_ms = now_ms.max(t.last_updated_at_ms);
                failed.push(t.clone());
            }
        }
        Box::pin(async move { Ok(failed) })
    }
}
