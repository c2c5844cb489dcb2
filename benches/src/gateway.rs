//! The gateway rows (`--only gateway`): `tools/call` of `echo` made by our client straight to
//! the `ours-stdio` server (DIRECT), and the same call through a gateway (`switchyard-mcp-gateway`)
//! whose one upstream is that server (GATEWAY), both over stdio, with 1 and 32 calls in flight.
//!
//! The question is what the hop costs. A gateway is a server to our client and a client to its
//! upstream, so the most a hop should cost is one server's work plus one client's: the third
//! column (SERVER+CLIENT) is the direct server's CPU per call plus our client's, measured in the
//! same runs, and the ratio GATEWAY/SERVER+CLIENT of the hop row says how close the gateway comes
//! to that (1.0: the hop costs exactly one client round trip).
//!
//! Each measured client is a process of its own (`bench role gateway-client TARGET N CONC`,
//! TARGET `ours-stdio` or `gateway-stdio`) on the harness's CPU with one runtime thread; it
//! starts its server pinned to the servers' CPU (the gateway's upstream inherits that pinning),
//! so the server side has one core whether it is one process or two. It prints
//! `CALLS_PER_S CLIENT_US SERVER_US HOP_US` per call: its own CPU, the whole server side's
//! (the server, or the gateway and its upstream), and the server process's alone (for the
//! gateway, the hop).

use crate::clients;
use crate::proc::{self, SERVER_CPU, cpu_micros};
use crate::table::{Columns, Figure, Table};
use crate::{Plan, Res};
use std::process::Stdio;

/// The columns of the gateway rows.
const COLUMNS: Columns = Columns { names: ["DIRECT", "GATEWAY", "SERVER+CLIENT"], ratios: [(1, 0), (1, 2)] };

/// The runtimes the server side runs on, each a group of rows: the one-worker multi-thread
/// runtime every other row's servers use, and a current-thread one (`BENCH_STDIO_RUNTIME`), the
/// flavour docs/composition.md recommends for a stdio gateway. Direct server, gateway and
/// upstream alike run on the group's runtime; the measuring client keeps its one worker.
const RUNTIMES: [(&str, Option<&str>); 2] = [("one-worker runtime", None), ("current-thread", Some("current-thread"))];

/// Runs the gateway rows.
pub fn rows(plan: &Plan, table: &mut Table) -> Res<()> {
    let n = if plan.quick { 4_000 } else { 20_000 };
    table.section(COLUMNS);
    for (runtime, env) in RUNTIMES {
        for conc in [1usize, 32] {
            rows_of(plan, table, n, conc, runtime, env)?;
        }
    }
    table.section(crate::table::SERVERS);
    Ok(())
}

/// The three rows of one runtime and concurrency: calls/s, the server side's CPU per call and
/// the hop's against one round trip.
fn rows_of(plan: &Plan, table: &mut Table, n: usize, conc: usize, runtime: &str, env: Option<&str>) -> Res<()> {
    let label = format!("gateway stdio {n} tools/call, {conc} in flight, {runtime}");
    let mut rps = Figure::new(format!("{label}, calls/s (higher)"));
    let mut side = Figure::new(format!("{label}, server side CPU us/call (lower)"));
    let mut hop = Figure::new(format!("{label}, the hop's CPU us/call (lower)"));
    for _ in 0..plan.repeats {
        eprintln!("{label}: direct");
        let direct = run_client("ours-stdio", n, conc, env)?;
        eprintln!("{label}: through the gateway");
        let gateway = run_client("gateway-stdio", n, conc, env)?;
        rps.add(0, direct.calls_per_s);
        rps.add(1, gateway.calls_per_s);
        side.add(0, direct.server_us);
        side.add(1, gateway.server_us);
        hop.add(1, gateway.hop_us);
        hop.add(2, direct.server_us + direct.client_us);
    }
    table.push(rps);
    table.push(side);
    table.push(hop);
    Ok(())
}

/// What one client process measured, per call.
struct Measured {
    calls_per_s: f64,
    client_us: f64,
    server_us: f64,
    hop_us: f64,
}

/// Runs one measuring client; `runtime` is the server side's `BENCH_STDIO_RUNTIME` (`None`:
/// unset, the one-worker runtime), which the client's server and the gateway's upstream inherit.
fn run_client(target: &str, n: usize, conc: usize, runtime: Option<&str>) -> Res<Measured> {
    let exe = std::env::current_exe()?;
    let (n, conc) = (n.to_string(), conc.to_string());
    let mut command = proc::pinned("0", &exe, &["role", "gateway-client", target, &n, &conc]);
    match runtime {
        Some(runtime) => command.env("BENCH_STDIO_RUNTIME", runtime),
        None => command.env_remove("BENCH_STDIO_RUNTIME"),
    };
    let output = command.stderr(Stdio::inherit()).output()?;
    if !output.status.success() {
        return Err(format!("gateway-client {target} failed ({})", output.status).into());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let figures: Vec<f64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    match figures[..] {
        [calls_per_s, client_us, server_us, hop_us] => Ok(Measured { calls_per_s, client_us, server_us, hop_us }),
        _ => Err(format!("gateway-client {target} printed {text:?}, not four figures").into()),
    }
}

/// `bench role gateway-stdio` (the gateway, serving on stdio) and `bench role gateway-client
/// TARGET N CONC` (the measuring client).
pub fn run_role(role: &str, args: &[String]) -> Res<()> {
    let one_worker = || tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build();
    match role {
        "gateway-stdio" if crate::servers::stdio_on_current_thread() => {
            tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(serve_gateway())
        }
        "gateway-stdio" => one_worker()?.block_on(serve_gateway()),
        "gateway-client" => {
            let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_default();
            let target = arg(0).to_owned();
            let n: usize = arg(1).parse().map_err(|_| "N is a count")?;
            let conc: usize = arg(2).parse().map_err(|_| "CONC is a count")?;
            let m = one_worker()?.block_on(measure(&target, n, conc))?;
            println!("{} {} {} {}", m.calls_per_s, m.client_us, m.server_us, m.hop_us);
            Ok(())
        }
        other => Err(format!("unknown role {other:?}").into()),
    }
}

/// A server with nothing of its own and `ours-stdio` as its one upstream, unprefixed, so its
/// `echo` is the upstream's; served on stdio as `ours-stdio` is.
async fn serve_gateway() -> Res<()> {
    use switchyard_gateway::{Gateway, Upstream};
    let server =
        switchyard::Server::builder("bench-gateway", env!("CARGO_PKG_VERSION")).groups(["bench-gateway"]).build()?;
    let upstream = Upstream::stdio("echo", std::env::current_exe()?, ["role", "ours-stdio"]);
    let _gateway = Gateway::new().upstream(upstream).attach(&server).await?;
    switchyard::transport::stdio::serve(server).await?;
    Ok(())
}

async fn measure(target: &str, n: usize, conc: usize) -> Res<Measured> {
    let exe = std::env::current_exe()?;
    let mut command = tokio::process::Command::from(proc::pinned(SERVER_CPU, &exe, &["role", target]));
    command.stderr(Stdio::null());
    let client = switchyard_client::ClientBuilder::new("bench", "0").connect_stdio(command).await?;
    let shared = client.clone();
    let call = move |i: usize| {
        let client = shared.clone();
        async move {
            let result = client.call_tool("echo", serde_json::json!({ "text": format!("hello {i}") })).await?;
            clients::check(result.content.first().and_then(|c| c.as_text()), i)
        }
    };
    // Warm-up: the gateway's first listing, allocator and caches on both sides.
    for i in 0..200 {
        call(i).await?;
    }
    // The server process is this process's child (taskset execs it); the gateway's upstream is
    // the server's child.
    let server = children(std::process::id())?.into_iter().next().ok_or("the server process is not running")?;
    let side = |pid: u32| -> Res<u64> {
        let mut total = cpu_micros(pid)?;
        for child in children(pid)? {
            total += cpu_micros(child)?;
        }
        Ok(total)
    };
    let (side0, server0) = (side(server)?, cpu_micros(server)?);
    let (elapsed, me) = clients::measure(n, conc, call).await?;
    let per_call = |us: u64| us as f64 / n as f64;
    let measured = Measured {
        calls_per_s: n as f64 / elapsed,
        client_us: per_call(me),
        server_us: per_call(side(server)? - side0),
        hop_us: per_call(cpu_micros(server)? - server0),
    };
    client.close().await;
    Ok(measured)
}

/// The child processes of `pid` (every thread's `children` list).
fn children(pid: u32) -> Res<Vec<u32>> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let list = std::fs::read_to_string(task?.path().join("children")).unwrap_or_default();
        out.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
