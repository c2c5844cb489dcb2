//! Switchyard: the `echo` tool as a user writes it, served through `switchyard::cli`.
//!
//! The scale-out rows (`--only scale`) run the same HTTP role with a task store (a task-backed
//! `echo_task` and the Tasks extension) or with a NATS delivery hub, the authorization rows
//! (`--only auth`) with bearer tokens required; see [`HttpOptions`].

use crate::Res;
use schemars::JsonSchema;
use serde::Deserialize;
use switchyard::cli::{Mode, ServeArgs, serve};
use switchyard::prelude::*;
use switchyard_tasks::{InMemoryTaskStore, PostgresTaskStore, SqliteTaskStore, TasksExtension};
use tokio::io::AsyncBufReadExt;

/// The registration group of `echo` (its attribute's `group`), the only group the plain
/// servers serve. Linking `switchyard-mcp-tasks` (for the task-store rows) registers its
/// `tools/call` filter in group `"default"` for every server of this binary; selecting this
/// group keeps that filter, and its cost per call, off the rows that compare against rmcp and
/// the raw reference.
const ECHO_GROUP: &str = "bench";

/// The group of `echo_task` (its attribute's `group`), served only by the task-store roles.
const TASKS_GROUP: &str = "bench-tasks";

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// `echo` with its input schema written by hand (the one schemars derives for [`EchoArgs`]):
/// every call's arguments go through the JSON Schema validator before decoding. The `schema`
/// rows compare it with `echo`, whose derived schema decoding alone enforces.
#[mcp_tool(
    read_only,
    group = "bench",
    input_schema = r#"{"type":"object","properties":{"text":{"type":"string","description":"The text to send back."}},"required":["text"]}"#
)]
async fn echo_checked(args: EchoArgs) -> Result<String, ToolError> {
    Ok(args.text)
}

/// Arguments of `echo_task`.
#[derive(Deserialize, JsonSchema)]
struct TaskArgs {
    /// The text to send back.
    text: String,
}

/// Sends `text` back.
#[mcp_tool(read_only, group = "bench")]
async fn echo(args: EchoArgs) -> Result<String, ToolError> {
    Ok(args.text)
}

/// Sends `text` back at once; runs as a task when the request declares the Tasks extension.
#[mcp_tool(read_only, task_support = "optional", group = "bench-tasks")]
async fn echo_task(args: TaskArgs) -> Result<String, ToolError> {
    Ok(args.text)
}

fn server() -> Res<Server> {
    let builder = Server::builder("bench-switchyard", env!("CARGO_PKG_VERSION")).groups([ECHO_GROUP]);
    Ok(ready_filters(builder)?.build()?)
}

/// The ready filters named in `BENCH_FILTER` (comma-separated: `rate-limit`, `timeout`,
/// `concurrency`, `max-result-size`, `cache`, `mask-errors`, `audit`), each set so that it lets
/// every bench request through: what one filter costs per call (`benches/callgrind-stdio.sh`
/// with the variable set; docs/filters.md). Unset: none.
fn ready_filters(mut builder: switchyard::ServerBuilder) -> Res<switchyard::ServerBuilder> {
    use std::time::Duration;
    use switchyard::filters::*;
    let Ok(names) = std::env::var("BENCH_FILTER") else { return Ok(builder) };
    for (order, name) in names.split(',').filter(|n| !n.is_empty()).enumerate() {
        let order = i32::try_from(order)?;
        builder = match name {
            "rate-limit" => builder.raw_filter(order, RateLimit::new(Rate::new(u32::MAX, Duration::from_secs(1))?)),
            "timeout" => builder.raw_filter(order, Timeout::new(Duration::from_secs(30))),
            "concurrency" => builder.raw_filter(order, ConcurrencyLimit::new().tool("echo", 1 << 20)),
            "max-result-size" => builder.raw_filter(order, MaxResultSize::new(1 << 20)),
            // Every bench call has other arguments: each one a miss, then an insert.
            "cache" => builder
                .raw_filter(order, ResultCache::new(10_000).tool("echo", CachePolicy::public(Duration::from_secs(60)))),
            "mask-errors" => builder.raw_filter(order, MaskErrors::new()),
            "audit" => builder.raw_filter(order, Audit::new()),
            other => return Err(format!("BENCH_FILTER: unknown filter {other:?}").into()),
        };
    }
    Ok(builder)
}

/// Serves on stdin/stdout exactly as `cli::run` does for `--stdio`, with its tracing subscriber
/// (filtered by `RUST_LOG`, default `warn`).
pub async fn stdio() -> Res<()> {
    serve(server()?, &ServeArgs::from(Mode::Stdio)).await;
    Ok(())
}

/// Where the task-store role keeps its tasks (`--task-store`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreArg {
    /// `memory`: [`InMemoryTaskStore`].
    Memory,
    /// `sqlite:PATH`: [`SqliteTaskStore::open_for_server`] on the file `PATH`.
    Sqlite(String),
    /// `postgres:URL`: [`PostgresTaskStore::connect`] (the URL may carry
    /// `options=-c search_path=...`, which the harness uses for a fresh schema per run).
    Postgres(String),
}

/// Flags of the HTTP roles after the address; without any, the role is the plain `echo`
/// server the HTTP and fan-out rows measure.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// `--task-store memory|sqlite:PATH|postgres:URL`: install the Tasks extension with this
    /// store and serve `echo_task` (instead of `echo`).
    pub task_store: Option<TaskStoreArg>,
    /// `--hub nats:URL`: deliver listen events through NATS at `URL` instead of in process,
    /// so that the listen streams of every instance on the same subject hear each other's
    /// events. Needs the requestState key in the environment variable `BENCH_STATE_KEY`
    /// (every instance the same, at least 32 bytes), as a hub that spans instances must.
    pub nats: Option<String>,
    /// `--hub-subject SUBJECT`: the NATS subject the instances share (the hub's default
    /// otherwise); the harness draws a fresh one per run so runs never hear each other.
    pub subject: Option<String>,
    /// `--auth-issuer URL` (repeatable): [`ServeArgs::auth_issuer`], the runtime's flag of the
    /// same name. With [`auth_resource`](Self::auth_resource) the endpoint requires bearer
    /// tokens exactly as a `cli::run` binary started with both flags does (the `auth` rows).
    pub auth_issuers: Vec<String>,
    /// `--auth-resource URL`: [`ServeArgs::auth_resource`].
    pub auth_resource: Option<String>,
}

impl HttpOptions {
    /// Parses the flags above.
    pub fn parse(args: &[String]) -> Res<HttpOptions> {
        let mut o = HttpOptions::default();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
            match flag.as_str() {
                "--task-store" => {
                    let v = value()?;
                    o.task_store = Some(match v.split_once(':') {
                        _ if v == "memory" => TaskStoreArg::Memory,
                        Some(("sqlite", path)) => TaskStoreArg::Sqlite(path.to_owned()),
                        Some(("postgres", url)) => TaskStoreArg::Postgres(url.to_owned()),
                        _ => return Err(format!("--task-store {v:?}: memory, sqlite:PATH or postgres:URL").into()),
                    });
                }
                "--hub" => {
                    let v = value()?;
                    let url = v.strip_prefix("nats:").ok_or_else(|| format!("--hub {v:?}: nats:URL"))?;
                    o.nats = Some(url.to_owned());
                }
                "--hub-subject" => o.subject = Some(value()?),
                "--auth-issuer" => o.auth_issuers.push(value()?),
                "--auth-resource" => o.auth_resource = Some(value()?),
                other => return Err(format!("unknown flag {other:?}").into()),
            }
        }
        if o.auth_issuers.is_empty() != o.auth_resource.is_none() {
            return Err("--auth-issuer and --auth-resource go together".into());
        }
        Ok(o)
    }
}

async fn http_server(options: &HttpOptions) -> Res<Server> {
    let mut builder = Server::builder("bench-switchyard", env!("CARGO_PKG_VERSION"));
    if let Some(url) = &options.nats {
        let key = std::env::var("BENCH_STATE_KEY").map_err(|_| "--hub nats: needs BENCH_STATE_KEY")?;
        let mut hub = switchyard::subscriptions::nats::NatsHub::builder();
        if let Some(subject) = &options.subject {
            hub = hub.subject(subject.as_str());
        }
        let hub = hub.connect(url).await?;
        // `connect` returns with the link still down when the broker is slow or away, and a
        // listen stream opened then ends at once: start serving only once events flow.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !hub.is_connected() {
            if std::time::Instant::now() > deadline {
                return Err(format!("the NATS hub at {url} did not connect within 10 s").into());
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        builder = builder.delivery_hub(hub).request_state_key(key.into_bytes());
    }
    let Some(store) = &options.task_store else { return Ok(builder.groups([ECHO_GROUP]).build()?) };
    let tasks = TasksExtension::new();
    let tasks = match store {
        TaskStoreArg::Memory => tasks.store(InMemoryTaskStore::new()),
        TaskStoreArg::Sqlite(path) => tasks.store(SqliteTaskStore::open_for_server(path)?),
        TaskStoreArg::Postgres(url) => tasks.store(PostgresTaskStore::connect(url).await?),
    };
    // "default" holds the Tasks extension's own registrations (its filter and `tasks/*`).
    Ok(tasks.install(builder.groups([TASKS_GROUP, "default"])).build()?)
}

/// Serves Streamable HTTP at `addr` (prints `listening on http://ADDR/mcp` to stderr). Each
/// line `bump` on stdin publishes `notifications/tools/list_changed` to every listener: the
/// trigger of the fan-out benchmarks (with a NATS hub, to the listeners of every instance).
pub async fn http(addr: String, options: HttpOptions) -> Res<()> {
    let server = http_server(&options).await?;
    let publisher = server.publisher();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim() == "bump" {
                publisher.tools_list_changed();
            }
        }
    });
    let mut args = ServeArgs::from(Mode::Http(addr));
    args.auth_issuer = options.auth_issuers;
    args.auth_resource = options.auth_resource;
    serve(server, &args).await;
    Ok(())
}
