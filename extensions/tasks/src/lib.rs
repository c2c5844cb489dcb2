//! # switchyard-mcp-tasks (`switchyard_tasks`): the MCP Tasks extension (`io.modelcontextprotocol/tasks`)
//!
//! Lets a `tools/call` answer at once with a task handle (`CreateTaskResult`) while the tool runs
//! in the background; the client polls `tasks/get`, answers input with `tasks/update`, stops the
//! work with `tasks/cancel`, or follows the task through `subscriptions/listen`
//! (`notifications/tasks`). Wire rules: the
//! [Tasks extension specification](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md)
//! ([SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension)).
//!
//! ## Installing
//! Link the crate and install it on the builder; declare which tools may run as tasks:
//!
//! ```no_run
//! use switchyard::prelude::*;
//! use switchyard_tasks::TasksExtension;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Job { seconds: u64 }
//!
//! /// A long job: a task when the client opts in, a direct result otherwise.
//! #[mcp_tool(task_support = "optional")]
//! async fn long_job(job: Job, ctx: RequestContext) -> Result<String, ToolError> {
//!     tokio::select! {
//!         _ = tokio::time::sleep(std::time::Duration::from_secs(job.seconds)) => Ok("done".into()),
//!         _ = ctx.cancellation().cancelled() => Err(ToolError::new("cancelled")),
//!     }
//! }
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TasksExtension::new().install(Server::builder("jobs", "1.0.0")).build()?;
//! switchyard::transport::stdio::serve(server).await?;
//! # Ok(()) }
//! ```
//!
//! The crate's registrations (the Tasks filter, `tasks/*`, the `taskIds` subscription field)
//! are in a group of their own, `"io.modelcontextprotocol/tasks"`, which `install` adds to
//! whatever groups the server selects (`ServerBuilder::include_group`).
//!
//! Installing declares the extension: `server/discover` lists
//! `capabilities.extensions["io.modelcontextprotocol/tasks"] = {}`. Without it, `tasks/*`
//! answer `-32601`, nothing is advertised and every tool runs synchronously.
//!
//! A tool's `task_support` (not on the wire; the server alone decides per request,
//! [polymorphic results](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#polymorphic-results)):
//! - none (default): never a task;
//! - `"optional"`: a task when the request's own `_meta` client capabilities declare the
//!   extension, a direct result otherwise;
//! - `"required"`: a task, or `-32021` with
//!   `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"] = {}`;
//! - `"escalate"`: the tool starts on the request path (where it can gather input through
//!   input-required rounds) and becomes a task when it calls [`escalate`]; without the extension
//!   the escalated part runs inline.
//!
//! Inside a task, `ctx.input`, `ctx.input_round` and `ctx.elicit` ask through the task
//! ([`TaskInputChannel`]: `input_required`, then `tasks/update`), so one handler serves the
//! 2026-07-28 wire, legacy sessions and tasks.
//!
//! Only 2026-07-28 requests can opt in; legacy sessions never get tasks, and a legacy `task`
//! param on `tools/call` is ignored.
//!
//! ## Where tasks sit in the pipeline, and authorization
//! The Tasks filter is an alternate-result filter on `tools/call` at order
//! [`TASKS_FILTER_ORDER`] (1000). On the request path, before the task exists, run: the raw
//! filters, the tool's authorization (always outside every alternate filter: a denied caller
//! gets `-32600` and no task is created), and the alternate filters with a lower order. The task
//! record is then stored, the executor started, and the `CreateTaskResult` sent. In the
//! background run, once: the alternate filters with a higher order, the ordinary (typed)
//! filters and the tool, with a fresh request context (its own request scope, dropped when the
//! background work ends; a cancellation token wired to `tasks/cancel`, not to the HTTP request;
//! log notifications are dropped, as the request's stream is closed, and progress reports
//! become the task's status message, see below). If an
//! ordinary filter swaps the tool, the new tool is authorized again before it runs, and a
//! denial ends the task `failed` with `-32600`. An inner filter returning an alternate result of
//! its own ends the task `failed` with `-32603`.
//!
//! ## Outcomes
//! A `CallToolResult` (also one with `isError: true`, a tool error) ends the task `completed`
//! with it as `result`; a JSON-RPC error ends it `failed` with `error: {code, message, data?}`;
//! `tasks/cancel` ends it `cancelled` first and then fires the token. Terminal states never
//! change. Tasks are visible only to the principal that created them (others get `-32602`, as
//! for an unknown id).
//!
//! ## Stores
//! [`InMemoryTaskStore`] (default) is fast and lost on exit. `SqliteTaskStore` (feature
//! `sqlite`, on by default) keeps tasks in one SQLite file: a task is committed before the
//! `CreateTaskResult` is sent; completed results stay readable after a restart until their TTL
//! passes; tasks that were running when the process stopped are reported `failed` ("the server
//! stopped while the task was running") after `SqliteTaskStore::open_for_server`; several
//! processes may share the file.
//!
//! `PostgresTaskStore` (feature `postgres`) is the store for many instances of one server
//! behind a load balancer: every instance and every worker process uses the same database;
//! `create` commits before the `CreateTaskResult` is sent, transitions are atomic across
//! processes, and the schema is created or upgraded on start (safe when instances start
//! together). With `PostgresJobExecutor` the instances queue each task's `tools/call` in a job
//! table and worker processes on any machines take them with `PostgresTaskStore::claim`: each
//! job is handed to one worker, once (see the `tasks_worker` example).
//!
//! Leases: the process running a task vouches for it until
//! [`TaskRecord::lease_expires_at_ms`] and renews the lease while it works
//! ([`TaskStore::renew_lease`], which answers `false` once the task was cancelled);
//! [`TaskStore::fail_expired_leases`] ends the tasks whose process died `failed`. The SQLite
//! and PostgreSQL stores keep leases (a terminal state clears the lease); the default trait
//! methods keep none.
//!
//! Any other backend implements [`TaskStore`]. Expired tasks (TTL, default one hour, counted
//! from creation) answer `-32602` and are purged.
//!
//! ## Executors
//! [`InProcessExecutor`] (default) runs each task on the current Tokio runtime.
//! [`WorkerPoolExecutor`] runs them on a bounded pool behind a bounded queue. A custom
//! [`TaskExecutor`] receives a [`TaskExecution`]: it may call
//! [`run_tool_pipeline`](TaskExecution::run_tool_pipeline) later or elsewhere in the process,
//! or hand the task to another system and [`dispose`](TaskExecution::dispose) it (the ordinary
//! filters and the tool then never run here; the other system records the outcome in the shared
//! store). `start` returning an error marks the task `failed` (-32603) before the response.
//! A store failure while creating the task is `-32603` for the `tools/call`. An outcome the
//! store fails to record is written again, 100 ms later and then backing off to every 5 s, while
//! the process lives, and the task's lease is renewed meanwhile: a store outage delays the
//! outcome and fails no task. Only a store that answers but keeps refusing that one write (five
//! times in a row) gets the task marked `failed` (-32603) instead.
//!
//! ## Status messages and progress
//! The Tasks extension sends no progress notifications for tasks. Inside a task,
//! `ctx.progress().report(progress, total, message)` sets the task's `statusMessage` instead
//! (`"3 of 10 (30%): copying files"`), and [`set_status_message`] sets it to a text of the tool's
//! own; `tasks/get` and `notifications/tasks` carry it while the task is `working`. Writes go
//! through [`TaskStore::set_status_message`], at most one every 250 ms per task (the latest
//! report each time).
//!
//! ## Input inside tasks
//! [`request_input`] is the seam through which a tool running as a task asks the client
//! for input (`input_required` + `tasks/update`). `tasks/update` on any instance stores the
//! answers ([`TaskStore::put_input_responses`]) before it acknowledges them (a store failure is
//! `-32603` and changes nothing, so the client sends it again); the waiting task takes them from
//! the store, woken at once on the same instance, through the server's hub from another one,
//! and by reading the store every third of a lease (at most every second) when no hint comes.

mod escalate;
mod executor;
mod filter;
mod hint;
mod id;
mod input;
#[cfg(feature = "postgres")]
mod jobs;
mod launch;
mod maintenance;
mod methods;
mod metrics;
mod model;
mod progress;
mod store;
mod subscription;
mod support;
mod tasks;

pub use escalate::escalate;
pub use executor::{
    InProcessExecutor, RegisteredExecutor, StartError, TaskExecution, TaskExecutor, WorkerPoolExecutor,
};
pub use id::new_task_id;
pub use input::{TaskInputChannel, request_input};
#[cfg(feature = "postgres")]
pub use jobs::PostgresJobExecutor;
pub use methods::{TaskRef, TaskUpdate};
pub use model::{TaskError, TaskRecord, TaskState, iso8601, now_ms};
pub use progress::set_status_message;
#[cfg(feature = "sqlite")]
pub use store::SqliteTaskStore;
pub use store::{InMemoryTaskStore, PutInput, StoreError, TaskStore, Transition};
#[cfg(feature = "postgres")]
pub use store::{Job, PostgresTaskStore};
pub use support::declares_tasks;
/// The PostgreSQL driver and pool crates `PostgresTaskStore` is built on (feature `postgres`),
/// so that callers configure it with the very versions it uses.
#[cfg(feature = "postgres")]
pub use {deadpool_postgres, tokio_postgres};

use std::sync::Arc;
use std::time::Duration;
use switchyard::ServerBuilder;

/// The extension's identifier, as declared by clients and advertised by `server/discover`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `subscriptions/listen` filter key for task status notifications.
pub const TASK_IDS_KEY: &str = "taskIds";

/// The order of the Tasks filter among the alternate-result filters of `tools/call`: filters
/// with a lower order run on the request path before the task is created, filters with a higher
/// order run in the background inside it.
pub const TASKS_FILTER_ORDER: i32 = 1000;

/// Put into the request scope of a task's background execution: the id of the task it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentTask {
    /// The task id.
    pub id: String,
}

impl CurrentTask {
    /// The task that `ctx` runs, when it is a task's background context.
    pub fn of(ctx: &switchyard::RequestContext) -> Option<CurrentTask> {
        ctx.extensions().get::<CurrentTask>().cloned()
    }
}

/// Settings of the extension; [`install`](Self::install) puts it on a server builder.
pub struct TasksExtension {
    store: Arc<dyn TaskStore>,
    executor: Option<Arc<dyn TaskExecutor>>,
    ttl: Option<Duration>,
    poll_interval: Duration,
    lease: Duration,
}

impl std::fmt::Debug for TasksExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksExtension")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("lease", &self.lease)
            .finish()
    }
}

impl Default for TasksExtension {
    fn default() -> Self {
        Self::new()
    }
}

impl TasksExtension {
    /// In-memory store, the default executor selection, a TTL of one hour, a suggested poll
    /// interval of 500 ms and a lease of 15 s.
    pub fn new() -> Self {
        TasksExtension {
            store: Arc::new(InMemoryTaskStore::new()),
            executor: None,
            ttl: Some(Duration::from_secs(3600)),
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(15),
        }
    }

    /// Uses `store` for the task records.
    pub fn store(self, store: impl TaskStore) -> Self {
        self.shared_store(Arc::new(store))
    }

    /// Uses a store shared with other code (e.g. a test that inspects it).
    pub fn shared_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// Runs tasks with `executor` (wins over a [`RegisteredExecutor`] and the default).
    pub fn executor(self, executor: impl TaskExecutor) -> Self {
        self.shared_executor(Arc::new(executor))
    }

    /// Runs tasks with a shared executor.
    pub fn shared_executor(mut self, executor: Arc<dyn TaskExecutor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// The time to live of new tasks, counted from creation (`ttlMs`; whole milliseconds);
    /// `None`: unlimited (`ttlMs: null`).
    pub fn ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// The suggested polling interval (`pollIntervalMs`, whole milliseconds, at least 1).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// How long a running task's lease lasts (whole milliseconds, at least 3; default 15 s).
    /// The process running a task renews its lease every `lease / 3`; when that process dies
    /// without a graceful stop, any instance sharing the store marks the task `failed`
    /// (-32603) within `lease * 4 / 3` of the last renewal. Without a shared hub, a
    /// `tasks/cancel` answered by another instance reaches the running task at the next
    /// renewal (`lease / 3`); with one, at once. Shorter leases notice dead instances sooner
    /// and cost one store write per running task per `lease / 3`. Keep it far above the
    /// store's round trip and the clock difference between instances (leases are compared
    /// with each instance's own clock): seconds, not milliseconds, in production.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Installs the extension: keeps it in the builder's shared state, declares the extension
    /// for `server/discover`, and adds the readiness check `"tasks store"`
    /// ([`ServerBuilder::readiness_check`]), which fails while the store does not answer a
    /// lookup (a PostgreSQL store that lost its database, say).
    pub fn install(self, builder: ServerBuilder) -> ServerBuilder {
        let lease_ms = u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX).max(3);
        let stats = Arc::new(store::metered::StoreStats::new(Duration::from_millis(lease_ms / 3)));
        let metered: Arc<dyn TaskStore> = Arc::new(store::metered::Metered { inner: self.store, stats: stats.clone() });
        let tasks = Arc::new(tasks::Tasks::new(
            metered,
            stats.clone(),
            self.ttl.map(|t| t.as_millis().max(1) as u64),
            self.poll_interval.as_millis().max(1) as u64,
            lease_ms,
        ));
        let store = tasks.store.clone();
        let counted = Arc::downgrade(&tasks);
        let builder = match self.executor {
            Some(executor) => builder.state(executor::ChosenExecutor(executor)),
            None => builder,
        };
        builder
            .include_group(EXTENSION)
            .state(tasks::TasksState(tasks))
            .extension_capability(EXTENSION, serde_json::json!({}))
            .readiness_check("tasks store", move || {
                let store = store.clone();
                // A lookup of an id no task has: one round trip that reads nothing.
                async move { store.get("readiness-probe").await.map(|_| ()).map_err(|e| e.to_string()) }
            })
            .metrics_source(move || metrics::readings(counted.upgrade().as_deref(), &stats))
    }
}
