//! One HTTP cell: three servers up together, taking turns under wrk (`load_wrk`), every figure
//! the median over the rounds. The comparison rows (`main::http`) and the authorization rows
//! (`auth`) both measure this way.
//!
//! Each round runs wrk for one slice ([`Plan::http_slice`]) against each server, in the orders
//! of [`TURN_ORDERS`]. Stalls from outside the processes (the hypervisor's steal, an idle vCPU
//! woken late, another guest) come in stretches of seconds: taking turns by the second spreads
//! a stretch over all three instead of putting it on whichever server ran then, and the median
//! drops the slices it spoilt. The p99 rows are followed by the median of the per-round
//! ratios, which keeps the pairing of slices measured seconds apart.

use crate::table::{Columns, Figure, Table};
use crate::{Plan, Res, load_wrk, proc};

/// The orders in which the three servers of an HTTP cell take their turns, one per round in
/// this cycle: every server follows each other one equally often within the rounds, so none
/// always runs after the same one (and whatever it leaves to do after its turn, such as
/// closing connections).
const TURN_ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]];

/// The most CPU (percent of the servers' core, median over the turns) the two waiting servers
/// may use during a turn before the run is invalid: beyond it they compete with the one
/// measured.
const IDLE_MAX_PCT: f64 = 2.0;

/// The generator probe's pairs of wrk runs (one with the script's answer checks, one without,
/// alternating which goes first) against a c32 cell's reference server, after its rounds.
const PROBE_PAIRS: usize = 3;

/// One server of an HTTP cell, up for the whole cell; its index among the cell's servers is
/// its column in the table.
pub struct Served {
    /// How the progress lines and `BENCH_PROFILE_CMD`'s `{role}` name it.
    label: String,
    process: proc::ServerProc,
    url: String,
    /// The wrk script's arguments for it ([`load_wrk::script_args`]).
    args: Vec<String>,
    profiler: Option<std::process::Child>,
}

impl Served {
    /// `process` (an HTTP role) with its profiler started, after a warm-up run of wrk with
    /// `args` at `concurrency`.
    pub fn warmed(
        label: &str,
        process: proc::ServerProc,
        args: Vec<String>,
        concurrency: usize,
        plan: &Plan,
    ) -> Res<Served> {
        let url = process.url.clone().ok_or("no URL")?;
        // BENCH_PROFILE_CMD covers the warm-up too: starting it inside the window would stall
        // the clients while the profiler attaches.
        let profiler = proc::start_profiler(process.pid(), label)?;
        load_wrk::run(&url, concurrency, plan.http_warmup, &args).map_err(|e| format!("{label} warm-up: {e}"))?;
        Ok(Served { label: label.to_owned(), process, url, args, profiler })
    }
}

/// The figures of one cell, a column per server.
pub struct Cell {
    /// What the rows' names start with, e.g. `http stateless c32`.
    name: String,
    pub rps: Figure,
    p50: Figure,
    p99: Figure,
    pub cpu: Figure,
    busy: Figure,
    generator: Figure,
    idle: Figure,
    /// Other processes' CPU on both cores during the turn (not the server, wrk or the waiting
    /// servers), percent of one core.
    others: Figure,
    stolen: Figure,
    /// Each round's p99 per column, for the paired ratios.
    round_p99: Vec<[f64; 3]>,
    /// At c32: the generator probe against the reference column (see [`load_wrk::Probe`]).
    probe: Option<(String, load_wrk::Probe)>,
    concurrency: usize,
    /// The column whose medians show whether wrk was the limit at c32, and how messages name it.
    reference: usize,
    reference_name: String,
}

/// Runs `plan.http_rounds` rounds of the three `servers` at `concurrency` (at c32 followed by
/// the generator probe against `servers[reference]`, which messages call `reference_name`),
/// then stops their profilers and the servers. `name` starts the rows' names.
pub fn take_turns(
    plan: &Plan,
    name: &str,
    concurrency: usize,
    servers: Vec<Served>,
    reference: usize,
    reference_name: &str,
) -> Res<Cell> {
    let figure = |what: &str| Figure::new(format!("{name} {what}"));
    let mut cell = Cell {
        name: name.to_owned(),
        rps: figure("req/s (higher)"),
        p50: figure("p50 µs (lower)"),
        p99: figure("p99 µs (lower)"),
        cpu: figure("server CPU µs/req (lower)"),
        busy: figure("server CPU % of its core (info)"),
        generator: figure("wrk CPU % of its core (info)"),
        idle: figure("the two idle servers' CPU % during its turn (info)"),
        others: figure("other processes' CPU % of a core on both CPUs during its turn (info)"),
        stolen: figure("server's CPU stolen by the hypervisor % (info)"),
        round_p99: Vec::new(),
        probe: None,
        concurrency,
        reference,
        reference_name: reference_name.to_owned(),
    };
    for round in 1..=plan.http_rounds {
        let mut p99_of = [f64::NAN; 3];
        for &col in &TURN_ORDERS[(round - 1) % TURN_ORDERS.len()] {
            let Served { label, process, url, args, .. } = &servers[col];
            let others = |s: &[Served]| -> Res<u64> {
                s.iter().enumerate().filter(|(i, _)| *i != col).map(|(_, o)| proc::cpu_micros(o.process.pid())).sum()
            };
            let pid = process.pid();
            let others_start = others(&servers)?;
            let cpu_start = proc::cpu_micros(pid)?;
            let steal_start = proc::steal_micros(proc::SERVER_CPU)?;
            let cores_start = proc::busy_micros(&[load_wrk::GENERATOR_CPU, proc::SERVER_CPU])?;
            let run = load_wrk::run(url, concurrency, plan.http_slice, args).map_err(|e| format!("{label}: {e}"))?;
            let cpu_end = proc::cpu_micros(pid)?;
            let cores_us = proc::busy_micros(&[load_wrk::GENERATOR_CPU, proc::SERVER_CPU])?.saturating_sub(cores_start);
            let others_busy = others(&servers)?.saturating_sub(others_start);
            let others_pct = others_busy as f64 * 100.0 / run.wall_us as f64;
            let steal_pct =
                proc::steal_micros(proc::SERVER_CPU)?.saturating_sub(steal_start) as f64 * 100.0 / run.wall_us as f64;
            let server_us = cpu_end.saturating_sub(cpu_start) as f64;
            let server_pct = server_us * 100.0 / run.wall_us as f64;
            // Both cores' busy time less the processes of the cell and wrk.
            let other_processes_pct =
                cores_us.saturating_sub(cpu_end.saturating_sub(cpu_start) + others_busy + run.generator_us) as f64
                    * 100.0
                    / run.wall_us as f64;
            eprintln!(
                "  round {round}/{} {label}: {:.0} req/s, p99 {:.0} µs, server at {server_pct:.0}% and wrk at \
                 {:.0}% of their cores, the idle servers at {others_pct:.1}%, other processes at \
                 {other_processes_pct:.0}%, {steal_pct:.0}% of the server's CPU stolen",
                plan.http_rounds, run.rps, run.p99_us, run.generator_cpu_pct
            );
            cell.rps.add(col, run.rps);
            cell.p50.add(col, run.p50_us);
            cell.p99.add(col, run.p99_us);
            p99_of[col] = run.p99_us;
            cell.cpu.add(col, server_us / run.count.max(1) as f64);
            cell.busy.add(col, server_pct);
            cell.generator.add(col, run.generator_cpu_pct);
            cell.idle.add(col, others_pct);
            cell.others.add(col, other_processes_pct);
            cell.stolen.add(col, steal_pct);
        }
        cell.round_p99.push(p99_of);
    }
    if concurrency == 32 {
        let served = &servers[reference];
        cell.probe = Some((served.label.clone(), probe(plan, served, concurrency)?));
    }
    for served in servers {
        proc::stop_profiler(served.profiler)?;
    }
    Ok(cell)
}

/// [`PROBE_PAIRS`] pairs of wrk runs against `served`, with and without the answer checks.
fn probe(plan: &Plan, served: &Served, concurrency: usize) -> Res<load_wrk::Probe> {
    let Served { label, url, args, .. } = served;
    // Column 0 with the checks, column 1 without; medians of each.
    let mut rps = Figure::new(String::new());
    let mut wrk = Figure::new(String::new());
    for pair in 0..PROBE_PAIRS {
        let order = if pair % 2 == 0 { [true, false] } else { [false, true] };
        for check in order {
            let run = if check {
                load_wrk::run(url, concurrency, plan.http_slice, args)
            } else {
                load_wrk::run_unchecked(url, concurrency, plan.http_slice, args)
            }
            .map_err(|e| format!("{label} probe: {e}"))?;
            let col = usize::from(!check);
            eprintln!(
                "  probe {}/{PROBE_PAIRS} {label} {}: {:.0} req/s, wrk at {:.0}% of its core",
                pair + 1,
                if check { "checked" } else { "unchecked" },
                run.rps,
                run.generator_cpu_pct
            );
            rps.add(col, run.rps);
            wrk.add(col, run.generator_cpu_pct);
        }
    }
    let [Some(checked_rps), Some(unchecked_rps), _] = rps.medians() else { return Err("probe without runs".into()) };
    let [Some(checked_wrk_pct), Some(unchecked_wrk_pct), _] = wrk.medians() else {
        return Err("probe without runs".into());
    };
    Ok(load_wrk::Probe { checked_rps, unchecked_rps, checked_wrk_pct, unchecked_wrk_pct })
}

impl Cell {
    /// The reference column's medians that decide whether wrk was the limit.
    fn reference(&self) -> load_wrk::Reference<'_> {
        let median = |f: &Figure, absent: f64| f.medians()[self.reference].unwrap_or(absent);
        load_wrk::Reference {
            name: &self.reference_name,
            rps: median(&self.rps, 0.0),
            busy_pct: median(&self.busy, 0.0),
            wrk_pct: median(&self.generator, 100.0),
            others_pct: median(&self.others, 100.0),
        }
    }

    /// Why the cell cannot count, named after `columns`: a column during whose turns the
    /// waiting servers were busy; at c32, a reference column that cannot show wrk was not the
    /// limit ([`load_wrk::generator_limit`]).
    pub fn invalid(&self, columns: Columns) -> Vec<String> {
        let mut why = Vec::new();
        if self.concurrency == 32
            && let Some(limit) = load_wrk::generator_limit(&self.reference())
        {
            let steal = self.stolen.medians()[self.reference].unwrap_or(0.0);
            why.push(format!("{limit}, {steal:.0}% of the server's CPU stolen ({})", self.name));
        }
        for (col, column) in columns.names.iter().enumerate() {
            if let Some(pct) = self.idle.medians()[col].filter(|p| *p > IDLE_MAX_PCT) {
                why.push(format!(
                    "the waiting servers used {pct:.1}% of the CPU during {}'s turns, over {IDLE_MAX_PCT}% ({})",
                    column.to_lowercase(),
                    self.name
                ));
            }
        }
        why
    }

    /// Appends the cell's rows to `table` (in `columns`), the p99 row followed by the median of
    /// the per-round ratios of `columns.ratios`.
    pub fn push_into(self, table: &mut Table, columns: Columns) {
        let generator_note = (self.concurrency == 32)
            .then(|| load_wrk::generator_note(&self.reference()))
            .flatten()
            .map(|note| format!("{}: {note}", self.name));
        let paired = |(a, b): (usize, usize)| {
            let mut ratios = Figure::new(String::new());
            for p in &self.round_p99 {
                ratios.add(0, p[a] / p[b]);
            }
            let value = ratios.medians()[0].map_or("n/a".to_owned(), |m| format!("{m:.2}"));
            let [x, y] = [a, b].map(|i| columns.names[i].to_lowercase());
            format!("{x}/{y} {value}")
        };
        let note = format!(
            "{} p99: median of the {} per-round ratios {}, {}",
            self.name,
            self.round_p99.len(),
            paired(columns.ratios[0]),
            paired(columns.ratios[1])
        );
        for f in [self.rps, self.p50, self.p99] {
            table.push(f);
        }
        table.note(note);
        if let Some((label, p)) = &self.probe {
            table.note(format!(
                "{} generator probe ({PROBE_PAIRS} pairs of runs, {label}): {:.0} req/s with every answer checked, \
                 {:.0} without ({:+.1}%), wrk at {:.0}% and {:.0}% of its core",
                self.name,
                p.checked_rps,
                p.unchecked_rps,
                p.gain() * 100.0,
                p.checked_wrk_pct,
                p.unchecked_wrk_pct
            ));
        }
        if let Some(note) = generator_note {
            table.note(note);
        }
        for f in [self.cpu, self.busy, self.generator, self.idle, self.others, self.stolen] {
            table.push(f);
        }
    }
}
