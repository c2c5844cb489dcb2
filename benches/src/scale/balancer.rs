//! Stateless `tools/call` through HAProxy: the same load (2026-07-28 `echo`, 32 clients on
//! keep-alive HTTP/1.1 connections) straight to one `ours-http` instance, through HAProxy to that
//! one instance, and through HAProxy round-robin to three. The middle column separates what the
//! balancer's hop costs from what spreading the load over three processes costs.

use super::{TempDir, binary, cpu_of, cpu_spent, free_port, wait_for_port};
use crate::load_http::{self, Wire};
use crate::proc::{ServerProc, spawn_helper, spawn_http};
use crate::table::{Columns, Figure, Table};
use crate::{Plan, Res};
use std::path::Path;

const CONCURRENCY: usize = 32;

/// Columns of the balancer rows; the ratios compare each way through HAProxy with going direct.
const ROUTES: Columns = Columns { names: ["DIRECT", "HAPROXY-1", "HAPROXY-3"], ratios: [(1, 0), (2, 0)] };

/// HAProxy in front of `instances` (`http://127.0.0.1:PORT/mcp` each), round-robin per request.
/// One thread, as every server process here has one; otherwise HAProxy's defaults (keep-alive
/// on both sides, idle server connections reused where safe), no health checks (nothing fails
/// here) and no logging.
fn config(port: u16, instances: &[String]) -> Res<String> {
    let mut servers = String::new();
    for (i, url) in instances.iter().enumerate() {
        let (authority, _) = load_http::split_url(url)?;
        servers.push_str(&format!("    server s{} {authority}\n", i + 1));
    }
    Ok(format!(
        "global
    nbthread 1
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s

frontend mcp
    bind 127.0.0.1:{port}
    default_backend instances

backend instances
    balance roundrobin
{servers}"
    ))
}

/// The balancer process and the URL clients use.
async fn start_haproxy(haproxy: &Path, dir: &TempDir, instances: &[String]) -> Res<(ServerProc, String)> {
    let port = free_port()?;
    let cfg = dir.0.join(format!("haproxy-{port}.cfg"));
    std::fs::write(&cfg, config(port, instances)?)?;
    let cfg = cfg.to_str().ok_or("a temp path that is not UTF-8")?;
    let check = std::process::Command::new(haproxy).args(["-c", "-q", "-f", cfg]).output()?;
    if !check.status.success() {
        return Err(format!("haproxy rejects its config: {}", String::from_utf8_lossy(&check.stderr)).into());
    }
    let process = spawn_helper(haproxy, &["-db", "-f", cfg])?;
    wait_for_port(port, "haproxy").await?;
    Ok((process, format!("http://127.0.0.1:{port}/mcp")))
}

/// The balancer rows: the three routes interleaved, `plan.repeats` times.
pub async fn rows(plan: &Plan, table: &mut Table) -> Res<()> {
    table.section(ROUTES);
    let haproxy = match binary("BENCH_HAPROXY", "haproxy") {
        Ok(h) => h,
        Err(e) => {
            let why = format!("scale-http: skipped: {e}");
            eprintln!("{why}");
            table.note(why);
            return Ok(());
        }
    };
    let dir = TempDir::new("switchyard-bench-haproxy-")?;
    let name = |what: &str| format!("scale http stateless c{CONCURRENCY}, {what}");
    let mut rps = Figure::new(name("req/s (higher)"));
    let mut p50 = Figure::new(name("p50 µs (lower)"));
    let mut p99 = Figure::new(name("p99 µs (lower)"));
    let mut all_cpu = Figure::new(name("CPU µs/req, balancer + instances (lower)"));
    let mut lb_cpu = Figure::new(name("CPU µs/req, balancer (lower)"));
    let mut inst_cpu = Figure::new(name("CPU µs/req, instances summed (lower)"));
    for _ in 0..plan.repeats {
        for (col, route) in ROUTES.names.iter().enumerate() {
            let instances = if col == 2 { 3 } else { 1 };
            eprintln!("scale http: {route}");
            let servers = (0..instances).map(|_| spawn_http("ours-http")).collect::<Res<Vec<_>>>()?;
            let urls = servers.iter().map(|s| s.url.clone().ok_or("no URL")).collect::<Result<Vec<_>, _>>()?;
            let balancer = match col {
                0 => None,
                _ => Some(start_haproxy(&haproxy, &dir, &urls).await?),
            };
            let url = balancer.as_ref().map_or(urls[0].clone(), |b| b.1.clone());
            // Balancer first (when there is one), then the instances.
            let pids: Vec<u32> =
                balancer.iter().map(|b| b.0.pid()).chain(servers.iter().map(ServerProc::pid)).collect();
            let start = std::cell::RefCell::new(Vec::new());
            let run = load_http::run(&url, Wire::Modern, CONCURRENCY, plan.http_warmup, plan.http_measure, || {
                *start.borrow_mut() = cpu_of(&pids);
            })
            .await
            .map_err(|e| format!("{route}: {e}"))?;
            let spent = cpu_spent(&start.borrow(), &cpu_of(&pids));
            let per_req = |us: u64| us as f64 / run.count.max(1) as f64;
            let (lb, inst) = if balancer.is_some() { (Some(spent[0]), &spent[1..]) } else { (None, &spent[..]) };
            eprintln!(
                "  {route}: {:.0} req/s; CPU µs/req: balancer {}, instances {}",
                run.rps,
                lb.map_or("n/a".to_owned(), |c| format!("{:.1}", per_req(c))),
                inst.iter().map(|c| format!("{:.1}", per_req(*c))).collect::<Vec<_>>().join(" + ")
            );
            rps.add(col, run.rps);
            p50.add(col, run.p50_us);
            p99.add(col, run.p99_us);
            all_cpu.add(col, per_req(spent.iter().sum()));
            if let Some(lb) = lb {
                lb_cpu.add(col, per_req(lb));
            }
            inst_cpu.add(col, per_req(inst.iter().sum()));
        }
    }
    for f in [rps, p50, p99, all_cpu, lb_cpu, inst_cpu] {
        table.push(f);
    }
    Ok(())
}
