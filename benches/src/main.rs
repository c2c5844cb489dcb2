//! `bench`: Switchyard against rmcp (the official Rust SDK) and a raw reference (hyper +
//! serde_json; a plain read-parse-write loop on stdio), measured interleaved in one run.
//!
//! ```text
//! cargo run --release -p switchyard-bench -- [--quick] [--only stdio,http,fanout,compile,schema] [--repeats N] [--allow-invalid] [--write-docs]
//! ```
//!
//! `--only` also takes `fanout-h1` or `fanout-h2` (one wire of the fan-out rows); `--repeats`
//! overrides how often each figure is measured (1 quick, 3 full; the HTTP rows run 6 rounds
//! per repeat, 3 quick: see [`http`]).
//!
//! The HTTP rows are driven by `wrk` (`load_wrk`), and a run that cannot show the generator
//! was not the limit (`load_wrk::generator_limit`) is invalid: it fails after printing, unless
//! `--allow-invalid`.
//! `--write-docs` writes the HTTP rows and their plot into `docs/` (see `report`).
//!
//! The scale-out rows run only when asked for: `--only scale` (or `scale-tasks`, `scale-http`,
//! `scale-fanout`). They need PostgreSQL, HAProxy and NATS (see `scale`), which a plain run
//! should not depend on, and they print in columns of their own (a header line per section).
//!
//! Prints one row per figure, tab-separated:
//! `NAME<TAB>OURS<TAB>RMCP<TAB>RAW<TAB>OURS/RMCP<TAB>OURS/RAW`; `(higher)` or `(lower)` in
//! NAME says which way is better; `n/a` where a server has no equivalent. Servers are separate
//! processes (`bench role NAME`) pinned to CPU 1; the load generators run on CPU 0.

mod compile;
mod fanout;
mod load_http;
mod load_stdio;
mod load_wrk;
mod proc;
mod report;
mod scale;
mod servers;
mod table;

use load_http::Wire;
use report::HttpOutcome;
use std::time::Duration;
use table::{Columns, Figure, Table};

/// The harness's error type: every failure ends the run with its message.
pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Sizes of one run.
struct Plan {
    quick: bool,
    stdio_requests: usize,
    http_warmup: Duration,
    http_measure: Duration,
    /// The HTTP rows: how many rounds each cell runs, one slice of [`Plan::http_slice`] per
    /// server per round (see [`http`]).
    http_rounds: usize,
    /// The HTTP rows: the length of one measured wrk run (whole seconds: wrk counts no finer).
    http_slice: Duration,
    subscriptions: usize,
    tools: usize,
    repeats: usize,
    only: Option<Vec<String>>,
    /// `--allow-invalid`: print an invalid HTTP run's table and exit 0 (e.g. a smoke test on
    /// a busy machine); without it such a run fails after printing.
    allow_invalid: bool,
    /// `--write-docs`: put the HTTP rows and their plot into `docs/` (a valid run, or with
    /// `--allow-invalid` an invalid one marked as such).
    write_docs: bool,
}

impl Plan {
    fn wants(&self, group: &str) -> bool {
        self.only.as_ref().is_none_or(|o| o.iter().any(|g| g == group))
    }

    /// The fan-out rows over one wire (`h1`, `h2`): wanted with `fanout` or `fanout-WIRE`.
    fn wants_fanout(&self, wire: &str) -> bool {
        self.wants("fanout") || self.wants(&format!("fanout-{wire}"))
    }

    /// A scale-out group (`tasks`, `http`, `fanout`): only when named, as `scale` or
    /// `scale-GROUP` (see the crate docs).
    fn wants_scale(&self, group: &str) -> bool {
        let named = |g: &str| self.only.as_ref().is_some_and(|o| o.iter().any(|x| x == g));
        named("scale") || named(&format!("scale-{group}"))
    }
}

fn parse(args: &[String]) -> Res<Plan> {
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .map(|i| args.get(i + 1).ok_or("--only needs a list, e.g. --only stdio,http"))
        .transpose()?
        .map(|l| l.split(',').map(str::to_owned).collect());
    let repeats = args
        .iter()
        .position(|a| a == "--repeats")
        .map(|i| args.get(i + 1).and_then(|n| n.parse::<usize>().ok()).filter(|n| *n > 0))
        .map(|n| n.ok_or("--repeats needs a positive count"))
        .transpose()?;
    let plan = if quick {
        Plan {
            quick,
            stdio_requests: 20_000,
            http_warmup: Duration::from_millis(200),
            http_measure: Duration::from_secs(1),
            http_rounds: 3,
            http_slice: Duration::from_secs(1),
            subscriptions: 1_000,
            tools: 20,
            repeats: 1,
            only,
            allow_invalid: false,
            write_docs: false,
        }
    } else {
        Plan {
            quick,
            stdio_requests: 100_000,
            http_warmup: Duration::from_secs(1),
            http_measure: Duration::from_secs(5),
            http_rounds: 18,
            http_slice: Duration::from_secs(1),
            subscriptions: 10_000,
            tools: 200,
            repeats: 3,
            only,
            allow_invalid: false,
            write_docs: false,
        }
    };
    let allow_invalid = args.iter().any(|a| a == "--allow-invalid");
    let write_docs = args.iter().any(|a| a == "--write-docs");
    // One figure of the other groups is one repeat; a round of the HTTP rows is a fraction of
    // one (1 s, not 5), so `--repeats` keeps their proportion.
    let http_rounds = repeats.map_or(plan.http_rounds, |n| n * plan.http_rounds / plan.repeats);
    Ok(Plan { repeats: repeats.unwrap_or(plan.repeats), http_rounds, allow_invalid, write_docs, ..plan })
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("role") => match args.get(1) {
            Some(name) => servers::run_role(name, &args[2..]),
            None => Err("role needs a name".into()),
        },
        Some("--help" | "-h") => {
            println!(
                "usage: bench [--quick] [--only stdio,http,fanout,fanout-h1,fanout-h2,compile,schema,scale,scale-tasks,scale-http,scale-fanout] [--repeats N] [--allow-invalid] [--write-docs]"
            );
            Ok(())
        }
        _ => pin_and_run(&args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Re-executes the harness pinned to CPU 0 (servers get CPU 1), then runs the plan.
fn pin_and_run(args: &[String]) -> Res<()> {
    if std::env::var_os("BENCH_PINNED").is_none() && std::path::Path::new("/usr/bin/taskset").exists() {
        let exe = std::env::current_exe()?;
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let status = proc::pinned("0", &exe, &argv).env("BENCH_PINNED", "1").status()?;
        return if status.success() { Ok(()) } else { Err("the pinned harness failed".into()) };
    }
    let plan = parse(args)?;
    let mut table = Table::default();
    if plan.wants("stdio") {
        stdio(&plan, &mut table)?;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut http_outcome = None;
    if plan.wants("http") {
        let mut rows = Table::default();
        let outcome = rt.block_on(http(&plan, &mut rows))?;
        // An invalid run goes into docs/ only when asked for, and then says so there (its
        // INVALID lines are rows of the table, and the plot's title carries them too).
        if plan.write_docs && (outcome.invalid.is_empty() || plan.allow_invalid) {
            report::write_docs(&plan, &rows, &outcome)?;
        }
        table.append(rows);
        http_outcome = Some(outcome);
    }
    if plan.wants_fanout("h1") || plan.wants_fanout("h2") {
        rt.block_on(fan_out(&plan, &mut table))?;
    }
    if plan.wants("compile") {
        compile(&plan, &mut table)?;
    }
    if plan.wants("schema") {
        schema(&plan, &mut table)?;
    }
    rt.block_on(scale::run(&plan, &mut table))?;
    eprintln!("({} run)", if plan.quick { "quick" } else { "full" });
    print!("{}", table.render());
    let invalid = http_outcome.map(|o| o.invalid).unwrap_or_default();
    if invalid.is_empty() {
        return Ok(());
    }
    for why in &invalid {
        eprintln!("INVALID run: {why}");
    }
    if plan.write_docs && !plan.allow_invalid {
        eprintln!("docs/ left as they were: an invalid run is written there only with --allow-invalid");
    }
    if plan.allow_invalid { Ok(()) } else { Err("invalid HTTP run (--allow-invalid prints it and exits 0)".into()) }
}

fn stdio(plan: &Plan, table: &mut Table) -> Res<()> {
    let n = plan.stdio_requests;
    for (window, rmcp_role, label) in
        [(None, "rmcp-stdio", "pipelined"), (Some(32), "rmcp-stdio-pipes", "32 in flight")]
    {
        let mut rps = Figure::new(format!("stdio {n} tools/call {label}, req/s (higher)"));
        let mut rss = Figure::new(format!("stdio {n} tools/call {label}, peak RSS MiB (lower)"));
        for _ in 0..plan.repeats {
            for (col, role) in [(0, "ours-stdio"), (1, rmcp_role), (2, "raw-stdio")] {
                eprintln!("stdio {label}: {role}");
                let r = load_stdio::run(role, n, window)?;
                rps.add(col, r.rps);
                rss.add(col, r.peak_rss as f64 / (1024.0 * 1024.0));
            }
        }
        table.push(rps);
        table.push(rss);
    }
    Ok(())
}

/// Columns of the argument-validation rows: `echo` (derived schema, checked by decoding),
/// `echo_checked` (the same schema written by hand, so validated on every call), and the raw
/// reference, which proves the load generator is not what limits the first two.
const SCHEMAS: Columns = Columns { names: ["DERIVED", "WRITTEN", "RAW"], ratios: [(1, 0), (0, 2)] };

/// What validating `tools/call` arguments against a hand-written input schema costs: the same
/// server and tool body, pipelined stdio, with and without the validator.
fn schema(plan: &Plan, table: &mut Table) -> Res<()> {
    let n = plan.stdio_requests;
    table.section(SCHEMAS);
    let mut rps = Figure::new(format!("stdio {n} tools/call, derived vs hand-written schema, req/s (higher)"));
    for _ in 0..plan.repeats {
        for (col, role, tool) in
            [(0, "ours-stdio", "echo"), (1, "ours-stdio", "echo_checked"), (2, "raw-stdio", "echo")]
        {
            eprintln!("schema: {role} {tool}");
            rps.add(col, load_stdio::run_tool(role, tool, n, None)?.rps);
        }
    }
    table.push(rps);
    Ok(())
}

/// The orders in which the three servers of an HTTP cell take their turns, one per round in
/// this cycle: every server follows each other one equally often within the rounds, so none
/// always runs after the same one (and whatever it leaves to do after its turn, such as
/// closing connections).
const TURN_ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]];

/// The most CPU (percent of the servers' core, median over the turns) the two waiting servers
/// may use during a turn before the run is invalid: beyond it they compete with the one
/// measured.
const IDLE_MAX_PCT: f64 = 2.0;

/// One server of an HTTP cell, up for the whole cell; its index among the cell's servers is
/// its column in the table (0 ours, 1 rmcp, 2 raw).
struct Served {
    role: &'static str,
    process: proc::ServerProc,
    url: String,
    /// The wrk script's arguments for it ([`load_wrk::script_args`]).
    args: Vec<String>,
    profiler: Option<std::process::Child>,
}

/// The HTTP rows: wrk (see `load_wrk`) against each server, ours and rmcp on both wires, the
/// raw reference on each too (it proves the generator is not the limit: see
/// [`load_wrk::generator_limit`]).
///
/// The three servers of a cell (a wire at one concurrency) stay up together and take turns:
/// each round runs wrk for one slice ([`Plan::http_slice`]) against each, in the orders of
/// [`TURN_ORDERS`], and every figure is the median over the rounds. Stalls from outside the
/// processes (the hypervisor's steal, an idle vCPU woken late, another guest) come in
/// stretches of seconds: taking turns by the second spreads a stretch over all three instead
/// of putting it on whichever server ran then, and the median drops the slices it spoilt.
/// The p99 rows are followed by the median of the per-round ratios, which keeps the pairing of
/// slices measured seconds apart.
async fn http(plan: &Plan, table: &mut Table) -> Res<HttpOutcome> {
    let mut outcome = HttpOutcome::starting();
    for (wire, wire_name, rmcp_role) in
        [(Wire::Modern, "stateless", "rmcp-http"), (Wire::Legacy, "legacy session", "rmcp-http-legacy")]
    {
        for conc in [1, 32] {
            let name = |what: &str| format!("http {wire_name} c{conc} {what}");
            let mut rps = Figure::new(name("req/s (higher)"));
            let mut p50 = Figure::new(name("p50 µs (lower)"));
            let mut p99 = Figure::new(name("p99 µs (lower)"));
            let mut cpu = Figure::new(name("server CPU µs/req (lower)"));
            let mut busy = Figure::new(name("server CPU % of its core (info)"));
            let mut generator = Figure::new(name("wrk CPU % of its core (info)"));
            let mut idle = Figure::new(name("the two idle servers' CPU % during its turn (info)"));
            let mut stolen = Figure::new(name("server's CPU stolen by the hypervisor % (info)"));
            let mut servers: Vec<Served> = Vec::new();
            for role in ["ours-http", rmcp_role, "raw-http"] {
                eprintln!("http {wire_name} c{conc}: starting {role}");
                let server = proc::spawn_http(role)?;
                let url = server.url.clone().ok_or("no URL")?;
                let args = load_wrk::script_args(&url, wire, conc).await.map_err(|e| format!("{role}: {e}"))?;
                // BENCH_PROFILE_CMD covers the warm-up too: starting it inside the window
                // would stall the clients while the profiler attaches.
                let profiler = proc::start_profiler(server.pid(), role)?;
                load_wrk::run(&url, conc, plan.http_warmup, &args).map_err(|e| format!("{role} warm-up: {e}"))?;
                servers.push(Served { role, process: server, url, args, profiler });
            }
            let mut round_p99 = Vec::new();
            for round in 1..=plan.http_rounds {
                let mut p99_of = [f64::NAN; 3];
                for &col in &TURN_ORDERS[(round - 1) % TURN_ORDERS.len()] {
                    let Served { role, process, url, args, .. } = &servers[col];
                    let others = |s: &[Served]| -> Res<u64> {
                        s.iter()
                            .enumerate()
                            .filter(|(i, _)| *i != col)
                            .map(|(_, o)| proc::cpu_micros(o.process.pid()))
                            .sum()
                    };
                    let pid = process.pid();
                    let others_start = others(&servers)?;
                    let cpu_start = proc::cpu_micros(pid)?;
                    let steal_start = proc::steal_micros(proc::SERVER_CPU)?;
                    let run = load_wrk::run(url, conc, plan.http_slice, args).map_err(|e| format!("{role}: {e}"))?;
                    let cpu_end = proc::cpu_micros(pid)?;
                    let others_pct = others(&servers)?.saturating_sub(others_start) as f64 * 100.0 / run.wall_us as f64;
                    let steal_pct = proc::steal_micros(proc::SERVER_CPU)?.saturating_sub(steal_start) as f64 * 100.0
                        / run.wall_us as f64;
                    let server_us = cpu_end.saturating_sub(cpu_start) as f64;
                    let server_pct = server_us * 100.0 / run.wall_us as f64;
                    eprintln!(
                        "  round {round}/{} {role}: {:.0} req/s, p99 {:.0} µs, server at {server_pct:.0}% and wrk at \
                         {:.0}% of their cores, the idle servers at {others_pct:.1}%, {steal_pct:.0}% of the \
                         server's CPU stolen",
                        plan.http_rounds, run.rps, run.p99_us, run.generator_cpu_pct
                    );
                    rps.add(col, run.rps);
                    p50.add(col, run.p50_us);
                    p99.add(col, run.p99_us);
                    p99_of[col] = run.p99_us;
                    cpu.add(col, server_us / run.count.max(1) as f64);
                    busy.add(col, server_pct);
                    generator.add(col, run.generator_cpu_pct);
                    idle.add(col, others_pct);
                    stolen.add(col, steal_pct);
                }
                round_p99.push(p99_of);
            }
            for served in servers {
                proc::stop_profiler(served.profiler)?;
            }
            let rps_medians = rps.medians();
            if conc == 32 {
                let raw = rps_medians[2].unwrap_or(0.0);
                let raw_busy = busy.medians()[2].unwrap_or(0.0);
                let raw_generator = generator.medians()[2].unwrap_or(100.0);
                if let Some(why) = load_wrk::generator_limit(raw, raw_busy, raw_generator) {
                    let steal = stolen.medians()[2].unwrap_or(0.0);
                    outcome.invalid.push(format!("{why}, {steal:.0}% of the server's CPU stolen ({wire_name})"));
                }
            }
            for (col, role) in [(0, "ours"), (1, "rmcp"), (2, "raw")] {
                if let Some(pct) = idle.medians()[col].filter(|p| *p > IDLE_MAX_PCT) {
                    outcome.invalid.push(format!(
                        "the waiting servers used {pct:.1}% of the CPU during {role}'s turns, over \
                         {IDLE_MAX_PCT}% ({wire_name} c{conc})"
                    ));
                }
            }
            outcome.cases.push(report::HttpCase {
                wire: if wire == Wire::Modern { "stateless" } else { "legacy session" },
                concurrency: conc,
                rps: rps_medians,
                cpu_us: cpu.medians(),
            });
            let paired = |a: usize, b: usize| {
                let mut ratios = Figure::new(String::new());
                for p in &round_p99 {
                    ratios.add(0, p[a] / p[b]);
                }
                ratios.medians()[0].map_or("n/a".to_owned(), |m| format!("{m:.2}"))
            };
            let p99_note = format!(
                "http {wire_name} c{conc} p99: median of the {} per-round ratios ours/rmcp {}, ours/raw {}",
                round_p99.len(),
                paired(0, 1),
                paired(0, 2)
            );
            for f in [rps, p50, p99] {
                table.push(f);
            }
            table.note(p99_note);
            for f in [cpu, busy, generator, idle, stolen] {
                table.push(f);
            }
        }
    }
    load_wrk::remove_script();
    for why in &outcome.invalid {
        table.note(format!("INVALID: {why}"));
    }
    Ok(outcome)
}

async fn fan_out(plan: &Plan, table: &mut Table) -> Res<()> {
    use fanout::Wire;
    let n = plan.subscriptions;
    // rmcp has no subscriptions/listen and the raw reference no subscriptions: their columns
    // stay n/a.
    let h2 = Wire::Http2 { per_connection: 100 };
    for (wire, tag, role, label) in [
        (Wire::Http1, "h1", "ours-http", "HTTP/1.1, a connection each"),
        (h2, "h2", "ours-http", "HTTP/2, 100 per connection"),
        (h2, "h2", "ours-http-current", "HTTP/2, 100 per connection, current-thread runtime"),
    ] {
        if !plan.wants_fanout(tag) {
            continue;
        }
        let mut mem = Figure::new(format!("listen fan-out {n} idle subscriptions ({label}), KiB each (lower)"));
        let mut deliver = Figure::new(format!("listen fan-out {n} ({label}), ms to deliver one event to all (lower)"));
        let mut cpu = Figure::new(format!("listen fan-out {n} ({label}), server CPU ms to deliver it (lower)"));
        for _ in 0..plan.repeats {
            eprintln!("fan-out: {role}, {n} subscriptions, {label}");
            let r = fanout::run(role, n, wire).await?;
            mem.add(0, r.bytes_per_subscription / 1024.0);
            deliver.add(0, r.deliver_ms);
            cpu.add(0, r.deliver_cpu_ms);
        }
        table.push(mem);
        table.push(deliver);
        table.push(cpu);
    }
    Ok(())
}

fn compile(plan: &Plan, table: &mut Table) -> Res<()> {
    use compile::Framework::{Ours, Rmcp};
    let t = plan.tools;
    let bench = compile::Workbench::generate(t)?;
    eprintln!("compile: building the dependencies of the generated crates (untimed; slow the first time)");
    bench.warm(Ours)?;
    bench.warm(Rmcp)?;
    let mut clean = Figure::new(format!("compile {t} tools, clean release build of the crate, s (lower)"));
    let mut incr = Figure::new(format!("compile {t} tools, rebuild after touching one tool, s (lower)"));
    for rep in 0..plan.repeats {
        for (col, fw) in [(0, Ours), (1, Rmcp)] {
            eprintln!("compile: {fw:?} clean");
            clean.add(col, bench.clean_build(fw)?.as_secs_f64());
            eprintln!("compile: {fw:?} touch one tool");
            incr.add(col, bench.touch_one_tool(fw, t, rep + 2)?.as_secs_f64());
        }
    }
    table.push(clean);
    table.push(incr);
    let runs = if plan.quick { 3 } else { 9 };
    let mut start = Figure::new(format!("start-up to first response, {t} tools, ms (lower)"));
    let raw = std::env::current_exe()?;
    for _ in 0..runs {
        start.add(0, compile::startup_ms(&bench.binary(Ours), &[])?);
        start.add(1, compile::startup_ms(&bench.binary(Rmcp), &[])?);
        start.add(2, compile::startup_ms(&raw, &["role", "raw-stdio"])?);
    }
    table.push(start);
    Ok(())
}
