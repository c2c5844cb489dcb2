//! The three servers under test, each run as its own process (`bench role NAME ...`) so that
//! CPU time and memory are read per server from `/proc`.
//!
//! Every server answers the same `tools/call` of a tool named `echo` with arguments
//! `{"text": STRING}` by returning `STRING` as one text content block. The raw reference has a
//! second decoding (`raw-value-stdio`, `raw-value-http`; see [`raw`]).

pub mod ours;
pub mod raw;
pub mod rmcp_echo;

use crate::Res;

/// True when `BENCH_STDIO_RUNTIME=current-thread`: `ours-stdio` and `gateway-stdio` then run on
/// a current-thread runtime instead of a one-worker multi-thread one (benches/README.md).
pub fn stdio_on_current_thread() -> bool {
    std::env::var("BENCH_STDIO_RUNTIME").as_deref() == Ok("current-thread")
}

/// Runs the server role `name` with its arguments (an HTTP role: `ADDR`, then for `ours-http`
/// the flags of [`ours::HttpOptions`]); returns when the server stops.
pub fn run_role(name: &str, args: &[String]) -> Res<()> {
    // One runtime thread for every server: the issue compares servers on one core, and the
    // harness pins each server process to one CPU with taskset as well.
    // `ours-http-current` is the same server on a current-thread runtime: the fan-out rows show
    // both flavours (see docs/performance.md, "Listen fan-out").
    let rt = if name == "ours-http-current" || (name == "ours-stdio" && stdio_on_current_thread()) {
        tokio::runtime::Builder::new_current_thread().enable_all().build()?
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?
    };
    let addr = args.first().cloned().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    match name {
        "ours-stdio" => rt.block_on(ours::stdio()),
        "ours-http" | "ours-http-current" => {
            rt.block_on(ours::http(addr, ours::HttpOptions::parse(args.get(1..).unwrap_or_default())?))
        }
        "rmcp-stdio" => rt.block_on(rmcp_echo::stdio(false)),
        "rmcp-stdio-pipes" => rt.block_on(rmcp_echo::stdio(true)),
        "rmcp-http" => rt.block_on(rmcp_echo::http(addr, false)),
        "rmcp-http-legacy" => rt.block_on(rmcp_echo::http(addr, true)),
        // The raw stdio loop is plain blocking std I/O: no runtime at all. `raw-*` decode into
        // borrowed structs (the RAW column), `raw-value-*` into a `serde_json::Value`.
        "raw-stdio" => raw::stdio(raw::Decoding::Typed),
        "raw-value-stdio" => raw::stdio(raw::Decoding::Value),
        "raw-http" => rt.block_on(raw::http(addr, raw::Decoding::Typed)),
        "raw-value-http" => rt.block_on(raw::http(addr, raw::Decoding::Value)),
        other => Err(format!("unknown role {other:?}").into()),
    }
}
