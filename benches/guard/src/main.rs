//! `callgrind-echo`: the `echo` tool of the benches' `ours-stdio` role
//! (benches/src/servers/ours.rs), served on stdin/stdout by `switchyard::cli` exactly as that
//! role serves it, on a current-thread tokio runtime.
//!
//! `benches/callgrind-guard.sh` runs it under callgrind and fails CI when the instructions per
//! `tools/call` grow. The current-thread runtime is what makes the count repeatable: on the
//! multi-thread runtime the reader, the request tasks and the writer batch differently from
//! run to run (±2.5%). `callgrind-echo multi` runs the bench role's one-worker multi-thread
//! runtime instead, for comparison.

use schemars::JsonSchema;
use serde::Deserialize;
use std::process::ExitCode;
use switchyard::cli::{Mode, ServeArgs, serve};
use switchyard::prelude::*;

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// Sends `text` back.
#[mcp_tool(read_only)]
async fn echo(args: EchoArgs) -> Result<String, ToolError> {
    Ok(args.text)
}

fn main() -> ExitCode {
    let multi = match std::env::args().nth(1).as_deref() {
        None | Some("current") => false,
        Some("multi") => true,
        Some(other) => {
            eprintln!("usage: callgrind-echo [current|multi] (not {other:?})");
            return ExitCode::from(2);
        }
    };
    let rt = if multi {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    };
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match Server::builder("callgrind-echo", env!("CARGO_PKG_VERSION")).build() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(serve(server, &ServeArgs::from(Mode::Stdio)))
}
