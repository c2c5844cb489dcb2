//! Acceptance requirements of the team's `requirements.md`, groups (a) and (b), as far as they
//! stand without tasks and authorization, against `examples/fixture` as a real process over
//! both transports.

use crate::common::*;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard_client::{Client, ClientBuilder, ClientError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const TRACE: &str = "dev.switchyard.fixture/trace";

/// One way of talking to the fixture: stdio lines or HTTP POSTs.
enum Wire {
    Stdio { _child: Child, stdin: ChildStdin, out: Box<Lines<BufReader<ChildStdout>>> },
    Http { server: HttpServer, client: reqwest::Client },
}

impl Wire {
    fn stdio() -> Wire {
        let mut child = stdio_child("fixture", &[]);
        let stdin = child.stdin.take().expect("stdin");
        let out = Box::new(BufReader::new(child.stdout.take().expect("stdout")).lines());
        Wire::Stdio { _child: child, stdin, out }
    }

    fn http() -> Wire {
        Wire::Http { server: HttpServer::start("fixture"), client: client() }
    }

    /// Sends a modern request (the `_meta` envelope is added) and returns the response message.
    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        match self {
            Wire::Http { server, client } => {
                send(modern(client, &server.url, json!(id), method, params)).await.last().clone()
            }
            Wire::Stdio { stdin, out, .. } => {
                let mut params = params;
                params["_meta"] = meta(json!({}));
                let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
                stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
                stdin.flush().await.expect("flush");
                loop {
                    let line = tokio::time::timeout(Duration::from_secs(10), out.next_line())
                        .await
                        .expect("an answer within 10 s")
                        .expect("readable")
                        .expect("a line");
                    let msg: Value = serde_json::from_str(&line).expect("JSON");
                    if msg["id"] == id {
                        return msg;
                    }
                }
            }
        }
    }
}

/// The filters' trace in a `result`.
fn trace(result: &Value) -> Vec<String> {
    serde_json::from_value(result["_meta"][TRACE].clone()).unwrap_or_else(|_| panic!("a trace in {result}"))
}

async fn both(test: impl AsyncFn(Wire)) {
    test(Wire::stdio()).await;
    test(Wire::http()).await;
}

/// Runs `test` with the client on 2026-07-28, over the fixture's stdio and over HTTP.
async fn both_clients(test: impl AsyncFn(&Client)) {
    let builder = || ClientBuilder::new("switchyard-tests", "1.0.0").protocol_versions([MODERN]);
    let mut command = tokio::process::Command::new(example("fixture"));
    command.arg("--stdio").stderr(std::process::Stdio::null());
    let stdio = builder().connect_stdio(command).await.expect("connects over stdio");
    test(&stdio).await;
    stdio.close().await;
    let server = HttpServer::start("fixture");
    let http = builder().connect_http(&server.url).await.expect("connects over HTTP");
    test(&http).await;
    http.close().await;
}

/// The result of `method`, which must succeed.
async fn ok(c: &Client, method: &str, params: Value) -> Value {
    c.request(method, params).await.unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// The JSON-RPC error code of a failed request.
fn code<T: std::fmt::Debug>(r: Result<T, ClientError>) -> Option<i64> {
    match r {
        Ok(r) => panic!("an error expected, got {r:?}"),
        Err(e) => e.as_rpc().map(|e| i64::from(e.code().0)),
    }
}

#[tokio::test]
async fn b1_typed_rpc_params_and_results() {
    both_clients(async |c| {
        let r = ok(c, "acme/sum", json!({ "a": 1, "b": 2 })).await;
        assert_eq!(r["sum"], 3);
        assert_eq!(r["resultType"], "complete");
        assert_eq!(code(c.request("acme/sum", json!({ "a": "x", "b": 2 })).await), Some(-32602));
    })
    .await;
}

#[tokio::test]
async fn b3_raw_filters_wrap_typed_filters_wrap_the_handler() {
    both_clients(async |c| {
        let r = ok(c, "acme/sum", json!({ "a": 1, "b": 2 })).await;
        assert_eq!(trace(&r), [">r1", ">r2", ">t1", ">t2", "<t2", "<t1", "<r2", "<r1"]);
    })
    .await;
}

#[tokio::test]
async fn b4_raw_filters_cover_built_ins_and_typed_filters_stay_on_their_method() {
    both_clients(async |c| {
        ok(c, "fixture/reset", json!({})).await;
        let r = ok(c, "tools/list", json!({})).await;
        assert_eq!(trace(&r), [">r1", ">r2", "<r2", "<r1"]);
        ok(c, "acme/sum", json!({ "a": 1, "b": 1 })).await;
        let r = ok(c, "fixture/counters", json!({})).await;
        let counts = &r["counts"];
        // reset itself ran through r1 after zeroing; tools/list, acme/sum and counters add three.
        assert_eq!(counts["r1"], 3, "{counts}");
        assert_eq!(counts["t1"], 1, "{counts}");
    })
    .await;
}

#[tokio::test]
async fn b7_unknown_methods_are_method_not_found() {
    both(async |mut w| {
        let r = w.request(9, "acme/none", json!({})).await;
        assert_eq!((r["error"]["code"].clone(), r["id"].clone()), (json!(-32601), json!(9)));
    })
    .await;
    let s = HttpServer::start("fixture");
    let r = send(modern(&client(), &s.url, json!(9), "acme/none", json!({}))).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a2_ordinary_filters_run_in_order_around_the_tool_once() {
    both_clients(async |c| {
        ok(c, "fixture/reset", json!({})).await;
        let r = ok(c, "tools/call", json!({ "name": "echo", "arguments": { "text": "hi" } })).await;
        assert_eq!(r["content"], json!([{ "type": "text", "text": "hi" }]));
        assert_eq!(trace(&r), [">r1", ">r2", ">alt1", ">ord1", ">ord2", "<ord2", "<ord1", "<alt1", "<r2", "<r1"]);
        let r = ok(c, "fixture/counters", json!({})).await;
        assert_eq!(r["counts"]["ord1"], 1);
        assert_eq!(r["counts"]["tool:echo"], 1);
    })
    .await;
}

#[tokio::test]
async fn a9_a10_failures_map_to_results_or_errors() {
    both_clients(async |c| {
        // A tool that fails is a result with isError, not an error.
        let r = c.call_tool("boom", json!({})).await.expect("a tool error is a result");
        assert_eq!(r.is_error, Some(true), "{r:?}");
        assert_eq!(code(c.call_tool("proto", json!({})).await), Some(-32603));
        assert_eq!(code(c.request("tools/call", json!({ "name": "nope" })).await), Some(-32602));
    })
    .await;
}

#[tokio::test]
async fn an_ordinary_filter_can_swap_the_tool() {
    both_clients(async |c| {
        ok(c, "fixture/reset", json!({})).await;
        let r = c.call_tool("swap_to_secret", json!({})).await.expect("tools/call");
        assert_eq!(r.content.first().and_then(|c| c.as_text()), Some("secret"), "{r:?}");
        let r = ok(c, "fixture/counters", json!({})).await;
        assert_eq!(r["counts"]["tool:secret"], 1);
        assert!(r["counts"].get("tool:swap_to_secret").is_none());
    })
    .await;
}

#[tokio::test]
async fn b2_a12_legacy_sessions_get_no_result_type() {
    let mut p = stdio_child("fixture", &[]);
    let mut stdin = p.stdin.take().expect("stdin");
    let mut out = BufReader::new(p.stdout.take().expect("stdout")).lines();
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"acme/sum","params":{"a":2,"b":3}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}"#,
    ] {
        stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
    }
    let mut seen = 0;
    while seen < 3 {
        let line = out.next_line().await.expect("read").expect("line");
        let m: Value = serde_json::from_str(&line).expect("JSON");
        match m["id"].as_i64() {
            Some(1) => {
                assert_eq!(m["result"]["sum"], 5);
                assert!(m["result"].get("resultType").is_none(), "{m}");
            }
            Some(2) => assert!(m["result"].get("resultType").is_none() && m["result"].get("ttlMs").is_none(), "{m}"),
            _ => {}
        }
        seen += 1;
    }
}

async fn stdio_call(args: &[&str], tool: &str) -> Value {
    let mut child = stdio_child("fixture", args);
    let mut stdin = child.stdin.take().expect("stdin");
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": {}, "_meta": meta(json!({})) } });
    stdin.write_all(format!("{call}\n").as_bytes()).await.expect("write");
    drop(stdin);
    let out = child.wait_with_output().await.expect("output");
    serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap_or_default()).expect("one JSON answer")
}

#[tokio::test]
async fn a6_auth_denies_before_anything_runs_and_hides_what_the_caller_cannot_use() {
    let s = HttpServer::start_with("fixture", &["--auth"]);
    let c = client();
    let call = |token: Option<&str>, name: &str| {
        let rb = modern(&c, &s.url, json!(7), "tools/call", json!({ "name": name, "arguments": {} }));
        match token {
            Some(t) => rb.bearer_auth(t),
            None => rb,
        }
    };
    send(modern(&c, &s.url, json!(1), "fixture/reset", json!({}))).await;
    let r = send(call(None, "secret")).await;
    assert_eq!((r.status, r.error_code()), (403, Some(-32600)), "{:?}", r.messages);
    assert_eq!(r.last()["id"], 7);
    let r = send(call(Some("user-token"), "secret")).await;
    assert_eq!(r.error_code(), Some(-32600));
    let r = send(call(Some("admin-token"), "secret")).await;
    assert_eq!(r.last()["result"]["content"][0]["text"], "secret");
    // A7: the swapped-in tool is authorized again before its body runs.
    let r = send(call(None, "swap_to_secret")).await;
    assert_eq!(r.error_code(), Some(-32600), "{:?}", r.messages);
    let counts = send(modern(&c, &s.url, json!(2), "fixture/counters", json!({}))).await;
    let counts = &counts.last()["result"]["counts"];
    assert_eq!(counts["tool:secret"], 1, "only the admin call ran the body: {counts}");
    assert!(counts.get("ord1").is_some_and(|n| n.as_u64() >= Some(1)), "swap ran inside the ordinary chain: {counts}");
    let names = |r: &Reply| -> Vec<String> {
        r.last()["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let anon = send(modern(&c, &s.url, json!(3), "tools/list", json!({}))).await;
    assert!(!names(&anon).contains(&"secret".to_owned()));
    assert_eq!(anon.last()["result"]["cacheScope"], "private");
    let admin = send(modern(&c, &s.url, json!(4), "tools/list", json!({})).bearer_auth("admin-token")).await;
    assert!(names(&admin).contains(&"secret".to_owned()));
    let bad = send(modern(&c, &s.url, json!(5), "tools/list", json!({})).bearer_auth("forged")).await;
    assert_eq!(bad.status, 401);
    assert!(bad.headers.get("www-authenticate").is_some());
}

#[tokio::test]
async fn a6_stdio_takes_its_principal_from_the_command_line() {
    assert_eq!(stdio_call(&["--auth", "--principal", "anonymous"], "secret").await["error"]["code"], -32600);
    assert_eq!(stdio_call(&["--auth", "--principal", "user"], "secret").await["error"]["code"], -32600);
    assert_eq!(
        stdio_call(&["--auth", "--principal", "admin"], "secret").await["result"]["content"][0]["text"],
        "secret"
    );
    assert_eq!(
        stdio_call(&[], "secret").await["result"]["content"][0]["text"],
        "secret",
        "without --auth roles are not enforced"
    );
}

#[tokio::test]
async fn legacy_sessions_belong_to_their_creator() {
    let s = HttpServer::start_with("fixture", &["--auth"]);
    let c = client();
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let post = || c.post(&s.url).header("content-type", "application/json");
    let r = send(post().bearer_auth("admin-token").body(init.to_string())).await;
    let sid = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session").to_owned();
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }).to_string();
    let as_admin =
        send(post().bearer_auth("admin-token").header("mcp-session-id", sid.clone()).body(ping.clone())).await;
    assert_eq!(as_admin.status, 200);
    let anonymous = send(post().header("mcp-session-id", sid.clone()).body(ping.clone())).await;
    assert_eq!(anonymous.status, 404, "another caller cannot use the session");
    let deleted = send(c.delete(&s.url).bearer_auth("user-token").header("mcp-session-id", sid.clone())).await;
    assert_eq!(deleted.status, 404, "nor delete it");
    let still = send(post().bearer_auth("admin-token").header("mcp-session-id", sid).body(ping)).await;
    assert_eq!(still.status, 200);
    let two = send(
        modern(&c, &s.url, json!(2), "tools/list", json!({}))
            .header("authorization", "Bearer admin-token")
            .header("authorization", "Bearer forged"),
    )
    .await;
    assert_eq!(two.status, 401, "two credentials are refused");
}

/// Runs the fixture with `args` and `env` (stdin closed) to its end.
fn fixture_run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(example("fixture"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the fixture runs")
}

#[test]
fn the_command_line_answers_help_and_version() {
    for help in ["--help", "-h"] {
        let out = fixture_run(&[help], &[]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{help}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{help} prints only the help: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("Usage: fixture [OPTIONS]"), "{text}");
        // Every flag of fixture-server.md, and the shared ones.
        for flag in [
            "--stdio",
            "--http <HOST:PORT>",
            "--tasks",
            "--task-store <STORE>",
            "--auth",
            "--principal <WHO>",
            "--executor <EXECUTOR>",
            "--probes",
            "--custom-listen",
            "--keepalive-ms <N>",
            "--listen-probes",
            "--task-lease-ms <MS>",
            "--task-ttl-ms <MS>",
            "--task-store-wait <SECONDS>",
            "--hub <nats:URL>",
            "--hub-subject <SUBJECT>",
            "--state-key-env <VAR>",
            "--log-format <FORMAT>",
            "--log-level <FILTER>",
            "--version",
        ] {
            assert!(text.contains(flag), "{help} names {flag}: {text}");
        }
    }
    for version in ["--version", "-V"] {
        let out = fixture_run(&[version], &[]);
        assert_eq!(out.status.code(), Some(0), "{version}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("fixture {}\n", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn the_command_line_refuses_what_it_cannot_do_with_exit_code_2() {
    for args in [
        &["--bogus"][..],
        &["--stdio", "--http", "127.0.0.1:0"],
        &["--http"],
        &["--principal", "admin"],
        &["--auth", "--principal", "root"],
        &["--task-store", "memory"],
        &["--tasks", "--task-store", "redis:x"],
        &["--tasks", "--executor", "sideways"],
        &["--tasks", "--task-lease-ms", "299"],
        &["--task-ttl-ms", "1000"],
        &["--tasks", "--task-ttl-ms", "0"],
        &["--hub-subject", "s"],
        &["--keepalive-ms", "100"],
        &["--stdio", "--keepalive-ms", "100"],
        &["--http", "127.0.0.1:0", "--keepalive-ms", "0"],
        &["--hub", "kafka:x"],
        &["--state-key-env", "SWITCHYARD_FIXTURE_TEST_NO_SUCH_VARIABLE"],
        &["--log-format", "xml"],
        &["--log-level", "switchyard=loud"],
    ] {
        let out = fixture_run(args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: ") && stderr.contains("'--help'"), "{args:?}: {stderr}");
    }
}

#[test]
fn switchyard_http_in_the_environment_serves_http() {
    let mut child = std::process::Command::new(example("fixture"))
        .env("SWITCHYARD_HTTP", "127.0.0.1:0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the fixture starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let first = std::io::BufRead::lines(std::io::BufReader::new(stderr)).next();
    let _ = child.kill();
    let _ = child.wait();
    let line = first.expect("a line").expect("readable stderr");
    let port = line.strip_prefix("listening on http://127.0.0.1:").and_then(|rest| rest.strip_suffix("/mcp"));
    assert!(port.is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p != 0)), "{line:?}");
}

#[test]
fn json_logs_are_one_object_per_line_on_stderr() {
    use std::io::Write;
    let mut child = std::process::Command::new(example("fixture"))
        .args(["--stdio", "--log-format", "json", "--log-level", "switchyard=debug"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the fixture starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    // A notification the transport ignores, with a debug event saying so; EOF then ends the server.
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/nothing\"}\n").expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("the fixture ends at EOF");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "nothing answers a notification: {}", String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a JSON line, not {l:?}: {e}")))
        .collect();
    assert!(
        events.iter().any(|e| e["level"] == "DEBUG"
            && e["fields"]["message"] == "stdio: ignoring notification"
            && e["fields"]["method"] == "notifications/nothing"),
        "{stderr}"
    );
}
