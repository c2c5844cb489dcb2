//! The durable store: one SQLite database file (WAL mode), shared safely by several processes.

use super::{
    PutInput, StoreError, TaskStore, Transition, decode_responses, decode_state, encode_responses, encode_state,
    from_sql, merge_input, to_sql,
};
use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use rusqlite::{Connection, ErrorCode, OptionalExtension, Row, Transaction, TransactionBehavior, params};
use serde_json::{Map, Value};
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

/// Columns added after the first release, with their types: [`init`] adds each one a file
/// lacks, so a file written by an older version keeps its tasks. `input_responses` holds the
/// `tasks/update` answers not yet taken by the task's runner, as a JSON object in text.
const LATER_COLUMNS: &[(&str, &str)] = &[("lease_expires_at_ms", "INTEGER"), ("input_responses", "TEXT")];

/// Indexes over later columns, created once those exist. The lease index holds only tasks that
/// can still expire by lease, so `fail_expired_leases` never scans finished tasks.
const LATER_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS switchyard_tasks_lease ON switchyard_tasks (lease_expires_at_ms)
    WHERE status IN ('working', 'input_required') AND lease_expires_at_ms IS NOT NULL;
";

/// The columns of a task in the order [`record_from_row`] reads them.
const COLUMNS: &str = "id, owner, status, payload, status_message, created_at_ms, last_updated_at_ms, ttl_ms,
    poll_interval_ms, lease_expires_at_ms";

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
/// - Leases ([`TaskStore::renew_lease`], [`TaskStore::fail_expired_leases`]) are kept in a
///   `lease_expires_at_ms` column; a transition to a terminal state clears it.
/// - `tasks/update` answers ([`TaskStore::put_input_responses`]) are kept in an
///   `input_responses` column (JSON text) until the runner removes them or the task ends; each
///   change of them is one `BEGIN IMMEDIATE` transaction, atomic across processes.
/// - A file from an older version gains the later columns when it is opened.
/// - Times and durations are stored as SQLite integers (milliseconds); values past `i64::MAX`
///   are stored as `i64::MAX`.
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
        let payload = serde_json::to_string(&error)
            .map_err(|e| StoreError::data(format!("task error could not be encoded: {e}")))?;
        let conn = self.lock();
        conn.execute(
            "UPDATE switchyard_tasks SET status = 'failed', payload = ?1, status_message = ?2,
             last_updated_at_ms = MAX(last_updated_at_ms, ?3), lease_expires_at_ms = NULL,
             input_responses = NULL
             WHERE status IN ('working', 'input_required')",
            params![payload, error.message, to_sql(now_ms)],
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
            .map_err(|e| StoreError::unavailable("the SQLite store worker failed", e))?
        })
    }
}

/// How long a statement waits for a lock another connection or process holds.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Switches the file to WAL and creates or upgrades the table, retrying while another opener
/// holds it.
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
        let attempt = conn.pragma_update(None, "journal_mode", "WAL").and_then(|()| migrate(conn));
        match attempt {
            Err(e) if is_busy(&e) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// Creates the table, then adds the [`LATER_COLUMNS`] it lacks and their indexes, in one
/// write transaction: two processes opening an old file at once would otherwise both see a
/// column missing and the second `ALTER TABLE` would fail with "duplicate column".
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = (|| {
        conn.execute_batch(SCHEMA)?;
        let present = {
            let mut columns = conn.prepare("SELECT name FROM pragma_table_info('switchyard_tasks')")?;
            columns.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<Vec<_>>>()?
        };
        for (name, kind) in LATER_COLUMNS {
            if !present.iter().any(|p| p == name) {
                conn.execute_batch(&format!("ALTER TABLE switchyard_tasks ADD COLUMN {name} {kind}"))?;
            }
        }
        conn.execute_batch(LATER_INDEXES)
    })();
    match done {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            // The rollback can only fail when the transaction is already gone; the first error
            // is the one worth reporting.
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

fn err(e: rusqlite::Error) -> StoreError {
    use rusqlite::Error::{FromSqlConversionFailure, IntegralValueOutOfRange, InvalidColumnType};
    match e {
        // A stored value of the wrong type or range: the row, not the database.
        FromSqlConversionFailure(..) | IntegralValueOutOfRange(..) | InvalidColumnType(..) => {
            StoreError::data(format!("SQLite: a stored row is unreadable: {e}"))
        }
        e => StoreError::Unavailable { message: format!("SQLite: {e}"), source: Some(Box::new(e)) },
    }
}

/// A task from a row selected with [`COLUMNS`].
fn record_from_row(r: &Row<'_>) -> rusqlite::Result<Result<TaskRecord, StoreError>> {
    let status: String = r.get(2)?;
    let payload: Option<String> = r.get(3)?;
    let state = match decode_state(&status, payload.as_deref()) {
        Ok(state) => state,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(TaskRecord {
        id: r.get(0)?,
        owner: r.get(1)?,
        state,
        status_message: r.get(4)?,
        created_at_ms: from_sql(r.get(5)?),
        last_updated_at_ms: from_sql(r.get(6)?),
        ttl_ms: r.get::<_, Option<i64>>(7)?.map(from_sql),
        poll_interval_ms: r.get::<_, Option<i64>>(8)?.map(from_sql),
        lease_expires_at_ms: r.get::<_, Option<i64>>(9)?.map(from_sql),
    }))
}

/// Runs `f` in a write transaction (`BEGIN IMMEDIATE`: the write lock first, so two processes
/// reading and then writing the same row never interleave), committed when `f` answers `Ok`.
fn write_transaction<T>(
    conn: &Connection,
    f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(err)?;
    let value = f(&tx)?;
    tx.commit().map_err(err)?;
    Ok(value)
}

/// The stored input responses of task `id`; `None` when the task is unknown.
fn read_responses(conn: &Connection, id: &str) -> Result<Option<Map<String, Value>>, StoreError> {
    let text: Option<Option<String>> = conn
        .query_row("SELECT input_responses FROM switchyard_tasks WHERE id = ?1", params![id], |r| r.get(0))
        .optional()
        .map_err(err)?;
    text.map(|t| decode_responses(t.as_deref())).transpose()
}

fn read(conn: &Connection, id: &str) -> Result<Option<TaskRecord>, StoreError> {
    conn.query_row(&format!("SELECT {COLUMNS} FROM switchyard_tasks WHERE id = ?1"), params![id], record_from_row)
        .optional()
        .map_err(err)?
        .transpose()
}

impl TaskStore for SqliteTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.blocking(move |c| {
            let (status, payload) = encode_state(&task.state)?;
            let inserted = c.execute(
                &format!("INSERT INTO switchyard_tasks ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
                params![
                    task.id,
                    task.owner,
                    status,
                    payload,
                    task.status_message,
                    to_sql(task.created_at_ms),
                    to_sql(task.last_updated_at_ms),
                    task.ttl_ms.map(to_sql),
                    task.poll_interval_ms.map(to_sql),
                    task.lease_expires_at_ms.map(to_sql),
                ],
            );
            match inserted {
                Ok(_) => Ok(()),
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
                {
                    Err(StoreError::Exists(task.id.clone()))
                }
                Err(e) => Err(err(e)),
            }
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
            let (status, payload) = encode_state(&state)?;
            let changed = c
                .execute(
                    &format!(
                        "UPDATE switchyard_tasks SET status = ?2, payload = ?3, status_message = ?4,
                         last_updated_at_ms = MAX(last_updated_at_ms, ?5),
                         lease_expires_at_ms = CASE WHEN ?6 THEN NULL ELSE lease_expires_at_ms END,
                         input_responses = CASE WHEN ?6 THEN NULL ELSE input_responses END
                         WHERE id = ?1 AND status NOT IN {TERMINAL}"
                    ),
                    params![id, status, payload, status_message, to_sql(now_ms), state.is_terminal()],
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
            // `ttl_ms <= now - created_at_ms` rather than `created_at_ms + ttl_ms <= now`: the sum
            // of a huge TTL and the creation time would leave the integer range.
            c.execute(
                "DELETE FROM switchyard_tasks WHERE ttl_ms IS NOT NULL AND ttl_ms <= ?1 - created_at_ms",
                params![to_sql(now_ms)],
            )
            .map_err(err)
        })
    }

    fn renew_lease<'a>(&'a self, id: &'a str, until_ms: Option<u64>) -> BoxFuture<'a, Result<bool, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |c| {
            let changed = c
                .execute(
                    &format!(
                        "UPDATE switchyard_tasks SET lease_expires_at_ms = ?2 WHERE id = ?1 AND status NOT IN {TERMINAL}"
                    ),
                    params![id, until_ms.map(to_sql)],
                )
                .map_err(err)?;
            Ok(changed > 0)
        })
    }

    fn fail_expired_leases(&self, now_ms: u64, error: TaskError) -> BoxFuture<'_, Result<Vec<TaskRecord>, StoreError>> {
        self.blocking(move |c| {
            let payload = serde_json::to_string(&error)
                .map_err(|e| StoreError::data(format!("task error could not be encoded: {e}")))?;
            // One statement: a process renewing its lease at the same moment either renews first
            // (and its task is not failed) or finds the task terminal.
            let mut failed = c
                .prepare(&format!(
                    "UPDATE switchyard_tasks SET status = 'failed', payload = ?2, status_message = ?3,
                     last_updated_at_ms = MAX(last_updated_at_ms, ?1), lease_expires_at_ms = NULL,
                     input_responses = NULL
                     WHERE status IN ('working', 'input_required') AND lease_expires_at_ms <= ?1
                     RETURNING {COLUMNS}"
                ))
                .map_err(err)?;
            let rows =
                failed.query_map(params![to_sql(now_ms), payload, error.message], record_from_row).map_err(err)?;
            let mut records = Vec::new();
            for row in rows {
                records.push(row.map_err(err)??);
            }
            Ok(records)
        })
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a str,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |c| {
            // One statement: the status check and the write cannot interleave with another
            // process's transition.
            c.query_row(
                &format!(
                    "UPDATE switchyard_tasks SET status_message = ?2, last_updated_at_ms = MAX(last_updated_at_ms, ?3)
                     WHERE id = ?1 AND status = 'working'
                     RETURNING {COLUMNS}"
                ),
                params![id, status_message, to_sql(now_ms)],
                record_from_row,
            )
            .optional()
            .map_err(err)?
            .transpose()
        })
    }

    fn put_input_responses<'a>(
        &'a self,
        id: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<PutInput, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |c| {
            write_transaction(c, |tx| {
                let (Some(record), Some(stored)) = (read(tx, &id)?, read_responses(tx, &id)?) else {
                    return Ok(PutInput::Unknown);
                };
                let Some((state, merged, keys)) = merge_input(&record, &stored, responses) else {
                    return Ok(PutInput::Ignored(record));
                };
                let (status, payload) = encode_state(&state)?;
                tx.execute(
                    "UPDATE switchyard_tasks SET status = ?2, payload = ?3, input_responses = ?4,
                     last_updated_at_ms = MAX(last_updated_at_ms, ?5) WHERE id = ?1",
                    params![id, status, payload, encode_responses(&merged)?, to_sql(now_ms)],
                )
                .map_err(err)?;
                let record =
                    read(tx, &id)?.ok_or_else(|| StoreError::other(format!("task {id} vanished while locked")))?;
                Ok(PutInput::Stored { keys, record })
            })
        })
    }

    fn input_responses<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Map<String, Value>, StoreError>> {
        let id = id.to_owned();
        self.blocking(move |c| Ok(read_responses(c, &id)?.unwrap_or_default()))
    }

    fn remove_input_responses<'a>(&'a self, id: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), StoreError>> {
        let (id, keys) = (id.to_owned(), keys.to_vec());
        self.blocking(move |c| {
            write_transaction(c, |tx| {
                let Some(mut stored) = read_responses(tx, &id)? else { return Ok(()) };
                let before = stored.len();
                for key in &keys {
                    stored.remove(key);
                }
                if stored.len() != before {
                    tx.execute(
                        "UPDATE switchyard_tasks SET input_responses = ?2 WHERE id = ?1",
                        params![id, encode_responses(&stored)?],
                    )
                    .map_err(err)?;
                }
                Ok(())
            })
        })
    }
}
