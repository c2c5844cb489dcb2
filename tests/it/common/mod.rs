//! Helpers shared by the wire-level tests: build and start the example servers as real
//! processes, and speak raw HTTP or stdio to them.
#![allow(dead_code, missing_docs)]

pub mod haproxy;
pub mod otlp;
pub mod peers;
pub mod relay;
pub mod schema;

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const MODERN: &str = "2026-07-28";

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A free loopback port for a server the test starts itself (`nats-server`, HAProxy), never the
/// same one twice in this process. The modules share one process and run side by side, and a test
/// that restarts its broker leaves the port unbound meanwhile, where a plain `bind(0)` elsewhere
/// could be handed it.
pub fn free_port() -> u16 {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port");
        if HANDED_OUT.lock().expect("ports handed out").insert(probe.port()) {
            return probe.port();
        }
    }
}

/// Says that `test` is skipped because of `why`, and how to run it; in CI (`CI` set, as
/// `.ci/run` runs) a missing service is a failure, never a silent pass.
pub fn skip(test: &str, why: &str, how: &str) {
    if in_ci() {
        panic!("{test}: {why}; CI must provide it ({how})");
    }
    eprintln!("SKIPPED {test}: {why}; to run it: {how}");
}

/// True under CI: the `CI` variable set to anything but `false`/`0`/empty.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// The binary `name` of a service the tests run themselves: `env` when set, else `name` on
/// PATH, else `/usr/sbin/name`.
pub fn service_binary(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|c| c.is_file()))
        .unwrap_or_default();
    on_path.or_else(|| Some(PathBuf::from("/usr/sbin").join(name)).filter(|p| p.is_file()))
}

/// How many connections a test may hold open at once, at most `wanted`, each taking
/// `fds_each` descriptors of this process: the open-file limit is first raised to the hard limit
/// where the OS allows it (servers the test starts afterwards inherit it), and the count is
/// scaled to fit under it with 256 descriptors left for the light tests running beside it
/// (pipes, child processes, a few connections each). Tests that hold hundreds take
/// [`heavy`] first, so that no two of them share the limit. Prints what it chose when it had
/// to scale, so a short run says why. At least 16.
pub fn socket_budget(test: &str, wanted: usize, fds_each: usize) -> usize {
    let limit = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(_) => rlimit::getrlimit(rlimit::Resource::NOFILE).map(|(soft, _)| soft).unwrap_or(1024),
    };
    let spare = usize::try_from(limit).unwrap_or(usize::MAX).saturating_sub(256);
    let fits = (spare / fds_each.max(1)).max(16);
    if fits < wanted {
        eprintln!("{test}: the open-file limit is {limit}; holding {fits} connections instead of {wanted}");
    }
    wanted.min(fits)
}

/// Held by each test that opens hundreds of connections, for as long as it holds them: the
/// tests of this binary share one open-file limit and run two at a time.
pub async fn heavy() -> tokio::sync::MutexGuard<'static, ()> {
    static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    HEAVY.lock().await
}

/// Waits (15 s at most) until `what` accepts connections on loopback `port`.
pub fn wait_for_port(port: u16, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "{what} did not open port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Builds the example `name` (a no-op when it is up to date) and returns its path.
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "--examples", "-p", "switchyard-examples"]).current_dir(workspace_root());
        // What cargo set for this test package: build scripts that watch them (ring watches
        // CARGO_MANIFEST_DIR) would see a change, and the outer and this build would rebuild
        // ring, rustls and everything above them in turn.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            let per_package = [
                "CARGO_MANIFEST_",
                "CARGO_PKG_",
                "CARGO_CRATE_",
                "CARGO_BIN_",
                "CARGO_PRIMARY_",
                "CARGO_TARGET_TMPDIR",
                // Set by this package's build script (tests/build.rs); ring's build script
                // watches it, so passing it on rebuilt ring and all above it on every run.
                "OUT_DIR",
            ];
            if per_package.iter().any(|p| key.starts_with(p)) {
                cargo.env_remove(key);
            }
        }
        let status = cargo.status().expect("cargo runs");
        assert!(status.success(), "building the examples failed");
    });
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    target.join("debug").join("examples").join(name)
}

/// Starts `example_name --stdio ARGS...` with piped stdin/stdout (stderr discarded), killed
/// when dropped.
pub fn stdio_child(example_name: &str, args: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(example(example_name))
        .arg("--stdio")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the example starts")
}

/// An example serving stdio, spoken to line by line: JSON-RPC messages in, parsed messages out.
pub struct StdioPeer {
    pub child: tokio::process::Child,
    pub stdin: tokio::process::ChildStdin,
    out: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl StdioPeer {
    /// Starts `example_name --stdio ARGS...` (see [`stdio_child`]).
    pub fn start(example_name: &str, args: &[&str]) -> StdioPeer {
        use tokio::io::AsyncBufReadExt;
        let mut child = stdio_child(example_name, args);
        let stdin = child.stdin.take().expect("stdin");
        let out = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        StdioPeer { child, stdin, out }
    }

    /// Writes `lines` in one write, so the server reads them in one turn.
    pub async fn write(&mut self, lines: &[Value]) {
        use tokio::io::AsyncWriteExt;
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.stdin.write_all(text.as_bytes()).await.expect("write");
        self.stdin.flush().await.expect("flush");
    }

    /// The next message within `wait`, if any.
    pub async fn next(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.out.next_line()).await.ok()?.ok()??;
        Some(serde_json::from_str(&line).expect("JSON"))
    }

    /// Every message until `wait` passes without one.
    pub async fn drain(&mut self, wait: Duration) -> Vec<Value> {
        let mut seen = Vec::new();
        while let Some(m) = self.next(wait).await {
            seen.push(m);
        }
        seen
    }
}

/// A server process serving Streamable HTTP on a free port; killed on drop.
pub struct HttpServer {
    pub child: Child,
    pub url: String,
    pub port: u16,
}

impl HttpServer {
    pub fn start(example_name: &str) -> HttpServer {
        Self::start_with(example_name, &[])
    }

    /// Starts `example_name --http 127.0.0.1:0 ARGS...`.
    pub fn start_with(example_name: &str, args: &[&str]) -> HttpServer {
        Self::start_with_env(example_name, args, &[])
    }

    /// [`start_with`](Self::start_with) with these environment variables set for the server.
    pub fn start_with_env(example_name: &str, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        HttpServer::start_on(example_name, "127.0.0.1:0", args, env)
    }

    /// [`start_with_env`](Self::start_with_env) listening on `addr` (`HOST:0`); the URL and
    /// port are those of 127.0.0.1, which a wildcard address also serves.
    pub fn start_on(example_name: &str, addr: &str, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut child = Command::new(example(example_name))
            .args(["--http", addr])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let port = loop {
            let line = lines.next().expect("server printed its address").expect("readable stderr");
            if let Some(rest) = line.strip_prefix("listening on http://") {
                let (_, port) = rest.trim_end_matches("/mcp").rsplit_once(':').expect("HOST:PORT");
                break port.parse::<u16>().expect("a port");
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe; shown with
        // SWITCHYARD_TEST_SERVER_LOG=1 (and e.g. RUST_LOG=debug) when a test needs the story.
        let show = std::env::var_os("SWITCHYARD_TEST_SERVER_LOG").is_some();
        let name = example_name.to_owned();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if show {
                    eprintln!("[{name}:{port}] {line}");
                }
            }
        });
        HttpServer { child, url: format!("http://127.0.0.1:{port}/mcp"), port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What came back from one HTTP request.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub content_type: String,
    /// The JSON body, or every SSE `data:` message in order.
    pub messages: Vec<Value>,
}

impl Reply {
    /// The last message (the JSON-RPC response).
    pub fn last(&self) -> &Value {
        self.messages.last().expect("a message")
    }
    pub fn error_code(&self) -> Option<i64> {
        self.last().get("error").and_then(|e| e.get("code")).and_then(Value::as_i64)
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(20)).build().expect("client")
}

/// A client speaking HTTP/2 without upgrade (prior knowledge): all its requests share one
/// connection, so the server's `batched_writes` gathers their frames. `stream_window` sets
/// the client's receive window per stream (bytes; `None`: the default).
pub fn h2_client(stream_window: Option<u32>) -> reqwest::Client {
    reqwest::Client::builder()
        .http2_prior_knowledge()
        .http2_initial_stream_window_size(stream_window)
        .timeout(Duration::from_secs(60))
        .build()
        .expect("an h2c client")
}

pub async fn send(req: reqwest::RequestBuilder) -> Reply {
    let resp = req.send().await.expect("request sent");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let body = resp.text().await.expect("body");
    let messages = if content_type.starts_with("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    } else if body.trim().is_empty() {
        Vec::new()
    } else {
        vec![serde_json::from_str(&body).unwrap_or_else(|e| panic!("JSON body expected ({e}): {body}"))]
    };
    Reply { status, headers, content_type, messages }
}

/// The required `_meta` of a 2026-07-28 request with these client capabilities.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": { "name": "wire-test", "version": "0" },
    })
}

/// A well-formed modern request: body with `_meta` and matching standard headers.
pub fn modern(c: &reqwest::Client, url: &str, id: Value, method: &str, mut params: Value) -> reqwest::RequestBuilder {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({}));
    }
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let mut rb = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method);
    if let Some(n) = name {
        rb = rb.header("mcp-name", n);
    }
    rb.body(body.to_string())
}

/// Resident set size of process `pid` in KiB (`VmRSS` of /proc/PID/status), or `None` where
/// /proc is not available (the memory checks of the load tests are then skipped).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl HttpServer {
    /// The server process's id (for reading its memory use).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// What came back from a request without a body (GET, DELETE, PUT, ...): status, `Allow`,
/// `Content-Type`, whether an `Mcp-Session-Id` came back, and the raw body.
#[derive(Debug)]
pub struct Bare {
    pub status: u16,
    pub allow: Option<String>,
    pub content_type: Option<String>,
    pub session_echoed: bool,
    pub body: String,
}

impl Bare {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("JSON body expected ({e}): {}", self.body))
    }
}

/// Sends `method` (any name, e.g. `PATCH`) to `url` with `headers` and no body, and reads the
/// whole reply (so not for a GET that opens a stream).
pub async fn bare(c: &reqwest::Client, method: &str, url: &str, headers: &[(&str, &str)]) -> Bare {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method name");
    let mut rb = c.request(method, url);
    for (name, value) in headers {
        rb = rb.header(*name, *value);
    }
    let resp = rb.send().await.expect("request sent");
    let h = resp.headers();
    let text = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (allow, content_type) = (text("allow"), text("content-type"));
    let session_echoed = h.contains_key("mcp-session-id");
    let status = resp.status().as_u16();
    let body = resp.text().await.expect("body");
    Bare { status, allow, content_type, session_echoed, body }
}

/// What a script run to its end left: its exit status (`None` when it ran past the limit and
/// was killed), stdout and stderr.
pub struct ScriptRun {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `bash SCRIPT ARGS...` (stdin closed) until it exits or `limit` passes, reading both
/// pipes as it goes so a chatty script never blocks on a full one.
pub fn run_script(script: &Path, args: &[&str], limit: Duration) -> ScriptRun {
    let mut child = Command::new("bash")
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("bash runs {}: {e}", script.display()));
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = read(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    ScriptRun { status, stdout: stdout.join().expect("stdout read"), stderr: stderr.join().expect("stderr read") }
}
