//! `tasks_worker`: delegating task execution to worker processes (the Tasks extension's
//! `TaskExecutor` seam), through a shared SQLite file on one machine or through PostgreSQL for
//! many server instances and workers on many machines.
//!
//! ```text
//! # PostgreSQL: any number of server instances (behind a load balancer) and of workers
//! cargo run --example tasks_worker -- serve --pg postgres://postgres@127.0.0.1:5432/test --http 127.0.0.1:8080
//! cargo run --example tasks_worker -- work --pg postgres://postgres@127.0.0.1:5432/test [--name w1]
//!
//! # SQLite: one machine, one file
//! cargo run --example tasks_worker -- serve --db /tmp/jobs.db --stdio     # the MCP server
//! cargo run --example tasks_worker -- work --db /tmp/jobs.db              # one or more workers
//! ```
//!
//! The tool `crunch_numbers` (`{"n": 100, "seconds": 20}`: sum 1..=n, pretending it takes
//! `seconds`) runs in a worker when called as a task. The server's executor does not run it: it
//! queues the task's `tools/call` and disposes the execution (the ordinary filters and the tool
//! never run in the server); the task waits in the queue without a lease. A worker claims one
//! job at a time, holds a lease on its task (15 s, renewed every 5 s) while it computes, and
//! records the outcome with `TaskStore::transition`; any server instance's `tasks/get` reads it
//! from the shared store.
//!
//! - PostgreSQL: `PostgresJobExecutor` queues the job in `switchyard_task_jobs`;
//!   `PostgresTaskStore::claim` hands each job to exactly one worker, once, however many
//!   workers poll at once.
//! - SQLite: the executor writes the job into a `jobs` table of the same file; a worker claims
//!   it with one conditional `UPDATE`.
//!
//! Cancellation: `tasks/cancel` on any instance makes the task `cancelled`; the worker's next
//! lease renewal answers `false` and it stops the job (a late outcome could not overwrite
//! `cancelled` anyway). A worker that dies stops renewing: after the lease, the server's
//! maintenance marks the task `failed`, and the job is not run again (a job runs at most once).
//! Ctrl-C stops a worker; a job it was running is recorded `failed`.
//!
//! The SQLite server opens the store with `SqliteTaskStore::open` (no restart recovery): its
//! tasks run in the workers, so a server restart does not interrupt them.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Deserialize;
use serde_json::{Value, json};
use std::pin::Pin;
use std::process::ExitCode;
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::registry::BoxFuture;
use switchyard_tasks::{
    Job, PostgresJobExecutor, PostgresTaskStore, SqliteTaskStore, StartError, TaskError, TaskExecution, TaskExecutor,
    TaskState, TaskStore, TasksExtension, now_ms,
};

const JOBS: &str = "CREATE TABLE IF NOT EXISTS jobs (
    task_id TEXT PRIMARY KEY NOT NULL,
    arguments TEXT NOT NULL,
    claimed INTEGER NOT NULL DEFAULT 0
)";

/// The tool the workers run.
const TOOL: &str = "crunch_numbers";

/// How long a worker's lease on its task lasts; it renews every third of it.
const LEASE: Duration = Duration::from_secs(15);

/// Arguments of `crunch`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct CrunchArgs {
    /// Sum the integers 1..=n (at most 10^9).
    n: u64,
    /// Pretend the sum takes this many seconds (at most 600; default 0), to watch a task
    /// working, cancel it, or stop its worker.
    #[serde(default)]
    seconds: u64,
}

/// The computation both the direct tool and the worker run.
fn crunch(n: u64) -> String {
    let n = n.min(1_000_000_000);
    format!("sum of 1..={n} is {}", (n as u128) * (n as u128 + 1) / 2)
}

/// Sums 1..=n. As a task, it runs in a worker process.
#[mcp_tool(task_support = "optional")]
async fn crunch_numbers(args: CrunchArgs) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(args.seconds.min(600))).await;
    Ok(crunch(args.n))
}

// ---------------------------------------------------------------------------------------------
// SQLite: the executor and the jobs table.

/// Hands each task to the workers through the `jobs` table.
struct HandOff {
    db: std::path::PathBuf,
    store: SqliteTaskStore,
}

impl TaskExecutor for HandOff {
    fn start(&self, execution: TaskExecution) -> BoxFuture<Result<(), StartError>> {
        let (db, store) = (self.db.clone(), self.store.clone());
        Box::pin(async move {
            let arguments = execution.params().map(|p| p.arguments.into_value()).unwrap_or_else(|| json!({}));
            let id = execution.task_id().to_owned();
            // The work now belongs to the workers: release the request scope here.
            execution.dispose();
            // Nobody runs the task while it waits in the queue: without this, the lease the
            // extension set at creation would run out and the task be failed as abandoned. It
            // is cleared before the job exists, so a worker's lease is never cleared.
            store.renew_lease(&id, None).await?;
            let queued = tokio::task::spawn_blocking(move || -> Result<(), String> {
                let conn = open_jobs(&db)?;
                conn.execute(
                    "INSERT INTO jobs (task_id, arguments) VALUES (?1, ?2)",
                    params![id, arguments.to_string()],
                )
                .map_err(|e| e.to_string())?;
                Ok(())
            })
            .await
            .map_err(|e| StartError::other(format!("the job could not be queued: {e}")))?;
            queued.map_err(|e| StartError::other(format!("the job could not be queued: {e}")))
        })
    }
}

fn open_jobs(db: &std::path::Path) -> Result<Connection, String> {
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    conn.execute(JOBS, []).map_err(|e| e.to_string())?;
    Ok(conn)
}

/// Claims the oldest unclaimed job, if any: `(task id, arguments)`.
fn claim_sqlite(conn: &Connection) -> Result<Option<(String, String)>, String> {
    conn.query_row(
        "UPDATE jobs SET claimed = 1 WHERE task_id = (SELECT task_id FROM jobs WHERE claimed = 0 LIMIT 1)
         RETURNING task_id, arguments",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// The worker, for both stores.

/// Where a worker takes its jobs from.
enum Queue {
    Sqlite { store: SqliteTaskStore, jobs: Connection },
    Postgres { store: PostgresTaskStore, name: String },
}

impl Queue {
    fn store(&self) -> &dyn TaskStore {
        match self {
            Queue::Sqlite { store, .. } => store,
            Queue::Postgres { store, .. } => store,
        }
    }

    /// The next job, its task already leased to this worker; `None` when none is waiting.
    async fn next(&self) -> Result<Option<Job>, String> {
        match self {
            Queue::Postgres { store, name } => store.claim(name, LEASE).await.map_err(|e| e.to_string()),
            Queue::Sqlite { store, jobs } => {
                let Some((task_id, arguments)) = claim_sqlite(jobs)? else { return Ok(None) };
                // The claim and the lease are two steps here; a task cancelled in between
                // refuses the lease and is skipped.
                let arguments = serde_json::from_str(&arguments).unwrap_or(Value::Null);
                let leased = store.renew_lease(&task_id, Some(lease_until())).await.map_err(|e| e.to_string())?;
                if !leased {
                    self.done(&task_id);
                    return Ok(None);
                }
                Ok(Some(Job { task_id, tool: TOOL.to_owned(), arguments }))
            }
        }
    }

    /// Forgets a job whose task has ended (PostgreSQL keeps claimed jobs until their task is
    /// purged: a claimed job is never handed out again).
    fn done(&self, task_id: &str) {
        if let Queue::Sqlite { jobs, .. } = self
            && let Err(e) = jobs.execute("DELETE FROM jobs WHERE task_id = ?1", params![task_id])
        {
            eprintln!("warning: job {task_id} not removed from the queue: {e}");
        }
    }
}

fn lease_until() -> u64 {
    now_ms().saturating_add(LEASE.as_millis() as u64)
}

/// What the tool returns for `arguments`, as the task's new state.
async fn run_tool(tool: &str, arguments: Value) -> TaskState {
    if tool != TOOL {
        return TaskState::Failed(TaskError { code: -32602, message: format!("unknown tool {tool:?}"), data: None });
    }
    match serde_json::from_value::<CrunchArgs>(arguments) {
        Ok(args) => {
            tokio::time::sleep(Duration::from_secs(args.seconds.min(600))).await;
            let result = CallToolResult::success(vec![Content::text(crunch(args.n))]);
            match serde_json::to_value(result) {
                Ok(mut value) => {
                    value["resultType"] = json!("complete");
                    TaskState::Completed(value)
                }
                Err(e) => TaskState::Failed(TaskError::internal(format!("the result could not be encoded: {e}"))),
            }
        }
        Err(e) => TaskState::Failed(TaskError { code: -32602, message: format!("bad arguments: {e}"), data: None }),
    }
}

/// The worker loop: claim, run while renewing the lease, record; polls every 100 ms when idle.
/// A failed claim (the database briefly unreachable, say) is logged and retried after 1 s
/// rather than ending the worker. Ctrl-C ends it; a job it was running is recorded `failed`.
async fn work(queue: Queue) -> Result<(), String> {
    let mut stop = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let pause = match queue.next().await {
            Ok(Some(job)) => {
                let stopped = run_job(&queue, job, stop.as_mut()).await;
                if stopped {
                    return Ok(());
                }
                continue;
            }
            Ok(None) => Duration::from_millis(100),
            Err(e) => {
                eprintln!("warning: {e}; retrying in 1 s");
                Duration::from_secs(1)
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.as_mut() => return Ok(()),
        }
    }
}

/// Runs `job`, renewing its task's lease every `LEASE / 3`, and records the outcome. Stops
/// early when a renewal finds the task ended (cancelled) or on Ctrl-C; returns whether Ctrl-C
/// came.
async fn run_job<S>(queue: &Queue, job: Job, mut stop: Pin<&mut S>) -> bool
where
    S: Future<Output = std::io::Result<()>>,
{
    let store = queue.store();
    let id = job.task_id.clone();
    eprintln!("job {id}: {} {}", job.tool, job.arguments);
    let mut renew = tokio::time::interval(LEASE / 3);
    renew.tick().await; // the first tick is immediate; the claim has just set the lease
    let mut tool = std::pin::pin!(run_tool(&job.tool, job.arguments));
    let (state, stopped) = loop {
        tokio::select! {
            state = tool.as_mut() => break (state, false),
            _ = renew.tick() => match store.renew_lease(&id, Some(lease_until())).await {
                Ok(true) => {}
                Ok(false) => {
                    eprintln!("job {id}: the task was cancelled; stopping");
                    queue.done(&id);
                    return false;
                }
                // Keep working: the next renewal may succeed before the lease runs out.
                Err(e) => eprintln!("warning: job {id}: the lease was not renewed: {e}"),
            },
            _ = stop.as_mut() => {
                let error = TaskError::internal("the worker was stopped before the job finished; run the tool again");
                break (TaskState::Failed(error), true);
            }
        }
    };
    let message = match &state {
        TaskState::Failed(e) => Some(e.message.clone()),
        _ => None,
    };
    match store.transition(&id, state, message, now_ms()).await {
        Ok(t) => eprintln!("job {id}: {}", status_of(&t)),
        // The lease is no longer renewed: the task ends `failed` when it runs out.
        Err(e) => eprintln!("warning: job {id}: the outcome was not recorded: {e}"),
    }
    queue.done(&id);
    stopped
}

fn status_of(t: &switchyard_tasks::Transition) -> &'static str {
    match t {
        switchyard_tasks::Transition::Applied(r) => match r.state {
            TaskState::Completed(_) => "recorded completed",
            _ => "recorded failed",
        },
        switchyard_tasks::Transition::Terminal(_) => "already ended; left unchanged",
        switchyard_tasks::Transition::Unknown => "unknown task (purged?)",
        _ => "not recorded",
    }
}

// ---------------------------------------------------------------------------------------------
// Command line.

/// Delegates task execution to worker processes through a shared store.
#[derive(clap::Parser)]
#[command(name = "tasks_worker", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Serve MCP, handing tasks of crunch_numbers to the workers.
    Serve {
        #[command(flatten)]
        backend: Backend,
        // Boxed: the shared flags are many times larger than the other variant.
        #[command(flatten)]
        serve: Box<switchyard::cli::ServeArgs>,
    },
    /// Run queued jobs until Ctrl-C.
    Work {
        #[command(flatten)]
        backend: Backend,
        /// The worker's name in the PostgreSQL queue [default: worker-PID].
        // `conflicts_with` too: clap excuses the missing `--pg` of `--db PATH --name N`, as
        // `--pg` conflicts with `--db` in their group.
        #[arg(long, requires = "pg", conflicts_with = "db")]
        name: Option<String>,
    },
}

/// Where the tasks live.
#[derive(clap::Args)]
#[group(required = true, multiple = false)]
struct Backend {
    /// PostgreSQL: any number of server instances and workers.
    #[arg(long, value_name = "URL")]
    pg: Option<String>,
    /// SQLite: one machine, one file.
    #[arg(long, value_name = "PATH")]
    db: Option<std::path::PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    match <Cli as clap::Parser>::parse().command {
        Command::Serve { backend, serve } => serve_main(backend, *serve).await,
        Command::Work { backend, name } => work_main(backend, name).await,
    }
}

async fn serve_main(backend: Backend, serve: switchyard::cli::ServeArgs) -> ExitCode {
    serve.init_tracing();
    let extension = match (backend.pg, backend.db) {
        (Some(url), _) => match PostgresTaskStore::connect(&url).await {
            Ok(store) => TasksExtension::new().store(store.clone()).executor(PostgresJobExecutor::new(store)),
            Err(e) => return failure(&e.to_string()),
        },
        (None, Some(db)) => match SqliteTaskStore::open(&db) {
            Ok(store) => TasksExtension::new().store(store.clone()).executor(HandOff { db, store }),
            Err(e) => return failure(&e.to_string()),
        },
        (None, None) => unreachable!("clap requires one backend"),
    };
    let builder = Server::builder("switchyard-tasks-worker", env!("CARGO_PKG_VERSION"));
    match extension.install(builder).build() {
        Ok(server) => switchyard::cli::serve(server, &serve).await,
        Err(e) => failure(&e.to_string()),
    }
}

async fn work_main(backend: Backend, name: Option<String>) -> ExitCode {
    // A worker serves nothing: only the logging defaults (RUST_LOG, else warn) apply.
    switchyard::cli::ServeArgs::default().init_tracing();
    let queue = match (backend.pg, backend.db) {
        (Some(url), _) => pg_queue(&url, name.unwrap_or_else(|| format!("worker-{}", std::process::id()))).await,
        (None, Some(db)) => sqlite_queue(&db),
        (None, None) => unreachable!("clap requires one backend"),
    };
    let result = match queue {
        Ok(queue) => work(queue).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => failure(&e),
    }
}

async fn pg_queue(url: &str, name: String) -> Result<Queue, String> {
    let store = PostgresTaskStore::connect(url).await.map_err(|e| e.to_string())?;
    Ok(Queue::Postgres { store, name })
}

fn sqlite_queue(db: &std::path::Path) -> Result<Queue, String> {
    let store = SqliteTaskStore::open(db).map_err(|e| e.to_string())?;
    Ok(Queue::Sqlite { store, jobs: open_jobs(db)? })
}

fn failure(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::FAILURE
}
