//! Against a scripted server: each test plays the server's side line by line, and sends what a
//! broken or hostile server sends.

use serde_json::{Value, json};
use std::time::Duration;
use switchyard_client::{Client, ClientBuilder, ClientError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;

/// The server's end of the pipe.
struct Fake {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Fake {
    /// The next message from the client.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the client sends within 10 s")
            .expect("reads")
            .expect("the client has not closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("the client sent no JSON ({e}): {line}"))
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(&serde_json::to_vec(&message).expect("encodes")).await;
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("writes");
        self.writer.write_all(b"\n").await.expect("writes");
        self.writer.flush().await.expect("flushes");
    }

    /// Answers `initialize` with `version` and takes `notifications/initialized`.
    async fn accept_session(&mut self, version: &str) {
        let init = self.recv().await;
        assert_eq!(init["method"], "initialize", "{init}");
        assert!(init["params"]["clientInfo"]["name"].is_string(), "{init}");
        let result = json!({
            "protocolVersion": version,
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "fake", "version": "9" },
        });
        self.send(json!({ "jsonrpc": "2.0", "id": init["id"], "result": result })).await;
        let initialized = self.recv().await;
        assert_eq!(initialized["method"], "notifications/initialized", "{initialized}");
    }
}

/// A client connecting with `builder` to a fake server; the connection completes once the
/// test has played the handshake.
fn start(builder: ClientBuilder) -> (Fake, JoinHandle<Result<Client, ClientError>>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (reader, writer) = tokio::io::split(client_end);
    let connecting = tokio::spawn(builder.connect_io(reader, writer));
    let (server_reader, server_writer) = tokio::io::split(server_end);
    (Fake { lines: BufReader::new(server_reader).lines(), writer: server_writer }, connecting)
}

fn session_client() -> ClientBuilder {
    ClientBuilder::new("test-client", "0.0.1").protocol_versions(["2025-11-25"])
}

async fn in_session(builder: ClientBuilder) -> (Fake, Client) {
    let (mut fake, connecting) = start(builder);
    fake.accept_session("2025-11-25").await;
    (fake, connecting.await.expect("joins").expect("connects"))
}

const TEXT_RESULT: &str = r#"{"content":[{"type":"text","text":"fine"}]}"#;

#[tokio::test]
async fn garbage_foreign_ids_and_overlong_lines_are_skipped_and_the_answer_still_arrives() {
    let (mut fake, client) = in_session(session_client().max_message_bytes(1024)).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", ()).await }
    });
    let request = fake.recv().await;
    assert_eq!(request["method"], "tools/call");
    fake.send_raw(b"this is not JSON").await;
    fake.send_raw(b"[1, 2, 3]").await;
    fake.send_raw(&[0xff, 0xfe, 0x00]).await;
    fake.send(json!({ "jsonrpc": "2.0", "id": 4242, "result": {} })).await;
    fake.send(json!({ "jsonrpc": "2.0", "id": "not ours", "result": {} })).await;
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "pad": "x".repeat(4096) } })).await;
    let answer = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{TEXT_RESULT}}}"#, request["id"]);
    fake.send_raw(answer.as_bytes()).await;
    let result = call.await.expect("joins").expect("the real answer");
    assert_eq!(result.content.first().and_then(|c| c.as_text()), Some("fine"));
    // Still usable afterwards.
    let ping = tokio::spawn(async move { client.ping().await });
    let request = fake.recv().await;
    assert_eq!(request["method"], "ping");
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": {} })).await;
    ping.await.expect("joins").expect("pong");
}

#[tokio::test]
async fn a_silent_server_times_out_and_the_request_is_cancelled() {
    let (mut fake, client) = in_session(session_client().request_timeout(Duration::from_millis(300))).await;
    let (result, request) = tokio::join!(client.call_tool("slow", ()), fake.recv());
    let err = result.expect_err("no answer");
    let cancelled = fake.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], request["id"], "{cancelled}");
    assert!(
        matches!(&err, ClientError::Timeout { method, timeout } if method == "tools/call" && *timeout == Duration::from_millis(300)),
        "{err:?}"
    );
    // A late answer to the cancelled request is ignored.
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": {} })).await;
    assert!(!client.is_closed());
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let (mut fake, client) = in_session(session_client()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", ()).await }
    });
    let request = fake.recv().await;
    call.abort();
    let cancelled = fake.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn a_server_that_goes_away_fails_the_waiting_request_with_closed() {
    let (mut fake, client) = in_session(session_client()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", ()).await }
    });
    let _ = fake.recv().await;
    drop(fake);
    let err = call.await.expect("joins").expect_err("the server is gone");
    assert!(matches!(err, ClientError::Closed), "{err:?}");
    tokio::time::timeout(Duration::from_secs(5), client.closed()).await.expect("the client sees the end");
    assert!(matches!(client.list_tools().await, Err(ClientError::Closed)));
}

#[tokio::test]
async fn a_session_server_answering_the_probe_with_an_error_gets_initialize() {
    let (mut fake, connecting) = start(ClientBuilder::new("test-client", "0.0.1"));
    let probe = fake.recv().await;
    assert_eq!(probe["method"], "server/discover", "{probe}");
    assert_eq!(probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    fake.send(json!({ "jsonrpc": "2.0", "id": probe["id"], "error": { "code": -32601, "message": "no such method" } }))
        .await;
    fake.accept_session("2025-06-18").await;
    let client = connecting.await.expect("joins").expect("connects");
    assert_eq!(client.protocol_version(), "2025-06-18");
    assert_eq!(client.server_info().map(|s| s.name.as_str()), Some("fake"));
}

#[tokio::test]
async fn a_server_that_never_answers_the_probe_gets_initialize_after_the_probe_timeout() {
    let (mut fake, connecting) =
        start(ClientBuilder::new("test-client", "0.0.1").probe_timeout(Duration::from_millis(200)));
    let probe = fake.recv().await;
    assert_eq!(probe["method"], "server/discover");
    // The probe is withdrawn before the handshake, so a slow server drops it.
    let cancelled = fake.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], probe["id"]);
    fake.accept_session("2025-11-25").await;
    let client = connecting.await.expect("joins").expect("connects");
    assert_eq!(client.protocol_version(), "2025-11-25");
}

/// A modern server too slow for the probe, which answers `initialize` with 2026-07-28, is asked
/// again with the whole handshake timeout, and the connection is modern.
#[tokio::test]
async fn a_probe_that_timed_out_is_asked_again_when_initialize_names_2026_07_28() {
    let (mut fake, connecting) =
        start(ClientBuilder::new("test-client", "0.0.1").probe_timeout(Duration::from_millis(200)));
    let probe = fake.recv().await;
    assert_eq!(probe["method"], "server/discover");
    let cancelled = fake.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    let init = fake.recv().await;
    assert_eq!(init["method"], "initialize", "{init}");
    let result =
        json!({ "protocolVersion": "2026-07-28", "capabilities": {}, "serverInfo": { "name": "x", "version": "1" } });
    fake.send(json!({ "jsonrpc": "2.0", "id": init["id"], "result": result })).await;
    let again = fake.recv().await;
    assert_eq!(again["method"], "server/discover", "{again}");
    // Slower than the probe's timeout, well within the handshake's.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let discovered = json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": {} },
    });
    fake.send(json!({ "jsonrpc": "2.0", "id": again["id"], "result": discovered })).await;
    let client = connecting.await.expect("joins").expect("connects");
    assert_eq!(client.protocol_version(), "2026-07-28");
}

#[tokio::test]
async fn a_revision_the_client_did_not_offer_is_refused() {
    let (mut fake, connecting) = start(session_client());
    let init = fake.recv().await;
    let result =
        json!({ "protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": { "name": "old", "version": "1" } });
    fake.send(json!({ "jsonrpc": "2.0", "id": init["id"], "result": result })).await;
    let err = connecting.await.expect("joins").expect_err("refused");
    assert!(matches!(&err, ClientError::Protocol(m) if m.contains("2024-11-05")), "{err:?}");
}

#[tokio::test]
async fn a_modern_server_gets_meta_on_every_request_and_no_session() {
    let (mut fake, client) = modern().await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", serde_json::json!({ "a": 1 })).await }
    });
    let request = fake.recv().await;
    let meta = &request["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{request}");
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "test-client", "{request}");
    assert_eq!(meta["io.modelcontextprotocol/clientCapabilities"], json!({}), "{request}");
    assert_eq!(request["params"]["arguments"], json!({ "a": 1 }));
    // An interim input-required result is refused: this client declared nothing to answer it with.
    let interim = json!({ "resultType": "input_required", "requestState": "s", "inputRequests": {
        "k": { "method": "elicitation/create", "params": { "message": "m", "requestedSchema": {} } } } });
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": interim })).await;
    let err = call.await.expect("joins").expect_err("refused");
    assert!(matches!(&err, ClientError::Protocol(m) if m.contains("declared no elicitation")), "{err:?}");
}

#[tokio::test]
async fn pages_are_followed_and_a_repeated_cursor_is_a_protocol_error() {
    let (mut fake, client) = in_session(session_client()).await;
    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let tool = |name: &str| json!({ "name": name, "inputSchema": { "type": "object" }, "annotations": { "readOnlyHint": true } });
    let first = fake.recv().await;
    assert_eq!(first["params"].get("cursor"), None, "{first}");
    fake.send(json!({ "jsonrpc": "2.0", "id": first["id"], "result": { "tools": [tool("a")], "nextCursor": "p2" } }))
        .await;
    let second = fake.recv().await;
    assert_eq!(second["params"]["cursor"], "p2", "{second}");
    fake.send(json!({ "jsonrpc": "2.0", "id": second["id"], "result": { "tools": [tool("b"), tool("c")] } })).await;
    let tools = listing.await.expect("joins").expect("listed");
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(tools[0].extra["annotations"]["readOnlyHint"], true, "fields beyond the typed ones are kept");

    let looping = tokio::spawn(async move { client.list_tools().await });
    for _ in 0..2 {
        let page = fake.recv().await;
        fake.send(json!({ "jsonrpc": "2.0", "id": page["id"], "result": { "tools": [], "nextCursor": "again" } }))
            .await;
    }
    let err = looping.await.expect("joins").expect_err("a loop");
    assert!(matches!(&err, ClientError::Protocol(m) if m.contains("again")), "{err:?}");
}

#[tokio::test]
async fn the_server_s_ping_is_answered_and_its_other_requests_refused() {
    let (mut fake, _client) = in_session(session_client()).await;
    fake.send(json!({ "jsonrpc": "2.0", "id": "s1", "method": "ping" })).await;
    let pong = fake.recv().await;
    assert_eq!(pong, json!({ "jsonrpc": "2.0", "id": "s1", "result": {} }));
    fake.send(json!({ "jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": { "messages": [] } }))
        .await;
    let refused = fake.recv().await;
    assert_eq!(refused["id"], 7);
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
}

#[tokio::test]
async fn notifications_reach_subscribers_in_order() {
    use futures::StreamExt;
    let (mut fake, client) = in_session(session_client()).await;
    let mut notifications = Box::pin(client.notifications());
    for i in 0..3 {
        fake.send(
            json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": { "level": "info", "data": i } }),
        )
        .await;
    }
    for i in 0..3 {
        let n =
            tokio::time::timeout(Duration::from_secs(5), notifications.next()).await.expect("in time").expect("open");
        assert_eq!(n.method, "notifications/message");
        assert_eq!(n.params.as_ref().and_then(|p| p.get("data")), Some(&json!(i)));
    }
    drop(fake);
    let end = tokio::time::timeout(Duration::from_secs(5), notifications.next()).await.expect("ends");
    assert!(end.is_none(), "the stream ends with the connection");
}

#[tokio::test]
async fn a_server_that_stops_reading_cannot_hold_calls_past_their_timeout() {
    let (fake, client) = in_session(session_client().request_timeout(Duration::from_millis(300))).await;
    // The fake reads nothing from here on: the pipe (64 KiB) and the client's queue fill up.
    let calls = (0..1500).map(|i| {
        let client = client.clone();
        async move { client.call_tool("t", json!({ "pad": format!("{i:0>100}") })).await }
    });
    let outcomes = tokio::time::timeout(Duration::from_secs(60), futures::future::join_all(calls))
        .await
        .expect("every call ends by its timeout (the guard is only against a hang)");
    assert!(outcomes.iter().all(|o| matches!(o, Err(ClientError::Timeout { .. }))), "all time out");
    let notified = tokio::time::timeout(Duration::from_secs(30), client.notify("notifications/x", json!({})))
        .await
        .expect("a notification ends by its timeout too");
    assert!(matches!(notified, Err(ClientError::Timeout { .. })), "{notified:?}");
    client.close().await;
    drop(fake);
}

#[tokio::test]
async fn initialize_is_never_cancelled_even_when_it_times_out() {
    let (mut fake, connecting) = start(session_client().request_timeout(Duration::from_millis(200)));
    let init = fake.recv().await;
    assert_eq!(init["method"], "initialize");
    let err = connecting.await.expect("joins").expect_err("no answer");
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
    // What follows is the end of the client's output, and no notifications/cancelled.
    let rest = tokio::time::timeout(Duration::from_secs(10), fake.lines.next_line()).await.expect("ends");
    assert!(matches!(rest, Ok(None)), "{rest:?}");
}

#[tokio::test]
async fn initialize_may_not_agree_on_2026_07_28_or_an_unknown_revision() {
    for chosen in ["2026-07-28", "2024-11-05"] {
        let builder = ClientBuilder::new("t", "0").protocol_versions(["2024-11-05", "2025-06-18", "2026-07-28"]);
        let (mut fake, connecting) = start(builder.probe_timeout(Duration::from_millis(100)));
        let probe = fake.recv().await;
        assert_eq!(probe["method"], "server/discover");
        fake.send(json!({ "jsonrpc": "2.0", "id": probe["id"], "error": { "code": -32601, "message": "no" } })).await;
        let init = fake.recv().await;
        assert_eq!(init["params"]["protocolVersion"], "2025-06-18", "the first session revision this crate speaks");
        let result =
            json!({ "protocolVersion": chosen, "capabilities": {}, "serverInfo": { "name": "x", "version": "1" } });
        fake.send(json!({ "jsonrpc": "2.0", "id": init["id"], "result": result })).await;
        let err = connecting.await.expect("joins").expect_err("refused");
        assert!(matches!(&err, ClientError::Protocol(m) if m.contains(chosen)), "{chosen}: {err:?}");
    }
}

#[tokio::test]
async fn a_listing_stops_at_the_page_limit() {
    let (mut fake, client) = in_session(session_client().max_pages(3)).await;
    let listing = tokio::spawn(async move { client.list_tools().await });
    for page in 0..3 {
        let request = fake.recv().await;
        let result = json!({ "tools": [], "nextCursor": format!("c{page}") });
        fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": result })).await;
    }
    let err = listing.await.expect("joins").expect_err("too many pages");
    assert!(matches!(&err, ClientError::Protocol(m) if m.contains("max_pages")), "{err:?}");
}

#[tokio::test]
async fn params_are_objects_or_absent() {
    let (mut fake, client) = in_session(session_client()).await;
    assert!(matches!(client.request("x", json!([1, 2])).await, Err(ClientError::Encode(_))));
    assert!(matches!(client.request("x", json!({ "_meta": 5 })).await, Err(ClientError::Encode(_))));
    let ping = tokio::spawn(async move { client.request("ping", Value::Null).await });
    let request = fake.recv().await;
    assert_eq!(request["method"], "ping");
    assert!(request.get("params").is_none(), "no params key at all: {request}");
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": {} })).await;
    ping.await.expect("joins").expect("pong");
}

#[test]
fn a_listed_tool_serializes_back_to_what_the_server_sent() {
    let sent = json!({
        "name": "t",
        "title": "T",
        "inputSchema": { "type": "object", "x-vendor": 1 },
        "annotations": { "readOnlyHint": true },
        "_meta": { "k": "v" },
    });
    let tool: switchyard_client::Tool = serde_json::from_value(sent.clone()).expect("decodes");
    assert_eq!(serde_json::to_value(&tool).expect("encodes"), sent);
}

/// A server request id used again while the first is still being answered is refused with
/// `-32600`; the first handler is still the one `notifications/cancelled` stops.
#[tokio::test]
async fn a_reused_server_request_id_is_refused_and_cancel_stops_the_first() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Dropped(Arc<AtomicUsize>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let calls = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (c, s) = (calls.clone(), stopped.clone());
    let builder = session_client().on_elicitation(switchyard_client::ElicitationModes::Form, move |_| {
        c.fetch_add(1, Ordering::SeqCst);
        let guard = Dropped(s.clone());
        async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(switchyard_client::ElicitResult { action: switchyard_client::ElicitAction::Decline, content: None })
        }
    });
    let (mut fake, client) = in_session(builder).await;
    let ask = json!({ "jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": { "message": "m" } });
    fake.send(ask.clone()).await;
    fake.send(ask).await;
    let refused = fake.recv().await;
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (json!(7), json!(-32600)), "{refused}");
    fake.send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 7 } })).await;
    for _ in 0..100 {
        if stopped.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the second request never reached the handler");
    assert_eq!(stopped.load(Ordering::SeqCst), 1, "the cancelled handler was stopped");
    client.close().await;
}

/// A modern client connected to the fake, with the discovery played.
async fn modern() -> (Fake, Client) {
    let (mut fake, connecting) = start(ClientBuilder::new("test-client", "0.0.1"));
    let probe = fake.recv().await;
    let discovered = json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": { "tools": {} },
        "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "modern", "version": "2" } },
    });
    fake.send(json!({ "jsonrpc": "2.0", "id": probe["id"], "result": discovered })).await;
    (fake, connecting.await.expect("joins").expect("connects"))
}

type Updates = JoinHandle<Vec<Result<switchyard_client::TaskState, ClientError>>>;

/// A modern client whose `tools/call` of `job` the fake turned into task `t1` suggesting
/// `poll_ms`, and the task's updates being collected.
async fn task_updates(poll_ms: u64) -> (Fake, Updates) {
    use futures::StreamExt;
    let (mut fake, client) = modern().await;
    let call = tokio::spawn(async move { client.call_tool_as_task("job", json!({})).await });
    let request = fake.recv().await;
    let task = json!({ "resultType": "task", "taskId": "t1", "status": "working", "pollIntervalMs": poll_ms });
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": task })).await;
    let Ok(Ok(switchyard_client::ToolCall::Task(task))) = call.await else { panic!("a task") };
    (fake, tokio::spawn(async move { task.updates().collect::<Vec<_>>().await }))
}

#[tokio::test]
async fn a_server_that_refuses_task_subscriptions_is_polled_and_repeats_are_not_reported() {
    let (mut fake, updates) = task_updates(100).await;

    let listen = fake.recv().await;
    assert_eq!(listen["method"], "subscriptions/listen", "{listen}");
    assert_eq!(listen["params"]["notifications"], json!({ "taskIds": ["t1"] }), "{listen}");
    let declared = &listen["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
    assert!(declared.get("io.modelcontextprotocol/tasks").is_some(), "the extension is declared: {listen}");
    let refused = json!({ "code": -32601, "message": "Method not found" });
    fake.send(json!({ "jsonrpc": "2.0", "id": listen["id"], "error": refused })).await;

    // Three polls: working, working again (not reported), completed.
    let states = [
        json!({ "resultType": "complete", "taskId": "t1", "status": "working", "pollIntervalMs": 100 }),
        json!({ "resultType": "complete", "taskId": "t1", "status": "working", "pollIntervalMs": 100, "_meta": { "x": 1 } }),
        json!({ "resultType": "complete", "taskId": "t1", "status": "completed", "result": { "content": [] } }),
    ];
    for state in states {
        let get = fake.recv().await;
        assert_eq!(get["method"], "tasks/get", "{get}");
        assert_eq!(get["params"]["taskId"], "t1", "{get}");
        fake.send(json!({ "jsonrpc": "2.0", "id": get["id"], "result": state })).await;
    }
    let states = updates.await.expect("joins");
    let statuses: Vec<_> = states.iter().map(|s| s.as_ref().expect("a state").status.clone()).collect();
    assert_eq!(statuses, ["working", "completed"]);
}

#[tokio::test]
async fn task_notifications_and_polls_of_one_state_are_one_update_and_a_bare_end_is_completed() {
    // A poll interval of a minute: every tasks/get below is one the client needed.
    let (mut fake, updates) = task_updates(60_000).await;

    let listen = fake.recv().await;
    assert_eq!(listen["method"], "subscriptions/listen", "{listen}");
    let tag = json!({ "io.modelcontextprotocol/subscriptionId": listen["id"] });
    let ack = json!({ "notifications": { "taskIds": ["t1"] }, "_meta": tag });
    fake.send(json!({ "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack })).await;
    let get = fake.recv().await;
    assert_eq!(get["method"], "tasks/get", "{get}");
    let working = json!({ "taskId": "t1", "status": "working", "ttlMs": 60000, "pollIntervalMs": 60000 });
    let mut polled = working.clone();
    polled["resultType"] = json!("complete");
    polled["cacheScope"] = json!("private");
    fake.send(json!({ "jsonrpc": "2.0", "id": get["id"], "result": polled })).await;
    // The same state as a notification, then one for another task: neither is an update.
    let mut noted = working.clone();
    noted["_meta"] = tag.clone();
    fake.send(json!({ "jsonrpc": "2.0", "method": "notifications/tasks", "params": noted })).await;
    let other = json!({ "taskId": "t2", "status": "completed", "_meta": tag });
    fake.send(json!({ "jsonrpc": "2.0", "method": "notifications/tasks", "params": other })).await;
    // The end, without its result: one tasks/get fetches it.
    let done = json!({ "taskId": "t1", "status": "completed", "_meta": tag });
    fake.send(json!({ "jsonrpc": "2.0", "method": "notifications/tasks", "params": done })).await;
    let get = fake.recv().await;
    assert_eq!(get["method"], "tasks/get", "{get}");
    let completed = json!({ "resultType": "complete", "taskId": "t1", "status": "completed",
        "result": { "content": [{ "type": "text", "text": "done" }] } });
    fake.send(json!({ "jsonrpc": "2.0", "id": get["id"], "result": completed })).await;

    let states: Vec<_> = updates.await.expect("joins").into_iter().map(|s| s.expect("a state")).collect();
    let statuses: Vec<_> = states.iter().map(|s| s.status.as_str()).collect();
    assert_eq!(statuses, ["working", "completed"]);
    assert_eq!(states[1].raw["result"]["content"][0]["text"], "done");
}

/// A 2026-07-28 request whose own input handler declares none of elicitation, sampling or
/// roots is sent once, without a copy for a retry; a server that asks for input anyway fails
/// the request, and does so before the handler is run (its answer, a user's form or a paid
/// sampling call, could never be sent).
#[tokio::test]
async fn an_undeclared_input_round_fails_without_running_the_handler() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (mut fake, client) = modern().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let call = tokio::spawn({
        let (client, asked) = (client.clone(), asked.clone());
        async move {
            let options =
                switchyard_client::RequestOptions::new().on_input(json!({}), move |_key, _method, _params| {
                    asked.fetch_add(1, Ordering::SeqCst);
                    async { Ok(json!({ "action": "accept", "content": { "name": "x" } })) }
                });
            client.request_with("tools/call", json!({ "name": "t", "arguments": {} }), options).await
        }
    });
    let request = fake.recv().await;
    assert_eq!(request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"], json!({}), "{request}");
    let interim = json!({ "resultType": "input_required", "requestState": "s", "inputRequests": {
        "k": { "method": "elicitation/create", "params": { "message": "m", "requestedSchema": {} } } } });
    fake.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": interim })).await;
    let err = call.await.expect("joins").expect_err("refused");
    assert!(matches!(&err, ClientError::Protocol(_)), "{err:?}");
    assert_eq!(asked.load(Ordering::SeqCst), 0, "the handler was run for an answer that is thrown away");
}
