//! The Tasks extension (requirements group (d), and the task parts of A4-A7 and A15) against
//! `examples/fixture --tasks` as a real process, over stdio and Streamable HTTP.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard_client::{ClientBuilder, ToolCall};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const TASKS: &str = "io.modelcontextprotocol/tasks";
const TRACE: &str = "dev.switchyard.fixture/trace";

/// Client capabilities that declare the Tasks extension (`MT` in the requirements).
fn mt() -> Value {
    json!({ "extensions": { TASKS: {} } })
}

/// Client capabilities without it (`M`).
fn m() -> Value {
    json!({})
}

/// One connection to the fixture: stdio lines or HTTP POSTs (with an optional bearer token).
enum Wire {
    Stdio { _child: Child, stdin: ChildStdin, out: Box<Lines<BufReader<ChildStdout>>>, seen: Vec<Value> },
    Http { server: HttpServer, client: reqwest::Client, token: Option<&'static str> },
}

impl Wire {
    fn stdio(args: &[&str]) -> Wire {
        let mut child = stdio_child("fixture", args);
        let stdin = child.stdin.take().expect("stdin");
        let out = Box::new(BufReader::new(child.stdout.take().expect("stdout")).lines());
        Wire::Stdio { _child: child, stdin, out, seen: Vec::new() }
    }

    fn http(args: &[&str], token: Option<&'static str>) -> Wire {
        Wire::Http { server: HttpServer::start_with("fixture", args), client: client(), token }
    }

    /// Sends a 2026-07-28 request with these client capabilities; returns the response.
    async fn req(&mut self, id: i64, method: &str, mut params: Value, caps: Value) -> Value {
        params["_meta"] = meta(caps);
        match self {
            Wire::Http { server, client, token } => {
                let mut rb = modern(client, &server.url, json!(id), method, params.clone());
                if let Some(t) = params.get("taskId").and_then(Value::as_str) {
                    rb = rb.header("mcp-name", t);
                }
                if let Some(t) = token {
                    rb = rb.header("authorization", format!("Bearer {t}"));
                }
                send(rb).await.last().clone()
            }
            Wire::Stdio { stdin, .. } => {
                let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
                stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
                stdin.flush().await.expect("flush");
                self.response(id).await
            }
        }
    }

    /// Stdio: reads until the response `id`, keeping other messages in `seen`.
    async fn response(&mut self, id: i64) -> Value {
        let Wire::Stdio { out, seen, .. } = self else { panic!("stdio only") };
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), out.next_line())
                .await
                .expect("an answer within 10 s")
                .expect("readable")
                .expect("a line");
            let msg: Value = serde_json::from_str(&line).expect("JSON");
            if msg["id"] == id && msg.get("method").is_none() {
                return msg;
            }
            seen.push(msg);
        }
    }

    /// Calls `tool` with `MT`; returns the `CreateTaskResult`.
    async fn start_task(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        let r = self.req(id, "tools/call", json!({ "name": tool, "arguments": arguments }), mt()).await;
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        r["result"].clone()
    }

    async fn get(&mut self, id: i64, task: &str) -> Value {
        self.req(id, "tasks/get", json!({ "taskId": task }), mt()).await
    }

    /// Polls `tasks/get` until the task is terminal (at most 10 s); returns the last result.
    async fn wait_terminal(&mut self, id: i64, task: &str) -> Value {
        for n in 0..200 {
            let r = self.get(id * 1000 + n, task).await;
            let status = r["result"]["status"].as_str().unwrap_or_else(|| panic!("a task in {r}")).to_owned();
            if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
                return r["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("task {task} did not end within 10 s");
    }

    async fn counts(&mut self, id: i64) -> Value {
        self.req(id, "fixture/counters", json!({}), m()).await["result"]["counts"].clone()
    }
}

async fn both(args: &[&str], test: impl AsyncFn(Wire)) {
    test(Wire::stdio(args)).await;
    test(Wire::http(args, None)).await;
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

#[tokio::test]
async fn d1_d12_d13_advertising_removed_methods_and_gating() {
    both(&["--tasks"], async |mut w| {
        let r = w.req(1, "server/discover", json!({}), m()).await;
        assert_eq!(r["result"]["capabilities"]["extensions"][TASKS], json!({}), "{r}");
        assert!(r["result"]["capabilities"].get("tasks").is_none());
        for (i, method) in ["tasks/result", "tasks/list"].into_iter().enumerate() {
            let r = w.req(2 + i as i64, method, json!({ "taskId": "x" }), mt()).await;
            assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        }
        for (i, method) in ["tasks/get", "tasks/cancel"].into_iter().enumerate() {
            let r = w.req(5 + i as i64, method, json!({ "taskId": "x" }), m()).await;
            assert_eq!(r["error"]["code"], -32021, "{method}: {r}");
            assert_eq!(r["error"]["data"]["requiredCapabilities"]["extensions"][TASKS], json!({}));
        }
        let r = w.req(8, "tasks/update", json!({ "taskId": "x", "inputResponses": {} }), m()).await;
        assert_eq!(r["error"]["code"], -32021, "{r}");
    })
    .await;
    // Not installed: nothing advertised, tasks/* are unknown, an optional tool runs directly.
    both(&[], async |mut w| {
        let r = w.req(1, "server/discover", json!({}), m()).await;
        assert!(r["result"]["capabilities"].get("extensions").is_none(), "{r}");
        let r = w.get(2, "x").await;
        assert_eq!(r["error"]["code"], -32601, "{r}");
        let r = w.req(3, "tools/call", json!({ "name": "slow", "arguments": { "seconds": 0 } }), mt()).await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
    })
    .await;
}

#[tokio::test]
async fn d3_d13_legacy_sessions_get_no_tasks_and_no_tasks_methods() {
    let mut w = Wire::stdio(&["--tasks"]);
    let Wire::Stdio { stdin, .. } = &mut w else { unreachable!() };
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } });
    stdin.write_all(format!("{init}\n").as_bytes()).await.expect("write");
    w.response(1).await;
    let Wire::Stdio { stdin, .. } = &mut w else { unreachable!() };
    for (id, line) in [
        (2, json!({ "jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": { "taskId": "x" } })),
        // A legacy `task` param is ignored: the call runs synchronously.
        (
            3,
            json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": { "name": "slow", "arguments": { "seconds": 0 }, "task": { "ttl": 1000 } } }),
        ),
    ] {
        stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
        let _ = id;
    }
    let r = w.response(2).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = w.response(3).await;
    assert!(r["result"].get("taskId").is_none(), "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "slept 0 s", "{r}");
    // D3: a legacy request cannot fake the per-request opt-in.
    let Wire::Stdio { stdin, .. } = &mut w else { unreachable!() };
    let line = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "slow", "arguments": { "seconds": 0 },
        "_meta": { "io.modelcontextprotocol/clientCapabilities": mt() } } });
    stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    let r = w.response(4).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // Not even with the whole 2026-07-28 envelope: after `initialize` the process is legacy.
    let Wire::Stdio { stdin, .. } = &mut w else { unreachable!() };
    let line = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "slow", "arguments": { "seconds": 0 }, "_meta": meta(mt()) } });
    stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    let r = w.response(5).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
}

#[tokio::test]
async fn d2_d4_d5_d6_a4_task_creation_shape_consistency_and_one_run() {
    both(&["--tasks"], async |mut w| {
        w.req(1, "fixture/reset", json!({}), m()).await;
        // Optional + M: a direct result.
        let r = w.req(2, "tools/call", json!({ "name": "slow", "arguments": { "seconds": 0 } }), m()).await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        // Required + M: -32021 naming the extension.
        let r = w.req(3, "tools/call", json!({ "name": "must_task", "arguments": { "seconds": 0 } }), m()).await;
        assert_eq!(r["error"]["code"], -32021, "{r}");
        assert_eq!(r["error"]["data"]["requiredCapabilities"]["extensions"][TASKS], json!({}));
        // A tool without task support stays synchronous with MT, a legacy `task` param ignored.
        let r = w
            .req(4, "tools/call", json!({ "name": "echo", "arguments": { "text": "hi" }, "task": { "ttl": 5 } }), mt())
            .await;
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
        w.req(5, "fixture/reset", json!({}), m()).await;
        // Optional + MT: a flat CreateTaskResult.
        let created = w.start_task(6, "slow", json!({ "seconds": 0 })).await;
        assert_eq!(
            keys(&created),
            ["_meta", "createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "taskId", "ttlMs"]
        );
        assert_eq!(created["status"], "working");
        assert!(created["ttlMs"].is_u64() && created["pollIntervalMs"].is_u64(), "{created}");
        let created_at = created["createdAt"].as_str().expect("createdAt");
        assert!(created_at.len() == 24 && created_at.ends_with('Z') && &created_at[10..11] == "T", "{created_at}");
        let id = created["taskId"].as_str().expect("taskId").to_owned();
        assert!(id.len() >= 32, "128 bits: {id}");
        // D5: readable at once.
        let r = w.get(7, &id).await;
        assert_eq!(r["result"]["resultType"], "complete", "{r}");
        assert!(r["result"].get("error").is_none());
        let done = w.wait_terminal(8, &id).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["content"][0]["text"], "slept 0 s");
        assert!(done.get("error").is_none());
        // The ordinary filters ran once, in the background, with their own trace.
        assert_eq!(done["result"]["_meta"][TRACE], json!([">ord1", ">ord2", "<ord2", "<ord1"]), "{done}");
        let c = w.counts(9).await;
        assert_eq!(
            (c["ord1"].clone(), c["ord2"].clone(), c["tool:slow"].clone()),
            (json!(1), json!(1), json!(1)),
            "{c}"
        );
        assert_eq!(c["alt1"], 1, "{c}");
        // Required + MT: a task too.
        let created = w.start_task(10, "must_task", json!({ "seconds": 0 })).await;
        let id = created["taskId"].as_str().expect("taskId").to_owned();
        assert_eq!(w.wait_terminal(11, &id).await["status"], "completed");
    })
    .await;
}

#[tokio::test]
async fn d7_tool_errors_complete_and_protocol_errors_fail() {
    both(&["--tasks"], async |mut w| {
        let boom = w.start_task(1, "boom", json!({})).await["taskId"].as_str().expect("id").to_owned();
        let proto = w.start_task(2, "proto", json!({})).await["taskId"].as_str().expect("id").to_owned();
        let b = w.wait_terminal(3, &boom).await;
        assert_eq!((b["status"].clone(), b["result"]["isError"].clone()), (json!("completed"), json!(true)), "{b}");
        let p = w.wait_terminal(4, &proto).await;
        assert_eq!(p["status"], "failed", "{p}");
        assert_eq!(p["error"]["code"], -32603);
        assert!(p["error"]["message"].is_string());
        assert!(p.get("result").is_none(), "{p}");
    })
    .await;
}

#[tokio::test]
async fn d8_d10_unknown_ids_and_cancelling_terminal_tasks() {
    both(&["--tasks"], async |mut w| {
        assert_eq!(w.get(1, "nope").await["error"]["code"], -32602);
        let r = w.req(2, "tasks/cancel", json!({ "taskId": "nope" }), mt()).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let r = w.req(3, "tasks/update", json!({ "taskId": "nope", "inputResponses": {} }), mt()).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let id = w.start_task(4, "slow", json!({ "seconds": 0 })).await["taskId"].as_str().expect("id").to_owned();
        assert_eq!(w.wait_terminal(5, &id).await["status"], "completed");
        let ack = w.req(6, "tasks/cancel", json!({ "taskId": id }), mt()).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        assert_eq!(w.get(7, &id).await["result"]["status"], "completed");
        // tasks/update with keys that are not outstanding is acknowledged and ignored.
        let ack = w.req(8, "tasks/update", json!({ "taskId": id, "inputResponses": { "k": {} } }), mt()).await;
        assert_eq!(keys(&ack["result"]), ["_meta", "resultType"], "{ack}");
    })
    .await;
}

/// D9, D11 (and D15 with the in-process executor, D21 with the external one).
async fn cancel_one_of_two(args: &[&str]) {
    both(args, async |mut w| {
        let a = w.start_task(1, "slow", json!({ "seconds": 60 })).await["taskId"].as_str().expect("id").to_owned();
        let b = w.start_task(2, "slow", json!({ "seconds": 0.5 })).await["taskId"].as_str().expect("id").to_owned();
        let ack = w.req(3, "tasks/cancel", json!({ "taskId": a }), mt()).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        assert_eq!(keys(&ack["result"]), ["_meta", "resultType"], "no envelope fields: {ack}");
        assert_eq!(w.get(4, &a).await["result"]["status"], "cancelled");
        let done = w.wait_terminal(5, &b).await;
        assert_eq!(done["status"], "completed", "B is not affected: {done}");
        let r = w.get(6, &a).await;
        assert_eq!(r["result"]["status"], "cancelled", "{r}");
        assert!(r["result"].get("result").is_none() && r["result"].get("error").is_none(), "{r}");
    })
    .await;
}

#[tokio::test]
async fn d9_d11_d15_cancel_targets_one_task_in_process() {
    cancel_one_of_two(&["--tasks"]).await;
    cancel_one_of_two(&["--tasks", "--executor", "inprocess"]).await;
}

#[tokio::test]
async fn d9_d21_cancel_reaches_the_external_worker_pool() {
    cancel_one_of_two(&["--tasks", "--executor", "external"]).await;
}

#[tokio::test]
async fn a6_a7_authorization_runs_before_the_task_and_again_for_a_swapped_tool() {
    let anonymous =
        [Wire::stdio(&["--tasks", "--auth", "--principal", "anonymous"]), Wire::http(&["--tasks", "--auth"], None)];
    for mut w in anonymous {
        w.req(1, "fixture/reset", json!({}), m()).await;
        let r = w.req(2, "tools/call", json!({ "name": "secret", "arguments": {} }), mt()).await;
        assert_eq!(r["error"]["code"], -32600, "a denied call creates no task: {r}");
        // A7: the outer check passes for swap_to_secret; the swapped-in tool is denied inside.
        let id = w.start_task(3, "swap_to_secret", json!({})).await["taskId"].as_str().expect("id").to_owned();
        let t = w.wait_terminal(4, &id).await;
        assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32600)), "{t}");
        let c = w.counts(5).await;
        assert!(c.get("tool:secret").is_none(), "{c}");
        assert!(c.get("ord1").is_some(), "the ordinary filters ran once: {c}");
    }
    let admin = [
        Wire::stdio(&["--tasks", "--auth", "--principal", "admin"]),
        Wire::http(&["--tasks", "--auth"], Some("admin-token")),
    ];
    for mut w in admin {
        let id = w.start_task(1, "secret", json!({})).await["taskId"].as_str().expect("id").to_owned();
        let t = w.wait_terminal(2, &id).await;
        assert_eq!(t["result"]["content"][0]["text"], "secret", "{t}");
    }
}

#[tokio::test]
async fn tasks_are_visible_only_to_their_creator() {
    let s = HttpServer::start_with("fixture", &["--tasks", "--auth"]);
    let c = client();
    let call = |token: &'static str, id: i64, method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = meta(mt());
        let task = params.get("taskId").and_then(Value::as_str).map(str::to_owned);
        let mut rb = modern(&c, &s.url, json!(id), method, params).header("authorization", format!("Bearer {token}"));
        if let Some(t) = task {
            rb = rb.header("mcp-name", t);
        }
        send(rb)
    };
    let r = call("admin-token", 1, "tools/call", json!({ "name": "slow", "arguments": { "seconds": 0 } })).await;
    let id = r.last()["result"]["taskId"].as_str().expect("a task").to_owned();
    let r = call("user-token", 2, "tasks/get", json!({ "taskId": id })).await;
    assert_eq!(r.error_code(), Some(-32602), "another principal sees no such task");
    let r = call("user-token", 3, "tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(r.error_code(), Some(-32602));
    let r = call("admin-token", 4, "tasks/get", json!({ "taskId": id })).await;
    assert!(r.last()["result"]["status"].is_string(), "{:?}", r.last());
}

#[tokio::test]
async fn http_mcp_name_must_match_the_task_id() {
    let s = HttpServer::start_with("fixture", &["--tasks"]);
    let mut params = json!({ "taskId": "abc" });
    params["_meta"] = meta(mt());
    let r = send(modern(&client(), &s.url, json!(1), "tasks/get", params).header("mcp-name", "other")).await;
    assert_eq!((r.status, r.error_code()), (400, Some(-32020)));
}

#[tokio::test]
async fn d22_status_notifications_reach_only_matching_subscriptions() {
    let mut w = Wire::stdio(&["--tasks"]);
    let id = w.start_task(1, "slow", json!({ "seconds": 1 })).await["taskId"].as_str().expect("id").to_owned();
    // Without the extension declared, asking for taskIds is -32021.
    let r = w.req(2, "subscriptions/listen", json!({ "notifications": { "taskIds": [id] } }), m()).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    let Wire::Stdio { stdin, .. } = &mut w else { unreachable!() };
    for (sub, ids) in [("sub-T", json!([id, "t_foreign"])), ("sub-other", json!(["t_foreign"]))] {
        let line = json!({ "jsonrpc": "2.0", "id": sub, "method": "subscriptions/listen",
            "params": { "notifications": { "taskIds": ids }, "_meta": meta(mt()) } });
        stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    }
    let done = w.wait_terminal(3, &id).await;
    assert_eq!(done["status"], "completed");
    // Drain a little more so that a late notification would be seen.
    w.req(4, "fixture/counters", json!({}), m()).await;
    let Wire::Stdio { seen, .. } = &w else { unreachable!() };
    let acks: Vec<&Value> = seen.iter().filter(|n| n["method"] == "notifications/subscriptions/acknowledged").collect();
    let ack_t = acks.iter().find(|a| a["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-T");
    assert_eq!(ack_t.expect("sub-T acknowledged")["params"]["notifications"]["taskIds"], json!([id]));
    let notes: Vec<&Value> = seen.iter().filter(|n| n["method"] == "notifications/tasks").collect();
    assert!(!notes.is_empty(), "a status notification: {seen:?}");
    for n in &notes {
        assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-T", "{n}");
        assert_eq!(n["params"]["taskId"], json!(id));
    }
    let last = notes.last().expect("one");
    assert_eq!(last["params"]["status"], "completed");
    assert_eq!(last["params"]["result"]["content"][0]["text"], "slept 1 s");
}

#[tokio::test]
async fn sqlite_store_survives_a_restart() {
    let dir = std::env::temp_dir().join(format!("switchyard-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("tasks.db");
    let _ = std::fs::remove_file(&db);
    let store = format!("sqlite:{}", db.display());
    let connect = async || {
        let mut fixture = tokio::process::Command::new(example("fixture"));
        fixture.args(["--stdio", "--tasks", "--task-store", store.as_str()]).stderr(std::process::Stdio::null());
        let builder = ClientBuilder::new("switchyard-tests", "1.0.0").protocol_versions([MODERN]);
        builder.request_timeout(Duration::from_secs(10)).connect_stdio(fixture).await.expect("the fixture connects")
    };
    let as_task = async |client: &switchyard_client::Client, seconds: u64| match client
        .call_tool_as_task("slow", json!({ "seconds": seconds }))
        .await
        .expect("tools/call")
    {
        ToolCall::Task(task) => task,
        other => panic!("a task: {other:?}"),
    };
    let (running, finished) = {
        let client = connect().await;
        let running = as_task(&client, 60).await;
        let finished = as_task(&client, 0).await;
        let done = finished.result().await.expect("the short task completes");
        assert_eq!(done.content.first().and_then(|c| c.as_text()), Some("slept 0 s"), "{done:?}");
        (running.id().to_owned(), finished.id().to_owned())
        // Dropping the last handle on the client kills the process mid-task.
    };
    let client = connect().await;
    let done = client.task(&finished).result().await.expect("the result survives the restart");
    assert_eq!(done.content.first().and_then(|c| c.as_text()), Some("slept 0 s"), "{done:?}");
    let lost = client.task(&running).state().await.expect("the interrupted task is still known");
    assert_eq!(lost.status, "failed", "{lost:?}");
    assert!(lost.status_message.as_deref().is_some_and(|m| m.contains("server stopped")), "{lost:?}");
    match client.task(&running).result().await {
        Err(switchyard_client::ClientError::Rpc { error, .. }) => assert_eq!(error.code().0, -32603, "{error:?}"),
        other => panic!("the interrupted task fails: {other:?}"),
    }
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn delegation_to_a_worker_process_through_the_sqlite_store() {
    let dir = std::env::temp_dir().join(format!("switchyard-worker-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("jobs.db");
    let _ = std::fs::remove_file(&db);
    let db_arg = db.display().to_string();
    // Not `stdio_child`: `--stdio` is a flag of the `serve` subcommand, so it comes after it.
    let mut server = tokio::process::Command::new(example("tasks_worker"));
    server.args(["serve", "--db", &db_arg, "--stdio"]).stderr(std::process::Stdio::null());
    let client = ClientBuilder::new("switchyard-tests", "1.0.0")
        .protocol_versions([MODERN])
        .request_timeout(Duration::from_secs(10))
        .connect_stdio(server)
        .await
        .expect("the server starts and connects");
    let mut worker = tokio::process::Command::new(example("tasks_worker"))
        .args(["work", "--db", &db_arg])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the worker starts");
    // Without the extension the tool runs in the server itself.
    let r = client.call_tool("crunch_numbers", json!({ "n": 4 })).await.expect("tools/call");
    assert_eq!(r.content.first().and_then(|c| c.as_text()), Some("sum of 1..=4 is 10"), "{r:?}");
    // As a task it is handed to the worker process, which records the result in the store.
    let task = match client.call_tool_as_task("crunch_numbers", json!({ "n": 100 })).await.expect("tools/call") {
        ToolCall::Task(task) => task,
        other => panic!("a task: {other:?}"),
    };
    // `result` is the completed task's result; a failed or cancelled one is an error.
    let done = tokio::time::timeout(Duration::from_secs(10), task.result())
        .await
        .expect("the task ends within 10 s")
        .expect("the task completed");
    assert_eq!(done.content.first().and_then(|c| c.as_text()), Some("sum of 1..=100 is 5050"), "{done:?}");
    let _ = worker.kill().await;
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn d24_ask_name_inside_a_task_waits_for_tasks_update() {
    both(&["--tasks"], async |mut w| {
        let caps = json!({ "elicitation": {}, "extensions": { TASKS: {} } });
        let r = w.req(1, "tools/call", json!({ "name": "ask_name", "arguments": {} }), caps.clone()).await;
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        let task = r["result"]["taskId"].as_str().expect("a task id").to_owned();
        // The task asks through `input_required`, not through the (finished) tools/call.
        let mut pending = Value::Null;
        for n in 0..200 {
            let g = w.req(100 + n, "tasks/get", json!({ "taskId": task }), caps.clone()).await;
            if g["result"]["status"] == "input_required" {
                pending = g["result"].clone();
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(keys(&pending["inputRequests"]), ["name"], "{pending}");
        assert_eq!(pending["inputRequests"]["name"]["method"], "elicitation/create");
        assert_eq!(pending["resultType"], "complete");
        let answer = json!({ "name": { "action": "accept", "content": { "name": "Ada" } } });
        let ack = w.req(2, "tasks/update", json!({ "taskId": task, "inputResponses": answer }), caps.clone()).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        assert!(ack["result"].get("status").is_none() && ack["result"].get("taskId").is_none(), "{ack}");
        let done = w.wait_terminal(3, &task).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    })
    .await;
}
