//! The store for many instances of one server (docs/scaling.md): PostgreSQL through `tokio-postgres`
//! and a `deadpool-postgres` pool, with the job queue that external worker processes take work
//! from.

use super::{
    PutInput, StoreError, TaskStore, Transition, decode_responses, decode_state, encode_responses, encode_state,
    from_sql, merge_input, to_sql,
};
use crate::model::{TaskError, TaskRecord, TaskState, now_ms};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime, TimeoutType};
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::{NoTls, Row};

/// The task columns, in the order [`record_from_row`] reads them (a macro so that the SQL below
/// stays `&'static str`, which the statement cache keys on).
macro_rules! columns {
    () => {
        "id, owner, status, payload, status_message, created_at_ms, last_updated_at_ms, ttl_ms, poll_interval_ms, \
         lease_expires_at_ms"
    };
}

/// Serializes schema set-up between instances starting at once (`pg_advisory_xact_lock` key;
/// "Switchyd" in ASCII). Concurrent `CREATE TABLE IF NOT EXISTS` is not safe in PostgreSQL:
/// both may pass the check and one then fails on a duplicate catalog row.
const SCHEMA_LOCK: i64 = 0x5377_6974_6368_7964;

/// The first version of the schema.
///
/// `payload` (the state's data: `inputRequests`, the result or the error object) is `TEXT`
/// holding serde_json's output, not `JSONB`: the extension only ever reads it back whole, and
/// `TEXT` returns exactly what was written, while `JSONB` rejects strings containing U+0000
/// (which a tool result may carry) and costs a parse on every write. `expires_at_ms`
/// (creation + TTL, clamped to `i64::MAX`) is derived at `create` so that the TTL purge is an
/// index range scan; `created_at_ms` and `ttl_ms` never change afterwards.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS switchyard_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT,
    status TEXT NOT NULL
        CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    payload TEXT,
    status_message TEXT,
    created_at_ms BIGINT NOT NULL,
    last_updated_at_ms BIGINT NOT NULL,
    ttl_ms BIGINT,
    poll_interval_ms BIGINT,
    expires_at_ms BIGINT
);
CREATE INDEX IF NOT EXISTS switchyard_tasks_expiry ON switchyard_tasks (expires_at_ms)
    WHERE expires_at_ms IS NOT NULL;
";

/// Columns added after the first version: `ADD COLUMN IF NOT EXISTS` upgrades an older table in
/// place, keeping its tasks. `input_responses` holds the `tasks/update` answers the task's
/// runner has not taken yet: a JSON object as `TEXT`, for the reasons given for `payload`.
const LATER_COLUMNS: &[(&str, &str)] = &[("lease_expires_at_ms", "BIGINT"), ("input_responses", "TEXT")];

/// Objects over the later columns, and the job queue. The lease index holds only tasks that can
/// still expire by lease, so the sweep never reads finished tasks; the queue index holds only
/// unclaimed jobs, in queue order. Arguments are `JSONB` so that operators can inspect the
/// queue with SQL; a job is written once and read once, so the parse costs little.
const LATER_OBJECTS: &str = "
CREATE INDEX IF NOT EXISTS switchyard_tasks_lease ON switchyard_tasks (lease_expires_at_ms)
    WHERE status IN ('working', 'input_required') AND lease_expires_at_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS switchyard_task_jobs (
    task_id TEXT PRIMARY KEY REFERENCES switchyard_tasks (id) ON DELETE CASCADE,
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    tool TEXT NOT NULL,
    arguments JSONB NOT NULL,
    enqueued_at_ms BIGINT NOT NULL,
    claimed_by TEXT,
    claimed_at_ms BIGINT
);
CREATE INDEX IF NOT EXISTS switchyard_task_jobs_unclaimed ON switchyard_task_jobs (seq)
    WHERE claimed_by IS NULL;
";

/// Every relation the schema set-up creates: when all exist and the later columns too, start-up
/// takes no lock at all (DDL, even a no-op `IF NOT EXISTS`, can queue behind long transactions
/// and stall the instances already serving).
const RELATIONS: &[&str] = &[
    "switchyard_tasks",
    "switchyard_tasks_expiry",
    "switchyard_tasks_lease",
    "switchyard_task_jobs",
    "switchyard_task_jobs_unclaimed",
];

const SCHEMA_IS_CURRENT: &str = "
SELECT (SELECT bool_and(to_regclass(r) IS NOT NULL) FROM unnest($1::text[]) AS r)
   AND (SELECT count(*) FROM pg_attribute
        WHERE attrelid = to_regclass('switchyard_tasks') AND attname = ANY($2::text[]) AND NOT attisdropped)
       = cardinality($2::text[])";

const INSERT: &str = concat!(
    "INSERT INTO switchyard_tasks (",
    columns!(),
    ", expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
);

const SELECT: &str = concat!("SELECT ", columns!(), " FROM switchyard_tasks WHERE id = $1");

/// The task and its stored input responses, locked until the transaction ends: the merge of new
/// responses (in Rust, as the column is `TEXT`) cannot interleave with another writer's.
const SELECT_FOR_INPUT: &str =
    concat!("SELECT ", columns!(), ", input_responses FROM switchyard_tasks WHERE id = $1 FOR UPDATE");

const PUT_INPUT: &str = concat!(
    "UPDATE switchyard_tasks SET status = $2, payload = $3, input_responses = $4,
        last_updated_at_ms = GREATEST(last_updated_at_ms, $5)
    WHERE id = $1 RETURNING ",
    columns!()
);

/// One statement, so the status check and the write are atomic across processes (a racing
/// transition waits for the row lock and then sees the new message, or this sees its status).
const SET_STATUS_MESSAGE: &str = concat!(
    "UPDATE switchyard_tasks SET status_message = $2, last_updated_at_ms = GREATEST(last_updated_at_ms, $3)
    WHERE id = $1 AND status = 'working' RETURNING ",
    columns!()
);

const SELECT_INPUT: &str = "SELECT input_responses FROM switchyard_tasks WHERE id = $1";

const SET_INPUT: &str = "UPDATE switchyard_tasks SET input_responses = $2 WHERE id = $1";

/// One statement, so it is atomic across processes: the row lock taken by the `UPDATE` makes a
/// racing transition wait and then re-check `status`, so exactly one of two racers applies. A
/// terminal state also clears the lease and the stored input responses, and drops the task's job
/// if no worker claimed it yet.
const TRANSITION: &str = concat!(
    "WITH updated AS (
        UPDATE switchyard_tasks SET status = $2, payload = $3, status_message = $4,
            last_updated_at_ms = GREATEST(last_updated_at_ms, $5),
            lease_expires_at_ms = CASE WHEN $6 THEN NULL ELSE lease_expires_at_ms END,
            input_responses = CASE WHEN $6 THEN NULL ELSE input_responses END
        WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled')
        RETURNING ",
    columns!(),
    "
    ), dropped AS (
        DELETE FROM switchyard_task_jobs
        WHERE $6 AND task_id = $1 AND claimed_by IS NULL AND EXISTS (SELECT 1 FROM updated)
    )
    SELECT ",
    columns!(),
    " FROM updated"
);

/// `SKIP LOCKED`: rows another instance is deleting (or a transition holds) are left to it or
/// to the next purge instead of being waited for, so purges running on every instance at once
/// never deadlock on each other.
const PURGE: &str = "
DELETE FROM switchyard_tasks WHERE id IN (
    SELECT id FROM switchyard_tasks WHERE expires_at_ms <= $1 FOR UPDATE SKIP LOCKED
)";

const RENEW: &str = "
UPDATE switchyard_tasks SET lease_expires_at_ms = $2
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled')";

/// `SKIP LOCKED` for the same reason as [`PURGE`]: a task locked by a worker renewing its lease
/// right now is not expired anyway, and one locked by another sweeping instance is failed by it.
/// The outer conditions repeat the inner ones: a locked row is re-read before the update.
///
/// A task whose job waits unclaimed is skipped whatever its lease says: nobody runs it, so
/// nobody can have died running it (a lease renewed by the creating instance just before the
/// hand-off must not fail it while it waits in a long queue).
const FAIL_EXPIRED: &str = concat!(
    "WITH failed AS (
        UPDATE switchyard_tasks SET status = 'failed', payload = $2, status_message = $3,
            last_updated_at_ms = GREATEST(last_updated_at_ms, $1), lease_expires_at_ms = NULL,
            input_responses = NULL
        WHERE id IN (
            SELECT t.id FROM switchyard_tasks t
            WHERE t.status IN ('working', 'input_required') AND t.lease_expires_at_ms <= $1
                AND NOT EXISTS (
                    SELECT 1 FROM switchyard_task_jobs j WHERE j.task_id = t.id AND j.claimed_by IS NULL
                )
            FOR UPDATE OF t SKIP LOCKED
        ) AND status IN ('working', 'input_required') AND lease_expires_at_ms <= $1
        RETURNING ",
    columns!(),
    "
    ), dropped AS (
        DELETE FROM switchyard_task_jobs WHERE claimed_by IS NULL AND task_id IN (SELECT id FROM failed)
    )
    SELECT ",
    columns!(),
    " FROM failed"
);

/// Clears the lease and queues the job in one statement: the job becomes claimable only
/// together with the cleared lease, so a worker's fresh lease is never wiped afterwards, and a
/// task that stopped being `working` gets no job.
const ENQUEUE: &str = "
WITH task AS (
    UPDATE switchyard_tasks SET lease_expires_at_ms = NULL WHERE id = $1 AND status = 'working' RETURNING id
)
INSERT INTO switchyard_task_jobs (task_id, tool, arguments, enqueued_at_ms)
SELECT id, $2, $3::text::jsonb, $4 FROM task";

/// Picks the oldest unclaimed job of a `working` task and locks both rows, skipping rows other
/// claimers (or a concurrent `tasks/cancel`) hold, so claimers never wait for each other and
/// never get the same job; then marks it claimed and sets the task's lease, all in one
/// statement (one transaction).
const CLAIM: &str = "
WITH picked AS (
    SELECT j.task_id FROM switchyard_task_jobs j JOIN switchyard_tasks t ON t.id = j.task_id
    WHERE j.claimed_by IS NULL AND t.status = 'working'
    ORDER BY j.seq
    LIMIT 1
    FOR UPDATE OF j, t SKIP LOCKED
), claimed AS (
    UPDATE switchyard_task_jobs j SET claimed_by = $1, claimed_at_ms = $2
    FROM picked WHERE j.task_id = picked.task_id
    RETURNING j.task_id, j.tool, j.arguments::text
), leased AS (
    UPDATE switchyard_tasks t SET lease_expires_at_ms = $3
    FROM picked WHERE t.id = picked.task_id
)
SELECT task_id, tool, arguments FROM claimed";

/// Jobs waiting for a worker: unclaimed, and their task still `working` (the ones
/// [`CLAIM`] could hand out).
const QUEUED: &str = "
SELECT count(*) FROM switchyard_task_jobs j JOIN switchyard_tasks t ON t.id = j.task_id
WHERE j.claimed_by IS NULL AND t.status = 'working'";

/// How long a call waits for a free pooled connection, and for a new connection to open,
/// before it fails with a [`StoreError`].
const POOL_TIMEOUT: Duration = Duration::from_secs(5);

/// Tasks in PostgreSQL, shared by every instance of a server behind a load balancer and by the
/// worker processes that run its jobs (docs/scaling.md).
///
/// Guarantees:
/// - [`create`](TaskStore::create) returns once the row is committed: a `tasks/get` on any
///   instance sees it.
/// - [`transition`](TaskStore::transition) is one conditional `UPDATE ... WHERE status NOT IN
///   (terminal)`: of two racing transitions from any processes exactly one applies, and a
///   terminal state never changes. A terminal state clears the lease and drops the task's job
///   if no worker has claimed it.
/// - `tasks/update` answers ([`put_input_responses`](TaskStore::put_input_responses)) are kept
///   in an `input_responses` column until the runner removes them or the task ends; each change
///   of them is one transaction holding the task's row lock, so answers sent to two instances at
///   once are both kept.
/// - Leases: [`renew_lease`](TaskStore::renew_lease) and
///   [`fail_expired_leases`](TaskStore::fail_expired_leases) (one `UPDATE`; instances sweeping
///   at once fail each task once). A task whose job waits in the queue, unclaimed, is never
///   failed by lease: nobody runs it yet. Lease times are wall-clock milliseconds of the
///   calling machines: keep their clocks synchronised and leases much longer than the skew.
/// - The job queue ([`enqueue`](Self::enqueue), [`claim`](Self::claim),
///   [`PostgresJobExecutor`](crate::PostgresJobExecutor)): each job is handed to at most one worker, ever. A worker that
///   dies stops renewing its lease and its task ends `failed` after the lease; the job is never
///   run a second time.
/// - Times and durations are `BIGINT` milliseconds; values past `i64::MAX` are stored as
///   `i64::MAX`.
///
/// The schema (`switchyard_tasks`, `switchyard_task_jobs`, in the first schema of the
/// connection's `search_path`) is created or upgraded when the store is constructed, under an
/// advisory lock, so any number of instances may start at once. Connections are made without
/// TLS; for TLS (or other pool settings), build a pool and use [`with_pool`](Self::with_pool).
///
/// Cheap to clone: clones share the pool. Every failure (connection refused, pool exhausted,
/// SQL error) is a [`StoreError`] whose message names the operation and the cause.
#[derive(Clone)]
pub struct PostgresTaskStore {
    pool: Pool,
    /// How long one store operation may wait for the database in all.
    statement_timeout: Duration,
}

impl std::fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresTaskStore")
            .field("pool_size", &status.size)
            .field("pool_max_size", &status.max_size)
            .finish_non_exhaustive()
    }
}

/// One queued `tools/call`, as [`PostgresTaskStore::claim`] hands it to a worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The task the job belongs to: record the outcome with
    /// [`transition`](TaskStore::transition) on this id, and keep its lease with
    /// [`renew_lease`](TaskStore::renew_lease) while working.
    pub task_id: String,
    /// The tool to run (`tools/call` `name`).
    pub tool: String,
    /// Its arguments (`tools/call` `arguments`; a JSON object when queued by
    /// [`PostgresJobExecutor`](crate::PostgresJobExecutor)).
    pub arguments: Value,
}

impl PostgresTaskStore {
    /// The pool size [`connect`](Self::connect) uses: connections per store instance.
    pub const DEFAULT_POOL_SIZE: usize = 16;

    /// How long one operation may wait for the database by default (10 s): see
    /// [`statement_timeout`](Self::statement_timeout).
    pub const DEFAULT_STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

    /// How long one store operation (a connection from the pool and its statements) may take
    /// before it fails with a [`StoreError`] saying so; default
    /// [`DEFAULT_STATEMENT_TIMEOUT`](Self::DEFAULT_STATEMENT_TIMEOUT). A database that is
    /// frozen or unreachable without closing its connections (a hung host, a network partition)
    /// then fails the request with `-32603` instead of holding it for as long as the database
    /// stays away. The statement itself is abandoned on the client; PostgreSQL may still finish
    /// it.
    pub fn statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement_timeout = timeout;
        self
    }

    /// `work` (an operation on the database described by `what`) within the statement timeout.
    async fn timed<T>(
        &self,
        what: &str,
        work: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.statement_timeout, work).await {
            Ok(result) => result,
            Err(_) => Err(StoreError::unavailable_because(format!(
                "PostgreSQL: no answer to {what} within {:.1} s (the store's statement timeout): the database \
                 may be down, frozen or overloaded",
                self.statement_timeout.as_secs_f64()
            ))),
        }
    }

    /// Connects to the database at `url` (`postgres://user:password@host:port/db?options`,
    /// or the `key=value` form) with a pool of [`DEFAULT_POOL_SIZE`](Self::DEFAULT_POOL_SIZE)
    /// connections, and creates or upgrades the schema.
    ///
    /// Errors: [`StoreError`] when the URL is invalid (the message never repeats the URL,
    /// which may hold a password), the database cannot be reached within 5 s, or the schema
    /// cannot be created.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Config(format!("PostgreSQL: invalid connection URL: {}", describe(&e))))?;
        Self::with_config(config, Self::DEFAULT_POOL_SIZE).await
    }

    /// [`connect`](Self::connect), retrying while the database cannot be reached for at most
    /// `wait`: an instance started before its database (a fresh deployment, a failover under
    /// way) comes up once the database does, instead of exiting and being restarted in a loop.
    /// Each failed attempt is logged (`warn`); attempts start 250 ms apart and back off to 5 s.
    ///
    /// Errors: [`StoreError`] at once for an invalid URL; after `wait`, the last attempt's
    /// error, saying how long it retried.
    pub async fn connect_waiting(url: &str, wait: Duration) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Config(format!("PostgreSQL: invalid connection URL: {}", describe(&e))))?;
        let deadline = tokio::time::Instant::now() + wait;
        let mut delay = Duration::from_millis(250);
        let mut attempt = 1u32;
        loop {
            let error = match Self::with_config(config.clone(), Self::DEFAULT_POOL_SIZE).await {
                Ok(store) => return Ok(store),
                Err(e) => e,
            };
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(gave_up(error, attempt, wait));
            }
            tracing::warn!(error = %error, attempt, retry_in_ms = delay.min(left).as_millis() as u64,
                "tasks: the PostgreSQL task store cannot be reached yet; retrying");
            tokio::time::sleep(delay.min(left)).await;
            delay = (delay * 2).min(Duration::from_secs(5));
            attempt += 1;
        }
    }

    /// Connects with `config` (e.g. with `config.options("-c search_path=tenant_a")`) and a
    /// pool of at most `pool_size` connections, and creates or upgrades the schema. A call
    /// waits at most 5 s for a free connection and 5 s for a new one to open.
    ///
    /// Errors: [`StoreError`] when `pool_size` is 0, the database cannot be reached, or the
    /// schema cannot be created.
    pub async fn with_config(config: tokio_postgres::Config, pool_size: usize) -> Result<Self, StoreError> {
        if pool_size == 0 {
            return Err(StoreError::Config("PostgreSQL: the connection pool needs at least one connection".into()));
        }
        // Fast recycling: a dropped connection is noticed by its connection task (`is_closed`),
        // and a query on a connection that died since fails with a StoreError like any other;
        // a round trip per checkout to test it would double the latency of every call.
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(pool_size)
            .wait_timeout(Some(POOL_TIMEOUT))
            .create_timeout(Some(POOL_TIMEOUT))
            .recycle_timeout(Some(POOL_TIMEOUT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::Config(format!("PostgreSQL: the connection pool could not be built: {e}")))?;
        Self::with_pool(pool).await
    }

    /// Uses `pool` (built by the caller, e.g. with a TLS connector or other timeouts), and
    /// creates or upgrades the schema. Give the pool a runtime and a wait timeout: without
    /// them a call waits for a free connection forever.
    ///
    /// Errors: [`StoreError`] when no connection can be had or the schema cannot be created.
    pub async fn with_pool(pool: Pool) -> Result<Self, StoreError> {
        let store = PostgresTaskStore { pool, statement_timeout: Self::DEFAULT_STATEMENT_TIMEOUT };
        store.timed("set up the task tables", store.migrate()).await?;
        Ok(store)
    }

    async fn client(&self, what: &str) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(|e| {
            let reason = match e {
                PoolError::Timeout(TimeoutType::Wait) => {
                    format!("no pooled connection became free in time (all {} in use)", self.pool.status().max_size)
                }
                PoolError::Timeout(TimeoutType::Create) => "opening a connection timed out".to_owned(),
                PoolError::Timeout(TimeoutType::Recycle) => "checking a pooled connection timed out".to_owned(),
                PoolError::Backend(e) => describe(&e),
                PoolError::Closed => "the connection pool is closed".to_owned(),
                PoolError::NoRuntimeSpecified => "the pool has no runtime, so its timeouts cannot run".to_owned(),
                PoolError::PostCreateHook(e) => format!("the pool's post-create hook failed: {e}"),
            };
            StoreError::unavailable_because(format!("PostgreSQL: no connection to {what}: {reason}"))
        })
    }

    /// Creates the tables and indexes, adding later columns to an older table.
    async fn migrate(&self) -> Result<(), StoreError> {
        const WHAT: &str = "set up the task tables";
        let mut client = self.client(WHAT).await?;
        let later: Vec<&str> = LATER_COLUMNS.iter().map(|(name, _)| *name).collect();
        let current: Option<bool> = client
            .query_one(SCHEMA_IS_CURRENT, &[&RELATIONS, &later])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| failed(WHAT, e))?;
        if current == Some(true) {
            return Ok(());
        }
        let tx = client.transaction().await.map_err(|e| failed(WHAT, e))?;
        let mut ddl = format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK});\n{SCHEMA}");
        for (name, kind) in LATER_COLUMNS {
            ddl.push_str(&format!("ALTER TABLE switchyard_tasks ADD COLUMN IF NOT EXISTS {name} {kind};\n"));
        }
        ddl.push_str(LATER_OBJECTS);
        tx.batch_execute(&ddl).await.map_err(|e| failed(WHAT, e))?;
        tx.commit().await.map_err(|e| failed(WHAT, e))
    }

    /// Queues the `tools/call` of the `working` task `task_id` (`tool`, `arguments`) for the
    /// workers and clears the task's lease, in one statement: the task now waits in the queue
    /// and nobody runs it until a worker [`claim`](Self::claim)s it. Committed when it returns.
    ///
    /// Errors: [`StoreError`] when the task is unknown or no longer `working` (nothing is
    /// queued), already has a job, `arguments` cannot be stored as `JSONB` (a string containing
    /// U+0000), or the database fails.
    pub async fn enqueue(&self, task_id: &str, tool: &str, arguments: &Value) -> Result<(), StoreError> {
        self.timed("queue a job", async {
            const WHAT: &str = "queue a job";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(ENQUEUE).await.map_err(|e| failed(WHAT, e))?;
            let queued = client
                .execute(&stmt, &[&task_id, &tool, &arguments.to_string(), &to_sql(now_ms())])
                .await
                .map_err(|e| match e.code() {
                    Some(c) if *c == SqlState::UNIQUE_VIOLATION => {
                        StoreError::other(format!("PostgreSQL: task {task_id} already has a job"))
                    }
                    _ => failed(WHAT, e),
                })?;
            if queued == 0 {
                return Err(StoreError::other(format!(
                    "PostgreSQL: task {task_id} is unknown or no longer working; no job was queued"
                )));
            }
            Ok(())
        })
        .await
    }

    /// Claims the oldest unclaimed job whose task is still `working`, for the worker named
    /// `worker` (recorded in `claimed_by`, for operators), and sets the task's lease to now +
    /// `lease` (whole milliseconds), in one transaction. Any number of workers on any machines
    /// may claim at once: each job is handed out once, and a claimed job is never handed out
    /// again (if its worker dies, the lease runs out and the task ends `failed`). Jobs of
    /// cancelled tasks are never handed out. `Ok(None)` when no job is waiting.
    ///
    /// The worker then renews the lease ([`renew_lease`](TaskStore::renew_lease), well before
    /// it runs out; `false` means the task was cancelled: stop) and records the outcome with
    /// [`transition`](TaskStore::transition).
    ///
    /// Errors: [`StoreError`] on a database failure, or a stored job that cannot be read.
    pub async fn claim(&self, worker: &str, lease: Duration) -> Result<Option<Job>, StoreError> {
        self.timed("claim a job", async {
            const WHAT: &str = "claim a job";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(CLAIM).await.map_err(|e| failed(WHAT, e))?;
            let now = now_ms();
            let until = now.saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX));
            let row =
                client.query_opt(&stmt, &[&worker, &to_sql(now), &to_sql(until)]).await.map_err(|e| failed(WHAT, e))?;
            let Some(row) = row else { return Ok(None) };
            let task_id: String = row.try_get(0).map_err(|e| unreadable(WHAT, e))?;
            let tool: String = row.try_get(1).map_err(|e| unreadable(WHAT, e))?;
            let arguments: String = row.try_get(2).map_err(|e| unreadable(WHAT, e))?;
            let arguments = serde_json::from_str(&arguments).map_err(|e| {
                StoreError::data(format!("PostgreSQL: the arguments of job {task_id} are unreadable: {e}"))
            })?;
            Ok(Some(Job { task_id, tool, arguments }))
        })
        .await
    }

    /// How many jobs wait for a worker now: queued by [`enqueue`](Self::enqueue), not yet
    /// [`claim`](Self::claim)ed, their task still `working`. One indexed count; the Tasks
    /// extension reads it each maintenance period for the `switchyard.tasks.queued` metric.
    ///
    /// Errors: [`StoreError`] on a database failure.
    pub async fn queued_jobs(&self) -> Result<u64, StoreError> {
        self.timed("count queued jobs", async {
            const WHAT: &str = "count queued jobs";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(QUEUED).await.map_err(|e| failed(WHAT, e))?;
            let row = client.query_one(&stmt, &[]).await.map_err(|e| failed(WHAT, e))?;
            let count: i64 = row.try_get(0).map_err(|e| unreadable(WHAT, e))?;
            Ok(u64::try_from(count).unwrap_or(0))
        })
        .await
    }

    async fn read(client: &Object, what: &str, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let stmt = client.prepare_cached(SELECT).await.map_err(|e| failed(what, e))?;
        let row = client.query_opt(&stmt, &[&id]).await.map_err(|e| failed(what, e))?;
        row.map(|r| record_from_row(&r)).transpose()
    }
}

/// `PostgreSQL: could not <what>: <cause>`.
fn failed(what: &str, e: tokio_postgres::Error) -> StoreError {
    StoreError::Unavailable {
        message: format!("PostgreSQL: could not {what}: {}", describe(&e)),
        source: Some(Box::new(e)),
    }
}

/// A row that did not decode while trying to `what`: stored data, not the connection.
fn unreadable(what: &str, e: tokio_postgres::Error) -> StoreError {
    StoreError::data(format!("PostgreSQL: a stored row is unreadable ({what}): {}", describe(&e)))
}

/// The last attempt's error of [`PostgresTaskStore::connect_waiting`], saying how long it tried.
fn gave_up(error: StoreError, attempt: u32, wait: Duration) -> StoreError {
    let after = format!("gave up after {attempt} attempts over {:.0} s", wait.as_secs_f64());
    match error {
        StoreError::Unavailable { message, source } => {
            StoreError::Unavailable { message: format!("{message} ({after})"), source }
        }
        other => other,
    }
}

/// The server's message and SQLSTATE for a database error; otherwise the error and its causes
/// (tokio-postgres' own message is only the kind, e.g. "error connecting to server").
fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} (SQLSTATE {})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A task from a row selected with `columns!()`.
fn record_from_row(row: &Row) -> Result<TaskRecord, StoreError> {
    let bad = |e: tokio_postgres::Error| {
        StoreError::data(format!("PostgreSQL: a stored task is unreadable: {}", describe(&e)))
    };
    let status: String = row.try_get(2).map_err(bad)?;
    let payload: Option<String> = row.try_get(3).map_err(bad)?;
    Ok(TaskRecord {
        id: row.try_get(0).map_err(bad)?,
        owner: row.try_get(1).map_err(bad)?,
        state: decode_state(&status, payload.as_deref())?,
        status_message: row.try_get(4).map_err(bad)?,
        created_at_ms: from_sql(row.try_get(5).map_err(bad)?),
        last_updated_at_ms: from_sql(row.try_get(6).map_err(bad)?),
        ttl_ms: row.try_get::<_, Option<i64>>(7).map_err(bad)?.map(from_sql),
        poll_interval_ms: row.try_get::<_, Option<i64>>(8).map_err(bad)?.map(from_sql),
        lease_expires_at_ms: row.try_get::<_, Option<i64>>(9).map_err(bad)?.map(from_sql),
    })
}

impl TaskStore for PostgresTaskStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.timed("create a task", async move {
            const WHAT: &str = "create a task";
            let (status, payload) = encode_state(&task.state)?;
            let expires = task.ttl_ms.map(|ttl| to_sql(task.created_at_ms.saturating_add(ttl)));
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(INSERT).await.map_err(|e| failed(WHAT, e))?;
            // Autocommit: the row is committed when `execute` returns.
            client
                .execute(
                    &stmt,
                    &[
                        &task.id,
                        &task.owner,
                        &status,
                        &payload,
                        &task.status_message,
                        &to_sql(task.created_at_ms),
                        &to_sql(task.last_updated_at_ms),
                        &task.ttl_ms.map(to_sql),
                        &task.poll_interval_ms.map(to_sql),
                        &task.lease_expires_at_ms.map(to_sql),
                        &expires,
                    ],
                )
                .await
                .map_err(|e| match e.code() {
                    Some(c) if *c == SqlState::UNIQUE_VIOLATION => StoreError::Exists(task.id.clone()),
                    _ => failed(WHAT, e),
                })?;
            Ok(())
        }))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(self.timed("read a task", async move {
            const WHAT: &str = "read a task";
            let client = self.client(WHAT).await?;
            Self::read(&client, WHAT, id).await
        }))
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        Box::pin(self.timed("update a task", async move {
            const WHAT: &str = "update a task";
            let (status, payload) = encode_state(&state)?;
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(TRANSITION).await.map_err(|e| failed(WHAT, e))?;
            let row = client
                .query_opt(&stmt, &[&id, &status, &payload, &status_message, &to_sql(now_ms), &state.is_terminal()])
                .await
                .map_err(|e| failed(WHAT, e))?;
            if let Some(row) = row {
                return Ok(Transition::Applied(record_from_row(&row)?));
            }
            // Nothing changed: the task is terminal (and stays so) or unknown. Reading it
            // afterwards is not atomic with the update, but a terminal record never changes.
            Ok(match Self::read(&client, WHAT, id).await? {
                Some(record) => Transition::Terminal(record),
                None => Transition::Unknown,
            })
        }))
    }

    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(self.timed("purge expired tasks", async move {
            const WHAT: &str = "purge expired tasks";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(PURGE).await.map_err(|e| failed(WHAT, e))?;
            let n = client.execute(&stmt, &[&to_sql(now_ms)]).await.map_err(|e| failed(WHAT, e))?;
            Ok(usize::try_from(n).unwrap_or(usize::MAX))
        }))
    }

    fn renew_lease<'a>(&'a self, id: &'a str, until_ms: Option<u64>) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.timed("renew a task lease", async move {
            const WHAT: &str = "renew a task lease";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(RENEW).await.map_err(|e| failed(WHAT, e))?;
            let n = client.execute(&stmt, &[&id, &until_ms.map(to_sql)]).await.map_err(|e| failed(WHAT, e))?;
            Ok(n > 0)
        }))
    }

    fn fail_expired_leases(&self, now_ms: u64, error: TaskError) -> BoxFuture<'_, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(self.timed("fail tasks with expired leases", async move {
            const WHAT: &str = "fail tasks with expired leases";
            let payload = serde_json::to_string(&error)
                .map_err(|e| StoreError::data(format!("task error could not be encoded: {e}")))?;
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(FAIL_EXPIRED).await.map_err(|e| failed(WHAT, e))?;
            let rows =
                client.query(&stmt, &[&to_sql(now_ms), &payload, &error.message]).await.map_err(|e| failed(WHAT, e))?;
            rows.iter().map(record_from_row).collect()
        }))
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a str,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(self.timed("set a task's status message", async move {
            const WHAT: &str = "set a task's status message";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(SET_STATUS_MESSAGE).await.map_err(|e| failed(WHAT, e))?;
            let row =
                client.query_opt(&stmt, &[&id, &status_message, &to_sql(now_ms)]).await.map_err(|e| failed(WHAT, e))?;
            row.map(|r| record_from_row(&r)).transpose()
        }))
    }

    fn put_input_responses<'a>(
        &'a self,
        id: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<PutInput, StoreError>> {
        Box::pin(self.timed("store input responses", async move {
            const WHAT: &str = "store input responses";
            let mut client = self.client(WHAT).await?;
            let tx = client.transaction().await.map_err(|e| failed(WHAT, e))?;
            let locked = tx.prepare_cached(SELECT_FOR_INPUT).await.map_err(|e| failed(WHAT, e))?;
            let Some(row) = tx.query_opt(&locked, &[&id]).await.map_err(|e| failed(WHAT, e))? else {
                return Ok(PutInput::Unknown);
            };
            let record = record_from_row(&row)?;
            let stored: Option<String> = row.try_get(10).map_err(|e| unreadable(WHAT, e))?;
            let stored = decode_responses(stored.as_deref())?;
            // Dropping the transaction unused rolls it back and releases the row.
            let Some((state, merged, keys)) = merge_input(&record, &stored, responses) else {
                return Ok(PutInput::Ignored(record));
            };
            let (status, payload) = encode_state(&state)?;
            let update = tx.prepare_cached(PUT_INPUT).await.map_err(|e| failed(WHAT, e))?;
            let row = tx
                .query_one(&update, &[&id, &status, &payload, &encode_responses(&merged)?, &to_sql(now_ms)])
                .await
                .map_err(|e| failed(WHAT, e))?;
            let record = record_from_row(&row)?;
            tx.commit().await.map_err(|e| failed(WHAT, e))?;
            Ok(PutInput::Stored { keys, record })
        }))
    }

    fn input_responses<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Map<String, Value>, StoreError>> {
        Box::pin(self.timed("read input responses", async move {
            const WHAT: &str = "read input responses";
            let client = self.client(WHAT).await?;
            let stmt = client.prepare_cached(SELECT_INPUT).await.map_err(|e| failed(WHAT, e))?;
            let row = client.query_opt(&stmt, &[&id]).await.map_err(|e| failed(WHAT, e))?;
            let text: Option<String> = match row {
                Some(row) => row.try_get(0).map_err(|e| unreadable(WHAT, e))?,
                None => None,
            };
            decode_responses(text.as_deref())
        }))
    }

    fn remove_input_responses<'a>(&'a self, id: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.timed("remove input responses", async move {
            const WHAT: &str = "remove input responses";
            let mut client = self.client(WHAT).await?;
            let tx = client.transaction().await.map_err(|e| failed(WHAT, e))?;
            let locked = tx.prepare_cached(SELECT_FOR_INPUT).await.map_err(|e| failed(WHAT, e))?;
            let Some(row) = tx.query_opt(&locked, &[&id]).await.map_err(|e| failed(WHAT, e))? else {
                return Ok(());
            };
            let stored: Option<String> = row.try_get(10).map_err(|e| unreadable(WHAT, e))?;
            let mut stored = decode_responses(stored.as_deref())?;
            let before = stored.len();
            for key in keys {
                stored.remove(key);
            }
            if stored.len() == before {
                return Ok(());
            }
            let update = tx.prepare_cached(SET_INPUT).await.map_err(|e| failed(WHAT, e))?;
            tx.execute(&update, &[&id, &encode_responses(&stored)?]).await.map_err(|e| failed(WHAT, e))?;
            tx.commit().await.map_err(|e| failed(WHAT, e))
        }))
    }
}
