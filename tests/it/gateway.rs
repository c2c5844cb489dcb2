//! The gateway example (examples/gateway.rs, the switchyard-mcp-gateway crate) end to end: one
//! endpoint serving a server written with the official Python SDK (tests/gateway/upstream.py),
//! ours (the quickstart example) and a misbehaving one (tests/gateway/bad_upstream.py), each a
//! child over stdio, spoken to by our client over the gateway's stdio.

use crate::common;
use crate::common::peers;
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchyard_client::{
    CallToolResult, CancellationToken, Client, ClientBuilder, ClientError, ElicitAction, ElicitResult,
    ElicitationModes, RequestOptions, SubscriptionFilter,
};

/// How long a condition polled for may take before the test fails: far more than it needs.
const PATIENCE: Duration = Duration::from_secs(30);

/// The gateway serving `py_` (the Python SDK server), `ours_` (quickstart) and `bad_`, each
/// call bounded by 2 s.
fn gateway() -> tokio::process::Command {
    peers::install("python");
    let python = peers::dir().join(".venv/bin/python");
    let scripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("gateway");
    let quickstart = common::example("quickstart");
    let mut command = tokio::process::Command::new(common::example("gateway"));
    command
        .arg("--stdio")
        .arg("--upstream")
        .arg(format!("py:py_:{} {}", python.display(), scripts.join("upstream.py").display()))
        .arg("--upstream")
        .arg(format!("ours:ours_:{} --stdio", quickstart.display()))
        .arg("--upstream")
        .arg(format!("bad:bad_:{} {}", python.display(), scripts.join("bad_upstream.py").display()))
        .env("SWITCHYARD_GATEWAY_CALL_TIMEOUT_MS", "2000")
        .stderr(Stdio::null());
    command
}

/// Our client: it answers forms with the name Ada.
fn client() -> ClientBuilder {
    ClientBuilder::new("gateway-test", "1.0.0").on_elicitation(ElicitationModes::Form, |request| async move {
        assert_eq!(request.message, "Who is asking?");
        Ok(ElicitResult { action: ElicitAction::Accept, content: json!({ "name": "Ada" }).as_object().cloned() })
    })
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
}

async fn tool_names(client: &Client) -> Vec<String> {
    client.list_tools().await.expect("tools/list").into_iter().map(|t| t.name).collect()
}

/// Calls `name` until `done` holds for the answer, or fails after [`PATIENCE`].
async fn call_until(
    client: &Client,
    name: &str,
    args: Value,
    done: impl Fn(&Result<CallToolResult, ClientError>) -> bool,
) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let answer = client.call_tool(name, args.clone()).await;
        if done(&answer) {
            return;
        }
        assert!(Instant::now() < deadline, "{name}: still {answer:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
async fn a_gateway_serves_a_python_sdk_server_and_ours_as_one() {
    let client = client().connect_stdio(gateway()).await.expect("connects");
    assert_eq!(client.protocol_version(), "2026-07-28");

    let names = tool_names(&client).await;
    for name in ["py_add", "py_slow", "py_grow", "ours_add", "ours_greet", "bad_hang", "gateway_status"] {
        assert!(names.iter().any(|n| n == name), "{name} is not among {names:?}");
    }
    assert!(!names.iter().any(|n| n == "add" || n == "py_extra"), "{names:?}");
    let listed = client.list_tools().await.expect("tools/list");
    let add = listed.iter().find(|t| t.name == "py_add").expect("py_add");
    assert_eq!(add.description.as_deref(), Some("Add two integers."));
    assert_eq!(add.input_schema["required"], json!(["a", "b"]), "the upstream's schema: {:?}", add.input_schema);

    // One call to each upstream, and a prompt and a resource of the Python one.
    let sum = client.call_tool("py_add", json!({ "a": 2, "b": 3 })).await.expect("py_add");
    assert_eq!(text(&sum), "5", "{sum:?}");
    let sum = client.call_tool("ours_add", json!({ "a": 1.5, "b": 2 })).await.expect("ours_add");
    assert_eq!(sum.structured_content, Some(json!({ "sum": 3.5 })), "{sum:?}");
    let haiku = client.get_prompt("py_haiku", [("topic", "gateways")]).await.expect("py_haiku");
    assert!(format!("{:?}", haiku.messages).contains("Write a haiku about gateways."), "{haiku:?}");
    let notes = client.read_resource("py+notes://py").await.expect("py+notes://py");
    let notes = serde_json::to_value(&notes).expect("serializes");
    assert_eq!(notes["contents"][0]["uri"], "py+notes://py", "the URI as the gateway serves it: {notes}");
    assert_eq!(notes["contents"][0]["text"], "written in Python");

    // Arguments are checked against the upstream's schema here, before the upstream is asked:
    // the gateway's own answer names its tool, not the upstream's `add`.
    let refused = client.call_tool("py_add", json!({ "a": "two" })).await.expect("an isError result");
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).starts_with("Invalid arguments for tool `py_add`"), "{refused:?}");

    // The upstream asks for a form mid-call (an input_required round upstream): our client
    // answers it, asked by the gateway in a round of its own.
    let hello = client.call_tool("py_hello", json!({})).await.expect("py_hello");
    assert_eq!(text(&hello), "Hello, Ada!", "{hello:?}");

    // Progress passes through, in order.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = RequestOptions::new().on_progress(move |p| sink.lock().expect("lock").push((p.progress, p.total)));
    let done = client.call_tool_with("py_slow", json!({ "steps": 3, "delay": 0.01 }), options).await.expect("py_slow");
    assert_eq!(text(&done), "done after 3 steps");
    assert_eq!(*seen.lock().expect("lock"), [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);

    // Cancellation passes through: cancelled on its first progress report, the upstream's
    // handler is cancelled too (it counts that).
    let stop = CancellationToken::new();
    let cancel = stop.clone();
    let options = RequestOptions::new().cancel_with(stop).on_progress(move |_| cancel.cancel());
    let cancelled = client.call_tool_with("py_slow", json!({ "steps": 100000, "delay": 0.01 }), options).await;
    assert!(matches!(cancelled, Err(ClientError::Cancelled { .. })), "{cancelled:?}");
    call_until(&client, "py_cancelled", json!({}), |a| a.as_ref().is_ok_and(|r| text(r) == "1")).await;

    // A list change upstream reaches our listeners, and the new tool is served.
    let mut changes = client.listen(SubscriptionFilter::new().tools()).await.expect("listen");
    let grown = client.call_tool("py_grow", json!({})).await.expect("py_grow");
    assert_eq!(text(&grown), "grown");
    let change = tokio::time::timeout(PATIENCE, changes.next()).await.expect("a list change in time");
    assert_eq!(change.expect("the stream goes on").expect("an event").method, "notifications/tools/list_changed");
    call_until(&client, "py_extra", json!({ "text": "hello" }), |a| a.as_ref().is_ok_and(|r| text(r) == "hello")).await;

    // The upstream's list changes while a call of it runs: the call finishes all the same.
    let slow = client.call_tool("py_slow", json!({ "steps": 20, "delay": 0.01 }));
    let grow = client.call_tool("py_grow", json!({}));
    let (slow, grow) = tokio::join!(slow, grow);
    assert_eq!(text(&slow.expect("py_slow")), "done after 20 steps");
    assert_eq!(text(&grow.expect("py_grow")), "grown");
    client.close().await;
}

#[tokio::test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
async fn a_list_change_upstream_reaches_a_session_client_of_the_gateway() {
    let client = client().protocol_versions(["2025-11-25"]).connect_stdio(gateway()).await.expect("connects");
    // The upstream's form reaches this client as an elicitation/create request of the gateway.
    let hello = client.call_tool("py_hello", json!({})).await.expect("py_hello");
    assert_eq!(text(&hello), "Hello, Ada!", "{hello:?}");
    let mut notes = std::pin::pin!(client.notifications());
    assert_eq!(text(&client.call_tool("py_grow", json!({})).await.expect("py_grow")), "grown");
    let changed = tokio::time::timeout(PATIENCE, async {
        while let Some(note) = notes.next().await {
            if note.method == "notifications/tools/list_changed" {
                return;
            }
        }
        panic!("the connection ended first");
    });
    changed.await.expect("a list change in time");
    call_until(&client, "py_extra", json!({ "text": "hi" }), |a| a.as_ref().is_ok_and(|r| text(r) == "hi")).await;
    client.close().await;
}

#[tokio::test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
async fn a_failing_upstream_is_a_clear_error_and_the_gateway_keeps_serving() {
    let client = client().connect_stdio(gateway()).await.expect("connects");
    let still_serving = || async {
        let sum = client.call_tool("py_add", json!({ "a": 40, "b": 2 })).await.expect("py_add");
        assert_eq!(text(&sum), "42");
        let status = client.call_tool("gateway_status", json!({})).await.expect("gateway_status");
        assert!(text(&status).contains("py: Connected"), "{status:?}");
    };

    // Garbage: a line that is no JSON, then a result of the wrong shape.
    let garbage = client.call_tool("bad_garbage", json!({})).await.expect("an isError result");
    assert_eq!(garbage.is_error, Some(true));
    assert!(
        text(&garbage).starts_with("upstream `bad` (tools/call garbage): the server broke the protocol"),
        "{garbage:?}"
    );
    still_serving().await;

    // A hang: bounded by the call timeout (2 s), then cancelled upstream.
    let hang = client.call_tool("bad_hang", json!({})).await.expect("an isError result");
    assert_eq!(hang.is_error, Some(true));
    assert!(text(&hang).starts_with("upstream `bad` (tools/call hang): no answer within 2s"), "{hang:?}");
    still_serving().await;

    // Death mid-call: the call fails, the upstream's items go, and it is started again.
    let died = client.call_tool("bad_die", json!({})).await.expect("an isError result");
    assert_eq!(died.is_error, Some(true));
    assert!(text(&died).contains("closed the connection before answering"), "{died:?}");
    still_serving().await;
    call_until(&client, "bad_garbage", json!({}), |a| a.as_ref().is_ok_and(|r| text(r).contains("broke the protocol")))
        .await;
    let status = client.call_tool("gateway_status", json!({})).await.expect("gateway_status");
    assert!(text(&status).contains("bad: Connected"), "{status:?}");
    client.close().await;
}

/// A result nothing on the gateway needs typed reaches our client as the upstream wrote it:
/// `bad_escaped`'s upstream escapes every non-ASCII character (`json.dumps`), which a result
/// decoded and encoded again would not (serde writes them as they are).
#[tokio::test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
async fn a_plain_result_passes_through_as_the_upstream_wrote_it() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut gateway =
        gateway().stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true).spawn().expect("starts");
    let mut stdin = gateway.stdin.take().expect("stdin");
    let mut lines = BufReader::new(gateway.stdout.take().expect("stdout")).lines();
    let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {} });
    let started = Instant::now();
    let line = 'answered: loop {
        // The gateway mirrors the upstream's tools once it has listed them.
        assert!(started.elapsed() < PATIENCE, "bad_escaped never became callable");
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": { "name": "bad_escaped", "arguments": {}, "_meta": meta } });
        stdin.write_all(format!("{call}\n").as_bytes()).await.expect("write");
        while let Some(line) =
            tokio::time::timeout(PATIENCE, lines.next_line()).await.expect("an answer").expect("read")
        {
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] != 1 {
                continue;
            }
            if message.get("result").is_some() {
                break 'answered line;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue 'answered;
        }
        panic!("the gateway closed its output");
    };
    assert!(
        line.contains(r#"{"content":[{"type":"text","text":"A\u00e9 \ud83d\ude00"}],"resultType":"complete""#),
        "{line}"
    );
    let answer: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(answer["result"]["content"][0]["text"], "A\u{e9} \u{1F600}", "{line}");
    assert_eq!(answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "switchyard-gateway", "{line}");
}

#[tokio::test]
async fn a_gateway_over_http_serves_an_upstream_over_http() {
    let upstream = common::HttpServer::start("quickstart");
    let spec = format!("ours:ours_:{}", upstream.url);
    let gateway = common::HttpServer::start_with("gateway", &["--upstream", &spec]);
    for versions in [&["2026-07-28"][..], &["2025-11-25"]] {
        let client = client().protocol_versions(versions).connect_http(gateway.url.clone()).await.expect("connects");
        assert_eq!(client.protocol_version(), versions[0]);
        let names = tool_names(&client).await;
        assert!(names.iter().any(|n| n == "ours_greet") && names.iter().any(|n| n == "gateway_status"), "{names:?}");
        let sum = client.call_tool("ours_add", json!({ "a": 2, "b": 2 })).await.expect("ours_add");
        assert_eq!(sum.structured_content, Some(json!({ "sum": 4.0 })), "{sum:?}");
        let readme = client.read_resource("ours+quickstart://readme").await.expect("the readme");
        let readme = serde_json::to_value(&readme).expect("serializes");
        assert_eq!(readme["contents"][0]["uri"], "ours+quickstart://readme", "{readme}");
        let status = client.call_tool("gateway_status", json!({})).await.expect("gateway_status");
        assert!(text(&status).contains("ours: Connected { protocol_version: \"2026-07-28\""), "{status:?}");
        client.close().await;
    }
}
