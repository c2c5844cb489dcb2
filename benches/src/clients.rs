//! The client rows (`--only client`): our client (`switchyard-mcp-client`), rmcp's client and
//! a raw one (hand-written lines on stdio, one hyper connection per caller on HTTP) calling
//! `echo` on the same server, our `ours-stdio` or `ours-http` role, with 1 or 32 calls in
//! flight.
//!
//! Each client is a process of its own (`bench role client-ours|client-rmcp|client-raw WIRE N
//! CONC [URL]`) on the harness's CPU with one runtime thread, so its CPU time and peak memory
//! are its own: it prints `RPS CPU_US_PER_CALL PEAK_RSS_BYTES` measured over the calls (after
//! connecting). The server runs on the servers' CPU; the raw client's figure shows what the
//! server allows, so the other two columns are the clients' own cost.

use crate::load_http::{self, Wire};
use crate::proc::{self, SERVER_CPU, cpu_micros, status_bytes};
use crate::table::{Figure, Table};
use crate::{Plan, Res};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The client roles, in column order (ours, rmcp, raw).
const ROLES: [&str; 3] = ["client-ours", "client-rmcp", "client-raw"];

/// Runs the client rows: over stdio and HTTP, 1 and 32 in flight.
pub fn rows(plan: &Plan, table: &mut Table) -> Res<()> {
    let n = if plan.quick { 4_000 } else { 20_000 };
    for wire in ["stdio", "http"] {
        for conc in [1usize, 32] {
            let label = format!("client {wire} {n} tools/call, {conc} in flight");
            let mut rps = Figure::new(format!("{label}, calls/s (higher)"));
            let mut cpu = Figure::new(format!("{label}, client CPU us/call (lower)"));
            let mut rss = Figure::new(format!("{label}, client peak RSS MiB (lower)"));
            for _ in 0..plan.repeats {
                // One server per repeat, shared by the three clients in turn.
                let server = if wire == "http" { Some(proc::spawn_http("ours-http")?) } else { None };
                let url = server.as_ref().and_then(|s| s.url.clone()).unwrap_or_default();
                for (col, role) in ROLES.iter().enumerate() {
                    eprintln!("{label}: {role}");
                    let [r, c, m] = run_client(role, wire, n, conc, &url)?;
                    rps.add(col, r);
                    cpu.add(col, c);
                    rss.add(col, m / (1024.0 * 1024.0));
                }
            }
            table.push(rps);
            table.push(cpu);
            table.push(rss);
        }
    }
    Ok(())
}

/// Runs one client process to the end and reads its three figures.
fn run_client(role: &str, wire: &str, n: usize, conc: usize, url: &str) -> Res<[f64; 3]> {
    let exe = std::env::current_exe()?;
    let (n, conc) = (n.to_string(), conc.to_string());
    let output = proc::pinned("0", &exe, &["role", role, wire, &n, &conc, url]).stderr(Stdio::inherit()).output()?;
    if !output.status.success() {
        return Err(format!("{role} {wire} failed ({})", output.status).into());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let figures: Vec<f64> = text.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    match figures[..] {
        [rps, cpu, rss] => Ok([rps, cpu, rss]),
        _ => Err(format!("{role} printed {text:?}, not three figures").into()),
    }
}

/// `bench role client-*`: connects, makes `N` calls with `CONC` in flight, prints its figures.
pub fn run_role(role: &str, args: &[String]) -> Res<()> {
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_default();
    let wire = arg(0).to_owned();
    let n: usize = arg(1).parse().map_err(|_| "N is a count")?;
    let conc: usize = arg(2).parse().map_err(|_| "CONC is a count")?;
    let url = arg(3).to_owned();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let (elapsed, cpu) = rt.block_on(async move {
        match role {
            "client-ours" => ours(&wire, n, conc, &url).await,
            "client-rmcp" => rmcp(&wire, n, conc, &url).await,
            "client-raw" => raw(&wire, n, conc, &url).await,
            other => Err(format!("unknown client role {other:?}").into()),
        }
    })?;
    let rss = status_bytes(std::process::id(), "VmHWM")?;
    println!("{} {} {rss}", n as f64 / elapsed, cpu as f64 / n as f64);
    Ok(())
}

/// The server of the stdio rows, started by the client (pinned to the servers' CPU).
fn stdio_server() -> Res<tokio::process::Command> {
    let exe = std::env::current_exe()?;
    let mut command = tokio::process::Command::from(proc::pinned(SERVER_CPU, &exe, &["role", "ours-stdio"]));
    command.stderr(Stdio::null());
    Ok(command)
}

/// Runs `n` calls of `call(i)` split over `conc` tasks; returns the seconds taken and this
/// process's CPU microseconds over them.
pub(crate) async fn measure<F, Fut>(n: usize, conc: usize, call: F) -> Res<(f64, u64)>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Res<()>> + Send,
{
    let call = Arc::new(call);
    let cpu0 = cpu_micros(std::process::id())?;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..conc {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut i = t;
            while i < n {
                call(i).await?;
                i += conc;
            }
            Res::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    Ok((elapsed, cpu_micros(std::process::id())? - cpu0))
}

/// Whether `text` is the answer to call `i` (`hello {i}`).
pub(crate) fn check(text: Option<&str>, i: usize) -> Res<()> {
    if text == Some(format!("hello {i}").as_str()) { Ok(()) } else { Err(format!("wrong answer: {text:?}").into()) }
}

async fn ours(wire: &str, n: usize, conc: usize, url: &str) -> Res<(f64, u64)> {
    let builder = switchyard_client::ClientBuilder::new("bench", "0");
    let client = match wire {
        "stdio" => builder.connect_stdio(stdio_server()?).await?,
        _ => builder.connect_http(url).await?,
    };
    let figures = measure(n, conc, {
        let client = client.clone();
        move |i| {
            let client = client.clone();
            async move {
                let result = client.call_tool("echo", serde_json::json!({ "text": format!("hello {i}") })).await?;
                check(result.content.first().and_then(|c| c.as_text()), i)
            }
        }
    })
    .await?;
    client.close().await;
    Ok(figures)
}

async fn rmcp(wire: &str, n: usize, conc: usize, url: &str) -> Res<(f64, u64)> {
    use rmcp::ServiceExt;
    let service = match wire {
        "stdio" => ().serve(rmcp::transport::TokioChildProcess::new(stdio_server()?)?).await?,
        _ => ().serve(rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned())).await?,
    };
    let peer = service.peer().clone();
    let figures = measure(n, conc, move |i| {
        let peer = peer.clone();
        async move {
            let mut arguments = serde_json::Map::new();
            arguments.insert("text".into(), format!("hello {i}").into());
            let params = rmcp::model::CallToolRequestParams::new("echo").with_arguments(arguments);
            let result = peer.call_tool(params).await?;
            let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.as_str());
            check(text, i)
        }
    })
    .await?;
    service.cancel().await?;
    Ok(figures)
}

async fn raw(wire: &str, n: usize, conc: usize, url: &str) -> Res<(f64, u64)> {
    if wire != "stdio" {
        // One hyper connection per caller, modern requests: no handshake to pay for.
        let clients: Vec<_> = {
            let mut v = Vec::new();
            for _ in 0..conc {
                v.push(Arc::new(tokio::sync::Mutex::new(load_http::Client::connect(url).await?)));
            }
            v
        };
        return measure(n, conc, move |i| {
            let client = clients[i % clients.len()].clone();
            async move { client.lock().await.call(Wire::Modern, i as u64).await }
        })
        .await;
    }
    // Lines written with at most `conc` unanswered.
    let mut child = stdio_server()?.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let permits = Arc::new(tokio::sync::Semaphore::new(conc));
    let cpu0 = cpu_micros(std::process::id())?;
    let start = Instant::now();
    let writer = tokio::spawn({
        let permits = permits.clone();
        async move {
            for i in 0..n {
                permits.acquire().await?.forget();
                let (body, _, _) = load_http::call_request(Wire::Modern, i as u64);
                stdin.write_all(body.as_bytes()).await?;
                stdin.write_all(b"\n").await?;
            }
            Res::Ok(stdin)
        }
    });
    for _ in 0..n {
        // The server answers concurrent calls in the order they finish.
        let line = stdout.next_line().await?.ok_or("the server closed its output")?;
        if !(line.contains("\"result\"") && line.contains("\"hello ")) {
            return Err(format!("wrong answer: {line}").into());
        }
        permits.add_permits(1);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = cpu_micros(std::process::id())? - cpu0;
    drop(writer.await??);
    let _ = child.wait().await;
    Ok((elapsed, cpu))
}
