//! Server processes: start one pinned to its CPU, read its CPU time and memory from `/proc`.

use crate::Res;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The CPU servers run on; the load generator runs on CPU 0 (see `main`).
pub const SERVER_CPU: &str = "1";

/// A running server process; killed when dropped.
pub struct ServerProc {
    /// The process (its stdin/stdout are piped for stdio servers).
    pub child: Child,
    /// `http://ADDR/mcp` for HTTP servers.
    pub url: Option<String>,
}

impl ServerProc {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command that runs `program args` pinned to `cpu` when `taskset` exists.
pub fn pinned(cpu: &str, program: &Path, args: &[&str]) -> Command {
    if Path::new("/usr/bin/taskset").exists() {
        let mut c = Command::new("/usr/bin/taskset");
        c.arg("-c").arg(cpu).arg(program).args(args);
        c
    } else {
        let mut c = Command::new(program);
        c.args(args);
        c
    }
}

/// [`pinned`], with `BENCH_SERVER_WRAPPER` (split on spaces) in front of `program` when it is
/// set: a server role run under a profiler, e.g. `BENCH_SERVER_WRAPPER="heaptrack -o
/// /tmp/server"`. The memory figures then describe the wrapper, not the server.
fn pinned_server(program: &Path, args: &[&str]) -> Command {
    let wrapper = std::env::var("BENCH_SERVER_WRAPPER").unwrap_or_default();
    let mut words: Vec<String> = wrapper.split_whitespace().map(str::to_owned).collect();
    if words.is_empty() {
        return pinned(SERVER_CPU, program, args);
    }
    words.push(program.display().to_string());
    words.extend(args.iter().map(|a| (*a).to_owned()));
    let argv: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    pinned(SERVER_CPU, Path::new(&words[0]), &argv)
}

/// Starts `BENCH_PROFILE_CMD` (split on spaces, `{pid}` replaced by `pid` and `{role}` by
/// `role`) if it is set, to profile a server during one phase of a benchmark, e.g.
/// `BENCH_PROFILE_CMD="perf record -F 5000 -g -o /tmp/{role}.data -p {pid}"`. The HTTP rows
/// profile their three servers at once, so each needs a path of its own there. Stop it with
/// [`stop_profiler`].
pub fn start_profiler(pid: u32, role: &str) -> Res<Option<Child>> {
    let Ok(cmd) = std::env::var("BENCH_PROFILE_CMD") else { return Ok(None) };
    let words: Vec<String> =
        cmd.split_whitespace().map(|w| w.replace("{pid}", &pid.to_string()).replace("{role}", role)).collect();
    let (program, args) = words.split_first().ok_or("BENCH_PROFILE_CMD is empty")?;
    let child = Command::new(program).args(args).spawn()?;
    // Profilers need a moment to attach before the phase starts.
    std::thread::sleep(Duration::from_millis(500));
    Ok(Some(child))
}

/// Ends a profiler from [`start_profiler`] with SIGINT (so it writes its data) and waits.
pub fn stop_profiler(profiler: Option<Child>) -> Res<()> {
    if let Some(mut child) = profiler {
        Command::new("kill").arg("-INT").arg(child.id().to_string()).status()?;
        child.wait()?;
    }
    Ok(())
}

/// Starts `bench role NAME` with piped stdin/stdout (stdio servers, and the `bump` trigger of
/// the fan-out benchmark).
pub fn spawn_role(role: &str, extra: &[&str]) -> Res<ServerProc> {
    let exe = std::env::current_exe()?;
    let mut args = vec!["role", role];
    args.extend_from_slice(extra);
    let child =
        pinned_server(&exe, &args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    Ok(ServerProc { child, url: None })
}

/// Starts an HTTP server role on a free loopback port and waits for its
/// `listening on http://ADDR/mcp` line.
pub fn spawn_http(role: &str) -> Res<ServerProc> {
    spawn_http_with(role, &[], &[])
}

/// [`spawn_http`] with flags after the address and extra environment variables (the
/// scale-out roles: task store, NATS hub, requestState key).
pub fn spawn_http_with(role: &str, flags: &[&str], env: &[(&str, &str)]) -> Res<ServerProc> {
    let exe = std::env::current_exe()?;
    let mut args = vec!["role", role, "127.0.0.1:0"];
    args.extend_from_slice(flags);
    let child = pinned_server(&exe, &args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut p = ServerProc { child, url: None };
    let stderr = p.child.stderr.take().ok_or("no stderr")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stderr).lines();
        let mut tx = Some(tx);
        while let Some(Ok(line)) = lines.next() {
            if let Some(url) = line.strip_prefix("listening on ") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(url.trim().to_owned());
                }
            } else if std::env::var_os("BENCH_VERBOSE").is_some() || line.starts_with("error") {
                eprintln!("[server] {line}");
            }
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(30)).map_err(|e| match e {
        // Its stderr closed: the role stopped (a store or hub it could not reach) and said why
        // there, which the reader above echoed.
        std::sync::mpsc::RecvTimeoutError::Disconnected => {
            let status = p.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
            format!("{role} exited ({status}) before listening")
        }
        std::sync::mpsc::RecvTimeoutError::Timeout => format!("{role} did not start listening"),
    })?;
    p.url = Some(url);
    Ok(p)
}

/// Starts a helper process (a balancer, a broker) pinned to the servers' CPU, its output
/// discarded; killed when the returned value is dropped.
pub fn spawn_helper(program: &Path, args: &[&str]) -> Res<ServerProc> {
    let child =
        pinned(SERVER_CPU, program, args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    Ok(ServerProc { child, url: None })
}

/// Total CPU time (user + system) of process `pid` in microseconds.
pub fn cpu_micros(pid: u32) -> Res<u64> {
    // Fields 14 and 15 of stat(5) (utime, stime).
    stat_micros(pid, 11, 12)
}

/// CPU time of process `pid` in microseconds with nanosecond resolution: the sum of the
/// `schedstat` run times of its live threads. `/proc/PID/stat` counts in clock ticks (10 ms),
/// too coarse for one event's delivery, a broker's share of it or a stdio run of 20,000
/// requests that takes 15 ms. Threads that exited in between are missed (one that exits while
/// it is read is skipped), which the processes measured with it do not do while they are
/// measured: one-worker runtimes, a Go broker, a blocking loop, and rmcp's stdio, whose
/// blocking-pool threads outlive a run by seconds. Without schedstat for the process (a kernel
/// without `CONFIG_SCHEDSTATS`) it falls back to [`cpu_micros`]; one process is always read
/// the same way.
pub fn fine_cpu_micros(pid: u32) -> Res<u64> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return cpu_micros(pid) };
    let mut nanos = 0u64;
    let mut read_any = false;
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else { continue };
        let Some(run) = stat.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) else { continue };
        nanos += run;
        read_any = true;
    }
    if read_any { Ok(nanos / 1000) } else { cpu_micros(pid) }
}

/// The sum of two clock-tick fields of `/proc/PID/stat`, in microseconds; `a` and `b` count
/// from the state field (field 3 of stat(5)) as 0.
pub fn stat_micros(pid: u32, a: usize, b: usize) -> Res<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name may hold spaces; the fields after its closing parenthesis do not.
    let rest = stat.rsplit_once(')').ok_or("unreadable /proc/PID/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Res<u64> { Ok(fields.get(i).ok_or("short /proc/PID/stat")?.parse::<u64>()?) };
    let total = ticks(a)? + ticks(b)?;
    Ok(total * 1_000_000 / clock_ticks())
}

fn clock_ticks() -> u64 {
    // `getconf CLK_TCK`; 100 on every Linux this runs on when getconf is missing.
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

/// A field of `/proc/PID/status` in bytes (`VmRSS`, `VmHWM`).
pub fn status_bytes(pid: u32, field: &str) -> Res<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))?;
    let kib: u64 = line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse()?;
    Ok(kib * 1024)
}

/// Time the hypervisor ran something else while CPU `cpu` (`"0"`, `"1"`) wanted to run, in
/// microseconds since boot: the `steal` column of that CPU's line in `/proc/stat` (0 on bare
/// metal). Over a run it tells a guest whose host is busy from a busy server.
pub fn steal_micros(cpu: &str) -> Res<u64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let name = format!("cpu{cpu}");
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))
        .ok_or_else(|| format!("no {name} line in /proc/stat"))?;
    // cpuN user nice system idle iowait irq softirq steal ...
    let ticks: u64 = line.split_whitespace().nth(8).ok_or("short /proc/stat line")?.parse()?;
    Ok(ticks * 1_000_000 / clock_ticks())
}

/// Busy time (user, nice, system, irq, softirq) of the CPUs `cpus` (`"0"`, `"1"`) summed, in
/// microseconds since boot, from their lines in `/proc/stat`. Over a run, minus the CPU time of
/// the processes under test, what other processes took of those cores.
pub fn busy_micros(cpus: &[&str]) -> Res<u64> {
    let stat = std::fs::read_to_string("/proc/stat")?;
    let mut ticks = 0;
    for cpu in cpus {
        let name = format!("cpu{cpu}");
        let line = stat
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))
            .ok_or_else(|| format!("no {name} line in /proc/stat"))?;
        // cpuN user nice system idle iowait irq softirq steal ...
        let fields: Vec<&str> = line.split_whitespace().collect();
        for i in [1, 2, 3, 6, 7] {
            ticks += fields.get(i).ok_or("short /proc/stat line")?.parse::<u64>()?;
        }
    }
    Ok(ticks * 1_000_000 / clock_ticks())
}
