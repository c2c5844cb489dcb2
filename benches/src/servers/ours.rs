//! Switchyard: the `echo` tool as a user writes it, served through `switchyard::cli`.

use crate::Res;
use schemars::JsonSchema;
use serde::Deserialize;
use switchyard::cli::{Mode, serve};
use switchyard::prelude::*;
use tokio::io::AsyncBufReadExt;

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

fn server() -> Res<Server> {
    Ok(Server::builder("bench-switchyard", env!("CARGO_PKG_VERSION")).build()?)
}

/// Serves on stdin/stdout exactly as `cli::run` does for `--stdio`.
pub async fn stdio() -> Res<()> {
    serve(server()?, Mode::Stdio).await;
    Ok(())
}

/// Serves Streamable HTTP at `addr` (prints `listening on http://ADDR/mcp` to stderr). Each
/// line `bump` on stdin publishes `notifications/tools/list_changed` to every listener: the
/// trigger of the fan-out benchmark.
pub async fn http(addr: String) -> Res<()> {
    let server = server()?;
    let publisher = server.publisher();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim() == "bump" {
                publisher.tools_list_changed();
            }
        }
    });
    serve(server, Mode::Http(addr)).await;
    Ok(())
}
