//! The Rust client against the reference server of the MCP project, the TypeScript SDK's
//! `@modelcontextprotocol/server-everything` (pinned in tests/oauth/package.json), over its
//! stdio and its Streamable HTTP: a 2025-11-25 session with every feature it offers (tools,
//! structured content, prompts and completion, resources, templates and subscriptions,
//! logging, progress, elicitation, sampling, roots, and its core tasks, with input asked
//! through `tasks/result`).

use crate::common;
use crate::common::peers;
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard_client::{
    Client, ClientBuilder, ClientError, CompletionRef, CreateMessageResult, ElicitAction, ElicitResult,
    ElicitationModes, LogLevel, RequestOptions, Root, TaskHandle, ToolCall,
};

fn everything_js() -> PathBuf {
    peers::dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// What the handlers were asked, in order.
#[derive(Default, Clone)]
struct Asked(Arc<Mutex<Vec<String>>>);

impl Asked {
    fn push(&self, what: String) {
        self.0.lock().expect("not poisoned").push(what);
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// A client that answers every kind of input the reference server asks for: its form (a
/// name), its research clarification (the first interpretation offered), sampling (a fixed
/// answer) and roots (one).
fn builder(asked: &Asked) -> ClientBuilder {
    let forms = asked.clone();
    let samples = asked.clone();
    ClientBuilder::new("switchyard-tests", "1.0.0")
        .request_timeout(Duration::from_secs(20))
        .on_elicitation(ElicitationModes::Form, move |request| {
            let forms = forms.clone();
            async move {
                forms.push(format!("form: {}", request.message));
                let schema = request.requested_schema.unwrap_or_default();
                let content = match schema["properties"]["interpretation"]["oneOf"][0]["const"].as_str() {
                    Some(first) => json!({ "interpretation": first }),
                    None => json!({ "name": "Ada" }),
                };
                Ok(ElicitResult { action: ElicitAction::Accept, content: content.as_object().cloned() })
            }
        })
        .on_sampling(move |request| {
            let samples = samples.clone();
            async move {
                let asked = request.messages.first().and_then(|m| m["content"]["text"].as_str()).unwrap_or_default();
                samples.push(format!("sampling: {asked}"));
                Ok(serde_json::from_value::<CreateMessageResult>(
                    json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" }, "model": "switchyard-test" }),
                )
                .expect("a CreateMessageResult"))
            }
        })
        .on_roots(|| async {
            Ok(vec![serde_json::from_value::<Root>(json!({ "uri": "file:///work", "name": "work" })).expect("a root")])
        })
}

fn text(result: &switchyard::CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
}

/// Waits (at most 20 s) for a notification `method` that `accept` takes.
async fn wait_for(
    notes: &mut (impl futures::Stream<Item = switchyard::jsonrpc::Notification> + Unpin),
    method: &str,
    accept: impl Fn(&Value) -> bool,
) -> Value {
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(note) = notes.next().await {
            let params = note.params.map(Value::Object).unwrap_or_default();
            if note.method == method && accept(&params) {
                return Some(params);
            }
        }
        None
    })
    .await;
    found.ok().flatten().unwrap_or_else(|| panic!("no {method} within 20 s"))
}

/// Everything the reference server offers, through the client's API.
async fn exercise(client: &Client, asked: &Asked) {
    assert_eq!(client.protocol_version(), "2025-11-25", "server/discover is unknown there: initialize follows");
    let info = client.server_info().expect("serverInfo");
    assert_eq!(info.name, "mcp-servers/everything");
    assert!(client.instructions().is_some_and(|i| !i.is_empty()));
    client.ping().await.expect("ping");

    // Tools, the ones offered only to a client with these handlers among them.
    let tools = client.list_tools().await.expect("tools/list");
    for name in ["echo", "get-sum", "trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"] {
        assert!(
            tools.iter().any(|t| t.name == name),
            "{name} is listed: {:?}",
            tools.iter().map(|t| &t.name).collect::<Vec<_>>()
        );
    }
    let echoed = client.call_tool("echo", json!({ "message": "hello" })).await.expect("echo");
    assert_eq!(text(&echoed), "Echo: hello");
    let sum = client.call_tool("get-sum", json!({ "a": 2, "b": 3 })).await.expect("get-sum");
    assert_eq!(text(&sum), "The sum of 2 and 3 is 5.");
    let weather = client.call_tool("get-structured-content", json!({ "location": "Chicago" })).await.expect("weather");
    let structured = weather.structured_content.expect("structuredContent");
    assert!(structured["temperature"].is_number(), "{structured}");
    let refused = client.call_tool("get-sum", json!({ "a": "two" })).await;
    match refused {
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        Err(ClientError::Rpc { error, .. }) => assert_eq!(error.code().0, -32602, "{error:?}"),
        Err(e) => panic!("bad arguments: {e}"),
    }

    // Progress, in order.
    let steps = Arc::new(Mutex::new(Vec::new()));
    let seen = steps.clone();
    let options = RequestOptions::new().on_progress(move |p| seen.lock().expect("not poisoned").push(p.progress));
    let long = client
        .call_tool_with("trigger-long-running-operation", json!({ "duration": 0.3, "steps": 3 }), options)
        .await
        .expect("trigger-long-running-operation");
    assert!(text(&long).contains("Steps: 3"), "{long:?}");
    assert_eq!(*steps.lock().expect("not poisoned"), vec![1.0, 2.0, 3.0]);

    // Input the server asks for in the middle of a call.
    let form = client.call_tool("trigger-elicitation-request", json!({})).await.expect("elicitation");
    assert!(text(&form).contains("Ada"), "{form:?}");
    let sampled = client
        .call_tool("trigger-sampling-request", json!({ "prompt": "Capital of France?" }))
        .await
        .expect("sampling");
    assert!(text(&sampled).contains("Paris"), "{sampled:?}");
    let roots = client.call_tool("get-roots-list", json!({})).await.expect("roots");
    assert!(text(&roots).contains("file:///work"), "{roots:?}");
    let questions = asked.all();
    assert!(questions.iter().any(|q| q.starts_with("form: ")), "{questions:?}");
    assert!(
        questions.iter().any(|q| q == "sampling: Resource trigger-sampling-request context: Capital of France?"),
        "{questions:?}"
    );

    // Prompts and completion.
    let prompts = client.list_prompts().await.expect("prompts/list");
    assert!(prompts.iter().any(|p| p.name == "args-prompt"), "{prompts:?}");
    let prompt = client.get_prompt("args-prompt", [("city", "Lisbon")]).await.expect("prompts/get");
    assert!(format!("{:?}", prompt.messages).contains("Lisbon"), "{prompt:?}");
    let departments = client
        .complete(CompletionRef::Prompt { name: "completable-prompt".into() }, "department", "S", None)
        .await
        .expect("completion/complete");
    assert_eq!(departments.values, ["Sales", "Support"]);
    let context = json!({ "department": "Engineering" }).as_object().cloned();
    let names = client
        .complete(CompletionRef::Prompt { name: "completable-prompt".into() }, "name", "", context)
        .await
        .expect("completion/complete with context");
    assert_eq!(names.values, ["Alice", "Bob", "Charlie"]);

    // Resources: listed through every page, templates, reads.
    let resources = client.list_resources().await.expect("resources/list");
    assert!(!resources.is_empty());
    let templates = client.list_resource_templates().await.expect("resources/templates/list");
    assert!(templates.iter().any(|t| format!("{t:?}").contains("demo://resource/dynamic/text/{")), "{templates:?}");
    let read = client.read_resource("demo://resource/dynamic/text/1").await.expect("resources/read");
    assert!(!read.contents.is_empty(), "{read:?}");

    // A resource subscription, and log messages at the level asked for.
    let mut notes = std::pin::pin!(client.notifications());
    let uri = "demo://resource/dynamic/text/1";
    client.subscribe_resource(uri).await.expect("resources/subscribe");
    client.call_tool("toggle-subscriber-updates", json!({})).await.expect("updates on");
    wait_for(&mut notes, "notifications/resources/updated", |p| p["uri"] == uri).await;
    client.call_tool("toggle-subscriber-updates", json!({})).await.expect("updates off");
    client.unsubscribe_resource(uri).await.expect("resources/unsubscribe");
    client.set_logging_level(LogLevel::Debug).await.expect("logging/setLevel");
    client.call_tool("toggle-simulated-logging", json!({})).await.expect("logging on");
    let logged = wait_for(&mut notes, "notifications/message", |p| p["level"].is_string()).await;
    assert!(logged["data"].is_string(), "{logged}");
    client.call_tool("toggle-simulated-logging", json!({})).await.expect("logging off");
}

/// The reference server's core tasks: one followed to its result after a clarification asked
/// through `tasks/result`, one cancelled, one found again by id.
async fn exercise_tasks(client: &Client, asked: &Asked) {
    let research = |ambiguous: bool| json!({ "topic": "python", "ambiguous": ambiguous });
    let ToolCall::Task(task) =
        client.call_tool_as_task("simulate-research-query", research(true)).await.expect("a task")
    else {
        panic!("the research query is made a task");
    };
    let first = task.state().await.expect("tasks/get");
    assert!(["working", "input_required"].contains(&first.status.as_str()), "{first:?}");
    let report = task.result().await.expect("the task's result");
    assert!(text(&report).contains("# Research Report: python ("), "{report:?}");
    assert!(asked.all().iter().any(|q| q.contains("multiple interpretations")), "{:?}", asked.all());
    // Found again by id, it reads the same result.
    let again: TaskHandle = client.task(task.id());
    assert_eq!(again.state().await.expect("tasks/get").status, "completed");
    assert_eq!(text(&again.result().await.expect("tasks/result again")), text(&report));

    let ToolCall::Task(doomed) =
        client.call_tool_as_task("simulate-research-query", research(false)).await.expect("a task")
    else {
        panic!("the research query is made a task");
    };
    doomed.cancel().await.expect("tasks/cancel");
    let end = doomed.result().await;
    assert!(matches!(end, Err(ClientError::Cancelled { .. })), "{end:?}");

    // A tool that is no task is called plainly, and answered at once.
    let plain = client.call_tool_as_task("echo", json!({ "message": "now" })).await.expect("echo");
    assert!(matches!(&plain, ToolCall::Completed(r) if text(r) == "Echo: now"), "{plain:?}");
    let unknown = client.task("no-such-task").state().await;
    assert!(matches!(unknown, Err(ClientError::Rpc { .. })), "{unknown:?}");
}

/// A task cancelled while its question is open with the user: the server ends the waiting
/// `tasks/result` with an error, and `result()` reports the cancellation.
async fn cancel_while_the_user_answers(builder: ClientBuilder, connect: impl AsyncFnOnce(ClientBuilder) -> Client) {
    let (asked_tx, asked_rx) = tokio::sync::oneshot::channel::<()>();
    let asked_tx = Arc::new(Mutex::new(Some(asked_tx)));
    let release = Arc::new(tokio::sync::Notify::new());
    let released = release.clone();
    let builder = builder.on_elicitation(ElicitationModes::Form, move |_| {
        let (asked_tx, released) = (asked_tx.clone(), released.clone());
        async move {
            if let Some(tx) = asked_tx.lock().expect("not poisoned").take() {
                let _ = tx.send(());
            }
            released.notified().await;
            Ok(ElicitResult { action: ElicitAction::Decline, content: None })
        }
    });
    let client = connect(builder).await;
    let research = json!({ "topic": "python", "ambiguous": true });
    let ToolCall::Task(task) = client.call_tool_as_task("simulate-research-query", research).await.expect("a task")
    else {
        panic!("the research query is made a task");
    };
    let following = tokio::spawn({
        let task = task.clone();
        async move { task.result().await }
    });
    tokio::time::timeout(Duration::from_secs(20), asked_rx).await.expect("asked within 20 s").expect("asked");
    task.cancel().await.expect("tasks/cancel");
    let end = tokio::time::timeout(Duration::from_secs(20), following).await.expect("ends within 20 s").expect("joins");
    assert!(matches!(end, Err(ClientError::Cancelled { .. })), "{end:?}");
    release.notify_one();
    client.close().await;
}

#[tokio::test]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh node)")]
async fn a_task_cancelled_while_the_user_answers_is_cancelled_on_both_transports() {
    peers::install("node");
    let stdio = async |builder: ClientBuilder| {
        let mut command = tokio::process::Command::new(peers::node());
        command.arg(everything_js()).arg("stdio").stderr(Stdio::null());
        builder.connect_stdio(command).await.expect("connects")
    };
    cancel_while_the_user_answers(ClientBuilder::new("switchyard-tests", "1.0.0"), stdio).await;
    let server = http_server();
    let http = async |builder: ClientBuilder| builder.connect_http(server.1.clone()).await.expect("connects");
    cancel_while_the_user_answers(ClientBuilder::new("switchyard-tests", "1.0.0"), http).await;
}

/// The reference server on Streamable HTTP, on a free port: the process (killed when dropped)
/// and its endpoint.
fn http_server() -> (tokio::process::Child, String) {
    let port = common::free_port();
    let server = tokio::process::Command::new(peers::node())
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the reference server starts");
    common::wait_for_port(port, "the reference everything-server");
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh node)")]
async fn the_reference_everything_server_over_stdio() {
    peers::install("node");
    let mut command = tokio::process::Command::new(peers::node());
    command.arg(everything_js()).arg("stdio").stderr(Stdio::null());
    let asked = Asked::default();
    let client = builder(&asked).connect_stdio(command).await.expect("connects");
    exercise(&client, &asked).await;
    exercise_tasks(&client, &asked).await;
    client.close().await;
}

#[tokio::test]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh node)")]
async fn the_reference_everything_server_over_streamable_http() {
    peers::install("node");
    let (_server, url) = http_server();
    let asked = Asked::default();
    let client = builder(&asked).connect_http(url).await.expect("connects");
    exercise(&client, &asked).await;
    exercise_tasks(&client, &asked).await;
    client.close().await;
}
