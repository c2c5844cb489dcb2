//! The shared command line of Switchyard server binaries:
//!
//! - `--stdio`: serve on stdin/stdout (the default when no flag is given);
//! - `--http HOST:PORT`: serve Streamable HTTP at `/mcp`, printing exactly one line
//!   `listening on http://HOST:PORT/mcp` to stderr once connections are accepted (`PORT` 0
//!   picks a free port; the line shows the real one; the path is
//!   [`ServeOptions::http`]'s, `/mcp` by default).
//!
//! SIGTERM, Ctrl-C and (on stdio) EOF shut the server down gracefully. Logs go to stderr only,
//! filtered by `RUST_LOG` (default `warn`).

use crate::auth::{BearerAuth, Principal};
use crate::server::Server;
use crate::transport::http::{HttpConfig, router, serve_app};
use crate::transport::stdio::{self, StdioConfig};
use std::process::ExitCode;

/// How to serve, parsed from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// `--stdio`
    Stdio,
    /// `--http ADDR`
    Http(String),
}

/// Parses `--stdio` / `--http ADDR` from `args` (without the program name). Unknown arguments
/// are returned in the second element so a binary can read its own flags.
///
/// Errors: a message for `--http` without an address or both modes at once.
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<(Mode, Vec<String>), String> {
    let mut mode = None;
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let next = match a.as_str() {
            "--stdio" => Mode::Stdio,
            "--http" => Mode::Http(it.next().ok_or("--http needs an address, e.g. --http 127.0.0.1:3000")?),
            _ => {
                rest.push(a);
                continue;
            }
        };
        if mode.replace(next).is_some() {
            return Err("give one of --stdio or --http ADDR".to_owned());
        }
    }
    Ok((mode.unwrap_or(Mode::Stdio), rest))
}

/// Sends `tracing` output to stderr (never stdout, which belongs to the stdio transport).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let color = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(color).with_writer(std::io::stderr).try_init();
}

/// Transport options of [`serve_with`].
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// HTTP: authenticate bearer tokens with this layer (see [`auth`](crate::auth)).
    pub auth: Option<BearerAuth>,
    /// stdio: the principal the peer acts as (stdio has no authentication of its own).
    pub principal: Option<Principal>,
    /// HTTP: the transport configuration (default [`HttpConfig::default`]: path `/mcp`,
    /// localhost only, keep-alive comments every 15 s, ...).
    pub http: HttpConfig,
}

/// Serves `server` in `mode` until shutdown. Returns the process exit code: 0 after a graceful
/// shutdown, 1 when the address cannot be bound or I/O fails (the reason is printed to stderr).
pub async fn serve(server: Server, mode: Mode) -> ExitCode {
    serve_with(server, mode, ServeOptions::default()).await
}

/// [`serve`] with transport options (authentication, the HTTP configuration).
pub async fn serve_with(server: Server, mode: Mode, options: ServeOptions) -> ExitCode {
    spawn_signal_handler(server.clone());
    let result = match mode {
        Mode::Stdio => {
            let config = StdioConfig::default().principal(options.principal);
            let (reader, writer) = stdio::process_streams();
            // On a runtime worker rather than in `block_on` on the main thread: requests are
            // spawned tasks, and a reader on the main thread handed each one to a worker and
            // back (a futex wake per request, and allocations freed across threads).
            let result = match tokio::spawn(stdio::serve_io(server, reader, writer, config)).await {
                Ok(r) => r,
                Err(e) => Err(std::io::Error::other(format!("the stdio transport stopped: {e}"))),
            };
            // tokio reads stdin on a blocking thread that a runtime cannot interrupt: after a
            // shutdown with stdin still open, returning from main would wait for input forever.
            // Everything is written and flushed at this point, so end the process here.
            let code = if result.is_ok() { 0 } else { 1 };
            if let Err(e) = &result {
                eprintln!("error: {e}");
            }
            std::process::exit(code);
        }
        Mode::Http(addr) => match tokio::net::TcpListener::bind(&addr).await {
            Ok(listener) => {
                match listener.local_addr() {
                    Ok(a) => eprintln!("listening on http://{a}{}", options.http.path),
                    Err(e) => return fail(&format!("cannot read the bound address: {e}")),
                }
                let shutdown = server.shutdown_token().clone();
                let mut app = router(server, options.http);
                if let Some(auth) = options.auth {
                    app = app.layer(auth);
                }
                serve_app(listener, app, shutdown).await
            }
            Err(e) => return fail(&format!("cannot listen on {addr}: {e}")),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e.to_string()),
    }
}

/// The usage text of [`run`].
pub const USAGE: &str = "usage: SERVER [--stdio | --http HOST:PORT]\n  --stdio           serve MCP on stdin/stdout (the default)\n  --http HOST:PORT  serve Streamable HTTP at http://HOST:PORT/mcp (PORT 0 picks a free port)";

/// Parses the process arguments, sets up tracing and serves; for a binary's `main`.
///
/// `--help` prints [`USAGE`] and exits 0; an argument it does not know prints the usage and
/// exits 2 (binaries with flags of their own call [`parse_args`] and [`serve`] instead).
pub async fn run(server: Server) -> ExitCode {
    init_tracing();
    match parse_args(std::env::args().skip(1)) {
        Ok((_, rest)) if rest.iter().any(|a| a == "--help" || a == "-h") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok((mode, rest)) if rest.is_empty() => serve(server, mode).await,
        Ok((_, rest)) => {
            eprintln!("error: unknown argument {:?}\n{USAGE}", rest[0]);
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::FAILURE
}

fn spawn_signal_handler(server: Server) {
    // Register the handlers before anything is served: registering inside the spawned task raced
    // with the listener, and a SIGTERM that arrived first killed the process with the default
    // action instead of shutting it down.
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
            tracing::warn!("cannot install the SIGTERM/SIGINT handlers; signals end the process abruptly");
            return;
        };
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            server.shutdown();
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_modes_and_keeps_other_flags() {
        assert_eq!(parse_args(args(&[])).map(|r| r.0), Ok(Mode::Stdio));
        let (mode, rest) = parse_args(args(&["--http", "127.0.0.1:0", "--tasks"])).expect("valid");
        assert_eq!(mode, Mode::Http("127.0.0.1:0".into()));
        assert_eq!(rest, vec!["--tasks".to_string()]);
        assert!(parse_args(args(&["--http"])).is_err());
        assert!(parse_args(args(&["--stdio", "--http", "x"])).is_err());
    }
}
