//! The durable store: one SQLite database file (WAL mode), shared safely by several processes.

use super::{StoreError, TaskStore, Transition};
use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use rusqlite::{Connection, ErrorCode, OptionalExtension, params};
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS switchyard_tasks (
    id TEXT PRIMARY KEY NOT NULL,
    owner TEXT,
    status TEXT NOT NULL,
    payload TEXT,
    status_message TEXT,
    created_at_ms INTEGER NOT NULL,
    last_updated_at_ms INTEGER NOT NULL,
    ttl_ms INTEGER,
    poll_interval_ms INTEGER
);
CREATE INDEX IF NOT EXISTS switchyard_tasks_expiry ON switchyard_tasks (created_at_ms);
";

const TERMINAL: &str = "('completed', 'failed', 'cancelled')";

/// Tasks in an SQLite database file, so that they survive a restart and can be shared with
/// worker processes (an executor that hands tasks to another process, which records the
/// outcome through its own `SqliteTaskStore` on the same file).
///
/// Guarantees:
/// - [`create`](TaskStore::create) returns once the row is committed: a `tasks/get` from any
///   process sees it.
/// - Transitions are one conditional `UPDATE ... WHERE status NOT IN (terminal)`, atomic across
///   processes, so a terminal state is never overwritten.
/// - After a crash or restart, [`recover_interrupted`](Self::recover_interrupted) marks the
///   tasks that were still `working` or `input_required` as `failed` (-32603, "the server
///   stopped while the task was running"), so they are reported, never lost; completed results
///   stay readable until their TTL passes.
///
/// Each call runs on Tokio's blocking pool; the connection waits up to 5 s for a lock held by
/// another process.
#[derive(Debug, Clone)]
pub struct SqliteTaskStore {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteTaskStore {
    /// Opens (creating if needed) the database at `path` and its table. Does not touch existing
    /// tasks: a worker process opens the server's store this way.
    ///
    /// Errors: [`StoreError`] when the file cannot be opened or the schema not created.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(LOCK_WAIT).map_err(err)?;
        init(&conn).map_err(err)?;
        Ok(SqliteTaskStore { conn: Arc::new(Mutex::new(conn)) })
    }

    /// Opens the store for the server that owns its tasks: [`open`](Self::open), then
    /// [`recover_interrupted`](Self::recover_interrupted). Call it once at start-up.
    ///
    /// Errors: as `open`.
    pub fn open_for_server(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let store = Self::open(path)?;
        store.recover_interrupted(crate::model::now_ms())?;
        Ok(store)
    }

    /// Marks every task still `working` or `input_required` as `failed` with `-32603`: their
    /// execution ended with the previous process. Returns how many were marked.
    ///
    /// Errors: [`StoreError`] on a database failure.
    pub fn recover_interrupted(&self, now_ms: u64) -> Result<usize, StoreError> {
        let error = TaskError::internal("the server stopped while the task was running; run the tool again");
        let payload = serde_json::to_string(&error).map_err(|e| StoreError(e.to_string()))?;
        let conn = self.lock();
        conn.execute(
            "UPDATE switchyard_tasks SET status = 'failed', payload = ?1, status_message = ?2, last_updated_at_ms = ?3
             WHERE status IN ('working', 'input_required')",
            params![payload, error.message, now_ms as i64],
        )
        .map_err(err)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A poisoned lock means a panic during a statement; SQLite rolled it back, the
        // connection is still consistent.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        let conn = self.conn.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let c = conn.lock().unwrap_or_else(|e| e.into_inner());
                f(&c)
            })
            .await
            .map_err(|e| StoreError(format!("store worker failed: {e}")))?
        })
    }
}

/// How long a statement waits for a lock another connection or process holds.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Switches the file to WAL and creates the table, retrying while another opener holds it.
///
/// A fresh file starts in rollback-journal mode, where two connections that both read and then
/// want to write would deadlock; SQLite answers one of them "database is locked" at once
/// instead of calling the busy handler. Server and worker processes starting together hit
/// exactly that, so the whole step is retried until [`LOCK_WAIT`] has passed.
fn init(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = Instant::now() + LOCK_WAIT;
    let mut pause = Duration::from_millis(1);
    loop {
        // WAL lets readers in other processes proceed while one writes.
        let attempt = conn.pragma_update(None, "journal_mode", "WAL").and_then(|()| conn.execute_batch(SCHEMA));
        match attempt {
            Err(e) if is_busy(&e) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

fn err(e: rusqlite::Error) -> StoreError {
    StoreError(e.to_string())
}

fn encode(state: &TaskState) -> Result<(&'static str, Option<String>), StoreError> {
    let payload = match state {
        TaskState::Working | TaskState::Cancelled => None,
        TaskState::InputRequired(m) => Some(serde_json::to_string(m)),
        TaskState::Completed(v) => Some(serde_json::to_string(v)),
        TaskState::Failed(e) => Some(serde_json::to_string(e)),
    };
    let payload = payload.transpose().map_err(|e| StoreError(format!("task state could not be encoded: {e}")))?;
    Ok((state.status(), payload))
}

fn decode(status: &str, payload: Option<String>) -> Result<TaskState, StoreError> {
    let bad = |e: String| StoreError(format!("stored task state is unreadable ({status}): {e}"));
    let json = || -> Result<Value, StoreError> {
        serde_json::from_str(payload.as_deref().unwrap_or("null")).map_err(|e| bad(e.to_string()))
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

fn read(conn: &Connection, id: &str) -> Result<Option<TaskRecord>, StoreError> {
    let row = conn
        .query_row(
            "SELECT owner, status, payload, status_message, created_at_ms, last_updated_at_ms, ttl_ms, poll_interval_ms
             FROM switchyard_tasks WHERE id = ?1",
            params![id],
            |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, Option<i64>>(6)?,
                    r.get::<_, Option<i64>>(7)?,
                ))
            },
        )
        .optional()
        .map_err(err)?;
    let Some((owner, status, payload, status_message, created, updated, ttl, poll)) = row else {
        return Ok(None);
    };
    Ok(Some(TaskRecord {
        id: id.to_owned(),
        owner,
        state: decode(&status, payload)?,
        status_message,
        created_at_ms: created.max(0) as u64,
        last_updated_at_ms: updated.max(0) as u64,
        ttl_ms: ttl.map(|t| t.max(0) as u64),
        poll_interval_ms: poll.map(|p| p.max(0) as u64),
    }))
}

impl TaskStore for SqliteTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.blocking(move |c| {
            let (status, payload) = encode(&task.state)?;
            c.execute(
                "INSERT INTO switchyard_tasks
                 (id, owner, status, payload, status_message, created_at_ms, last_updated_at_ms, ttl_ms, poll_interval_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    task.id,
                    task.owner,
                    status,
                    payload,
                    task.status_message,
                    task.created_at_ms as i64,
                    task.last_updated_at_ms as i64,
                    task.ttl_ms.map(|t| t as i64),
                    task.poll_interval_ms.map(|p| p as i64),
                ],
            )
            .map_err(err)?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |c| read(c, &id))
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |c| {
            let (status, payload) = encode(&state)?;
            let changed = c
                .execute(
                    &format!(
                        "UPDATE switchyard_tasks SET status = ?2, payload = ?3, status_message = ?4,
                         last_updated_at_ms = MAX(last_updated_at_ms, ?5)
                         WHERE id = ?1 AND status NOT IN {TERMINAL}"
                    ),
                    params![id, status, payload, status_message, now_ms as i64],
                )
                .map_err(err)?;
            Ok(match (changed, read(c, &id)?) {
                (_, None) => Transition::Unknown,
                (0, Some(t)) => Transition::Terminal(t),
                (_, Some(t)) => Transition::Applied(t),
            })
        })
    }

    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        self.blocking(move |c| {
            c.execute(
                "DELETE FROM switchyard_tasks WHERE ttl_ms IS NOT NULL AND created_at_ms + ttl_ms <= ?1",
                params![now_ms as i64],
            )
            .map_err(err)
        })
    }
}
