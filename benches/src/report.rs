//! `--write-docs`: the HTTP rows into `docs/performance.md` (between its `bench:http`
//! markers) and their plot into `docs/performance-http.svg`; see `main` for when an invalid
//! run may be written.
//!
//! The plot is plain SVG written here: four bar panels need no plotting library, and the
//! bench crate stays without one (it builds in every CI run).

use crate::table::Table;
use crate::{Plan, Res};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What the HTTP rows leave besides the table: the medians the plot draws, how busy the
/// machine was, and why the run is invalid (empty when it is valid).
#[derive(Default)]
pub struct HttpOutcome {
    pub cases: Vec<HttpCase>,
    pub invalid: Vec<String>,
    /// `/proc/loadavg`'s 1-minute figure when the rows began (the machine is shared).
    pub load_at_start: String,
}

impl HttpOutcome {
    /// An outcome with the current load average, before anything is measured.
    pub fn starting() -> HttpOutcome {
        let load = std::fs::read_to_string("/proc/loadavg").ok().and_then(|l| l.split(' ').next().map(str::to_owned));
        HttpOutcome { load_at_start: load.unwrap_or_else(|| "unknown".to_owned()), ..HttpOutcome::default() }
    }
}

/// The medians of one HTTP case (a wire at one concurrency), per server column.
pub struct HttpCase {
    /// `stateless` or `legacy session`.
    pub wire: &'static str,
    pub concurrency: usize,
    /// Requests/s of ours, rmcp, raw.
    pub rps: [Option<f64>; 3],
    /// Server CPU µs per request of ours, rmcp, raw.
    pub cpu_us: [Option<f64>; 3],
}

const BEGIN: &str = "<!-- bench:http begin (written by --write-docs) -->";
const END: &str = "<!-- bench:http end -->";
const SVG_NAME: &str = "performance-http.svg";

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

/// Replaces the marked block of `docs/performance.md` with `rows` and writes the plot.
pub fn write_docs(plan: &Plan, rows: &Table, outcome: &HttpOutcome) -> Res<()> {
    let dir = docs_dir();
    let svg_path = dir.join(SVG_NAME);
    std::fs::write(&svg_path, svg(&outcome.cases, !outcome.invalid.is_empty()))?;
    let md_path = dir.join("performance.md");
    let md = std::fs::read_to_string(&md_path)?;
    let (head, rest) = md.split_once(BEGIN).ok_or_else(|| format!("{} has no line {BEGIN}", md_path.display()))?;
    let (_, tail) = rest.split_once(END).ok_or_else(|| format!("{} has no line {END}", md_path.display()))?;
    let run = format!(
        "{} (per cell the median of {} rounds in which the three servers take turns, {} s each)",
        if plan.quick { "`--quick`" } else { "full" },
        plan.http_rounds,
        plan.http_slice.as_secs()
    );
    let block = format!(
        "{BEGIN}\n{run}, {date}, {cpus} CPUs, load average {load} when the rows started:\n\n\
         ```text\n{table}```\n\n![requests/s and server CPU per request]({SVG_NAME})\n{END}",
        date = utc_date(),
        cpus = machine_cpus(),
        load = outcome.load_at_start,
        table = rows.render(),
    );
    std::fs::write(&md_path, format!("{head}{block}{tail}"))?;
    eprintln!("wrote {} and {}", md_path.display(), svg_path.display());
    Ok(())
}

/// The machine's CPUs (`available_parallelism` counts only the CPU this pinned harness may use).
fn machine_cpus() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    match cpuinfo.lines().filter(|l| l.starts_with("processor")).count() {
        0 => "?".to_owned(),
        n => n.to_string(),
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock (days to civil date, H. Hinnant).
fn utc_date() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

const SERIES: [(&str, &str); 3] = [("Switchyard", "#1f77b4"), ("rmcp", "#ff7f0e"), ("raw hyper", "#7f7f7f")];
const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 250.0;
const MARGIN_TOP: f64 = 72.0;

/// Four panels (req/s and server CPU µs/req, at c1 and c32), each with a group of bars per
/// wire: ours, rmcp, raw.
pub fn svg(cases: &[HttpCase], invalid: bool) -> String {
    let width = 2.0 * PANEL_W + 20.0;
    let height = MARGIN_TOP + 2.0 * PANEL_H + 20.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="20" text-anchor="middle" font-size="15">tools/call echo over HTTP/1.1: stateless (2026-07-28) and legacy session; wrk, one server core</text>"#,
        width / 2.0
    );
    if invalid {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="64" text-anchor="middle" font-size="13" fill="red">INVALID RUN: the run cannot show the load generator was not the limit</text>"#,
            width / 2.0
        );
    }
    for (k, (name, colour)) in SERIES.iter().enumerate() {
        let x = width / 2.0 - 170.0 + k as f64 * 120.0;
        let _ = writeln!(out, r#"<rect x="{x}" y="32" width="12" height="12" fill="{colour}"/>"#);
        let _ = writeln!(out, r#"<text x="{}" y="42">{name}</text>"#, x + 16.0);
    }
    let panels: [(&str, usize, bool); 4] = [
        ("requests/s at c1 (higher is better)", 1, true),
        ("requests/s at c32 (higher is better)", 32, true),
        ("server CPU µs per request at c1 (lower is better)", 1, false),
        ("server CPU µs per request at c32 (lower is better)", 32, false),
    ];
    for (i, (title, conc, rps)) in panels.iter().enumerate() {
        let x0 = 10.0 + (i % 2) as f64 * PANEL_W;
        let y0 = MARGIN_TOP + (i / 2) as f64 * PANEL_H;
        let groups: Vec<(&str, [Option<f64>; 3])> = cases
            .iter()
            .filter(|c| c.concurrency == *conc)
            .map(|c| (c.wire, if *rps { c.rps } else { c.cpu_us }))
            .collect();
        panel(&mut out, x0, y0, title, &groups);
    }
    out.push_str("</svg>\n");
    out
}

fn panel(out: &mut String, x0: f64, y0: f64, title: &str, groups: &[(&str, [Option<f64>; 3])]) {
    let (left, right, top, bottom) = (x0 + 55.0, x0 + PANEL_W - 15.0, y0 + 30.0, y0 + PANEL_H - 40.0);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">{title}</text>"#,
        (left + right) / 2.0,
        y0 + 15.0
    );
    let max = groups.iter().flat_map(|(_, v)| v.iter().flatten().copied()).fold(0.0_f64, f64::max);
    let (step, top_value) = axis(max);
    let y_of = |v: f64| bottom - (v / top_value) * (bottom - top);
    let mut tick = 0.0;
    while tick <= top_value + step / 2.0 {
        let y = y_of(tick);
        let _ = writeln!(out, r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#ddd"/>"##);
        let label = if step >= 1.0 && tick < 1000.0 { format!("{tick:.0}") } else { short(tick) };
        let _ = writeln!(out, r#"<text x="{}" y="{:.1}" text-anchor="end">{label}</text>"#, left - 5.0, y + 4.0);
        tick += step;
    }
    let _ = writeln!(out, r#"<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>"#);
    let group_w = (right - left) / groups.len().max(1) as f64;
    let bar_w = group_w * 0.8 / 3.0;
    for (g, (label, values)) in groups.iter().enumerate() {
        let gx = left + g as f64 * group_w + group_w * 0.1;
        for (k, v) in values.iter().enumerate() {
            let x = gx + k as f64 * bar_w;
            match v {
                Some(v) => {
                    let y = y_of(*v);
                    let _ = writeln!(
                        out,
                        r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
                        bar_w - 2.0,
                        bottom - y,
                        SERIES[k].1
                    );
                    let _ = writeln!(
                        out,
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"#,
                        x + bar_w / 2.0 - 1.0,
                        y - 3.0,
                        short(*v)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">n/a</text>"#,
                        x + bar_w / 2.0 - 1.0,
                        bottom - 3.0
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            gx + 1.5 * bar_w,
            bottom + 16.0
        );
    }
}

/// A tick step of 1, 2 or 5 × 10^k giving at most six ticks, and the axis top (a multiple of
/// it at or above `max`).
fn axis(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 1.0);
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    (step, (max / step).ceil() * step)
}

/// `135700` → `136k`, `19.2` → `19.2`.
fn short(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else if v >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
