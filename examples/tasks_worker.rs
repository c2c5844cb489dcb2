//! `tasks_worker`: delegating task execution to another process through the durable SQLite
//! store (the Tasks extension's `TaskExecutor` seam).
//!
//! ```text
//! cargo run --example tasks_worker -- serve --db /tmp/jobs.db --stdio     # the MCP server
//! cargo run --example tasks_worker -- work --db /tmp/jobs.db              # one or more workers
//! ```
//!
//! The server's executor does not run the tool: it writes the task's `tools/call` params into a
//! `jobs` table of the same SQLite file and disposes the execution (the ordinary filters and the
//! tool never run in the server). A worker claims jobs one at a time, computes, and records the
//! outcome with `SqliteTaskStore::transition` on the shared file; the server's `tasks/get` reads
//! it from there. A task cancelled meanwhile stays `cancelled` (terminal states never change).
//!
//! The server opens the store with `SqliteTaskStore::open` (no restart recovery): its tasks run
//! in the workers, so a server restart does not interrupt them. A task whose worker died stays
//! `working` until its TTL passes.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Deserialize;
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::registry::BoxFuture;
use switchyard_tasks::{
    SqliteTaskStore, StartError, TaskError, TaskExecution, TaskExecutor, TaskState, TaskStore, TasksExtension, now_ms,
};

const JOBS: &str = "CREATE TABLE IF NOT EXISTS jobs (
    task_id TEXT PRIMARY KEY NOT NULL,
    arguments TEXT NOT NULL,
    claimed INTEGER NOT NULL DEFAULT 0
)";

/// Arguments of `crunch`.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct CrunchArgs {
    /// Sum the integers 1..=n (at most 10^9).
    n: u64,
}

/// The computation both the direct tool and the worker run.
fn crunch(n: u64) -> String {
    let n = n.min(1_000_000_000);
    format!("sum of 1..={n} is {}", (n as u128) * (n as u128 + 1) / 2)
}

/// Sums 1..=n. As a task, it runs in a worker process.
#[mcp_tool(task_support = "optional")]
async fn crunch_numbers(args: CrunchArgs) -> Result<String, ToolError> {
    Ok(crunch(args.n))
}

/// Hands each task to the workers through the `jobs` table.
struct HandOff {
    db: std::path::PathBuf,
}

impl TaskExecutor for HandOff {
    fn start(&self, execution: TaskExecution) -> BoxFuture<Result<(), StartError>> {
        let db = self.db.clone();
        Box::pin(async move {
            let arguments = execution.params().map(|p| Value::Object(p.arguments)).unwrap_or_else(|| json!({}));
            let id = execution.task_id().to_owned();
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
            .map_err(|e| StartError(e.to_string()))?;
            // The work now belongs to the workers: release the request scope here.
            execution.dispose();
            queued.map_err(|e| StartError(format!("the job could not be queued: {e}")))
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
fn claim(conn: &Connection) -> Result<Option<(String, String)>, String> {
    conn.query_row(
        "UPDATE jobs SET claimed = 1 WHERE task_id = (SELECT task_id FROM jobs WHERE claimed = 0 LIMIT 1)
         RETURNING task_id, arguments",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(|e| e.to_string())
}

/// The worker loop: claim, compute, record; polls every 50 ms when idle. A failed step (the
/// file briefly locked longer than the 5 s busy wait, say) is logged and retried after 1 s
/// rather than ending the worker; a job whose outcome could not be recorded is released for
/// the next claim, so it is never dropped.
async fn work(db: std::path::PathBuf) -> Result<(), String> {
    let store = SqliteTaskStore::open(&db).map_err(|e| e.to_string())?;
    let jobs = open_jobs(&db)?;
    loop {
        let pause = match step(&store, &jobs).await {
            Ok(true) => continue,
            Ok(false) => Duration::from_millis(50),
            Err(e) => {
                eprintln!("warning: {e}; retrying in 1 s");
                Duration::from_secs(1)
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

/// Runs one job if there is one: `Ok(true)` when a job ran, `Ok(false)` when none was waiting.
async fn step(store: &SqliteTaskStore, jobs: &Connection) -> Result<bool, String> {
    let Some((id, arguments)) = claim(jobs)? else {
        return Ok(false);
    };
    let state = match serde_json::from_str::<CrunchArgs>(&arguments) {
        Ok(args) => {
            let result = CallToolResult::success(vec![Content::text(crunch(args.n))]);
            let mut value = serde_json::to_value(result).map_err(|e| e.to_string())?;
            value["resultType"] = json!("complete");
            TaskState::Completed(value)
        }
        Err(e) => TaskState::Failed(TaskError { code: -32602, message: format!("bad arguments: {e}"), data: None }),
    };
    if let Err(e) = store.transition(&id, state, None, now_ms()).await {
        // Best effort: if even this fails, the job stays claimed and the task reaches its TTL.
        let _ = jobs.execute("UPDATE jobs SET claimed = 0 WHERE task_id = ?1", params![id]);
        return Err(format!("task {id} not recorded: {e}"));
    }
    jobs.execute("DELETE FROM jobs WHERE task_id = ?1", params![id]).map_err(|e| e.to_string())?;
    Ok(true)
}

const USAGE: &str = "usage: tasks_worker serve --db PATH (--stdio | --http HOST:PORT) | tasks_worker work --db PATH";

#[tokio::main]
async fn main() -> ExitCode {
    switchyard::cli::init_tracing();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("work") {
        let db = match &args[1..] {
            [flag, path] if flag == "--db" => std::path::PathBuf::from(path),
            _ => return usage("work needs --db PATH"),
        };
        return match work(db).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let (mode, rest) = match switchyard::cli::parse_args(args) {
        Ok(parsed) => parsed,
        Err(e) => return usage(&e),
    };
    let db = match rest.as_slice() {
        [command, flag, path] if command == "serve" && flag == "--db" => std::path::PathBuf::from(path),
        _ => return usage("serve needs --db PATH"),
    };
    let store = match SqliteTaskStore::open(&db) {
        Ok(s) => s,
        Err(e) => return usage(&e.to_string()),
    };
    let builder = Server::builder("switchyard-tasks-worker", env!("CARGO_PKG_VERSION"));
    let server = match TasksExtension::new().store(store).executor(HandOff { db }).install(builder).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    switchyard::cli::serve(server, mode).await
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n{USAGE}");
    ExitCode::from(2)
}
