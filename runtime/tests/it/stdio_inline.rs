//! On a current-thread runtime the stdio transport polls a request's work once on the
//! connection's own task and spawns it only when it has to wait. These tests hold that path to
//! the spawned one (multi-thread runtimes, one worker or two): the same exchange (synchronous
//! and waiting tools, progress, a request to the client, a cancellation, a panic, a duplicate
//! id, pipelined calls) gives the same lines; a tool can tell which path ran it; a handler in
//! `block_in_place` on one worker does not stop the connection reading; a cancellation right
//! behind a request answered at once finds it answered.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct NameForm {
    name: String,
}

/// Answers in its first poll.
#[mcp_tool(group = "stdio-inline")]
async fn at_once(args: Text) -> Result<String, ToolError> {
    Ok(format!("at once: {}", args.text))
}

/// Waits on a timer before answering.
#[mcp_tool(group = "stdio-inline")]
async fn after_a_nap() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    Ok("after a nap".to_owned())
}

/// Reports progress twice, then answers.
#[mcp_tool(group = "stdio-inline")]
async fn with_progress(ctx: RequestContext) -> Result<String, ToolError> {
    let progress = ctx.progress();
    progress.report(1.0, Some(2.0), Some("half")).await;
    progress.report(2.0, Some(2.0), Some("done")).await;
    Ok("reported".to_owned())
}

/// Asks the client for a name.
#[mcp_tool(group = "stdio-inline")]
async fn ask_name(ctx: RequestContext) -> Result<String, ToolFailure> {
    match ctx.elicit::<NameForm>("name", "Your name?").await? {
        Elicited::Accept(f) => Ok(format!("Hello, {}!", f.name)),
        _ => Ok("nobody".to_owned()),
    }
}

/// Waits until the request is cancelled.
#[mcp_tool(group = "stdio-inline")]
async fn until_cancelled(ctx: RequestContext) -> Result<String, ToolError> {
    ctx.cancellation().cancelled().await;
    Ok("cancelled".to_owned())
}

/// Panics in its first poll.
#[mcp_tool(group = "stdio-inline")]
async fn panics_at_once() -> Result<String, ToolError> {
    panic!("on purpose")
}

/// The id of the tokio task running the call.
#[mcp_tool(group = "stdio-inline")]
async fn which_task() -> Result<String, ToolError> {
    Ok(format!("{:?}", tokio::task::try_id()))
}

/// Holds its thread for half a second in `block_in_place`, as a handler calling blocking code
/// does.
#[mcp_tool(group = "stdio-inline")]
async fn blocks_in_place() -> Result<String, ToolError> {
    tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(500)));
    Ok("unblocked".to_owned())
}

/// Set when the work [`hands_off_work`] spawned saw its token fire.
static HANDED_OFF_WORK_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Answers at once, leaving behind work that holds a child of the request's token, as
/// `RequestContext::cancellation` tells handlers to.
#[mcp_tool(group = "stdio-inline")]
async fn hands_off_work(ctx: RequestContext) -> Result<String, ToolError> {
    let token = ctx.cancellation().child_token();
    tokio::spawn(async move {
        token.cancelled().await;
        HANDED_OFF_WORK_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    Ok("handed off".to_owned())
}

struct Peer {
    tx: DuplexStream,
    rx: Lines<BufReader<DuplexStream>>,
}

impl Peer {
    fn start() -> Peer {
        Peer::serving(Server::builder("stdio-inline", "1").groups(["stdio-inline"]).build().expect("builds"))
    }

    fn serving(server: Server) -> Peer {
        let (client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        tokio::spawn(serve_io(server, server_in, server_out, StdioConfig::default()));
        Peer { tx: client_out, rx: BufReader::new(client_in).lines() }
    }

    async fn send(&mut self, messages: &[Value]) {
        let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
        self.tx.write_all(text.as_bytes()).await.expect("write");
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.rx.next_line())
            .await
            .expect("a message within 10 s")
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } })
}

/// The whole exchange, on a 2025-11-25 session (the server can send requests of its own); every
/// line the server wrote, in order.
async fn exchange() -> Vec<Value> {
    let mut p = Peer::start();
    let mut seen = Vec::new();
    p.send(&[
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": "2025-11-25",
            "capabilities": { "elicitation": {} }, "clientInfo": { "name": "t", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    ])
    .await;
    let mut answer = p.next().await;
    // The server's own name and version, not the path's.
    answer["result"]["serverInfo"] = Value::Null;
    seen.push(answer);
    p.send(&[call(json!(1), "at_once", json!({ "text": "a" }))]).await;
    seen.push(p.next().await);
    p.send(&[call(json!(2), "after_a_nap", json!({}))]).await;
    seen.push(p.next().await);
    let mut progress = call(json!(3), "with_progress", json!({}));
    progress["params"]["_meta"] = json!({ "progressToken": "p3" });
    p.send(&[progress]).await;
    for _ in 0..3 {
        seen.push(p.next().await);
    }
    p.send(&[call(json!(4), "ask_name", json!({}))]).await;
    let ask = p.next().await;
    seen.push(ask.clone());
    p.send(&[
        json!({ "jsonrpc": "2.0", "id": ask["id"], "result": { "action": "accept", "content": { "name": "Ada" } } }),
    ])
    .await;
    seen.push(p.next().await);
    // A waiting request, a second request with its id (refused), its cancellation (no answer),
    // then a ping, whose answer must be the next line.
    p.send(&[
        call(json!(5), "until_cancelled", json!({})),
        call(json!(5), "at_once", json!({ "text": "twice" })),
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 5 } }),
        json!({ "jsonrpc": "2.0", "id": 6, "method": "ping" }),
    ])
    .await;
    seen.push(p.next().await);
    seen.push(p.next().await);
    p.send(&[call(json!(7), "panics_at_once", json!({}))]).await;
    seen.push(p.next().await);
    // Pipelined: one write, answers in order.
    let burst: Vec<Value> = (10..20).map(|i| call(json!(i), "at_once", json!({ "text": i.to_string() }))).collect();
    p.send(&burst).await;
    for _ in 10..20 {
        seen.push(p.next().await);
    }
    seen
}

/// The task ids two calls in a row ran on.
async fn two_task_ids() -> (String, String) {
    let mut p = Peer::start();
    let modern = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {} });
    let mut ids = Vec::new();
    for id in [1, 2] {
        let mut message = call(json!(id), "which_task", json!({}));
        message["params"]["_meta"] = modern.clone();
        p.send(&[message]).await;
        let answer = p.next().await;
        ids.push(answer["result"]["content"][0]["text"].as_str().expect("text").to_owned());
    }
    (ids[0].clone(), ids[1].clone())
}

fn runtime(workers: Option<usize>) -> tokio::runtime::Runtime {
    match workers {
        None => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        Some(n) => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
    }
    .expect("runtime")
}

#[test]
fn polled_first_on_the_connection_the_lines_are_those_of_spawned_requests() {
    let polled_here = runtime(None).block_on(exchange());
    for workers in [1, 2] {
        let spawned = runtime(Some(workers)).block_on(exchange());
        assert_eq!(polled_here[..11], spawned[..11], "{workers} workers");
        // Spawned, the burst's answers come in whatever order the calls end; polled here, each
        // is queued as its line is read.
        let mut burst = spawned[11..].to_vec();
        burst.sort_by_key(|m| m["id"].as_u64());
        assert_eq!(polled_here[11..], burst[..], "{workers} workers");
    }
    let spawned = polled_here;
    assert_eq!(spawned.len(), 21);
    // What the exchange must show, whichever path ran it.
    let texts: Vec<&Value> = spawned.iter().map(|m| &m["result"]["content"][0]["text"]).collect();
    assert_eq!(texts[1], "at once: a");
    assert_eq!(texts[2], "after a nap");
    assert_eq!(spawned[3]["method"], "notifications/progress", "{}", spawned[3]);
    assert_eq!(spawned[4]["method"], "notifications/progress", "{}", spawned[4]);
    assert_eq!(texts[5], "reported");
    assert_eq!(spawned[6]["method"], "elicitation/create", "{}", spawned[6]);
    assert_eq!(texts[7], "Hello, Ada!");
    assert_eq!(spawned[8]["id"], 5, "the duplicate id is refused: {}", spawned[8]);
    assert!(spawned[8]["error"]["message"].as_str().is_some_and(|m| m.contains("already in flight")), "{}", spawned[8]);
    assert_eq!(spawned[9]["id"], 6, "the cancelled request is not answered: {}", spawned[9]);
    assert_eq!(spawned[10]["id"], 7);
    assert!(spawned[10].get("error").is_some() || spawned[10]["result"]["isError"] == true, "{}", spawned[10]);
    let mut burst: Vec<u64> = spawned[11..].iter().filter_map(|m| m["id"].as_u64()).collect();
    burst.sort_unstable();
    assert_eq!(burst, (10..20).collect::<Vec<_>>());
}

#[test]
fn a_call_that_finishes_at_once_runs_on_the_connections_task_only_on_a_current_thread_runtime() {
    let (first, second) = runtime(None).block_on(two_task_ids());
    assert_eq!(first, second, "both calls ran on the connection's task");
    assert!(first.starts_with("Some("), "{first}");
    for workers in [1, 2] {
        let (first, second) = runtime(Some(workers)).block_on(two_task_ids());
        assert_ne!(first, second, "{workers} workers: each call is a task of its own");
    }
}

#[test]
fn a_handler_in_block_in_place_on_one_worker_does_not_stop_the_reading() {
    runtime(Some(1)).block_on(async {
        let mut p = Peer::start();
        let modern = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} });
        let mut blocking = call(json!(1), "blocks_in_place", json!({}));
        blocking["params"]["_meta"] = modern.clone();
        p.send(&[blocking]).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        p.send(&[json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": { "_meta": modern } })]).await;
        let first = p.next().await;
        assert_eq!(first["id"], 2, "the ping is answered while the tool holds its thread: {first}");
        let second = p.next().await;
        assert_eq!(second["result"]["content"][0]["text"], "unblocked", "{second}");
    });
}

#[test]
fn a_cancellation_right_behind_a_request_answered_at_once_finds_it_answered() {
    runtime(None).block_on(async {
        let mut p = Peer::start();
        let modern = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} });
        let mut first = call(json!(1), "at_once", json!({ "text": "a" }));
        first["params"]["_meta"] = modern.clone();
        p.send(&[
            first,
            json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1 } }),
            json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": { "_meta": modern } }),
        ])
        .await;
        let (a, b) = (p.next().await, p.next().await);
        assert_eq!((&a["id"], &a["result"]["content"][0]["text"]), (&json!(1), &json!("at once: a")), "{a}");
        assert_eq!(b["id"], 2, "{b}");
    });
}

/// More requests than the writer's queue holds answers (1,024), all there before the first is
/// read: every one is answered, in order, each tool having run in its first poll on the
/// connection's task (when the queue fills, the connection lets the writer drain it; the CI
/// guard's allocation count shows that no answer waits in a task of its own). Then the same
/// burst again: a request handled at once is never registered as in flight, including one
/// whose answer waited for room, so no id is left behind to refuse.
#[test]
fn a_burst_longer_than_the_writers_queue_is_answered_whole_and_in_order() {
    const CALLS: u64 = 3_000;
    runtime(None).block_on(async {
        let server = Server::builder("stdio-inline", "1").groups(["stdio-inline"]).build().expect("builds");
        // Room for the whole burst, so that every line is there before the first is read.
        let (mut client_out, server_in) = tokio::io::duplex(4 << 20);
        let (server_out, client_in) = tokio::io::duplex(4 << 20);
        let modern = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} });
        let mut burst = String::new();
        for id in 1..=CALLS {
            let mut message = call(json!(id), "which_task", json!({}));
            message["params"]["_meta"] = modern.clone();
            burst.push_str(&format!("{message}\n"));
        }
        client_out.write_all(burst.as_bytes()).await.expect("write");
        tokio::spawn(serve_io(server, server_in, server_out, StdioConfig::default()));
        let mut lines = BufReader::new(client_in).lines();
        let mut tasks = std::collections::BTreeSet::new();
        // The second round: answers that waited for room in the queue left no id behind, so
        // every id is free again.
        for round in 0..2 {
            if round == 1 {
                client_out.write_all(burst.as_bytes()).await.expect("write");
            }
            for id in 1..=CALLS {
                let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                    .await
                    .expect("answers within 30 s")
                    .expect("readable")
                    .expect("a line");
                let answer: Value = serde_json::from_str(&line).expect("JSON");
                assert_eq!(answer["id"], id, "answers in the order of the requests");
                let text = answer["result"]["content"][0]["text"].as_str();
                tasks.insert(
                    text.unwrap_or_else(|| panic!("round {round}: not refused as in flight: {answer}")).to_owned(),
                );
            }
        }
        assert_eq!(tasks.len(), 1, "every call ran on the connection's task: {tasks:?}");
    });
}

/// Work a handler handed its token to, after its request was answered, still stops when the
/// server shuts down: the request's token fires with the server's, whoever holds it.
#[test]
fn a_shutdown_stops_work_left_behind_by_a_request_already_answered() {
    runtime(None).block_on(async {
        let server = Server::builder("stdio-inline", "1").groups(["stdio-inline"]).build().expect("builds");
        let mut p = Peer::serving(server.clone());
        let mut call = call(json!(1), "hands_off_work", json!({}));
        call["params"]["_meta"] = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} });
        p.send(&[call]).await;
        assert_eq!(p.next().await["result"]["content"][0]["text"], "handed off");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!HANDED_OFF_WORK_STOPPED.load(std::sync::atomic::Ordering::SeqCst), "nothing cancelled it yet");
        server.shutdown();
        for _ in 0..1_000 {
            if HANDED_OFF_WORK_STOPPED.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the work left behind was not cancelled within 10 s of the shutdown");
    });
}

/// A shutdown cancels a request that is running: one waiting on its cancellation then ends and
/// is answered (a shutdown is not the client's doing). On the current-thread runtime it was
/// polled first on the connection's task and then spawned; on the multi-thread ones, spawned.
#[test]
fn a_shutdown_cancels_the_requests_in_flight_which_still_answer() {
    for workers in [None, Some(1), Some(2)] {
        runtime(workers).block_on(async {
            let server = Server::builder("stdio-inline", "1").groups(["stdio-inline"]).build().expect("builds");
            let mut p = Peer::serving(server.clone());
            let modern = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {} });
            let mut waiting = call(json!(1), "until_cancelled", json!({}));
            waiting["params"]["_meta"] = modern.clone();
            // The ping's answer shows the call was read, and started, before it.
            p.send(&[waiting, json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": { "_meta": modern } })])
                .await;
            assert_eq!(p.next().await["id"], 2, "{workers:?}");
            server.shutdown();
            let answer = p.next().await;
            assert_eq!(
                (&answer["id"], &answer["result"]["content"][0]["text"]),
                (&json!(1), &json!("cancelled")),
                "{workers:?}: {answer}"
            );
        });
    }
}
