//! The HTTP rows' load generator: `wrk` (Debian package `wrk`) with `echo.lua`, one thread
//! pinned to the load generator's CPU, `concurrency` keep-alive HTTP/1.1 connections.
//!
//! wrk is a separate process written in C: unlike the bench's own hyper client it keeps every
//! server but the typed raw reference from idling on one core, and it costs about what that
//! reference costs per request; each c32 run shows whether it was the limit
//! ([`generator_limit`], [`generator_note`]). Every answer is checked in the script; a run with
//! a wrong answer, a socket error or a timeout is an error here.

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

/// How busy (percent of its core, CPU time over wall time) the raw reference must be for a
/// run under [`RAW_FLOOR_RPS`] to show that the server's core, not the generator, set the pace
/// ([`generator_limit`]); wrk at this share or more makes the reference's figures bounds
/// ([`generator_note`]).
pub const SATURATED_PCT: f64 = 90.0;

/// The most wrk may spend per answer, as a fraction of what the reference server spends, for a
/// run whose server is under [`SATURATED_PCT`] to show that wrk's core was not the limit: wrk's
/// core could then keep a server 1 / 0.75 = 1.33 times the reference's speed busy.
pub const HEADROOM_MAX: f64 = 0.75;

/// The most CPU other processes may take on the two cores (percent of one core, median over the
/// reference's turns) for [`HEADROOM_MAX`] to count: when they take more, neither side's share
/// of its core says what it needed.
pub const OTHERS_MAX_PCT: f64 = 10.0;

/// The medians of a c32 cell's reference server that decide whether wrk was not the limit.
pub struct Reference<'a> {
    /// How the message names it (`the raw reference`).
    pub name: &'a str,
    pub rps: f64,
    /// The server's and wrk's CPU percent of their cores.
    pub busy_pct: f64,
    pub wrk_pct: f64,
    /// Other processes' CPU on the two cores, percent of one core.
    pub others_pct: f64,
}

/// Why a c32 run cannot show that wrk was not the limit, from the medians of the cell's
/// reference server (the raw reference in the comparison rows); `None` when it can.
///
/// Valid when one of these holds:
/// - the reference reached [`RAW_FLOOR_RPS`];
/// - the reference saturated its core (≥ [`SATURATED_PCT`]), and either wrk stayed under that
///   (the server set the pace) or other processes took at most [`OTHERS_MAX_PCT`] of the two
///   cores. wrk may be near its whole core too: it does the same socket work per request as
///   the reference (a write, a read, an epoll wake-up; removing all of the script's Lua does
///   not make it cheaper, measured in docs/performance.md, "HTTP: wrk"), so no generator on
///   the other core can stay far under a server that costs no more than that. The cell then
///   says what that bounds ([`generator_note`]);
/// - wrk spent at most [`HEADROOM_MAX`] of the server's CPU per answer (its share of its core
///   over the server's share of its own) while other processes took at most
///   [`OTHERS_MAX_PCT`] of the two cores: wrk's core had room for a faster server. A cheap
///   server on one core with wrk on the other need not saturate at 32 connections: each side
///   waits for the other's wake-up (on a VM an idle vCPU wakes in tens of µs), and wrk reads
///   every ready answer before it writes the next requests, so the server idles while wrk works
///   through a batch. That is the round trip of 32 clients on this machine, the same for every
///   server, not a generator too slow to keep up; the server CPU per request row compares the
///   servers' costs whatever their share of the core.
///
/// Anything else (the reference idle part of the time while wrk was near its whole core or near
/// the server's cost, or both sides busy with other processes on the cores) is invalid.
pub fn generator_limit(r: &Reference) -> Option<String> {
    let headroom = r.wrk_pct / r.busy_pct.max(1.0);
    let quiet = r.others_pct <= OTHERS_MAX_PCT;
    if r.rps >= RAW_FLOOR_RPS
        || (r.busy_pct >= SATURATED_PCT && (r.wrk_pct < SATURATED_PCT || quiet))
        || (headroom <= HEADROOM_MAX && quiet)
    {
        return None;
    }
    Some(format!(
        "{} answered {:.0} req/s at c32, under {RAW_FLOOR_RPS:.0}, with its server at {:.0}% and wrk at {:.0}% \
         of their cores (wrk {headroom:.2} of the server's CPU per answer) and other processes at {:.0}% of a \
         core; valid needs the server at ≥ {SATURATED_PCT:.0}% (with wrk under that or other processes at \
         most {OTHERS_MAX_PCT:.0}%), or wrk at most {HEADROOM_MAX} of the server with other processes at most \
         {OTHERS_MAX_PCT:.0}%",
        r.name, r.rps, r.busy_pct, r.wrk_pct, r.others_pct
    ))
}

/// For a c32 cell whose wrk spent [`SATURATED_PCT`] or more of its core against the reference:
/// what the reference's figures then bound. Its requests/s is what one core of wrk drove, a
/// floor of what it can answer; its CPU per request may hold wake-ups and small batches that a
/// faster generator would have spared it, an upper bound. The OURS/RAW ratios of CPU per
/// request are then lower bounds (the servers that cost more kept wrk under its core), and
/// callgrind's instructions per request, which no generator affects, are the figure to hold
/// them against. `None` when wrk stayed under [`SATURATED_PCT`].
pub fn generator_note(r: &Reference) -> Option<String> {
    (r.wrk_pct >= SATURATED_PCT).then(|| {
        format!(
            "wrk was at {:.0}% of its core against {} ({:.0}% of its own): its {:.0} req/s is a floor of what it \
             can answer and its CPU per request an upper bound, so the other columns' ratios of CPU per request \
             to it are lower bounds (callgrind's instructions per request do not depend on the generator)",
            r.wrk_pct, r.name, r.busy_pct, r.rps
        )
    })
}

/// The generator probe of a c32 cell (info, not part of [`generator_limit`]): the reference
/// server under alternating wrk runs with and without the script's answer checks
/// (`response()`, which makes wrk hand every answer's headers and body to Lua), the medians of
/// each. It shows what checking every answer costs the generator and the reference's pace.
pub struct Probe {
    /// Requests/s with every answer checked (as the table's runs).
    pub checked_rps: f64,
    /// Requests/s without the checks.
    pub unchecked_rps: f64,
    /// wrk's CPU percent of its core, with and without the checks.
    pub checked_wrk_pct: f64,
    pub unchecked_wrk_pct: f64,
}

impl Probe {
    /// How much faster the reference answered without the checks (a fraction; negative when
    /// slower).
    pub fn gain(&self) -> f64 {
        self.unchecked_rps / self.checked_rps.max(1.0) - 1.0
    }
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
    /// wrk's CPU time, microseconds.
    pub generator_us: u64,
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
/// `concurrency` connections, checking every answer. `args` from [`script_args`].
pub fn run(url: &str, concurrency: usize, duration: Duration, args: &[String]) -> Res<WrkRun> {
    run_checking(url, concurrency, duration, args, true)
}

/// [`run`] without the script's `response()`: only socket errors and statuses of 400 and
/// over fail it. The generator probe ([`Probe`]); never a figure of the table.
pub fn run_unchecked(url: &str, concurrency: usize, duration: Duration, args: &[String]) -> Res<WrkRun> {
    run_checking(url, concurrency, duration, args, false)
}

fn run_checking(url: &str, concurrency: usize, duration: Duration, args: &[String], check: bool) -> Res<WrkRun> {
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
    if !check {
        argv.push("nocheck".into());
    }
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
        generator_us,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(rps: f64, busy_pct: f64, wrk_pct: f64, others_pct: f64) -> Reference<'static> {
        Reference { name: "the raw reference", rps, busy_pct, wrk_pct, others_pct }
    }

    #[test]
    fn a_busy_reference_is_valid_on_quiet_cores_with_a_note_when_wrk_was_busy_too() {
        // The afternoon runs of 2026-12-06: both sides near their whole cores, nothing else.
        let r = reference(94_472.0, 97.0, 96.0, 0.0);
        assert_eq!(generator_limit(&r), None);
        let note = generator_note(&r).expect("a note");
        assert!(note.contains("a floor") && note.contains("lower bound"), "{note}");
        // Both busy while other processes used the cores: neither share says what it needed.
        assert!(generator_limit(&reference(94_472.0, 97.0, 96.0, 25.0)).is_some());
        // The reference busy with wrk under it: the server set the pace, whatever else ran.
        let r = reference(90_000.0, 95.0, 80.0, 25.0);
        assert_eq!(generator_limit(&r), None);
        assert_eq!(generator_note(&r), None);
        // The boundaries are inclusive.
        assert_eq!(generator_limit(&reference(90_000.0, SATURATED_PCT, SATURATED_PCT, OTHERS_MAX_PCT)), None);
        assert!(generator_note(&reference(90_000.0, SATURATED_PCT, SATURATED_PCT, 0.0)).is_some());
        // Over the floor the run is valid, and a busy wrk still bounds the reference's figures.
        assert_eq!(generator_limit(&reference(112_690.0, 98.9, 98.3, 2.4)), None);
        assert!(generator_note(&reference(112_690.0, 98.9, 98.3, 2.4)).is_some());
        assert_eq!(generator_note(&reference(112_690.0, 98.9, 85.0, 0.0)), None);
    }

    #[test]
    fn an_idle_reference_needs_headroom_on_quiet_cores() {
        // The quiet-machine case of the issue: 80% and 51%.
        assert_eq!(generator_limit(&reference(60_000.0, 80.0, 51.0, 0.0)), None);
        // The same with other processes on the cores.
        assert!(generator_limit(&reference(60_000.0, 80.0, 51.0, 30.0)).is_some());
        // wrk near the server's cost while the server idles: wrk may have set the pace.
        let why = generator_limit(&reference(80_000.0, 85.0, 97.0, 0.0)).expect("invalid");
        assert!(why.contains("85%") && why.contains("97%"), "{why}");
    }
}
