//! A gateway: one MCP endpoint serving the items of several upstream MCP servers, each under a
//! prefix of its own, beside a tool of its own (`gateway_status`). docs/composition.md,
//! "Proxying and gateways", walks through it.
//!
//! Each `--upstream NAME:PREFIX:TARGET` adds one upstream: TARGET is an `http://` or `https://`
//! URL (Streamable HTTP), or a command line (split at spaces, no quoting) started as a child and
//! spoken to over stdio. Two upstreams, one written with the official Python SDK and one ours,
//! served over stdio:
//!
//! ```text
//! tests/oauth/install.sh python
//! cargo build --example quickstart
//! cargo run --example gateway -- --stdio \
//!   --upstream 'py:py_:tests/oauth/.venv/bin/python tests/gateway/upstream.py' \
//!   --upstream 'ours:ours_:target/debug/examples/quickstart --stdio'
//! ```
//!
//! `--http` instead of `--stdio` serves the gateway over Streamable HTTP (see `--help`).

use clap::Parser;
use std::process::ExitCode;
use std::time::Duration;
use switchyard::cli::{self, ServeArgs};
use switchyard::server::DynamicTool;
use switchyard::{Server, ToolAnnotations, ToolError};
use switchyard_gateway::{Gateway, Upstream};

/// One endpoint for several MCP servers.
#[derive(Parser)]
#[command(name = "gateway", version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// An upstream: NAME:PREFIX:TARGET, TARGET an http(s) URL or a command line (repeatable).
    #[arg(long = "upstream", value_name = "NAME:PREFIX:TARGET", value_parser = parse_upstream)]
    upstreams: Vec<Upstream>,
}

/// `--upstream NAME:PREFIX:TARGET`.
fn parse_upstream(spec: &str) -> Result<Upstream, String> {
    let mut parts = spec.splitn(3, ':');
    let (Some(name), Some(prefix), Some(target)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("expected NAME:PREFIX:TARGET".to_owned());
    };
    let upstream = if target.starts_with("http://") || target.starts_with("https://") {
        Upstream::http(name, target)
    } else {
        let mut words = target.split_whitespace();
        let Some(program) = words.next() else { return Err("the command is empty".to_owned()) };
        Upstream::stdio(name, program, words)
    };
    // Calls that take longer than this are answered as failed (SWITCHYARD_GATEWAY_CALL_TIMEOUT_MS).
    let timeout = std::env::var("SWITCHYARD_GATEWAY_CALL_TIMEOUT_MS").ok().and_then(|ms| ms.parse().ok());
    let upstream = upstream.prefix(prefix).uri_prefix(format!("{name}+"));
    Ok(match timeout {
        Some(ms) => upstream.call_timeout(Duration::from_millis(ms)),
        None => upstream,
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Over stdio the gateway moves messages between two or more pipes, and one thread does that
    // best: a current-thread runtime runs the tasks a burst of messages wakes in order, so each
    // pipe gets one write per burst, where a multi-thread runtime's worker runs each woken
    // writer at once and writes message by message (docs/composition.md, "The reader on the
    // main thread"). Over HTTP it serves many clients, on every core.
    let runtime = if matches!(cli.serve.mode(), cli::Mode::Stdio) {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    };
    match runtime {
        Ok(runtime) => runtime.block_on(serve(cli)),
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(cli: Cli) -> ExitCode {
    cli.serve.init_tracing();
    let server = match Server::builder("switchyard-gateway", env!("CARGO_PKG_VERSION"))
        .description("Serves the tools, prompts and resources of several MCP servers")
        .build()
    {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let gateway = cli.upstreams.into_iter().fold(Gateway::new(), Gateway::upstream);
    let gateway = match gateway.attach(&server).await {
        Ok(gateway) => gateway,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The gateway's own tool, served beside the upstreams' whatever state they are in.
    let status = DynamicTool::new("gateway_status", move |_ctx, _args: serde_json::Value| {
        let statuses = gateway.statuses();
        async move {
            let lines: Vec<String> = statuses.iter().map(|s| format!("{}: {:?}", s.name, s.state)).collect();
            Ok::<_, ToolError>(lines.join("\n"))
        }
    })
    .description("The state of each upstream")
    .annotations(ToolAnnotations::new().read_only_hint(true));
    if let Err(e) = server.add_tool(status) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    cli::serve(server, &cli.serve).await
}
