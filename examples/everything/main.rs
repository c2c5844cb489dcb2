//! `everything`: an MCP server that offers every fixture the official conformance suite
//! (`@modelcontextprotocol/conformance`) probes, written with Switchyard's macros.
//!
//! ```text
//! cargo run --example everything -- --http 127.0.0.1:3000   # then point the suite at /mcp
//! cargo run --example everything -- --stdio
//! ```

mod input;
mod prompts;
mod resources;
mod tasks;
mod tools;

use std::process::ExitCode;
use switchyard::Server;

#[tokio::main]
async fn main() -> ExitCode {
    let builder = Server::builder("switchyard-everything", env!("CARGO_PKG_VERSION"))
        .instructions("Conformance fixtures: tools, resources, prompts and completions for every scenario.");
    // The Tasks extension (`tasks-*` scenarios), with its in-memory store and in-process executor.
    let server = match switchyard_tasks::TasksExtension::new().install(builder).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    switchyard::cli::run(server).await
}
