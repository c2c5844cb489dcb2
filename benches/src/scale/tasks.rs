//! Tasks created and completed per second: the `ours-http` role with the Tasks extension and
//! `echo_task` (`task_support = "optional"`, returns at once), its store in memory, in SQLite or
//! in PostgreSQL. 32 clients each send a `tools/call` that opts into the extension, then poll
//! `tasks/get` back to back until the task is `completed` (and check its result), and start the
//! next one.

use super::{TempDir, chain, cpu_of, postgres_url, quantile, unique};
use crate::load_http::Client;
use crate::proc::spawn_http_with;
use crate::table::{Columns, Figure, Table};
use crate::{Plan, Res};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const CONCURRENCY: usize = 32;

/// The `application_name` of the store's connections: how the harness finds their backends.
const APPLICATION: &str = "switchyard-bench-tasks";

/// Columns of the task rows; the ratios say what a durable store costs against memory.
const STORES: Columns = Columns { names: ["MEMORY", "SQLITE", "POSTGRES"], ratios: [(1, 0), (2, 0)] };

/// What one run of the task load measured.
struct TaskLoad {
    /// Tasks whose `tools/call` started in the window and that were seen `completed`, per second.
    per_second: f64,
    /// From sending the `tools/call` to reading `completed` from `tasks/get`, milliseconds.
    p50_ms: f64,
    p99_ms: f64,
    /// `tasks/get` calls per task.
    polls_per_task: f64,
    /// Tasks counted in the window.
    count: usize,
}

/// A 2026-07-28 request's `_meta`, declaring the Tasks extension.
fn meta() -> Value {
    json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { "extensions": { "io.modelcontextprotocol/tasks": {} } },
            "io.modelcontextprotocol/clientInfo": { "name": "bench", "version": "0" } })
}

/// The `result` of a JSON-RPC answer sent as JSON or as an SSE stream; its error otherwise.
fn result_of(body: &[u8]) -> Res<Value> {
    let text = std::str::from_utf8(body)?;
    let json = if text.trim_start().starts_with('{') {
        text
    } else {
        text.lines().filter_map(|l| l.strip_prefix("data:")).next_back().ok_or("an answer without data")?
    };
    let mut v: Value = serde_json::from_str(json.trim())?;
    match v.get_mut("result") {
        Some(r) => Ok(r.take()),
        None => Err(format!("error answer: {v}").into()),
    }
}

/// One task: `tools/call` that becomes a task, then `tasks/get` until `completed`. Returns the
/// number of `tasks/get` calls.
async fn one_task(c: &mut Client, i: u64) -> Res<u32> {
    let text = format!("task {i}");
    let call = json!({ "jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "echo_task", "arguments": { "text": text }, "_meta": meta() } });
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call"), ("mcp-name", "echo_task")];
    let created = result_of(&c.post(call.to_string(), &headers).await?.1)?;
    // An answer without a task would mean the tool ran inline and the row measured nothing.
    if created["resultType"] != "task" {
        return Err(format!("tools/call did not create a task: {created}").into());
    }
    let id = created["taskId"].as_str().ok_or("a task without taskId")?.to_owned();
    let get = json!({ "jsonrpc": "2.0", "id": i, "method": "tasks/get",
                      "params": { "taskId": id, "_meta": meta() } })
    .to_string();
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tasks/get"), ("mcp-name", id.as_str())];
    let mut polls = 0;
    loop {
        polls += 1;
        let task = result_of(&c.post(get.clone(), &headers).await?.1)?;
        match task["status"].as_str() {
            Some("completed") => {
                if task["result"]["content"][0]["text"] != text.as_str() {
                    return Err(format!("task {id} completed with the wrong result: {task}").into());
                }
                return Ok(polls);
            }
            Some("working") => {}
            _ => return Err(format!("task {id} ended other than completed: {task}").into()),
        }
    }
}

/// Runs [`CONCURRENCY`] clients against `url` until `end`, counting the tasks started from
/// `window_start` on; `on_measure_start` runs when the window opens.
async fn load(url: &str, window_start: Instant, end: Instant, on_measure_start: impl FnOnce()) -> Res<TaskLoad> {
    let mut clients = Vec::with_capacity(CONCURRENCY);
    for _ in 0..CONCURRENCY {
        clients.push(Client::connect(url).await?);
    }
    let mut workers = tokio::task::JoinSet::new();
    for (k, mut c) in clients.into_iter().enumerate() {
        workers.spawn(async move {
            let (mut latencies, mut polls) = (Vec::new(), 0u64);
            let mut i = (k as u64) << 32;
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                let p = one_task(&mut c, i).await?;
                i += 1;
                if t >= window_start {
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                    polls += u64::from(p);
                }
            }
            Res::Ok((latencies, polls))
        });
    }
    tokio::time::sleep_until(window_start.into()).await;
    on_measure_start();
    let (mut all, mut polls) = (Vec::new(), 0);
    while let Some(r) = workers.join_next().await {
        let (l, p) = r??;
        all.extend(l);
        polls += p;
    }
    all.sort_by(f64::total_cmp);
    Ok(TaskLoad {
        per_second: all.len() as f64 / (end - window_start).as_secs_f64(),
        p50_ms: quantile(&all, 0.50),
        p99_ms: quantile(&all, 0.99),
        polls_per_task: polls as f64 / all.len().max(1) as f64,
        count: all.len(),
    })
}

/// The harness's own connection to PostgreSQL: a fresh schema for each run, and the process ids
/// of the store's backends.
struct Postgres {
    client: tokio_postgres::Client,
    schema: String,
}

impl Postgres {
    async fn connect() -> Res<Postgres> {
        let url = postgres_url();
        let connecting = tokio_postgres::connect(&url, tokio_postgres::NoTls);
        let (client, connection) = tokio::time::timeout(Duration::from_secs(5), connecting)
            .await
            .map_err(|_| "connecting timed out")?
            .map_err(|e| chain(&e))?;
        tokio::spawn(connection);
        Ok(Postgres { client, schema: unique("switchyard_bench_") })
    }

    /// Drops and creates the schema, so each run starts with empty tables and indexes; returns
    /// the store's URL, which puts its tables there.
    async fn fresh(&self) -> Res<String> {
        let s = &self.schema;
        self.client.batch_execute(&format!("DROP SCHEMA IF EXISTS {s} CASCADE; CREATE SCHEMA {s}")).await?;
        let base = postgres_url();
        let sep = if base.contains('?') { '&' } else { '?' };
        Ok(format!("{base}{sep}application_name={APPLICATION}&options=-c%20search_path%3D{s}"))
    }

    async fn drop_schema(&self) -> Res<()> {
        self.client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema)).await?;
        Ok(())
    }

    /// The backends serving the store's connections (PostgreSQL runs one process per
    /// connection; on this machine their `/proc` entries are readable).
    async fn backends(&self) -> Res<Vec<u32>> {
        let rows =
            self.client.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", &[&APPLICATION]).await?;
        Ok(rows.iter().map(|r| r.get::<_, i32>(0) as u32).collect())
    }

    /// CPU microseconds of each backend now, by pid.
    async fn backend_cpu(&self) -> Res<Vec<(u32, u64)>> {
        let pids = self.backends().await?;
        Ok(pids.iter().copied().zip(cpu_of(&pids)).collect())
    }
}

/// CPU the backends spent between two [`Postgres::backend_cpu`] readings; a backend that
/// opened in between counts from zero.
fn backends_spent(before: &[(u32, u64)], after: &[(u32, u64)]) -> u64 {
    after.iter().map(|(pid, a)| a.saturating_sub(before.iter().find(|(p, _)| p == pid).map_or(0, |b| b.1))).sum()
}

/// The task rows: memory, SQLite and PostgreSQL interleaved, `plan.repeats` times.
pub async fn rows(plan: &Plan, table: &mut Table) -> Res<()> {
    table.section(STORES);
    let pg = match Postgres::connect().await {
        Ok(pg) => Some(pg),
        Err(e) => {
            let why = format!("scale-tasks: POSTGRES skipped: no PostgreSQL at BENCH_PG ({e})");
            eprintln!("{why}");
            table.note(why);
            None
        }
    };
    let measured = measure(plan, table, pg.as_ref()).await;
    // Also after a failed run: the schema is the harness's own.
    if let Some(pg) = &pg {
        pg.drop_schema().await?;
    }
    measured
}

/// The runs of [`rows`], its figures pushed to `table`.
async fn measure(plan: &Plan, table: &mut Table, pg: Option<&Postgres>) -> Res<()> {
    let name = |what: &str| format!("scale tasks c{CONCURRENCY}, {what}");
    let mut rate = Figure::new(name("tasks created and completed per s (higher)"));
    let mut p50 = Figure::new(name("p50 ms from tools/call to completed (lower)"));
    let mut p99 = Figure::new(name("p99 ms from tools/call to completed (lower)"));
    let mut polls = Figure::new(name("tasks/get calls per task (lower)"));
    let mut cpu = Figure::new(name("server CPU µs per task (lower)"));
    let mut db_cpu = Figure::new(name("PostgreSQL backends' CPU µs per task (lower)"));
    let dir = TempDir::new("switchyard-bench-tasks-")?;
    for rep in 0..plan.repeats {
        for (col, store) in STORES.names.iter().enumerate() {
            let flag = match col {
                0 => "memory".to_owned(),
                1 => format!("sqlite:{}", dir.0.join(format!("tasks-{rep}.db")).display()),
                _ => match pg {
                    Some(pg) => format!("postgres:{}", pg.fresh().await?),
                    None => continue,
                },
            };
            eprintln!("scale tasks: {store}");
            let server = spawn_http_with("ours-http", &["--task-store", &flag], &[])?;
            let url = server.url.clone().ok_or("no URL")?;
            let pid = server.pid();
            let start = std::cell::Cell::new(0u64);
            let window_start = Instant::now() + plan.http_warmup;
            let end = window_start + plan.http_measure;
            let db = pg.filter(|_| col == 2);
            // The pool opens its connections as the warm-up needs them, so the backends are
            // read when the window opens (a query on the harness's own connection, beside the
            // load) and again after it.
            let db_reading = async {
                let pg = db?;
                tokio::time::sleep_until(window_start.into()).await;
                Some(pg.backend_cpu().await)
            };
            let (run, db_start) =
                tokio::join!(load(&url, window_start, end, || start.set(cpu_of(&[pid])[0])), db_reading);
            let run = run.map_err(|e| format!("{store}: {e}"))?;
            let spent = cpu_of(&[pid])[0].saturating_sub(start.get());
            let count = run.count.max(1) as f64;
            if let (Some(pg), Some(db_start)) = (db, db_start) {
                let db_spent = backends_spent(&db_start?, &pg.backend_cpu().await?);
                db_cpu.add(col, db_spent as f64 / count);
            }
            rate.add(col, run.per_second);
            p50.add(col, run.p50_ms);
            p99.add(col, run.p99_ms);
            polls.add(col, run.polls_per_task);
            cpu.add(col, spent as f64 / count);
            drop(server);
        }
    }
    for f in [rate, p50, p99, polls, cpu, db_cpu] {
        table.push(f);
    }
    Ok(())
}
