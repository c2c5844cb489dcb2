//! The task record and its wire shapes
//! ([Tasks extension specification](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md)):
//! `Task`, `DetailedTask`, `CreateTaskResult`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::time::{SystemTime, UNIX_EPOCH};
use switchyard::McpError;

/// A JSON-RPC error object as stored in a `failed` task: `{code, message, data?}`.
///
/// Deliberately exhaustive: its fields are the JSON-RPC error object's, which JSON-RPC 2.0
/// fixes, and a [`TaskStore`](crate::TaskStore) outside this crate writes and reads each of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskError {
    /// The JSON-RPC error code, e.g. `-32603`.
    pub code: i64,
    /// A human-readable message.
    pub message: String,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl TaskError {
    /// An internal error (`-32603`) with `message`.
    pub fn internal(message: impl Into<String>) -> Self {
        TaskError { code: -32603, message: message.into(), data: None }
    }
}

impl From<&McpError> for TaskError {
    fn from(e: &McpError) -> Self {
        TaskError { code: e.code().0 as i64, message: e.message().to_owned(), data: e.data().cloned() }
    }
}

/// Where a task is in its life
/// ([task status](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-status)):
/// `working` ↔ `input_required`, then one of the terminal states, which never change.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskState {
    /// Running (`"working"`).
    Working,
    /// Waiting for the client (`"input_required"`): the outstanding `inputRequests`, by key.
    InputRequired(Map<String, Value>),
    /// Finished (`"completed"`): the result the original request would have returned (for
    /// `tools/call` a `CallToolResult`, possibly with `isError: true`).
    Completed(Value),
    /// Ended by a JSON-RPC (protocol) error (`"failed"`).
    Failed(TaskError),
    /// Cancelled through `tasks/cancel` (`"cancelled"`).
    Cancelled,
}

impl TaskState {
    /// The wire name of the status: `working`, `input_required`, `completed`, `failed`,
    /// `cancelled`.
    pub fn status(&self) -> &'static str {
        match self {
            TaskState::Working => "working",
            TaskState::InputRequired(_) => "input_required",
            TaskState::Completed(_) => "completed",
            TaskState::Failed(_) => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// True for `completed`, `failed` and `cancelled`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskState::Completed(_) | TaskState::Failed(_) | TaskState::Cancelled)
    }
}

/// One task as a [`TaskStore`](crate::TaskStore) keeps it.
///
/// Deliberately exhaustive, unlike the other public types: it is the storage contract, and a
/// store outside this crate builds it from its rows field by field. A field added in a later
/// release must break that store's build, so that it persists the field, rather than compile
/// and silently drop it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task id: 128 random bits from the OS CSPRNG, 32 lowercase hex digits after `t_`.
    pub id: String,
    /// The id of the principal that created it (`None`: an anonymous caller). Only the same caller
    /// may read, update, cancel or subscribe to it
    /// ([Tasks security considerations](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#security-considerations)).
    pub owner: Option<String>,
    /// The current state.
    pub state: TaskState,
    /// Optional human-readable status (`statusMessage`).
    pub status_message: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Time of the last change, milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// Time to live in milliseconds, counted from creation; `None` is unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval in milliseconds.
    pub poll_interval_ms: Option<u64>,
    /// Until when (milliseconds since the Unix epoch) the process running the task vouches for
    /// it; the process renews the lease while the work runs. A non-terminal task whose lease
    /// has passed is failed by [`TaskStore::fail_expired_leases`](crate::TaskStore::fail_expired_leases):
    /// its process died. `None`: nobody runs it yet (a job waiting in a queue) or the store
    /// keeps no leases; such a task never expires by lease. Not on the wire.
    pub lease_expires_at_ms: Option<u64>,
}

impl TaskRecord {
    /// True once `created_at + ttl` has passed at `now_ms`
    /// ([task polling](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-polling)
    /// says what a TTL allows).
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.ttl_ms.is_some_and(|ttl| now_ms >= self.created_at_ms.saturating_add(ttl))
    }

    /// The `Task` fields: `taskId`, `status`, `statusMessage?`, `createdAt`, `lastUpdatedAt`
    /// (ISO 8601, UTC, milliseconds), `ttlMs` (integer or `null`), `pollIntervalMs?`.
    pub fn task_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("taskId".into(), json!(self.id));
        m.insert("status".into(), json!(self.state.status()));
        if let Some(s) = &self.status_message {
            m.insert("statusMessage".into(), json!(s));
        }
        m.insert("createdAt".into(), json!(iso8601(self.created_at_ms)));
        m.insert("lastUpdatedAt".into(), json!(iso8601(self.last_updated_at_ms)));
        m.insert("ttlMs".into(), json!(self.ttl_ms));
        if let Some(p) = self.poll_interval_ms {
            m.insert("pollIntervalMs".into(), json!(p));
        }
        m
    }

    /// The `DetailedTask` (used by `tasks/get` and `notifications/tasks`): the `Task` fields,
    /// plus `inputRequests` (input_required), `result` (completed) or `error` (failed).
    pub fn detailed_json(&self) -> Map<String, Value> {
        let mut m = self.task_json();
        match &self.state {
            TaskState::InputRequired(requests) => {
                m.insert("inputRequests".into(), Value::Object(requests.clone()));
            }
            TaskState::Completed(result) => {
                m.insert("result".into(), result.clone());
            }
            TaskState::Failed(error) => {
                m.insert("error".into(), json!(error));
            }
            TaskState::Working | TaskState::Cancelled => {}
        }
        m
    }

    /// The flat `CreateTaskResult`: the `Task` fields and `resultType: "task"`.
    pub fn create_result_json(&self) -> Value {
        let mut m = self.task_json();
        m.insert("resultType".into(), json!("task"));
        Value::Object(m)
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `2026-08-01T12:00:00.000Z` for a time in milliseconds since the Unix epoch.
pub fn iso8601(ms: u64) -> String {
    let t = time::OffsetDateTime::UNIX_EPOCH + time::Duration::milliseconds(ms as i64);
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    t.format(&format).unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_785_585_600_123), "2026-08-01T12:00:00.123Z");
    }

    #[test]
    fn expiry_counts_from_creation() {
        let r = TaskRecord {
            id: "t".into(),
            owner: None,
            state: TaskState::Working,
            status_message: None,
            created_at_ms: 1000,
            last_updated_at_ms: 1000,
            ttl_ms: Some(50),
            poll_interval_ms: None,
            lease_expires_at_ms: None,
        };
        assert!(!r.is_expired(1049));
        assert!(r.is_expired(1050));
        assert!(!TaskRecord { ttl_ms: None, ..r }.is_expired(u64::MAX));
    }
}
