//! The process-local store: a map behind a mutex. Fast, and lost when the process ends.

use super::{PutInput, StoreError, TaskStore, Transition, merge_input};
use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;

/// Tasks in memory (the default store). Nothing survives a restart; use
/// `SqliteTaskStore` (feature `sqlite`) for that.
#[derive(Debug, Default)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, Entry>>,
}

/// One task and the input responses stored for it.
#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    answers: Map<String, Value>,
}

impl Entry {
    /// Ends the task with `state`: nobody runs it any more, so a lease would only mislead a
    /// reader, and nobody will take its answers.
    fn end(&mut self, state: TaskState, status_message: Option<String>, now_ms: u64) {
        self.record.lease_expires_at_ms = None;
        self.answers.clear();
        self.record.state = state;
        self.record.status_message = status_message;
        self.record.last_updated_at_ms = now_ms.max(self.record.last_updated_at_ms);
    }
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A poisoned lock only means a panic elsewhere mid-update of one entry; the map is intact.
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut tasks = self.lock();
        let result = if tasks.contains_key(&task.id) {
            Err(StoreError::Exists(task.id.clone()))
        } else {
            tasks.insert(task.id.clone(), Entry { record: task, answers: Map::new() });
            Ok(())
        };
        Box::pin(async move { result })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let found = self.lock().get(id).map(|e| e.record.clone());
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
            Some(e) if e.record.state.is_terminal() => Transition::Terminal(e.record.clone()),
            Some(e) if state.is_terminal() => {
                e.end(state, status_message, now_ms);
                Transition::Applied(e.record.clone())
            }
            Some(e) => {
                let t = &mut e.record;
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
        tasks.retain(|_, e| !e.record.is_expired(now_ms));
        let n = before - tasks.len();
        Box::pin(async move { Ok(n) })
    }

    fn renew_lease<'a>(&'a self, id: &'a str, until_ms: Option<u64>) -> BoxFuture<'a, Result<bool, StoreError>> {
        let renewed = match self.lock().get_mut(id) {
            Some(e) if !e.record.state.is_terminal() => {
                e.record.lease_expires_at_ms = until_ms;
                true
            }
            _ => false,
        };
        Box::pin(async move { Ok(renewed) })
    }

    fn fail_expired_leases(&self, now_ms: u64, error: TaskError) -> BoxFuture<'_, Result<Vec<TaskRecord>, StoreError>> {
        let mut failed = Vec::new();
        for e in self.lock().values_mut() {
            if !e.record.state.is_terminal() && e.record.lease_expires_at_ms.is_some_and(|until| until <= now_ms) {
                e.end(TaskState::Failed(error.clone()), Some(error.message.clone()), now_ms);
                failed.push(e.record.clone());
            }
        }
        Box::pin(async move { Ok(failed) })
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a str,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let updated = match self.lock().get_mut(id) {
            Some(e) if e.record.state == TaskState::Working => {
                e.record.status_message = status_message;
                e.record.last_updated_at_ms = now_ms.max(e.record.last_updated_at_ms);
                Some(e.record.clone())
            }
            _ => None,
        };
        Box::pin(async move { Ok(updated) })
    }

    fn put_input_responses<'a>(
        &'a self,
        id: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<PutInput, StoreError>> {
        let outcome = match self.lock().get_mut(id) {
            None => PutInput::Unknown,
            Some(e) => match merge_input(&e.record, &e.answers, responses) {
                None => PutInput::Ignored(e.record.clone()),
                Some((state, answers, keys)) => {
                    e.answers = answers;
                    e.record.state = state;
                    e.record.last_updated_at_ms = now_ms.max(e.record.last_updated_at_ms);
                    PutInput::Stored { keys, record: e.record.clone() }
                }
            },
        };
        Box::pin(async move { Ok(outcome) })
    }

    fn input_responses<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Map<String, Value>, StoreError>> {
        let answers = self.lock().get(id).map(|e| e.answers.clone()).unwrap_or_default();
        Box::pin(async move { Ok(answers) })
    }

    fn remove_input_responses<'a>(&'a self, id: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), StoreError>> {
        if let Some(e) = self.lock().get_mut(id) {
            for key in keys {
                e.answers.remove(key);
            }
        }
        Box::pin(async { Ok(()) })
    }
}
