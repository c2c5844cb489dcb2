//! Liveness and readiness probes, and the drain of a rolling deploy (issue #30, docs/scaling.md
//! "Rolling deploys"): `fixture` processes behind a real HAProxy that checks `/readyz`, one of
//! them sent SIGTERM while clients keep calling through the balancer.
//!
//! The balancer cases need the `haproxy` binary (`SWITCHYARD_HAPROXY`, else on PATH or
//! /usr/sbin/haproxy) and the broker case `nats-server` (`SWITCHYARD_NATS_SERVER`); without them
//! they are reported ignored, saying what they need (tests/build.rs); under CI (`CI` set) they run
//! and fail.

use crate::common::haproxy::Haproxy;
use crate::common::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const HOW: &str = "apt-get install haproxy nats-server (or set SWITCHYARD_HAPROXY / SWITCHYARD_NATS_SERVER) and run \
                   cargo test -p switchyard-tests --test it drain::";

/// The probe at `path` of the server on `port`, asked with `method` and a `Host` no allow-list
/// names (probes come from orchestrators that name the instance by its address).
async fn probe(method: &str, port: u16, path: &str) -> (u16, Value) {
    let resp = client()
        .request(method.parse().expect("a method"), format!("http://127.0.0.1:{port}{path}"))
        .header("host", "10.1.2.3:8080")
        .send()
        .await
        .expect("probe answered");
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap_or_default();
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// Polls the readiness probe of `port` until it answers `status`; the last answer.
async fn readiness_becomes(port: u16, status: u16, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (got, body) = probe("GET", port, "/readyz").await;
        if got == status {
            return body;
        }
        assert!(Instant::now() < deadline, "/readyz stayed {got} ({body}) instead of {status} for {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn probes_answer_beside_the_endpoint_without_host_checks() {
    let server = HttpServer::start("fixture");
    assert_eq!(probe("GET", server.port, "/healthz").await, (200, json!({ "status": "alive" })));
    // The in-memory fixture has no store or broker to check.
    assert_eq!(probe("GET", server.port, "/readyz").await, (200, json!({ "status": "ready", "checks": {} })));
    assert_eq!(probe("HEAD", server.port, "/readyz").await.0, 200);
    assert_eq!(probe("POST", server.port, "/healthz").await.0, 405);
    assert_eq!(probe("GET", server.port, "/readyz/x").await.0, 404);
    // The endpoint itself still refuses the unknown host.
    let endpoint = bare(&client(), "POST", &server.url, &[("host", "10.1.2.3:8080")]).await;
    assert_eq!(endpoint.status, 403);

    let moved = HttpServer::start_with("fixture", &["--readiness-path", "/ready", "--liveness-path", ""]);
    assert_eq!(probe("GET", moved.port, "/ready").await.0, 200);
    assert_eq!(probe("GET", moved.port, "/readyz").await.0, 404);
    assert_eq!(probe("GET", moved.port, "/healthz").await.0, 404);
}

#[tokio::test]
#[cfg_attr(not(svc_nats_server), ignore = "needs nats-server (apt-get install nats-server, or SWITCHYARD_NATS_SERVER)")]
async fn readiness_fails_while_the_broker_is_down_and_recovers() {
    let Some(nats_bin) = service_binary("SWITCHYARD_NATS_SERVER", "nats-server").filter(|p| p.is_file()) else {
        return skip("drain::readiness_fails_while_the_broker_is_down_and_recovers", "no nats-server", HOW);
    };
    let nats_port = free_port();
    let start_nats = || {
        let child = Command::new(&nats_bin)
            .args(["-a", "127.0.0.1", "-p", &nats_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        wait_for_port(nats_port, "nats-server");
        KillOnDrop(child)
    };
    let nats = start_nats();
    let hub = format!("nats:nats://127.0.0.1:{nats_port}");
    let env = [("DRAIN_TEST_STATE_KEY", "drain-test-requestState-key-of-at-least-32-bytes")];
    let server =
        HttpServer::start_with_env("fixture", &["--hub", &hub, "--state-key-env", "DRAIN_TEST_STATE_KEY"], &env);
    let ready = readiness_becomes(server.port, 200, Duration::from_secs(20)).await;
    assert_eq!(ready, json!({ "status": "ready", "checks": { "delivery hub": "ok" } }));
    drop(nats);
    let down = readiness_becomes(server.port, 503, Duration::from_secs(20)).await;
    assert_eq!(down, json!({ "status": "not ready", "checks": { "delivery hub": "failing" } }));
    // Alive all the same: an orchestrator must not restart it for a broker outage.
    assert_eq!(probe("GET", server.port, "/healthz").await.0, 200);
    let _nats = start_nats();
    readiness_becomes(server.port, 200, Duration::from_secs(30)).await;
}

/// A child process killed and reaped when dropped.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sigterm(pid: u32) {
    let status = Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill -TERM {pid}");
}

/// HAProxy round-robin over `instances`, taking an instance out of rotation when its readiness
/// probe fails (checked every 100 ms), as docs/scaling.md configures it. No `retry-on`: a
/// request the balancer sent to a closing connection would reach the client as an error.
fn balancer_config(port: u16, instances: &[u16]) -> String {
    let servers: String = instances
        .iter()
        .enumerate()
        .map(|(i, p)| format!("    server s{} 127.0.0.1:{p} check inter 100ms fall 1 rise 2\n", i + 1))
        .collect();
    format!(
        "defaults
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
    option httpchk GET /readyz
    http-check expect status 200
    http-response set-header x-served-by %s
{servers}"
    )
}

fn requires_haproxy(test: &str) -> Option<PathBuf> {
    let haproxy = service_binary("SWITCHYARD_HAPROXY", "haproxy").filter(|p| p.is_file());
    if haproxy.is_none() {
        skip(&format!("drain::{test}"), "no haproxy", HOW);
    }
    haproxy
}

/// What the load saw: requests answered 200 with the right result, and everything else.
#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    failures: std::sync::Mutex<Vec<String>>,
}

#[tokio::test]
#[cfg_attr(not(svc_haproxy), ignore = "needs haproxy (apt-get install haproxy, or SWITCHYARD_HAPROXY)")]
async fn sigterm_under_load_through_a_balancer_drops_no_request() {
    let Some(haproxy) = requires_haproxy("sigterm_under_load_through_a_balancer_drops_no_request") else { return };
    let _heavy = heavy().await;
    let args = ["--drain-grace", "2", "--drain-timeout", "15"];
    let mut s1 = HttpServer::start_with("fixture", &args);
    let s2 = HttpServer::start_with("fixture", &args);
    let port = free_port();
    let balancer = Haproxy::start(&haproxy, &balancer_config(port, &[s1.port, s2.port]), &[port]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Both instances in rotation before the load starts.
    let c = client();
    let mut seen = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.len() < 2 {
        assert!(Instant::now() < deadline, "both instances never answered through the balancer");
        let r = send(modern(&c, &url, json!(0), "tools/call", json!({ "name": "echo", "arguments": { "text": "x" } })))
            .await;
        if let Some(by) = r.headers.get("x-served-by").and_then(|v| v.to_str().ok()) {
            seen.insert(by.to_owned());
        }
    }

    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for worker in 0..6 {
        let (tally, stop, url) = (tally.clone(), stop.clone(), url.clone());
        load.push(tokio::spawn(async move {
            // One keep-alive client per worker: the balancer reuses its server connections.
            let c = client();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let text = format!("w{worker}-{n}");
                let rb =
                    modern(&c, &url, json!(n), "tools/call", json!({ "name": "echo", "arguments": { "text": text } }));
                match rb.send().await {
                    Ok(resp) => {
                        let status = resp.status().as_u16();
                        let body = resp.text().await.unwrap_or_default();
                        if status == 200 && body.contains(&text) {
                            tally.ok.fetch_add(1, Ordering::Relaxed);
                        } else {
                            tally.failures.lock().expect("tally").push(format!("{status}: {body}"));
                        }
                    }
                    Err(e) => tally.failures.lock().expect("tally").push(format!("transport: {e}")),
                }
            }
        }));
    }
    // Calls in flight when the signal comes: they finish after the grace period ends.
    let mut slow = Vec::new();
    for i in 0..4 {
        let url = url.clone();
        slow.push(tokio::spawn(async move {
            let c = client();
            let rb = modern(
                &c,
                &url,
                json!(100 + i),
                "tools/call",
                json!({ "name": "slow", "arguments": { "seconds": 4 } }),
            );
            send(rb).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    sigterm(s1.pid());

    // Draining: out of rotation, still serving, closing each HTTP/1.1 connection after its reply.
    let draining = readiness_becomes(s1.port, 503, Duration::from_secs(5)).await;
    assert_eq!(draining["status"], "draining");
    let direct = modern(&c, &s1.url, json!(1), "tools/call", json!({ "name": "echo", "arguments": { "text": "d" } }))
        .send()
        .await
        .expect("served while draining");
    assert_eq!(direct.status(), 200);
    assert_eq!(direct.headers().get("connection").and_then(|v| v.to_str().ok()), Some("close"));

    // The instance exits on its own once its calls are done, with status 0.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = s1.child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the drained instance did not exit");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.success(), "the drained instance exited with {status}");
    // Load continues on the other instance for a moment after the exit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for w in load {
        w.await.expect("worker");
    }
    for s in slow {
        let reply = s.await.expect("slow call");
        assert_eq!(reply.status, 200, "{:?}", reply.messages);
        assert_eq!(reply.last()["result"]["content"][0]["text"], "slept 4 s", "{:?}", reply.messages);
    }
    let failures = tally.failures.lock().expect("tally").clone();
    let ok = tally.ok.load(Ordering::Relaxed);
    assert!(
        failures.is_empty(),
        "{} of {} requests failed around the drain: {failures:?}",
        failures.len(),
        ok + failures.len()
    );
    assert!(ok > 50, "too little load to say anything: {ok} requests");
    drop((balancer, s2));
}

/// A task still running when its instance stops is marked `failed` at once, saying why, rather
/// than left `working` until its lease runs out (a minute here) and then reported as a crash.
/// Another instance sharing the store reads the outcome.
#[tokio::test]
#[cfg_attr(not(svc_pg), ignore = "needs PostgreSQL: set SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test")]
async fn an_instance_that_stops_fails_its_running_tasks_at_once_and_says_why() {
    let Some(pg) = std::env::var("SWITCHYARD_TEST_PG").ok().filter(|u| !u.is_empty()) else {
        return skip(
            "drain::an_instance_that_stops_fails_its_running_tasks_at_once_and_says_why",
            "SWITCHYARD_TEST_PG is not set",
            "SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test cargo test -p switchyard-tests --test it drain::",
        );
    };
    let store = format!("postgres:{pg}");
    let args = ["--tasks", "--task-store", &store, "--task-lease-ms", "60000", "--drain-timeout", "1"];
    let mut a = HttpServer::start_with("fixture", &args);
    let b = HttpServer::start_with("fixture", &args);
    let connect = async |url: &str| {
        let builder = switchyard_client::ClientBuilder::new("switchyard-tests", "1.0.0").protocol_versions([MODERN]);
        builder.connect_http(url).await.expect("connects")
    };
    let (to_a, to_b) = (connect(&a.url).await, connect(&b.url).await);
    let started = to_a.call_tool_as_task("slow", json!({ "seconds": 120 })).await.expect("tools/call");
    let switchyard_client::ToolCall::Task(started) = started else { panic!("a task: {started:?}") };
    // The other instance follows the same task through the shared store.
    let task = to_b.task(started.id());
    assert_eq!(task.state().await.expect("tasks/get").status, "working");

    sigterm(a.pid());
    let deadline = Instant::now() + Duration::from_secs(30);
    while a.child.try_wait().expect("try_wait").is_none() {
        assert!(Instant::now() < deadline, "the instance did not exit");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = task.state().await.expect("tasks/get");
    assert_eq!(after.status, "failed", "{after:?}");
    let error = &after.raw["error"];
    assert_eq!(error["code"], -32603, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("shut down")), "{error}");
    match task.result().await {
        Err(switchyard_client::ClientError::Rpc { error, .. }) => {
            assert!(error.message().contains("shut down"), "{error:?}")
        }
        other => panic!("the stopped task fails: {other:?}"),
    }
}
