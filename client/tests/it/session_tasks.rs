//! A 2025-11-25 session's core tasks (task-augmented `tools/call`, `tasks/get`,
//! `tasks/result`) against a scripted server: the cases the reference server does not play.

use serde_json::{Value, json};
use std::time::Duration;
use switchyard::CallToolResult;
use switchyard_client::{
    Client, ClientBuilder, ClientError, ElicitAction, ElicitResult, ElicitationModes, RequestOptions, ToolCall,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

struct Fake {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Fake {
    async fn recv(&mut self) -> Value {
        self.try_recv(Duration::from_secs(10)).await.expect("the client sends within 10 s")
    }

    async fn try_recv(&mut self, within: Duration) -> Option<Value> {
        let line = tokio::time::timeout(within, self.lines.next_line()).await.ok()?;
        let line = line.expect("reads").expect("the client has not closed");
        Some(serde_json::from_str(&line).expect("JSON"))
    }

    /// The next request (or notification) named `method`, skipping others.
    async fn expect(&mut self, method: &str) -> Value {
        let message = self.recv().await;
        assert_eq!(message["method"], method, "{message}");
        message
    }

    async fn send(&mut self, message: Value) {
        let mut bytes = serde_json::to_vec(&message).expect("encodes");
        bytes.push(b'\n');
        self.writer.write_all(&bytes).await.expect("writes");
        self.writer.flush().await.expect("flushes");
    }

    async fn answer(&mut self, request: &Value, result: Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": request["id"], "result": result })).await;
    }

    async fn fail(&mut self, request: &Value, code: i64, message: &str) {
        self.send(json!({ "jsonrpc": "2.0", "id": request["id"], "error": { "code": code, "message": message } }))
            .await;
    }
}

/// A session with a server declaring task-augmented `tools/call`.
async fn session(builder: ClientBuilder) -> (Fake, Client) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (reader, writer) = tokio::io::split(client_end);
    let connecting = tokio::spawn(builder.protocol_versions(["2025-11-25"]).connect_io(reader, writer));
    let (server_reader, server_writer) = tokio::io::split(server_end);
    let mut fake = Fake { lines: BufReader::new(server_reader).lines(), writer: server_writer };
    let init = fake.expect("initialize").await;
    let capabilities = json!({ "tools": {}, "tasks": { "cancel": {}, "requests": { "tools": { "call": {} } } } });
    let result = json!({ "protocolVersion": "2025-11-25", "capabilities": capabilities, "serverInfo": { "name": "fake", "version": "1" } });
    fake.answer(&init, result).await;
    fake.expect("notifications/initialized").await;
    (fake, connecting.await.expect("joins").expect("connects"))
}

/// Calls `slow` as a task and follows it to its result, on a task of its own.
fn follow(client: &Client) -> tokio::task::JoinHandle<Result<CallToolResult, ClientError>> {
    let client = client.clone();
    tokio::spawn(async move {
        let ToolCall::Task(task) = client.call_tool_as_task("slow", json!({})).await? else { panic!("a task") };
        task.result().await
    })
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("test-client", "0.0.1")
}

fn task(id: &str, status: &str, updated: &str) -> Value {
    json!({
        "taskId": id, "status": status, "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": updated, "ttl": null,
    })
}

fn tool(name: &str, support: Option<&str>) -> Value {
    let mut tool = json!({ "name": name, "inputSchema": { "type": "object" } });
    if let Some(support) = support {
        tool["execution"] = json!({ "taskSupport": support });
    }
    tool
}

/// Plays `tools/list` (one page) and answers the task-augmented `tools/call` with task `id`.
async fn create(fake: &mut Fake, name: &str, id: &str) {
    let list = fake.expect("tools/list").await;
    fake.answer(&list, json!({ "tools": [tool(name, Some("required"))] })).await;
    let call = fake.expect("tools/call").await;
    assert_eq!(call["params"]["task"], json!({}), "{call}");
    fake.answer(&call, json!({ "task": task(id, "working", "2025-11-25T10:00:00Z") })).await;
}

/// The tool is on the second page of `tools/list`: it is found there, and a task whose `ttl` is
/// null and that suggests no `pollInterval` is followed to its result.
#[tokio::test]
async fn a_tool_on_a_later_page_and_a_task_with_a_null_ttl() {
    let (mut fake, client) = session(builder()).await;
    let run = follow(&client);
    let first = fake.expect("tools/list").await;
    fake.answer(&first, json!({ "tools": [tool("other", None)], "nextCursor": "2" })).await;
    let second = fake.expect("tools/list").await;
    assert_eq!(second["params"]["cursor"], "2", "{second}");
    fake.answer(&second, json!({ "tools": [tool("slow", Some("optional"))] })).await;
    let call = fake.expect("tools/call").await;
    assert_eq!(call["params"]["task"], json!({}), "{call}");
    fake.answer(&call, json!({ "task": task("t1", "working", "2025-11-25T10:00:00Z") })).await;
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, task("t1", "completed", "2025-11-25T10:00:01Z")).await;
    let result = fake.expect("tasks/result").await;
    fake.answer(&result, json!({ "content": [{ "type": "text", "text": "done" }] })).await;
    let out = run.await.expect("joins").expect("the result");
    assert_eq!(out.content[0].as_text(), Some("done"));
}

/// A `failed` task whose `tasks/result` is an error (what the TypeScript SDK's in-memory store
/// answers for a task failed with `updateTaskStatus` and no stored result: -32603 "has no
/// result stored"): the error is the `tools/call`'s, with the task's `statusMessage` as its data.
#[tokio::test]
async fn a_failed_task_s_status_message_comes_with_its_error() {
    let (mut fake, client) = session(builder()).await;
    let run = follow(&client);
    create(&mut fake, "slow", "t2").await;
    let mut failed = task("t2", "failed", "2025-11-25T10:00:01Z");
    failed["statusMessage"] = json!("Tool execution failed: API rate limit exceeded");
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, failed.clone()).await;
    let result = fake.expect("tasks/result").await;
    fake.fail(&result, -32603, "Task t2 has no result stored").await;
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, failed).await;
    let err = run.await.expect("joins").expect_err("failed");
    let ClientError::Rpc { method, error } = &err else { panic!("{err:?}") };
    assert_eq!(method, "tools/call");
    assert_eq!(error.message(), "Task t2 has no result stored");
    assert_eq!(error.data(), Some(&json!({ "statusMessage": "Tool execution failed: API rate limit exceeded" })));
}

/// A task cancelled while `tasks/result` waits on it: the server ends that request with an
/// error, and the client reports the cancellation, not the error.
#[tokio::test]
async fn a_task_cancelled_while_its_result_is_awaited_is_cancelled() {
    let (mut fake, client) = session(builder()).await;
    let run = follow(&client);
    create(&mut fake, "slow", "t5").await;
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, task("t5", "input_required", "2025-11-25T10:00:01Z")).await;
    let result = fake.expect("tasks/result").await;
    fake.fail(&result, -32603, "Task t5 has no result stored").await;
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, task("t5", "cancelled", "2025-11-25T10:00:02Z")).await;
    let outcome = run.await.expect("joins");
    assert!(matches!(outcome, Err(ClientError::Cancelled { .. })), "{outcome:?}");
}

/// A `tasks/result` asked on `input_required` times out (the server's question was lost, say on
/// an HTTP stream the timeout closed): polling goes on, and as the task still wants input,
/// `tasks/result` is asked again, and its answer is the result.
#[tokio::test]
async fn after_a_timed_out_tasks_result_a_task_still_waiting_is_asked_again() {
    let (mut fake, client) = session(builder().request_timeout(Duration::from_millis(400))).await;
    let run = follow(&client);
    create(&mut fake, "slow", "t3").await;
    let waiting = {
        let mut t = task("t3", "input_required", "2025-11-25T10:00:01Z");
        t["pollInterval"] = json!(100);
        t
    };
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, waiting.clone()).await;
    let result = fake.expect("tasks/result").await;
    // No answer: the request times out and is cancelled.
    let cancelled = fake.expect("notifications/cancelled").await;
    assert_eq!(cancelled["params"]["requestId"], result["id"]);
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, waiting).await;
    let again = fake.expect("tasks/result").await;
    assert_eq!(again["params"]["taskId"], "t3", "{again}");
    fake.answer(&again, json!({ "content": [{ "type": "text", "text": "answered" }] })).await;
    let out = run.await.expect("joins").expect("the result");
    assert_eq!(out.content[0].as_text(), Some("answered"));
}

/// The server's question about a task carries `io.modelcontextprotocol/related-task`, and so
/// does the client's answer, as the spec says responses related to a task must.
#[tokio::test]
async fn the_answer_to_a_task_s_question_carries_its_related_task_meta() {
    let builder = builder().on_elicitation(ElicitationModes::Form, |_| async {
        Ok(ElicitResult { action: ElicitAction::Accept, content: json!({ "name": "Ada" }).as_object().cloned() })
    });
    let (mut fake, client) = session(builder).await;
    let run = follow(&client);
    create(&mut fake, "slow", "t4").await;
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, task("t4", "input_required", "2025-11-25T10:00:01Z")).await;
    let result = fake.expect("tasks/result").await;
    let related = json!({ "io.modelcontextprotocol/related-task": { "taskId": "t4" } });
    let question = json!({
        "jsonrpc": "2.0", "id": 900, "method": "elicitation/create",
        "params": { "message": "Name?", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } }, "_meta": related },
    });
    fake.send(question).await;
    let answer = fake.recv().await;
    assert_eq!(answer["id"], 900, "{answer}");
    assert_eq!(answer["result"]["action"], "accept", "{answer}");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({ "taskId": "t4" }),
        "{answer}"
    );
    fake.answer(&result, json!({ "content": [{ "type": "text", "text": "Ada" }] })).await;
    run.await.expect("joins").expect("the result");
}

/// `result_with` answers a session task's questions with its own input handler, not the
/// client's, and its cancellation token stops following.
#[tokio::test]
async fn result_with_answers_the_tasks_questions_with_its_own_handler() {
    let builder = builder().on_elicitation(ElicitationModes::Form, |_| async {
        Ok(ElicitResult { action: ElicitAction::Decline, content: None })
    });
    let (mut fake, client) = session(builder).await;
    let stop = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn({
        let (client, stop) = (client.clone(), stop.clone());
        async move {
            let ToolCall::Task(task) = client.call_tool_as_task("slow", json!({})).await? else { panic!("a task") };
            let options =
                RequestOptions::new().cancel_with(stop).on_input(json!({}), |key, method, _params| async move {
                    assert_eq!(method, "elicitation/create", "{key}");
                    Ok(json!({ "action": "accept", "content": { "name": "Grace" } }))
                });
            task.result_with(options).await
        }
    });
    create(&mut fake, "slow", "t6").await;
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, task("t6", "input_required", "2025-11-25T10:00:01Z")).await;
    let result = fake.expect("tasks/result").await;
    let related = json!({ "io.modelcontextprotocol/related-task": { "taskId": "t6" } });
    fake.send(json!({
        "jsonrpc": "2.0", "id": 901, "method": "elicitation/create",
        "params": { "message": "Name?", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } }, "_meta": related },
    }))
    .await;
    let answer = fake.recv().await;
    assert_eq!(answer["id"], 901, "{answer}");
    assert_eq!(answer["result"]["content"]["name"], "Grace", "the call's handler answered: {answer}");
    // The task wants more; following stops when the token fires, the task left as it is.
    stop.cancel();
    let out = run.await.expect("joins");
    assert!(matches!(out, Err(ClientError::Cancelled { .. })), "{out:?}");
    drop(result);
}

/// The tools are listed for the first task call only: the second reads the first listing.
#[tokio::test]
async fn a_second_task_call_reads_the_last_listing() {
    let (mut fake, client) = session(builder()).await;
    for round in 0..2 {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.call_tool_as_task("quick", json!({})).await }
        });
        if round == 0 {
            let list = fake.expect("tools/list").await;
            fake.answer(&list, json!({ "tools": [tool("quick", Some("optional"))] })).await;
        }
        let request = fake.expect("tools/call").await;
        assert_eq!(request["params"]["task"], json!({}), "{request}");
        fake.answer(&request, json!({ "content": [] })).await;
        assert!(matches!(call.await.expect("joins"), Ok(ToolCall::Completed(_))), "round {round}");
    }
}

/// A tool listed as `forbidden` that became a task tool since: the server's `-32601` lists the
/// tools again, and the call is sent once more, as a task.
#[tokio::test]
async fn a_changed_task_support_is_learnt_from_the_server_s_refusal() {
    let (mut fake, client) = session(builder()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool_as_task("slow", json!({})).await }
    });
    let list = fake.expect("tools/list").await;
    fake.answer(&list, json!({ "tools": [tool("slow", None)] })).await;
    let plain = fake.expect("tools/call").await;
    assert!(plain["params"].get("task").is_none(), "{plain}");
    fake.fail(&plain, -32601, "slow must run as a task").await;
    let list = fake.expect("tools/list").await;
    fake.answer(&list, json!({ "tools": [tool("slow", Some("required"))] })).await;
    let as_task = fake.expect("tools/call").await;
    assert_eq!(as_task["params"]["task"], json!({}), "{as_task}");
    fake.answer(&as_task, json!({ "task": task("t6", "working", "2025-11-25T10:00:00Z") })).await;
    let outcome = call.await.expect("joins");
    assert!(matches!(&outcome, Ok(ToolCall::Task(t)) if t.id() == "t6"), "{outcome:?}");
}

/// A listing the client cannot read (an entry is no `Tool`) does not fail the call: it is sent
/// plainly, for the server to judge.
#[tokio::test]
async fn a_listing_that_cannot_be_read_leaves_a_plain_call() {
    let (mut fake, client) = session(builder()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool_as_task("quick", json!({})).await }
    });
    let list = fake.expect("tools/list").await;
    fake.answer(&list, json!({ "tools": [{ "name": 7 }, tool("quick", Some("optional"))] })).await;
    let request = fake.expect("tools/call").await;
    assert!(request["params"].get("task").is_none(), "{request}");
    fake.answer(&request, json!({ "content": [] })).await;
    assert!(matches!(call.await.expect("joins"), Ok(ToolCall::Completed(_))));
}

/// A task whose `ttl` is beyond what a clock can count: `tasks/result` then waits without a
/// deadline rather than failing (or panicking on the sum).
#[tokio::test]
async fn a_task_with_a_vast_ttl_is_read_all_the_same() {
    let (mut fake, client) = session(builder()).await;
    let run = follow(&client);
    create(&mut fake, "slow", "t7").await;
    let mut done = task("t7", "completed", "2025-11-25T10:00:01Z");
    done["ttl"] = json!(u64::MAX);
    let get = fake.expect("tasks/get").await;
    fake.answer(&get, done).await;
    let result = fake.expect("tasks/result").await;
    fake.answer(&result, json!({ "content": [{ "type": "text", "text": "kept" }] })).await;
    let out = run.await.expect("joins").expect("the result");
    assert_eq!(out.content[0].as_text(), Some("kept"));
}
