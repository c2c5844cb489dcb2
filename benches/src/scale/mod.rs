//! Scale-out rows (`--only scale`, or one of `scale-tasks`, `scale-http`, `scale-fanout`): what
//! the pieces of a multi-instance deployment (docs/scaling.md) cost, each as a ratio measured in one
//! run against the single-process default.
//!
//! - `scale-tasks`: tasks created and completed per second with the task store in memory, in
//!   SQLite and in PostgreSQL.
//! - `scale-http`: stateless `tools/call` straight to one instance, through HAProxy to that one
//!   instance, and through HAProxy round-robin to three.
//! - `scale-fanout`: one event to N listen streams on one instance with the in-process hub, on
//!   one instance with a NATS hub, and spread over three instances sharing a NATS hub.
//!
//! The services come from the environment (defaults in parentheses): `BENCH_PG`
//! (`postgres://postgres@127.0.0.1:5432/test`), `BENCH_HAPROXY` (`haproxy` on PATH, else
//! `/usr/sbin/haproxy`), `BENCH_NATS_SERVER` (`nats-server` on PATH, else
//! `/usr/sbin/nats-server`; the harness starts its own broker, so its CPU time can be read),
//! `BENCH_NATS_URL` (a running broker to use instead; `nats://127.0.0.1:4222` when no
//! `nats-server` binary is found). A service that cannot be reached turns its group (or its
//! column) into a `# skipped` line of the table; the rest of the run goes on.
//!
//! Every server-side process (instances, balancer, broker) is pinned to the servers' CPU and the
//! load generator to the other, as in the other rows: on a 2-core machine the server side gets
//! one core whether it is one process or five, so the rows show what the extra hops cost, not
//! what more cores would buy. PostgreSQL is a service of the machine and is not pinned.

mod balancer;
mod fanout;
mod tasks;

use crate::proc::{ServerProc, spawn_helper};
use crate::table::Table;
use crate::{Plan, Res};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Runs the scale-out groups `plan` asks for.
pub async fn run(plan: &Plan, table: &mut Table) -> Res<()> {
    if plan.wants_scale("tasks") {
        tasks::rows(plan, table).await?;
    }
    if plan.wants_scale("http") {
        balancer::rows(plan, table).await?;
    }
    if plan.wants_scale("fanout") {
        fanout::rows(plan, table).await?;
    }
    Ok(())
}

/// The PostgreSQL the task-store rows use (`BENCH_PG`).
fn postgres_url() -> String {
    std::env::var("BENCH_PG").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// The program named by the environment variable `env` if set, else `name` on PATH, else
/// `/usr/sbin/name`; `Err` says why there is none.
fn binary(env: &str, name: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("{env}={} is not a file", p.display())) };
    }
    let on_path =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|c| c.is_file()));
    on_path
        .or_else(|| Some(PathBuf::from("/usr/sbin").join(name)).filter(|p| p.is_file()))
        .ok_or_else(|| format!("no {name} on PATH or in /usr/sbin (or set {env})"))
}

/// An error with its causes, `a: b: c` (some clients' errors say little without them).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// A NATS broker for the fan-out rows.
pub struct Broker {
    /// `nats://HOST:PORT`.
    url: String,
    /// The broker process when the harness started it (its CPU time is then reported).
    process: Option<ServerProc>,
}

impl Broker {
    /// Starts `nats-server` pinned beside the instances, or finds the broker of
    /// `BENCH_NATS_URL`; `Err` says why neither works.
    async fn start() -> Result<Broker, String> {
        let external = |url: String| async move {
            let addr = url.trim_start_matches("nats://").to_owned();
            reachable(&addr).await.map_err(|e| format!("no NATS broker at {url}: {e}"))?;
            Ok(Broker { url, process: None })
        };
        if let Some(url) = std::env::var("BENCH_NATS_URL").ok().filter(|u| !u.is_empty()) {
            return external(url).await;
        }
        let bin = match binary("BENCH_NATS_SERVER", "nats-server") {
            Ok(bin) => bin,
            Err(why) => {
                eprintln!("scale-fanout: {why}; trying a running broker");
                return external("nats://127.0.0.1:4222".to_owned()).await;
            }
        };
        let port = free_port().map_err(|e| e.to_string())?;
        let process = spawn_helper(&bin, &["-a", "127.0.0.1", "-p", &port.to_string()])
            .map_err(|e| format!("{} did not start: {e}", bin.display()))?;
        wait_for_port(port, "nats-server").await.map_err(|e| e.to_string())?;
        Ok(Broker { url: format!("nats://127.0.0.1:{port}"), process: Some(process) })
    }

    /// The broker's process id, when the harness runs it.
    fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ServerProc::pid)
    }
}

/// Whether a TCP connection to `addr` opens within two seconds.
async fn reachable(addr: &str) -> Res<()> {
    tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| "connection timed out")??;
    Ok(())
}

/// A port nobody listens on right now (a helper binds it a moment later).
fn free_port() -> Res<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn wait_for_port(port: u16, what: &str) -> Res<()> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        if Instant::now() > deadline {
            return Err(format!("{what} did not open port {port}").into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// A name no other run uses: `prefix`, the harness's pid and the time.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{prefix}{}_{nanos}", std::process::id())
}

/// A fresh requestState key for instances that share a hub: 32 random bytes, hex-encoded.
fn random_key() -> Res<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A directory removed with everything in it when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> Res<TempDir> {
        let dir = std::env::temp_dir().join(unique(prefix));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// CPU time of each of `pids` (microseconds; 0 for a process that is gone).
fn cpu_of(pids: &[u32]) -> Vec<u64> {
    pids.iter().map(|p| crate::proc::cpu_micros(*p).unwrap_or(0)).collect()
}

/// CPU time of each of `pids` in microseconds with nanosecond resolution
/// ([`crate::proc::fine_cpu_micros`]; 0 for a process that is gone).
fn fine_cpu_of(pids: &[u32]) -> Vec<u64> {
    pids.iter().map(|p| crate::proc::fine_cpu_micros(*p).unwrap_or(0)).collect()
}

/// Per-process CPU spent between two [`cpu_of`] (or [`fine_cpu_of`]) snapshots.
fn cpu_spent(before: &[u64], after: &[u64]) -> Vec<u64> {
    before.iter().zip(after).map(|(b, a)| a.saturating_sub(*b)).collect()
}

/// The `p`-quantile of sorted `values` (NaN when empty).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}
