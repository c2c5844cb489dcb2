//! Requirements A1, A11, A14, A16, B5 and B9 against `examples/fixture --probes` as a real
//! process, each over stdio and over Streamable HTTP (the 2026-07-28 stateless wire, and a
//! 2025-11-25 session where the item asks for one). The probes are switched on per request by
//! `_meta["dev.switchyard.fixture/probe"]`; see `examples/fixture/probes.rs`.

use crate::common::{self, *};
use serde_json::{Map, Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const PROBE: &str = "dev.switchyard.fixture/probe";
const TRACE: &str = "dev.switchyard.fixture/trace";
const LEGACY: &str = "2025-11-25";

enum Transport {
    Stdio { _child: Child, stdin: ChildStdin, out: Box<Lines<BufReader<ChildStdout>>> },
    Http { server: HttpServer, client: reqwest::Client, session: Option<String> },
}

/// One connection to a fixture process: stdio lines or HTTP POSTs, modern or on a legacy
/// session.
struct Wire {
    transport: Transport,
    legacy: bool,
    next_id: i64,
    /// Names the wire in assertion messages.
    label: &'static str,
}

/// Everything the server sent for one request: notifications first, the response last.
struct Answer {
    /// The HTTP status (`None` on stdio).
    status: Option<u16>,
    messages: Vec<Value>,
}

impl Answer {
    fn response(&self) -> &Value {
        self.messages.last().expect("a response")
    }

    fn notifications(&self) -> &[Value] {
        &self.messages[..self.messages.len() - 1]
    }
}

impl Wire {
    async fn stdio(args: &[&str], legacy: bool) -> Wire {
        let mut child = stdio_child("fixture", args);
        let stdin = child.stdin.take().expect("stdin");
        let out = Box::new(BufReader::new(child.stdout.take().expect("stdout")).lines());
        let label = if legacy { "stdio legacy" } else { "stdio" };
        let mut w = Wire { transport: Transport::Stdio { _child: child, stdin, out }, legacy, next_id: 1, label };
        if legacy {
            let init = w.raw_request(0, "initialize", initialize_params()).await;
            assert_eq!(init.response()["result"]["protocolVersion"], LEGACY, "{}", init.response());
            w.notify("notifications/initialized", json!({})).await;
        }
        w
    }

    async fn http(args: &[&str], legacy: bool) -> Wire {
        let server = HttpServer::start_with("fixture", args);
        let client = client();
        let mut session = None;
        if legacy {
            let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params() });
            let r =
                send(client.post(&server.url).header("content-type", "application/json").body(init.to_string())).await;
            assert_eq!(r.last()["result"]["protocolVersion"], LEGACY, "{:?}", r.messages);
            let id = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session id");
            session = Some(id.to_owned());
        }
        let label = if legacy { "http legacy" } else { "http" };
        let mut w = Wire { transport: Transport::Http { server, client, session }, legacy, next_id: 1, label };
        if legacy {
            w.notify("notifications/initialized", json!({})).await;
        }
        w
    }

    /// Sends a request whose `params._meta` holds `meta` (plus the 2026-07-28 envelope unless
    /// on a legacy session) and collects what came back for it.
    async fn exchange(&mut self, method: &str, params: Value, meta: Value) -> Answer {
        let (id, params) = self.prepare(params, meta);
        self.raw_request(id, method, params).await
    }

    /// Like [`exchange`](Self::exchange) for a request the server should not answer: on stdio
    /// only writes it (the answer is empty), on HTTP returns the reply. Also returns its id.
    async fn unanswered(&mut self, method: &str, params: Value, meta: Value) -> (i64, Answer) {
        let (id, params) = self.prepare(params, meta);
        if let Transport::Stdio { stdin, .. } = &mut self.transport {
            write_line(stdin, &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await;
            return (id, Answer { status: None, messages: Vec::new() });
        }
        (id, self.raw_request(id, method, params).await)
    }

    /// The next id, and `params` with `_meta` = `meta` (plus the 2026-07-28 envelope unless on
    /// a legacy session).
    fn prepare(&mut self, mut params: Value, meta: Value) -> (i64, Value) {
        let mut m =
            if self.legacy { Map::new() } else { common::meta(json!({})).as_object().cloned().unwrap_or_default() };
        m.extend(meta.as_object().cloned().unwrap_or_default());
        params["_meta"] = Value::Object(m);
        let id = self.next_id;
        self.next_id += 1;
        (id, params)
    }

    /// [`exchange`](Self::exchange) with probe `probe` (none: no probe key), returning the
    /// response.
    async fn request(&mut self, method: &str, params: Value, probe: Option<&str>) -> Value {
        let meta = match probe {
            Some(p) => json!({ PROBE: p }),
            None => json!({}),
        };
        self.exchange(method, params, meta).await.response().clone()
    }

    /// The id the next request will get.
    fn peek_id(&self) -> i64 {
        self.next_id
    }

    async fn raw_request(&mut self, id: i64, method: &str, params: Value) -> Answer {
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        match &mut self.transport {
            Transport::Stdio { stdin, out, .. } => {
                write_line(stdin, &body).await;
                let mut messages = Vec::new();
                loop {
                    let line = tokio::time::timeout(Duration::from_secs(10), out.next_line())
                        .await
                        .expect("an answer within 10 s")
                        .expect("readable stdout")
                        .expect("a line before EOF");
                    let msg: Value = serde_json::from_str(&line).expect("JSON");
                    let done = msg["id"] == id;
                    messages.push(msg);
                    if done {
                        return Answer { status: None, messages };
                    }
                }
            }
            Transport::Http { server, client, session } => {
                let rb = match session {
                    Some(sid) => legacy_post(client, &server.url, sid, &body),
                    None => modern(client, &server.url, json!(id), method, body["params"].clone()),
                };
                let r = send(rb).await;
                Answer { status: Some(r.status), messages: r.messages }
            }
        }
    }

    /// Sends a notification (with the 2026-07-28 envelope unless on a legacy session).
    async fn notify(&mut self, method: &str, mut params: Value) {
        if !self.legacy {
            params["_meta"] = common::meta(json!({}));
        }
        let body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        match &mut self.transport {
            Transport::Stdio { stdin, .. } => write_line(stdin, &body).await,
            Transport::Http { server, client, session } => {
                let rb = match session {
                    Some(sid) => legacy_post(client, &server.url, sid, &body),
                    None => client
                        .post(&server.url)
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-protocol-version", MODERN)
                        .header("mcp-method", method)
                        .body(body.to_string()),
                };
                // The answer (202, or an error for a notification the wire does not take)
                // does not matter here; that the POST completed orders it before what follows.
                send(rb).await;
            }
        }
    }

    async fn reset(&mut self) {
        let r = self.request("fixture/reset", json!({}), None).await;
        assert!(r.get("result").is_some(), "{}: {r}", self.label);
    }

    async fn counts(&mut self) -> Value {
        let r = self.request("fixture/counters", json!({}), None).await;
        r["result"]["counts"].clone()
    }

    /// Takes the probes' ordered log (its last entry is this request's own arrival).
    async fn drain_log(&mut self) -> Vec<String> {
        let r = self.request("fixture/probe_log", json!({}), None).await;
        serde_json::from_value(r["result"]["log"].clone()).unwrap_or_else(|_| panic!("{}: a log in {r}", self.label))
    }
}

fn initialize_params() -> Value {
    json!({ "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": { "name": "probe-test", "version": "0" } })
}

async fn write_line(stdin: &mut ChildStdin, msg: &Value) {
    stdin.write_all(format!("{msg}\n").as_bytes()).await.expect("write");
    stdin.flush().await.expect("flush");
}

fn legacy_post(c: &reqwest::Client, url: &str, session: &str, body: &Value) -> reqwest::RequestBuilder {
    c.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", LEGACY)
        .header("mcp-session-id", session)
        .body(body.to_string())
}

/// A counter, 0 when absent.
fn n(counts: &Value, key: &str) -> u64 {
    counts.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A result without `_meta` (where the trace and `serverInfo` go).
fn body(response: &Value) -> Value {
    let mut r = response["result"].clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("_meta");
    }
    r
}

fn trace(response: &Value) -> Vec<String> {
    serde_json::from_value(response["result"]["_meta"][TRACE].clone())
        .unwrap_or_else(|_| panic!("a trace in {response}"))
}

/// Runs `test` against a `--probes` fixture over stdio, then over HTTP (2026-07-28).
async fn modern_wires(test: impl AsyncFn(Wire)) {
    test(Wire::stdio(&["--probes"], false).await).await;
    test(Wire::http(&["--probes"], false).await).await;
}

/// Runs `test` against a `--probes` fixture on a 2025-11-25 session over stdio, then over HTTP.
async fn legacy_wires(test: impl AsyncFn(Wire)) {
    test(Wire::stdio(&["--probes"], true).await).await;
    test(Wire::http(&["--probes"], true).await).await;
}

// ---- A1 ------------------------------------------------------------------------------------

/// A1: both filter families see the tool matched before the first filter ran; a filter that
/// swaps the tool changes the params the inner filters get, not the matched record.
#[tokio::test]
async fn a1_both_filter_families_see_the_primitive_matched_before_them() {
    modern_wires(async |mut w| {
        w.reset().await;
        let r =
            w.request("tools/call", json!({ "name": "echo", "arguments": { "text": "hi" } }), Some("matched")).await;
        assert_eq!(r["result"]["content"], json!([{ "type": "text", "text": "hi" }]), "{}: {r}", w.label);
        let c = w.counts().await;
        assert_eq!(
            (n(&c, "matched:alt:echo"), n(&c, "matched:ord:echo"), n(&c, "params:ord:echo")),
            (1, 1, 1),
            "{}: {c}",
            w.label
        );

        let r = w.request("tools/call", json!({ "name": "swap_to_secret", "arguments": {} }), Some("matched")).await;
        assert_eq!(r["result"]["content"][0]["text"], "secret", "{}: {r}", w.label);
        let c = w.counts().await;
        assert_eq!(n(&c, "matched:alt:swap_to_secret"), 1, "{}: {c}", w.label);
        assert_eq!(n(&c, "matched:ord:swap_to_secret"), 1, "{}: the record outlives the swap: {c}", w.label);
        assert_eq!(n(&c, "params:ord:secret"), 1, "{}: the inner filter got the swapped params: {c}", w.label);
        assert_eq!(n(&c, "matched:ord:secret") + n(&c, "matched:alt:secret"), 0, "{}: {c}", w.label);
    })
    .await;
}

// ---- A11 -----------------------------------------------------------------------------------

/// A11: an alternate filter that answers without calling next skips the ordinary filters and
/// the tool; the filters outside it still run.
#[tokio::test]
async fn a11_an_alternate_filter_that_answers_skips_the_ordinary_filters_and_the_tool() {
    modern_wires(async |mut w| {
        w.reset().await;
        let r = w.request("tools/call", json!({ "name": "echo", "arguments": { "text": "hi" } }), Some("short")).await;
        assert_eq!(r["result"]["content"], json!([{ "type": "text", "text": "short" }]), "{}: {r}", w.label);
        assert_eq!(r["result"]["resultType"], "complete", "{}: {r}", w.label);
        assert_eq!(trace(&r), [">r1", ">r2", ">alt1", "<alt1", "<r2", "<r1"], "{}", w.label);
        let c = w.counts().await;
        assert_eq!(n(&c, "alt1"), 1, "{}: {c}", w.label);
        assert_eq!((n(&c, "ord1"), n(&c, "ord2"), n(&c, "tool:echo")), (0, 0, 0), "{}: {c}", w.label);

        // Without the probe the same call runs the ordinary chain and the tool once.
        let r = w.request("tools/call", json!({ "name": "echo", "arguments": { "text": "hi" } }), None).await;
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{}: {r}", w.label);
        let c = w.counts().await;
        assert_eq!((n(&c, "ord1"), n(&c, "ord2"), n(&c, "tool:echo")), (1, 1, 1), "{}: {c}", w.label);
    })
    .await;
}

// ---- A14 -----------------------------------------------------------------------------------

/// A14: an alternate filter on `prompts/get` answers with its own body, exactly; the same
/// filter delegating yields the ordinary GetPromptResult (2026-07-28).
#[tokio::test]
async fn a14_alternate_filters_on_prompts_get_modern() {
    modern_wires(async |mut w| {
        w.reset().await;
        let r = w.request("prompts/get", json!({ "name": "p1" }), Some("custom")).await;
        assert_eq!(body(&r), json!({ "resultType": "custom", "x": 1 }), "{}: {r}", w.label);
        let r = w.request("prompts/get", json!({ "name": "p1" }), None).await;
        assert_eq!(
            body(&r),
            json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": "p1" } }],
                "resultType": "complete",
            }),
            "{}: {r}",
            w.label
        );
        let c = w.counts().await;
        assert_eq!(n(&c, "alt:prompts/get"), 2, "{}: the filter ran for both: {c}", w.label);
    })
    .await;
}

/// A14 on a 2025-11-25 session: the alternate keeps its own shape (its `resultType`
/// included); the delegated ordinary result gets no `resultType` (A12).
#[tokio::test]
async fn a14_alternate_filters_on_prompts_get_legacy_session() {
    legacy_wires(async |mut w| {
        let r = w.request("prompts/get", json!({ "name": "p1" }), Some("custom")).await;
        assert_eq!(body(&r), json!({ "resultType": "custom", "x": 1 }), "{}: {r}", w.label);
        let r = w.request("prompts/get", json!({ "name": "p1" }), None).await;
        assert_eq!(
            body(&r),
            json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "p1" } }] }),
            "{}: {r}",
            w.label
        );
    })
    .await;
}

// ---- A16 -----------------------------------------------------------------------------------

/// A16: the incoming message filter sees requests and notifications (here a
/// `notifications/cancelled` for an id nobody used), each before routing: a request is logged
/// before the filters of its method run.
#[tokio::test]
async fn a16_the_incoming_message_filter_sees_every_message_before_routing() {
    modern_wires(async |mut w| {
        w.drain_log().await;
        w.reset().await;
        let r = w.request("tools/list", json!({}), None).await;
        assert!(r["result"]["tools"].is_array(), "{}: {r}", w.label);
        w.notify("notifications/cancelled", json!({ "requestId": 987654, "reason": "probe" })).await;
        let r =
            w.request("tools/call", json!({ "name": "echo", "arguments": { "text": "hi" } }), Some("matched")).await;
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{}: {r}", w.label);
        assert_eq!(
            w.drain_log().await,
            [
                "in:fixture/reset",
                "in:tools/list",
                "in:notifications/cancelled",
                "in:tools/call",
                "alt:echo",
                "ord:echo",
                "in:fixture/probe_log"
            ],
            "{}",
            w.label
        );
        let c = w.counts().await;
        assert_eq!(
            (n(&c, "in:tools/list"), n(&c, "in:notifications/cancelled"), n(&c, "in:tools/call")),
            (1, 1, 1),
            "{}: {c}",
            w.label
        );
    })
    .await;
}

/// A16: an outgoing message filter that drops `notifications/progress` suppresses it on the
/// wire; the same tool's progress under a token the filter keeps reaches the client.
#[tokio::test]
async fn a16_an_outgoing_message_filter_drops_progress_on_the_wire() {
    modern_wires(async |mut w| {
        w.reset().await;
        let call = json!({ "name": "progress_probe", "arguments": {} });
        let kept = w.exchange("tools/call", call.clone(), json!({ "progressToken": "keep-1" })).await;
        assert_eq!(kept.response()["result"]["content"][0]["text"], "done", "{}: {:?}", w.label, kept.messages);
        let progress: Vec<(Value, Value)> =
            kept.notifications().iter().map(|m| (m["method"].clone(), m["params"]["progressToken"].clone())).collect();
        assert_eq!(
            progress,
            [(json!("notifications/progress"), json!("keep-1")), (json!("notifications/progress"), json!("keep-1"))],
            "{}",
            w.label
        );

        let dropped = w.exchange("tools/call", call, json!({ "progressToken": "drop-1" })).await;
        assert_eq!(dropped.messages.len(), 1, "{}: only the response: {:?}", w.label, dropped.messages);
        assert_eq!(dropped.response()["result"]["content"][0]["text"], "done", "{}", w.label);
        let c = w.counts().await;
        assert_eq!(n(&c, "tool:progress_probe"), 2, "{}: {c}", w.label);
        assert_eq!(n(&c, "out:notifications/progress"), 2, "{}: {c}", w.label);
        assert_eq!(n(&c, "out:dropped:notifications/progress"), 2, "{}: the tool did report: {c}", w.label);
    })
    .await;
}

/// A16: an incoming message filter may drop a request: it is never routed nor answered (HTTP:
/// 202 without a body), and the connection serves the next request.
#[tokio::test]
async fn a16_an_incoming_message_filter_may_drop_a_request() {
    modern_wires(async |mut w| {
        w.reset().await;
        let (id, dropped) = w.unanswered("acme/sum", json!({ "a": 1, "b": 2 }), json!({ PROBE: "drop" })).await;
        if let Some(status) = dropped.status {
            assert_eq!((status, dropped.messages.len()), (202, 0), "{}: {:?}", w.label, dropped.messages);
        }
        let next = w.exchange("acme/sum", json!({ "a": 2, "b": 3 }), json!({})).await;
        assert_eq!(next.response()["result"]["sum"], 5, "{}: {:?}", w.label, next.messages);
        assert!(next.messages.iter().all(|m| m["id"] != id), "{}: {:?}", w.label, next.messages);
        let c = w.counts().await;
        assert_eq!((n(&c, "in:dropped:acme/sum"), n(&c, "in:acme/sum")), (1, 1), "{}: {c}", w.label);
        assert_eq!((n(&c, "t1"), n(&c, "handler:acme/sum")), (1, 1), "{}: only the second ran: {c}", w.label);
    })
    .await;
}

/// A16: an outgoing message filter may inject messages; they reach the wire in order, between
/// the notifications sent from inside the handler and before the response.
#[tokio::test]
async fn a16_an_outgoing_message_filter_may_inject_messages() {
    modern_wires(async |mut w| {
        let call = json!({ "name": "progress_probe", "arguments": {} });
        let a = w.exchange("tools/call", call, json!({ "progressToken": "inject-1" })).await;
        assert_eq!(a.response()["result"]["content"][0]["text"], "done", "{}: {:?}", w.label, a.messages);
        let methods: Vec<&str> = a.notifications().iter().filter_map(|m| m["method"].as_str()).collect();
        assert_eq!(
            methods,
            ["notifications/progress", "notifications/message", "notifications/progress", "notifications/message"],
            "{}: {:?}",
            w.label,
            a.messages
        );
        assert_eq!(
            a.notifications()[1]["params"],
            json!({ "level": "info", "logger": "fixture/probes", "data": "injected after progress for inject-1" }),
            "{}",
            w.label
        );
    })
    .await;
}

// ---- B5 ------------------------------------------------------------------------------------

/// B5: a raw filter answers `-32021` without calling next: the id is echoed, the typed filters
/// and the handler do not run, and the connection stays usable.
#[tokio::test]
async fn b5_a_raw_filter_answers_without_typed_filters_or_the_handler() {
    modern_wires(async |mut w| {
        w.reset().await;
        let id = w.peek_id();
        let a = w.exchange("acme/sum", json!({ "a": 1, "b": 2 }), json!({ PROBE: "reject" })).await;
        let r = a.response();
        assert_eq!(r["id"], id, "{}: {r}", w.label);
        assert_eq!(r["error"]["code"], -32021, "{}: {r}", w.label);
        assert!(r.get("result").is_none(), "{}: {r}", w.label);
        if let Some(status) = a.status {
            assert_eq!(status, 400, "{}: {r}", w.label);
        }
        let c = w.counts().await;
        assert_eq!(n(&c, "in:acme/sum"), 1, "{}: {c}", w.label);
        assert_eq!((n(&c, "t1"), n(&c, "t2"), n(&c, "handler:acme/sum")), (0, 0, 0), "{}: {c}", w.label);

        let r = w.request("acme/sum", json!({ "a": 1, "b": 2 }), None).await;
        assert_eq!(r["result"]["sum"], 3, "{}: {r}", w.label);
        let r = w.request("tools/call", json!({ "name": "echo", "arguments": { "text": "still here" } }), None).await;
        assert_eq!(r["result"]["content"][0]["text"], "still here", "{}: {r}", w.label);
        let c = w.counts().await;
        assert_eq!((n(&c, "t1"), n(&c, "t2"), n(&c, "handler:acme/sum")), (1, 1, 1), "{}: {c}", w.label);
    })
    .await;
}

// ---- B9 ------------------------------------------------------------------------------------

/// The `CreateTaskResult` body the fixture's `task` probe answers with.
fn probe_task() -> Value {
    json!({
        "resultType": "task",
        "taskId": "probe-task",
        "status": "working",
        "createdAt": "2026-08-01T12:00:00Z",
        "lastUpdatedAt": "2026-08-01T12:00:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 1000,
    })
}

/// B9: an alternate filter on the custom RPC `acme/sum` answers a `resultType: "task"` body,
/// serialized as given; the ordinary path still gets `resultType: "complete"`.
#[tokio::test]
async fn b9_a_custom_rpc_takes_an_alternate_result_in_its_own_shape() {
    modern_wires(async |mut w| {
        w.reset().await;
        let r = w.request("acme/sum", json!({ "a": 1, "b": 2 }), Some("task")).await;
        assert_eq!(body(&r), probe_task(), "{}: {r}", w.label);
        // The alternate answered outside the typed filters.
        assert_eq!(trace(&r), [">r1", ">r2", "<r2", "<r1"], "{}", w.label);

        let r = w.request("acme/sum", json!({ "a": 1, "b": 2 }), None).await;
        assert_eq!(body(&r), json!({ "sum": 3, "resultType": "complete" }), "{}: {r}", w.label);
        let c = w.counts().await;
        assert_eq!((n(&c, "t1"), n(&c, "handler:acme/sum")), (1, 1), "{}: {c}", w.label);
    })
    .await;
}

/// B9 on a 2025-11-25 session: the alternate is sent in its own shape there too; the ordinary
/// result gets no `resultType` (A12).
#[tokio::test]
async fn b9_a_custom_rpc_takes_an_alternate_result_on_a_legacy_session() {
    legacy_wires(async |mut w| {
        let r = w.request("acme/sum", json!({ "a": 1, "b": 2 }), Some("task")).await;
        assert_eq!(body(&r), probe_task(), "{}: {r}", w.label);
        let r = w.request("acme/sum", json!({ "a": 1, "b": 2 }), None).await;
        assert_eq!(body(&r), json!({ "sum": 3 }), "{}: {r}", w.label);
    })
    .await;
}

// ---- without --probes ----------------------------------------------------------------------

/// Without `--probes` the fixture serves none of the probes: the probe key does nothing, the
/// probe tool and RPC do not exist and no message is counted.
#[tokio::test]
async fn without_the_flag_no_probe_is_served() {
    for mut w in [Wire::stdio(&[], false).await, Wire::http(&[], false).await] {
        w.reset().await;
        let r = w.request("tools/call", json!({ "name": "echo", "arguments": { "text": "hi" } }), Some("short")).await;
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{}: {r}", w.label);
        let r = w.request("acme/sum", json!({ "a": 1, "b": 2 }), Some("reject")).await;
        assert_eq!(r["result"]["sum"], 3, "{}: {r}", w.label);
        let r = w.request("fixture/probe_log", json!({}), None).await;
        assert_eq!(r["error"]["code"], -32601, "{}: {r}", w.label);
        let r = w.request("tools/list", json!({}), None).await;
        let tools = r["result"]["tools"].as_array().expect("tools");
        assert!(tools.iter().all(|t| t["name"] != "progress_probe"), "{}: {r}", w.label);
        let c = w.counts().await;
        assert!(c.as_object().is_some_and(|m| m.keys().all(|k| !k.starts_with("in:"))), "{}: {c}", w.label);
        assert_eq!(n(&c, "tool:echo"), 1, "{}: {c}", w.label);
    }
}
