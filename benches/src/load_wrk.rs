//! The HTTP rows' load generator: `wrk` (Debian package `wrk`) with `echo.lua`, one thread
//! pinned to the load generator's CPU, `concurrency` keep-alive HTTP/1.1 connections.
//!
//! wrk is a separate process written in C: unlike the bench's own hyper client it outruns any
//! of the servers on one core, and the run proves it at c32 ([`generator_limit`]). Every answer is checked in the script; a run
//! with a wrong answer, a socket error or a timeout is an error here.

use crate::Res;
use crate::load_http::{Client, Wire};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The CPU wrk is pinned to (the servers have [`crate::proc::SERVER_CPU`]).
pub const GENERATOR_CPU: &str = "0";

/// The raw reference's c32 requests/s at which the generator is shown to be fast enough
/// whatever the CPUs were doing (the bench's own hyper client topped out near 50k on a machine
/// where raw hyper answers 135k, compressing every ratio to raw).
pub const RAW_FLOOR_RPS: f64 = 100_000.0;

/// How busy (percent of its core, CPU time over wall time) the raw reference must be, with
/// wrk under it, for a run under [`RAW_FLOOR_RPS`] to show that the server's core, not the
/// generator, set the pace.
pub const SATURATED_PCT: f64 = 90.0;

/// Why a c32 run cannot show that wrk was not the limit, from the medians of the cell's
/// `reference` server (the raw reference in the comparison rows; its requests/s, its CPU and
/// wrk's CPU percent of their cores); `None` when it can.
///
/// Valid when the reference reaches [`RAW_FLOOR_RPS`], or when it saturated its core
/// (≥ [`SATURATED_PCT`]) while wrk stayed under that: on a machine whose cores cannot serve
/// 100k requests/s, the server is then the bottleneck. Anything else (wrk near its whole core,
/// or both well under theirs because other processes or the hypervisor took the CPUs) is
/// invalid.
pub fn generator_limit(reference: &str, rps: f64, busy_pct: f64, wrk_pct: f64) -> Option<String> {
    if rps >= RAW_FLOOR_RPS || (busy_pct >= SATURATED_PCT && wrk_pct < SATURATED_PCT) {
        return None;
    }
    Some(format!(
        "{reference} answered {rps:.0} req/s at c32, under {RAW_FLOOR_RPS:.0}, with its server at \
         {busy_pct:.0}% and wrk at {wrk_pct:.0}% of their cores (valid needs the server at ≥ {SATURATED_PCT:.0}% \
         and wrk under it)"
    ))
}

const SCRIPT: &str = include_str!("echo.lua");

/// What one measured wrk run saw.
pub struct WrkRun {
    /// Checked answers per second.
    pub rps: f64,
    /// Latency percentiles from wrk's histogram, microseconds.
    pub p50_us: f64,
    pub p99_us: f64,
    /// Answers in the run (for CPU per request).
    pub count: u64,
    /// The run's wall time as wrk measured it, microseconds.
    pub wall_us: u64,
    /// wrk's CPU time over its wall time, percent of its one core: near 100 the generator
    /// may be what limits the run.
    pub generator_cpu_pct: f64,
}

/// The wrk binary (`BENCH_WRK`, else `wrk` on PATH), or an error saying how to get it.
fn wrk_binary() -> Res<PathBuf> {
    if let Some(p) = std::env::var_os("BENCH_WRK") {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("wrk"))
        .find(|p| p.is_file())
        .ok_or_else(|| "wrk not found: apt-get install -y wrk (or set BENCH_WRK)".into())
}

/// Where the script is written for wrk, which reads it by path (one file per harness process).
fn script_file() -> PathBuf {
    std::env::temp_dir().join(format!("switchyard-bench-echo-{}.lua", std::process::id()))
}

fn script_path() -> Res<PathBuf> {
    let path = script_file();
    if !path.exists() {
        std::fs::write(&path, SCRIPT)?;
    }
    Ok(path)
}

/// Removes the script file once the HTTP rows are done.
pub fn remove_script() {
    let _ = std::fs::remove_file(script_file());
}

/// The script's arguments for `wire`: legacy initializes `concurrency` sessions first (with
/// the bench's hyper client, untimed), as a client pool would hold one per connection. With
/// `bearer`, every request (the handshakes too) carries `Authorization: Bearer TOKEN`.
pub async fn script_args(url: &str, wire: Wire, concurrency: usize, bearer: Option<&str>) -> Res<Vec<String>> {
    let mut args = vec![if wire == Wire::Modern { "modern" } else { "legacy" }.to_owned()];
    if let Some(token) = bearer {
        args.push(format!("bearer={token}"));
    }
    if wire == Wire::Legacy {
        for _ in 0..concurrency {
            let mut c = Client::connect(url).await?;
            if let Some(token) = bearer {
                c = c.bearer(token);
            }
            let session = c.initialize().await?;
            if session.is_empty() {
                return Err("initialize answered without an Mcp-Session-Id".into());
            }
            args.push(session);
        }
    }
    Ok(args)
}

/// Runs wrk against `url` for `duration` (whole seconds, at least 1: wrk counts no finer) with
/// `concurrency` connections. `args` from [`script_args`].
pub fn run(url: &str, concurrency: usize, duration: Duration, args: &[String]) -> Res<WrkRun> {
    let wrk = wrk_binary()?;
    let script = script_path()?;
    let secs = duration.as_secs_f64().round().max(1.0) as u64;
    let mut argv: Vec<String> = vec![
        "-t1".into(),
        format!("-c{concurrency}"),
        format!("-d{secs}s"),
        // Generous: a timeout fails the run, and a server under callgrind (see
        // docs/performance.md) answers c32 in over a second.
        "--timeout".into(),
        "10s".into(),
        "-s".into(),
        script.display().to_string(),
        url.to_owned(),
        "--".into(),
    ];
    argv.extend(args.iter().cloned());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let children_before = children_cpu_micros()?;
    let out = pin(&wrk, &argv).output()?;
    let generator_us = children_cpu_micros()?.saturating_sub(children_before);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("wrk failed ({}): {}{}", out.status, stdout, String::from_utf8_lossy(&out.stderr)).into());
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SWITCHYARD-WRK "))
        .ok_or_else(|| format!("no result line from wrk: {stdout}"))?;
    let (fields, sample) = line.split_once(" sample=").unwrap_or((line, ""));
    let field = |name: &str| -> Res<u64> {
        let v = fields
            .split(' ')
            .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
            .ok_or_else(|| format!("wrk result without {name}: {line}"))?;
        Ok(v.parse()?)
    };
    let failures: Vec<String> = ["bad", "connect", "read", "write", "status", "timeout"]
        .iter()
        .filter_map(|k| field(k).ok().filter(|n| *n > 0).map(|n| format!("{k}={n}")))
        .collect();
    if !failures.is_empty() {
        return Err(
            format!("wrong answers or socket errors ({}); first wrong answer: {sample}", failures.join(" ")).into()
        );
    }
    let count = field("requests")?;
    let wall_us = field("duration_us")?.max(1);
    if count == 0 {
        return Err("wrk completed no request".into());
    }
    Ok(WrkRun {
        rps: count as f64 * 1e6 / wall_us as f64,
        p50_us: field("p50_us")? as f64,
        p99_us: field("p99_us")? as f64,
        count,
        wall_us,
        generator_cpu_pct: generator_us as f64 * 100.0 / wall_us as f64,
    })
}

/// `program args` pinned to [`GENERATOR_CPU`] (the harness is pinned there already when
/// taskset exists; this says so at the process that matters).
fn pin(program: &Path, args: &[&str]) -> Command {
    crate::proc::pinned(GENERATOR_CPU, program, args)
}

/// CPU time (user + system) of this process's children that have been waited for,
/// microseconds: its change across one wrk run is wrk's own CPU time (taskset execs wrk).
fn children_cpu_micros() -> Res<u64> {
    crate::proc::stat_micros(std::process::id(), 13, 14)
}
