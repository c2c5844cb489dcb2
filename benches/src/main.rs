//! `bench`: Switchyard against rmcp (the official Rust SDK) and a raw reference (hyper +
//! serde_json; a plain read-parse-write loop on stdio), measured interleaved in one run.
//!
//! ```text
//! cargo run --release -p switchyard-bench -- [--quick] [--only stdio,http,client,gateway,fanout,compile,schema] [--repeats N] [--raw value] [--allow-invalid] [--write-docs]
//! ```
//!
//! `--only` also takes `fanout-h1` or `fanout-h2` (one wire of the fan-out rows); `--repeats`
//! overrides how often each figure is measured (1 quick, 3 full; the HTTP rows run 6 rounds
//! per repeat, 3 quick: see `turns`). The compile rows build crates for minutes: a `--quick`
//! run leaves them out unless `--only` names `compile`.
//!
//! The RAW column is the typed raw reference (roles `raw-stdio`, `raw-http`: borrowed structs
//! in, a struct out); `--raw value` puts the `serde_json::Value` one there instead
//! (`raw-value-stdio`, `raw-value-http`; see `servers::raw`).
//!
//! The HTTP rows are driven by `wrk` (`load_wrk`), and a run that cannot show the generator
//! was not the limit (`load_wrk::generator_limit`) is invalid: it fails after printing, unless
//! `--allow-invalid`.
//! `--write-docs` writes the HTTP rows and their plot into `docs/` (see `report`).
//!
//! The scale-out rows run only when asked for: `--only scale` (or `scale-tasks`, `scale-http`,
//! `scale-fanout`). They need PostgreSQL, HAProxy and NATS (see `scale`), which a plain run
//! should not depend on, and they print in columns of their own (a header line per section).
//! So do the authorization rows, `--only auth` (see `auth`): a protected `tools/call` against
//! the same call unprotected; they fail the run if token validation fetched from the issuer
//! more than once per server.
//!
//! Prints one row per figure, tab-separated:
//! `NAME<TAB>OURS<TAB>RMCP<TAB>RAW<TAB>OURS/RMCP<TAB>OURS/RAW`; `(higher)` or `(lower)` in
//! NAME says which way is better; `n/a` where a server has no equivalent. Servers are separate
//! processes (`bench role NAME`) pinned to CPU 1; the load generators run on CPU 0.

mod auth;
mod clients;
mod compile;
mod fanout;
mod gateway;
mod load_http;
mod load_stdio;
mod load_wrk;
mod proc;
mod report;
mod scale;
mod servers;
mod table;
mod turns;

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
    /// `--raw value`: the RAW column is the `serde_json::Value` reference, not the typed one.
    raw_value: bool,
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
        self.named("scale") || self.named(&format!("scale-{group}"))
    }

    /// Whether `--only` names `group`: the groups that a plain run leaves out.
    fn named(&self, group: &str) -> bool {
        self.only.as_ref().is_some_and(|o| o.iter().any(|g| g == group))
    }

    /// A group too slow for `--quick` (the compile rows): in a full run as usual, in a quick one
    /// only when `--only` names it.
    fn wants_slow(&self, group: &str) -> bool {
        if self.quick { self.named(group) } else { self.wants(group) }
    }

    /// The RAW column's stdio role.
    fn raw_stdio(&self) -> &'static str {
        if self.raw_value { "raw-value-stdio" } else { "raw-stdio" }
    }

    /// The RAW column's HTTP role.
    fn raw_http(&self) -> &'static str {
        if self.raw_value { "raw-value-http" } else { "raw-http" }
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
            raw_value: false,
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
            raw_value: false,
        }
    };
    let allow_invalid = args.iter().any(|a| a == "--allow-invalid");
    let write_docs = args.iter().any(|a| a == "--write-docs");
    let raw_value = match args.iter().position(|a| a == "--raw").map(|i| args.get(i + 1).map(String::as_str)) {
        None | Some(Some("typed")) => false,
        Some(Some("value")) => true,
        Some(_) => return Err("--raw takes typed or value".into()),
    };
    if raw_value && write_docs {
        return Err("docs/ compare with the typed raw reference: --write-docs without --raw value".into());
    }
    // One figure of the other groups is one repeat; a round of the HTTP rows is a fraction of
    // one (1 s, not 5), so `--repeats` keeps their proportion.
    let http_rounds = repeats.map_or(plan.http_rounds, |n| n * plan.http_rounds / plan.repeats);
    Ok(Plan { repeats: repeats.unwrap_or(plan.repeats), http_rounds, allow_invalid, write_docs, raw_value, ..plan })
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("role") => match args.get(1) {
            Some(name) if name.starts_with("client-") => clients::run_role(name, &args[2..]),
            Some(name) if name.starts_with("gateway-") => gateway::run_role(name, &args[2..]),
            Some(name) => servers::run_role(name, &args[2..]),
            None => Err("role needs a name".into()),
        },
        Some("issuer") => auth::issuer_standalone(&args[1..]),
        Some("--help" | "-h") => {
            println!(
                "usage: bench [--quick] [--only stdio,http,client,gateway,fanout,fanout-h1,fanout-h2,compile,schema,scale,scale-tasks,scale-http,scale-fanout,auth] [--repeats N] [--raw typed|value] [--allow-invalid] [--write-docs]"
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
    if plan.raw_value {
        table.note("RAW: the serde_json::Value reference (--raw value), not the typed one".to_owned());
    }
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
    if plan.wants("client") {
        clients::rows(&plan, &mut table)?;
    }
    if plan.wants("gateway") {
        gateway::rows(&plan, &mut table)?;
    }
    if plan.wants_slow("compile") {
        compile(&plan, &mut table)?;
    } else if plan.quick && plan.wants("compile") {
        eprintln!("compile rows: left out of --quick (--only compile runs them)");
    }
    if plan.wants("schema") {
        schema(&plan, &mut table)?;
    }
    rt.block_on(scale::run(&plan, &mut table))?;
    let mut invalid = http_outcome.map(|o| o.invalid).unwrap_or_default();
    let mut failure = None;
    if plan.named("auth") {
        let outcome = rt.block_on(auth::rows(&plan, &mut table))?;
        invalid.extend(outcome.invalid);
        failure = outcome.failure;
    }
    eprintln!("({} run)", if plan.quick { "quick" } else { "full" });
    print!("{}", table.render());
    if let Some(why) = failure {
        return Err(why.into());
    }
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
        let mut cpu = Figure::new(format!("stdio {n} tools/call {label}, server CPU µs/req (lower)"));
        let mut rss = Figure::new(format!("stdio {n} tools/call {label}, peak RSS MiB (lower)"));
        let mut anon = Figure::new(format!("stdio {n} tools/call {label}, anonymous RSS at the end MiB (lower)"));
        for _ in 0..plan.repeats {
            for (col, role) in [(0, "ours-stdio"), (1, rmcp_role), (2, plan.raw_stdio())] {
                eprintln!("stdio {label}: {role}");
                let r = load_stdio::run(role, n, window)?;
                rps.add(col, r.rps);
                cpu.add(col, r.cpu_us_per_req);
                rss.add(col, r.peak_rss as f64 / (1024.0 * 1024.0));
                anon.add(col, r.anon_rss as f64 / (1024.0 * 1024.0));
            }
        }
        table.push(rps);
        table.push(cpu);
        table.push(rss);
        table.push(anon);
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
            [(0, "ours-stdio", "echo"), (1, "ours-stdio", "echo_checked"), (2, plan.raw_stdio(), "echo")]
        {
            eprintln!("schema: {role} {tool}");
            rps.add(col, load_stdio::run_tool(role, tool, n, None)?.rps);
        }
    }
    table.push(rps);
    Ok(())
}

/// The HTTP rows: wrk (see `load_wrk`) against each server, ours and rmcp on both wires, the
/// raw reference on each too (it proves the generator is not the limit: see
/// [`load_wrk::generator_limit`]). The three servers of a cell (a wire at one concurrency) stay
/// up together and take turns (see `turns`).
async fn http(plan: &Plan, table: &mut Table) -> Res<HttpOutcome> {
    let mut outcome = HttpOutcome::starting();
    for (wire, wire_name, rmcp_role) in
        [(Wire::Modern, "stateless", "rmcp-http"), (Wire::Legacy, "legacy session", "rmcp-http-legacy")]
    {
        for conc in [1, 32] {
            let mut servers = Vec::new();
            for role in ["ours-http", rmcp_role, plan.raw_http()] {
                eprintln!("http {wire_name} c{conc}: starting {role}");
                let server = proc::spawn_http(role)?;
                let url = server.url.clone().ok_or("no URL")?;
                let args = load_wrk::script_args(&url, wire, conc, None).await.map_err(|e| format!("{role}: {e}"))?;
                servers.push(turns::Served::warmed(role, server, args, conc, plan)?);
            }
            let cell =
                turns::take_turns(plan, &format!("http {wire_name} c{conc}"), conc, servers, 2, "the raw reference")?;
            outcome.invalid.extend(cell.invalid(table::SERVERS));
            outcome.cases.push(report::HttpCase {
                wire: if wire == Wire::Modern { "stateless" } else { "legacy session" },
                concurrency: conc,
                rps: cell.rps.medians(),
                cpu_us: cell.cpu.medians(),
            });
            cell.push_into(table, table::SERVERS);
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
        start.add(2, compile::startup_ms(&raw, &["role", plan.raw_stdio()])?);
    }
    table.push(start);
    Ok(())
}
