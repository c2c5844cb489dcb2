//! `everything`: an MCP server that offers every fixture the official conformance suite
//! (`@modelcontextprotocol/conformance`) probes, written with Switchyard's macros.
//!
//! ```text
//! cargo run --example everything -- --http 127.0.0.1:3000   # then point the suite at /mcp
//! cargo run --example everything -- --stdio
//! cargo run --example everything -- --http 127.0.0.1:3000 --task-store postgres:postgres://postgres@127.0.0.1/test \
//!     --hub nats:nats://127.0.0.1:4222 --state-key-env SWITCHYARD_STATE_KEY
//! ```
//!
//! The Skills extension serves the skills of `examples/everything/skills/`, embedded in the
//! binary (two per `skills/list` page, so the listing has several pages); `--skills-dir DIR`
//! serves a folder instead and reloads it when its files change. The MCP Apps extension
//! links `test_app_view` (and the app-only `test_app_refresh`) to the view `ui://everything/card`,
//! for clients that declare `io.modelcontextprotocol/ui`.
//!
//! The scale-out flags (`docs/scaling.md`) put the same server on shared backends, as one of
//! several instances would run: `--task-store postgres:URL` keeps tasks in PostgreSQL,
//! `--hub nats:URL` carries listen events through NATS (subject `switchyard.everything.events`),
//! `--state-key-env VAR` reads the requestState key from the environment variable `VAR`;
//! `--previous-state-key-env VAR` (repeatable) a key being rotated out, whose states are still
//! accepted.

mod apps;
mod input;
mod prompts;
mod resources;
mod tasks;
mod tools;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use switchyard::Server;
use switchyard::cli::{self, ServeArgs};

/// Every fixture the MCP conformance suite probes.
#[derive(Parser)]
#[command(name = "everything", version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// Where tasks are kept: memory or postgres:URL [default: memory].
    #[arg(long, value_name = "STORE", value_parser = parse_task_store)]
    task_store: Option<TaskStore>,
    /// Carry listen events through NATS (subject switchyard.everything.events).
    #[arg(long, value_name = "nats:URL", value_parser = parse_hub)]
    hub: Option<String>,
    /// Read the requestState key (at least 32 bytes) from the environment variable VAR.
    #[arg(long, value_name = "VAR", value_parser = read_key_var)]
    state_key_env: Option<StateKey>,
    /// Also accept requestStates sealed with the key in the environment variable VAR (a key
    /// being rotated out; repeatable).
    #[arg(long, value_name = "VAR", value_parser = read_key_var)]
    previous_state_key_env: Vec<StateKey>,
    /// Serve the skills of this folder (reloaded when it changes) instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    skills_dir: Option<PathBuf>,
}

/// `--task-store`.
#[derive(Clone)]
enum TaskStore {
    Memory,
    Postgres(String),
}

/// The requestState key `--state-key-env` read.
#[derive(Clone)]
struct StateKey(Vec<u8>);

fn parse_task_store(s: &str) -> Result<TaskStore, String> {
    if s == "memory" {
        Ok(TaskStore::Memory)
    } else if let Some(url) = s.strip_prefix("postgres:").filter(|u| !u.is_empty()) {
        Ok(TaskStore::Postgres(url.to_owned()))
    } else {
        Err("memory or postgres:URL".to_owned())
    }
}

fn parse_hub(s: &str) -> Result<String, String> {
    s.strip_prefix("nats:").filter(|u| !u.is_empty()).map(str::to_owned).ok_or_else(|| "nats:URL".to_owned())
}

fn read_key_var(var: &str) -> Result<StateKey, String> {
    std::env::var(var)
        .map(|key| StateKey(key.into_bytes()))
        .map_err(|_| format!("the environment variable {var} is not set"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.serve.init_tracing();
    let mut builder = Server::builder("switchyard-everything", env!("CARGO_PKG_VERSION"))
        .title("Switchyard everything server")
        .description("Every MCP feature Switchyard serves, for the conformance suite and the wire tests")
        .website_url("https://github.com/switchyard-rs/switchyard")
        .icon(switchyard::Icon::new("https://modelcontextprotocol.io/favicon.ico").sizes(["any"]))
        .instructions("Conformance fixtures: tools, resources, prompts and completions for every scenario.");
    // The Tasks extension (`tasks-*` scenarios), with the in-process executor and, unless a
    // flag says otherwise, the in-memory store.
    let mut tasks = switchyard_tasks::TasksExtension::new();
    if let Some(TaskStore::Postgres(url)) = &cli.task_store {
        // An instance may start before its database: keep trying for a minute.
        match switchyard_tasks::PostgresTaskStore::connect_waiting(url, std::time::Duration::from_secs(60)).await {
            Ok(store) => tasks = tasks.store(store),
            // The URL may hold a password: name only the store in the message.
            Err(e) => return fail(&format!("--task-store postgres: {e}")),
        }
    }
    if let Some(url) = &cli.hub {
        match switchyard::subscriptions::nats::NatsHub::builder()
            .subject("switchyard.everything.events")
            .connect(url)
            .await
        {
            Ok(hub) => builder = builder.delivery_hub(hub),
            Err(e) => return fail(&format!("--hub nats:{url}: {e}")),
        }
    }
    if let Some(StateKey(key)) = &cli.state_key_env {
        builder = builder.request_state_key(key.clone());
    }
    for StateKey(key) in &cli.previous_state_key_env {
        builder = builder.request_state_previous_key(key.clone());
    }
    // The Skills extension (`sep-2640-*` scenarios).
    let skills = match &cli.skills_dir {
        Some(dir) => switchyard_skills::SkillsExtension::from_dir(dir),
        None => switchyard_skills::SkillsExtension::embedded(switchyard_skills::include_skills!("everything/skills")),
    };
    let skills = match skills {
        Ok(skills) => skills.page_size(2),
        Err(e) => return fail(&format!("skills: {e}")),
    };
    let library = skills.library();
    let server = match apps::apps().install(skills.install(tasks.install(builder))).build() {
        Ok(server) => server,
        Err(e) => return fail(&e.to_string()),
    };
    // Kept until the server stops: dropping the watcher ends the watch.
    let _watcher = match &cli.skills_dir {
        Some(_) => match library.watch(&server) {
            Ok(watcher) => Some(watcher),
            Err(e) => return fail(&format!("--skills-dir: {e}")),
        },
        None => None,
    };
    cli::serve(server, &cli.serve).await
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::FAILURE
}
