//! Many instances behind one address (issue #12, `docs/scaling.md`): three `fixture` processes
//! sharing PostgreSQL (tasks) and NATS (events, task cancellation, task input) behind a real
//! HAProxy that balances round-robin, driven over HTTP through the balancer only. HAProxy names
//! the instance that answered in an `x-served-by` response header, so each step can show that
//! it crossed instances.
//!
//! Needs PostgreSQL (`SWITCHYARD_TEST_PG`, e.g. `postgres://postgres@127.0.0.1:5432/test`), the
//! `haproxy` binary (`SWITCHYARD_HAPROXY`, else `haproxy` on PATH or /usr/sbin/haproxy) and the
//! `nats-server` binary (`SWITCHYARD_NATS_SERVER`, else on PATH or /usr/sbin/nats-server). Each
//! test starts its own NATS server on a free port (one test restarts it) and its own balancer.
//! Without them every test is reported ignored, saying what it needs (tests/build.rs); under CI
//! (`CI` set) they run and fail.

use crate::common::haproxy::Haproxy;
use crate::common::relay::Relay;
use crate::common::schema::Schema;
use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TASKS: &str = "io.modelcontextprotocol/tasks";
const HOW: &str = "apt-get install haproxy nats-server (or set SWITCHYARD_HAPROXY / SWITCHYARD_NATS_SERVER) and run \
                   SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test cargo test -p switchyard-tests --test it cluster::";

/// The name clients use for the cluster, sent as `Host` through the balancer.
const PUBLIC_HOST: &str = "mcp.example.com";

/// A client whose every request names the cluster by its public name.
fn public_client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::HOST, reqwest::header::HeaderValue::from_static(PUBLIC_HOST));
    reqwest::Client::builder().default_headers(headers).timeout(Duration::from_secs(20)).build().expect("client")
}

/// The lease of the instances' tasks: a killed instance's task ends `failed` within 4/3 of it.
const LEASE_MS: u64 = 1500;

/// What the cluster needs, or `None` after saying why the test is skipped.
fn requirements(test: &str) -> Option<(String, PathBuf, PathBuf)> {
    let pg = std::env::var("SWITCHYARD_TEST_PG").ok().filter(|u| !u.is_empty());
    let haproxy = service_binary("SWITCHYARD_HAPROXY", "haproxy");
    let nats = service_binary("SWITCHYARD_NATS_SERVER", "nats-server");
    match (pg, haproxy, nats) {
        (Some(pg), Some(h), Some(n)) => Some((pg, h, n)),
        (pg, h, n) => {
            let mut missing = Vec::new();
            if pg.is_none() {
                missing.push("SWITCHYARD_TEST_PG");
            }
            if h.is_none() {
                missing.push("haproxy");
            }
            if n.is_none() {
                missing.push("nats-server");
            }
            skip(&format!("cluster::{test}"), &format!("missing {}", missing.join(", ")), HOW);
            None
        }
    }
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{prefix}{}x{nanos}", std::process::id())
}

/// A child process killed (SIGKILL) and reaped when dropped.
struct Proc(Child);

impl Proc {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A NATS server of the test's own, so that it can be stopped and started again.
struct Nats {
    bin: PathBuf,
    port: u16,
    proc: Option<Proc>,
}

impl Nats {
    fn start(bin: PathBuf) -> Nats {
        let mut n = Nats { bin, port: free_port(), proc: None };
        n.restart();
        n
    }

    fn restart(&mut self) {
        let child = Command::new(&self.bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.proc = Some(Proc(child));
        wait_for_port(self.port, "nats-server");
    }

    fn stop(&mut self) {
        self.proc = None;
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

/// Three `fixture` instances behind HAProxy, on PostgreSQL through a relay the test can take
/// down or freeze.
struct Cluster {
    nats: Nats,
    db: Relay,
    /// `s1`, `s2`, `s3` in HAProxy's terms; `None` once killed.
    instances: Vec<Option<HttpServer>>,
    _balancer: Haproxy,
    url: String,
    client: reqwest::Client,
    /// Last: dropped once the instances are gone.
    _schema: Schema,
}

impl Cluster {
    async fn start(pg: &str, haproxy: &std::path::Path, nats_bin: PathBuf) -> Cluster {
        let schema = Schema::create(pg).await;
        let nats = Nats::start(nats_bin);
        let mut url = reqwest::Url::parse(pg).expect("SWITCHYARD_TEST_PG is a URL");
        let db = Relay::start(&format!("{}:{}", url.host_str().unwrap_or("127.0.0.1"), url.port().unwrap_or(5432)));
        url.set_host(Some("127.0.0.1")).expect("a host");
        url.set_port(Some(db.port)).expect("a port");
        let pg = schema.url(url.as_str());
        let subject = unique("cluster.t");
        let key = unique("cluster-test-requestState-key-of-at-least-32-bytes-");
        let args: Vec<String> = [
            "--tasks",
            "--task-store",
            &format!("postgres:{pg}"),
            "--task-lease-ms",
            &LEASE_MS.to_string(),
            "--hub",
            &format!("nats:{}", nats.url()),
            "--hub-subject",
            &subject,
            "--state-key-env",
            "CLUSTER_TEST_STATE_KEY",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut instances = Vec::new();
        let mut ports = Vec::new();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for _ in 0..3 {
            // As docs/scaling.md deploys them: each instance listens on loopback and accepts the
            // public name the balancer passes on.
            let env = [("CLUSTER_TEST_STATE_KEY", key.as_str()), ("SWITCHYARD_ALLOWED_HOSTS", PUBLIC_HOST)];
            let server = HttpServer::start_with_env("fixture", &args, &env);
            ports.push(server.port);
            instances.push(Some(server));
        }
        let port = free_port();
        let balancer = Haproxy::start(haproxy, &haproxy_config(port, &ports), &[port]);
        Cluster {
            nats,
            db,
            instances,
            _balancer: balancer,
            url: format!("http://127.0.0.1:{port}/mcp"),
            client: public_client(),
            _schema: schema,
        }
    }

    /// Kills instance `name` (`s1`..`s3`) with SIGKILL: no graceful stop.
    fn kill(&mut self, name: &str) {
        let i = name.trim_start_matches('s').parse::<usize>().expect("s1..s3") - 1;
        // Dropping the server kills it (SIGKILL) and reaps it.
        drop(self.instances[i].take());
    }

    /// A 2026-07-28 request through the balancer; the reply and the instance that served it.
    async fn request(&self, id: i64, method: &str, params: Value) -> (Value, String) {
        let mut rb = modern(&self.client, &self.url, json!(id), method, params.clone());
        if let Some(t) = params.get("taskId").and_then(Value::as_str) {
            rb = rb.header("mcp-name", t);
        }
        let r = send(rb).await;
        assert_eq!(r.status, 200, "{method}: {:?}", r.messages);
        (r.last().clone(), served_by(&r.headers))
    }

    /// Opens a listen stream through the balancer.
    async fn listen(&self, id: i64, params: Value) -> (Sse, String) {
        let resp = modern(&self.client, &self.url, json!(id), "subscriptions/listen", params)
            .send()
            .await
            .expect("listen sent");
        assert_eq!(resp.status(), 200);
        let by = served_by(resp.headers());
        (Sse { body: resp.bytes_stream().boxed(), buf: Vec::new() }, by)
    }
}

/// The balancer: round-robin over the three instances, health checks every 200 ms (a killed
/// instance leaves the rotation; requests already routed to it are sent elsewhere), long
/// timeouts for listen streams, and legacy sessions kept on the instance that created them:
/// the `Mcp-Session-Id` of each `initialize` response is stored with its server in a stick
/// table and matched on later requests.
fn haproxy_config(port: u16, instances: &[u16]) -> String {
    let servers: String = instances
        .iter()
        .enumerate()
        .map(|(i, p)| format!("    server s{} 127.0.0.1:{p} check inter 200ms fall 1 rise 1\n", i + 1))
        .collect();
    // HAProxy needs two descriptors a connection and refuses to start when `maxconn` does not
    // fit the open-file limit (a laptop's 1 024), so it gets what fits, at most 2 000.
    let maxconn = crate::common::socket_budget("cluster::haproxy", 2000, 2);
    format!(
        "global
    maxconn {maxconn}

defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout http-keep-alive 10s

frontend mcp
    bind 127.0.0.1:{port}
    default_backend instances

backend instances
    balance roundrobin
    option redispatch
    retries 3
    stick-table type string len 128 size 100k expire 30m
    stick match req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
    http-response set-header x-served-by %s
{servers}"
    )
}

fn served_by(headers: &reqwest::header::HeaderMap) -> String {
    headers.get("x-served-by").and_then(|v| v.to_str().ok()).expect("x-served-by from the balancer").to_owned()
}

/// An SSE response read message by message.
struct Sse {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: Vec<u8>,
}

enum Next {
    Message(Value),
    Ended,
    Silent,
}

impl Sse {
    /// The next `data:` message within `wait`; `Ended` when the server closed the stream.
    async fn next(&mut self, wait: Duration) -> Next {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buf.drain(..end + 2).collect();
                let text = String::from_utf8_lossy(&event);
                let data: String =
                    text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect::<Vec<_>>().join("");
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                return Next::Message(serde_json::from_str(&data).expect("JSON in an SSE event"));
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => return Next::Silent,
                Ok(None) | Ok(Some(Err(_))) => return Next::Ended,
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
            }
        }
    }

    /// The next message, which must arrive within `wait`.
    async fn expect(&mut self, wait: Duration, what: &str) -> Value {
        match self.next(wait).await {
            Next::Message(m) => m,
            Next::Ended => panic!("the stream ended while waiting for {what}"),
            Next::Silent => panic!("nothing arrived within {wait:?} while waiting for {what}"),
        }
    }

    /// Skips messages until one with `method`; panics when the stream ends or `wait` passes.
    async fn until(&mut self, method: &str, wait: Duration) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self.expect(left, method).await;
            if m["method"] == method {
                return m;
            }
        }
    }
}

fn task_caps() -> Value {
    json!({ "extensions": { TASKS: {} } })
}

fn with_meta(mut params: Value, caps: Value) -> Value {
    params["_meta"] = meta(caps);
    params
}

#[tokio::test]
#[cfg_attr(
    not(all(svc_pg, svc_haproxy, svc_nats_server)),
    ignore = "needs SWITCHYARD_TEST_PG, haproxy and nats-server"
)]
async fn tasks_are_one_set_across_instances_and_survive_a_killed_instance() {
    let Some((pg, haproxy, nats)) = requirements("tasks_are_one_set_across_instances_and_survive_a_killed_instance")
    else {
        return;
    };
    let mut cluster = Cluster::start(&pg, &haproxy, nats).await;
    let slow = |seconds: u64| with_meta(json!({ "name": "slow", "arguments": { "seconds": seconds } }), task_caps());
    let get = |id: &str| with_meta(json!({ "taskId": id }), task_caps());

    // Created on one instance, read on another, cancelled on a third.
    let (created, on_a) = cluster.request(1, "tools/call", slow(60)).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    let (got, on_b) = cluster.request(2, "tasks/get", get(&task)).await;
    assert_ne!(on_a, on_b, "round-robin sends the second request elsewhere");
    assert_eq!(got["result"]["status"], "working", "{got}");
    // A listener on yet another instance hears the cancellation.
    let (mut events, listening_on) =
        cluster.listen(3, with_meta(json!({ "notifications": { "taskIds": [task] } }), task_caps())).await;
    events.until("notifications/subscriptions/acknowledged", Duration::from_secs(10)).await;
    // Round-robin: once the runner has served a request, the next one goes to another instance.
    for n in 0..6 {
        let (_, by) = cluster.request(50 + n, "tools/list", json!({})).await;
        if by == on_a {
            break;
        }
    }
    let (cancelled, on_c) = cluster.request(4, "tasks/cancel", get(&task)).await;
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    assert_ne!(on_c, on_a, "the cancel must come from an instance that does not run the task");
    let note = events.until("notifications/tasks", Duration::from_secs(10)).await;
    assert_eq!(note["params"]["taskId"], task.as_str());
    assert_eq!(note["params"]["status"], "cancelled", "{note}");
    eprintln!("task {task}: created on {on_a}, read on {on_b}, cancelled on {on_c}, heard on {listening_on}");
    for n in 0..3 {
        let (r, _) = cluster.request(10 + n, "tasks/get", get(&task)).await;
        assert_eq!(r["result"]["status"], "cancelled", "every instance agrees: {r}");
    }

    // A task whose instance dies (SIGKILL) ends `failed` once its lease runs out.
    let (created, runner) = cluster.request(20, "tools/call", slow(120)).await;
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    let killed_at = Instant::now();
    cluster.kill(&runner);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut id = 21;
    let failed = loop {
        let (r, by) = cluster.request(id, "tasks/get", get(&task)).await;
        assert_ne!(by, runner, "the balancer must not route to the killed instance");
        id += 1;
        if r["result"]["status"] != "working" {
            break r;
        }
        assert!(Instant::now() < deadline, "the task of the killed instance {runner} is still working: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    assert_eq!(failed["result"]["error"]["code"], -32603, "{failed}");
    eprintln!("task {task} of killed instance {runner}: failed after {:?} (lease {LEASE_MS} ms)", killed_at.elapsed());

    // The surviving instances still create and finish tasks.
    let (created, _) = cluster.request(100, "tools/call", slow(0)).await;
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (r, _) = cluster.request(id, "tasks/get", get(&task)).await;
        id += 1;
        if r["result"]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "a fresh task does not complete: {r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
#[cfg_attr(
    not(all(svc_pg, svc_haproxy, svc_nats_server)),
    ignore = "needs SWITCHYARD_TEST_PG, haproxy and nats-server"
)]
async fn events_and_input_rounds_cross_instances_and_listen_survives_a_broker_restart() {
    let Some((pg, haproxy, nats)) =
        requirements("events_and_input_rounds_cross_instances_and_listen_survives_a_broker_restart")
    else {
        return;
    };
    let mut cluster = Cluster::start(&pg, &haproxy, nats).await;
    let filter = json!({ "notifications": { "toolsListChanged": true, "resourceSubscriptions": ["file:///a"] } });

    // Listen on one instance, publish on others.
    let (mut events, listening_on) = cluster.listen(1, filter.clone()).await;
    events.until("notifications/subscriptions/acknowledged", Duration::from_secs(10)).await;
    let (r, trigger_on) = cluster.request(2, "tools/call", json!({ "name": "test_trigger_tool_change" })).await;
    assert!(r.get("error").is_none(), "{r}");
    assert_ne!(trigger_on, listening_on);
    events.until("notifications/tools/list_changed", Duration::from_secs(10)).await;
    let (_, touch_on) =
        cluster.request(3, "tools/call", json!({ "name": "touch", "arguments": { "uri": "file:///a" } })).await;
    assert_ne!(touch_on, listening_on);
    let updated = events.until("notifications/resources/updated", Duration::from_secs(10)).await;
    assert_eq!(updated["params"]["uri"], "file:///a");

    // An input-required round on one instance, the retry on another (shared requestState key).
    let caps = json!({ "elicitation": {} });
    let ask = |extra: Value| {
        let mut p = with_meta(json!({ "name": "ask_name" }), caps.clone());
        if let Some(extra) = extra.as_object() {
            for (k, v) in extra {
                p[k] = v.clone();
            }
        }
        p
    };
    let (r1, round1_on) = cluster.request(4, "tools/call", ask(json!({}))).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let state = r1["result"]["requestState"].as_str().expect("a requestState").to_owned();
    let answer = json!({ "name": { "action": "accept", "content": { "name": "Ada" } } });
    let (r2, round2_on) =
        cluster.request(5, "tools/call", ask(json!({ "inputResponses": answer, "requestState": state }))).await;
    assert_ne!(round1_on, round2_on, "the retry must reach another instance");
    assert_eq!(r2["result"]["content"][0]["text"], "Hello, Ada!", "{r2}");

    // The broker restarts under an open listen stream: the stream ends with its result (never
    // silently missing events), requests are still answered meanwhile, and after the broker
    // is back a new listen hears events published on another instance.
    cluster.nats.stop();
    let deadline = Instant::now() + Duration::from_secs(15);
    let result = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.next(left).await {
            Next::Message(m) if m.get("id") == Some(&json!(1)) => break m,
            Next::Message(_) => continue,
            Next::Ended => panic!("the listen stream ended without its result"),
            Next::Silent => panic!("the listen stream stayed open after the broker went away"),
        }
    };
    assert!(result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == json!(1), "{result}");
    let (echo, _) =
        cluster.request(6, "tools/call", json!({ "name": "echo", "arguments": { "text": "still here" } })).await;
    assert_eq!(echo["result"]["content"][0]["text"], "still here", "{echo}");
    cluster.nats.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut id = 10;
    let (mut events, listening_on) = loop {
        let (mut s, on) = cluster.listen(id, filter.clone()).await;
        id += 1;
        s.until("notifications/subscriptions/acknowledged", Duration::from_secs(10)).await;
        // A listen opened while its instance has no broker link ends at once with its result.
        match s.next(Duration::from_millis(500)).await {
            Next::Silent => break (s, on),
            _ => {
                assert!(Instant::now() < deadline, "no listen stays open after the broker came back");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    // Publish from other instances until one has its link back too (an instance that is still
    // reconnecting keeps the event and sends it once connected).
    let (r, on) = cluster.request(id, "tools/call", json!({ "name": "test_trigger_tool_change" })).await;
    assert!(r.get("error").is_none(), "{r}");
    let heard = if on == listening_on {
        let (_, on2) = cluster.request(id + 1, "tools/call", json!({ "name": "test_trigger_tool_change" })).await;
        on2
    } else {
        on
    };
    assert_ne!(heard, listening_on);
    events.until("notifications/tools/list_changed", Duration::from_secs(20)).await;
}

#[tokio::test]
#[cfg_attr(
    not(all(svc_pg, svc_haproxy, svc_nats_server)),
    ignore = "needs SWITCHYARD_TEST_PG, haproxy and nats-server"
)]
async fn a_legacy_session_stays_on_the_instance_that_created_it() {
    let Some((pg, haproxy, nats)) = requirements("a_legacy_session_stays_on_the_instance_that_created_it") else {
        return;
    };
    let cluster = Cluster::start(&pg, &haproxy, nats).await;
    let c = &cluster.client;
    let post = |body: Value, session: Option<&str>| {
        let mut rb = c
            .post(&cluster.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = session {
            rb = rb.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
        }
        rb.body(body.to_string())
    };
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "cluster-test", "version": "0" } } });
    let r = send(post(init, None)).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let owner = served_by(&r.headers);
    let session = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id").to_owned();
    let r = send(post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), Some(&session))).await;
    assert_eq!(r.status, 202);
    assert_eq!(served_by(&r.headers), owner);
    for id in 1..=6 {
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "echo", "arguments": { "text": format!("call {id}") } } });
        let r = send(post(body, Some(&session))).await;
        assert_eq!(r.status, 200, "{:?}", r.messages);
        assert_eq!(served_by(&r.headers), owner, "request {id} of the session left its instance");
        assert_eq!(r.last()["result"]["content"][0]["text"], format!("call {id}"));
    }
    // Stateless requests in between still spread over the instances.
    let mut seen = std::collections::BTreeSet::new();
    for id in 10..16 {
        let (_, by) = cluster.request(id, "tools/list", json!({})).await;
        seen.insert(by);
    }
    assert_eq!(seen.len(), 3, "round-robin reaches every instance: {seen:?}");
}

#[tokio::test]
#[cfg_attr(
    not(all(svc_pg, svc_haproxy, svc_nats_server)),
    ignore = "needs SWITCHYARD_TEST_PG, haproxy and nats-server"
)]
async fn input_answered_on_another_instance_while_the_broker_is_down_reaches_the_task() {
    let Some((pg, haproxy, nats)) =
        requirements("input_answered_on_another_instance_while_the_broker_is_down_reaches_the_task")
    else {
        return;
    };
    let mut cluster = Cluster::start(&pg, &haproxy, nats).await;
    let caps = json!({ "elicitation": {}, "extensions": { TASKS: {} } });
    let call = with_meta(json!({ "name": "ask_name", "arguments": {} }), caps.clone());
    let (created, runner) = cluster.request(1, "tools/call", call).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    let get = with_meta(json!({ "taskId": task }), caps.clone());
    let mut id = 2;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (r, _) = cluster.request(id, "tasks/get", get.clone()).await;
        id += 1;
        if r["result"]["status"] == "input_required" {
            break;
        }
        assert!(Instant::now() < deadline, "the task never asked for input: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // No broker: nothing can carry the answers, or a hint, from one instance to another.
    cluster.nats.stop();
    // Round-robin: once the runner has served a request, the next one goes to another instance.
    for _ in 0..6 {
        let (_, by) = cluster.request(id, "tools/list", json!({})).await;
        id += 1;
        if by == runner {
            break;
        }
    }
    let answer = json!({ "name": { "action": "accept", "content": { "name": "Ada" } } });
    let update = with_meta(json!({ "taskId": task, "inputResponses": answer }), caps.clone());
    let (ack, answered_on) = cluster.request(id, "tasks/update", update).await;
    id += 1;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_ne!(answered_on, runner, "the update must come from an instance that does not run the task");

    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let (r, _) = cluster.request(id, "tasks/get", get.clone()).await;
        id += 1;
        if r["result"]["status"] != "input_required" && r["result"]["status"] != "working" {
            break r;
        }
        assert!(Instant::now() < deadline, "the answers never reached the task on {runner}: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(done["result"]["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
    eprintln!("task {task}: waits on {runner}, answered on {answered_on} with the broker down, completed");
}

/// Polls `tasks/get` through the balancer until the task leaves `working` (at most `within`);
/// requests answered with an error (the store still recovering) are retried.
async fn settled(cluster: &Cluster, id: &mut i64, task: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let (r, _) = cluster.request(*id, "tasks/get", with_meta(json!({ "taskId": task }), task_caps())).await;
        *id += 1;
        let status = &r["result"]["status"];
        if r.get("error").is_none() && status != "working" {
            return r;
        }
        assert!(Instant::now() < deadline, "task {task} has not settled: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[cfg_attr(
    not(all(svc_pg, svc_haproxy, svc_nats_server)),
    ignore = "needs SWITCHYARD_TEST_PG, haproxy and nats-server"
)]
async fn a_database_outage_or_freeze_loses_no_running_task() {
    let Some((pg, haproxy, nats)) = requirements("a_database_outage_or_freeze_loses_no_running_task") else {
        return;
    };
    let cluster = Cluster::start(&pg, &haproxy, nats).await;
    let slow = |seconds: u64| with_meta(json!({ "name": "slow", "arguments": { "seconds": seconds } }), task_caps());
    let get = |id: &str| with_meta(json!({ "taskId": id }), task_caps());
    let mut id = 1;

    // Down: the task finishes during the outage (its result cannot be written) and the outage
    // outlasts its lease twice over (no lease can be renewed). Neither may fail it.
    let (created, runner) = cluster.request(id, "tools/call", slow(1)).await;
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    cluster.db.set_down(true);
    let (during, _) = cluster.request(100, "tasks/get", get(&task)).await;
    assert_eq!(during["error"]["code"], -32603, "the store is away: a clear internal error, not a hang: {during}");
    let message = during["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("task store") && message.contains("try again"), "what to do: {during}");
    tokio::time::sleep(Duration::from_millis(3 * LEASE_MS)).await;
    cluster.db.set_down(false);
    let done = settled(&cluster, &mut id, &task, Duration::from_secs(30)).await;
    assert_eq!(done["result"]["status"], "completed", "run by {runner}, across a database outage: {done}");
    eprintln!("task {task} on {runner}: completed across a {} ms database outage", 3 * LEASE_MS);

    // Frozen: statements hang rather than fail. A request gives up with -32603 after the
    // statement timeout instead of hanging, and the running task survives the freeze.
    let (created, runner) = cluster.request(id, "tools/call", slow(1)).await;
    id += 1;
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    cluster.db.freeze(true);
    let (during, _) = cluster.request(200, "tasks/get", get(&task)).await;
    assert_eq!(during["error"]["code"], -32603, "a frozen store: a clear internal error, not a hang: {during}");
    let message = during["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("task store") && message.contains("try again"), "what to do: {during}");
    cluster.db.freeze(false);
    let done = settled(&cluster, &mut id, &task, Duration::from_secs(40)).await;
    assert_eq!(done["result"]["status"], "completed", "run by {runner}, across a frozen database: {done}");
}
