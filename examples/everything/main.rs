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
//! The scale-out flags (`docs/scaling.md`) put the same server on shared backends, as one of
//! several instances would run: `--task-store postgres:URL` keeps tasks in PostgreSQL,
//! `--hub nats:URL` carries listen events through NATS (subject `switchyard.everything.events`),
//! `--state-key-env VAR` reads the requestState key from the environment variable `VAR`.

mod input;
mod prompts;
mod resources;
mod tasks;
mod tools;

use std::process::ExitCode;
use switchyard::Server;
use switchyard::cli;

const USAGE: &str = "usage: everything [--stdio | --http HOST:PORT] [--task-store memory|postgres:URL] \
                     [--hub nats:URL] [--state-key-env VAR]";

#[tokio::main]
async fn main() -> ExitCode {
    cli::init_tracing();
    let (mode, rest) = match cli::parse_args(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(e) => return usage(&e),
    };
    let mut builder = Server::builder("switchyard-everything", env!("CARGO_PKG_VERSION"))
        .instructions("Conformance fixtures: tools, resources, prompts and completions for every scenario.");
    // The Tasks extension (`tasks-*` scenarios), with the in-process executor and, unless a
    // flag says otherwise, the in-memory store.
    let mut tasks = switchyard_tasks::TasksExtension::new();
    let mut args = rest.into_iter();
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value.as_deref()) {
            ("--task-store", Some("memory")) => {}
            ("--task-store", Some(s)) if s.starts_with("postgres:") => {
                match switchyard_tasks::PostgresTaskStore::connect(&s["postgres:".len()..]).await {
                    Ok(store) => tasks = tasks.store(store),
                    // The URL may hold a password: name only the store in the message.
                    Err(e) => return fail(&format!("--task-store postgres: {e}")),
                }
            }
            ("--hub", Some(h)) if h.starts_with("nats:") => {
                let url = &h["nats:".len()..];
                match switchyard::subscriptions::NatsHub::builder()
                    .subject("switchyard.everything.events")
                    .connect(url)
                    .await
                {
                    Ok(hub) => builder = builder.delivery_hub(hub),
                    Err(e) => return fail(&format!("--hub {h}: {e}")),
                }
            }
            ("--state-key-env", Some(var)) => match std::env::var(var) {
                Ok(key) => builder = builder.request_state_key(key.into_bytes()),
                Err(_) => return usage(&format!("--state-key-env {var}: the environment variable {var} is not set")),
            },
            (flag, value) => return usage(&format!("unexpected argument {flag:?} {value:?}")),
        }
    }
    match tasks.install(builder).build() {
        Ok(server) => cli::serve(server, mode).await,
        Err(e) => fail(&e.to_string()),
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}\n{USAGE}");
    ExitCode::from(2)
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::FAILURE
}
