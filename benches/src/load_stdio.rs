//! The stdio load generator: N `tools/call` requests written back to back (optionally with at
//! most `window` unanswered at once), every answer checked.

use crate::Res;
use crate::proc::{ServerProc, fine_cpu_micros, spawn_role, status_bytes};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What one stdio run measured.
pub struct StdioRun {
    /// Answers per second over the whole run (first byte written to last answer read).
    pub rps: f64,
    /// Peak resident memory of the server (`VmHWM`), bytes.
    pub peak_rss: u64,
    /// The server's CPU time (all its threads, [`fine_cpu_micros`]) from the first request
    /// written to the last answer read, over the answers: microseconds per request.
    pub cpu_us_per_req: f64,
    /// The server's anonymous resident memory (`RssAnon`: heap, stacks, no file pages) after
    /// the last answer, bytes. `VmHWM` also counts the pages of the binary's code the role
    /// touched, which for these roles, all in one `bench` binary that links every server, is
    /// most of the difference (docs/performance.md, "stdio").
    pub anon_rss: u64,
}

/// The initialize request every client sends first (2025-11-25 handshake, which all three
/// servers take).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call(tool: &str, i: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"text":"hello {i}"}}}}}}"#
    )
}

/// Runs `n` calls of `echo` against server role `role`. `window`: most requests unanswered at
/// once (`None`: all pipelined).
pub fn run(role: &str, n: usize, window: Option<usize>) -> Res<StdioRun> {
    run_tool(role, "echo", n, window)
}

/// [`run`] calling `tool`, which must answer `{"text": ..}` with that text.
pub fn run_tool(role: &str, tool: &str, n: usize, window: Option<usize>) -> Res<StdioRun> {
    let mut server: ServerProc = spawn_role(role, &[])?;
    let pid = server.pid();
    let mut stdin = BufWriter::with_capacity(64 * 1024, server.child.stdin.take().ok_or("no stdin")?);
    let mut stdout = BufReader::with_capacity(64 * 1024, server.child.stdout.take().ok_or("no stdout")?);
    writeln!(stdin, "{INITIALIZE}")?;
    stdin.flush()?;
    let mut line = String::new();
    stdout.read_line(&mut line)?;
    if !line.contains("\"result\"") {
        return Err(format!("{role}: initialize failed: {line}").into());
    }
    writeln!(stdin, "{INITIALIZED}")?;
    stdin.flush()?;

    let answered = Arc::new((Mutex::new(0usize), Condvar::new()));
    let reader_answered = answered.clone();
    let cpu_before = fine_cpu_micros(pid)?;
    let start = Instant::now();
    let reader = std::thread::spawn(move || -> Res<usize> {
        let mut bad = 0;
        let mut line = String::new();
        for i in 0..n {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                return Err(format!("server closed stdout after {i} answers").into());
            }
            // Log notifications and the like are not answers; the echo server sends none.
            if !(line.contains("\"result\"") && line.contains("hello ")) {
                bad += 1;
            }
            let (count, cv) = &*reader_answered;
            *count.lock().unwrap_or_else(|e| e.into_inner()) = i + 1;
            cv.notify_one();
        }
        Ok(bad)
    });
    for i in 0..n {
        if let Some(w) = window {
            let (count, cv) = &*answered;
            let mut done = count.lock().unwrap_or_else(|e| e.into_inner());
            if i - *done >= w {
                stdin.flush()?;
                while i - *done >= w {
                    done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
        stdin.write_all(call(tool, i).as_bytes())?;
        stdin.write_all(b"\n")?;
    }
    stdin.flush()?;
    let bad = reader.join().map_err(|_| "reader thread panicked")??;
    let elapsed = start.elapsed();
    let cpu = fine_cpu_micros(pid)?.saturating_sub(cpu_before);
    let peak_rss = status_bytes(pid, "VmHWM")?;
    let anon_rss = status_bytes(pid, "RssAnon")?;
    if bad > 0 {
        return Err(format!("{role}: {bad} of {n} answers were wrong").into());
    }
    drop(stdin);
    // EOF ends every server; the drop of `server` kills one that lingers.
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if server.child.try_wait()?.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(StdioRun { rps: n as f64 / elapsed.as_secs_f64(), peak_rss, cpu_us_per_req: cpu as f64 / n as f64, anon_rss })
}
