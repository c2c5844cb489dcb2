//! Upstream tools that run only as tasks: a 2026-07-28 upstream says so by refusing a plain
//! call with `-32021`; the gateway then calls it as a task, follows the task to its end and
//! answers our client with its result, relays the task's questions to our client, and cancels
//! it upstream when our call is cancelled.

use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use switchyard::input::InputRequest;
use switchyard::prelude::*;
use switchyard::testing::{HttpTestServer, TestClient};
use switchyard::transport::http::HttpConfig;
use switchyard::{CancellationToken, ToolFailure};
use switchyard_client::{ClientBuilder, ClientError, RequestOptions};
use switchyard_gateway::{Gateway, GatewayHandle, Upstream};
use switchyard_tasks::TasksExtension;

/// How many runs of `stuck` saw their cancellation.
static STUCK_CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Two numbers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

/// Adds two numbers, as a task only.
#[mcp_tool(task_support = "required", group = "task-upstream")]
async fn add(pair: Pair) -> Result<String, McpError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(format!("{}", pair.a + pair.b))
}

/// Counts a run of a tool that ended, whether its future finished or was dropped.
struct CountsTheEnd(&'static AtomicUsize);

impl Drop for CountsTheEnd {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs until it is cancelled, as a task only.
#[mcp_tool(task_support = "required", group = "task-upstream")]
async fn stuck(ctx: RequestContext) -> Result<String, McpError> {
    let _end = CountsTheEnd(&STUCK_CANCELLED);
    ctx.cancellation().cancelled().await;
    Ok("cancelled".to_owned())
}

/// How many runs of `held` ended (its own count: tests run in parallel, and `stuck` is
/// another test's).
static HELD_ENDED: AtomicUsize = AtomicUsize::new(0);

/// Runs until it is cancelled, as a task only (as `stuck` does).
#[mcp_tool(task_support = "required", group = "task-upstream")]
async fn held(ctx: RequestContext) -> Result<String, McpError> {
    let _end = CountsTheEnd(&HELD_ENDED);
    ctx.cancellation().cancelled().await;
    Ok("cancelled".to_owned())
}

/// How many runs of `greet` ended before an answer came.
static GREET_ABANDONED: AtomicUsize = AtomicUsize::new(0);

/// Counts a run of `greet` that ended without an answer (its future dropped, as a cancelled
/// task's is, or its question refused).
struct Unanswered(bool);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if !self.0 {
            GREET_ABANDONED.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Asks who is calling and greets them, as a task only: the task, once running, waits in
/// `input_required`.
#[mcp_tool(task_support = "required", group = "task-upstream")]
async fn greet(ctx: RequestContext) -> Result<String, ToolFailure> {
    let mut end = Unanswered(false);
    // Well after the call that created the task was answered.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let form = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    let answer = ctx.input("who", InputRequest::elicit_form("Who is asking?", form)).await?.into_elicit()?;
    end.0 = true;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(Value::as_str).unwrap_or("nobody");
    Ok(format!("Hello, {name}!"))
}

/// Reports half its work done, then finishes, as a task only: the Tasks extension makes the
/// report the task's status message.
#[mcp_tool(task_support = "required", group = "task-upstream")]
async fn halves(ctx: RequestContext) -> Result<String, McpError> {
    ctx.progress().report(1.0, Some(2.0), Some("the first half")).await;
    // Long enough for the gateway to see the status (the upstream's poll interval is 20 ms).
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok("both halves".to_owned())
}

/// Ada, whatever the form.
fn ada(_method: &str, _params: &Value) -> Value {
    json!({ "action": "accept", "content": { "name": "Ada" } })
}

/// A gateway in front of a 2026-07-28 upstream with the Tasks extension (prefix `t_`).
async fn gateway() -> (Server, GatewayHandle, HttpTestServer) {
    gateway_with(Server::builder("gateway", "1").groups(["none"]).build().expect("builds")).await
}

/// The gateway `server`, with the task upstream mirrored under `t_`.
async fn gateway_with(server: Server) -> (Server, GatewayHandle, HttpTestServer) {
    let builder = Server::builder("task-upstream", "1").groups(["task-upstream"]);
    let upstream =
        TasksExtension::new().poll_interval(Duration::from_millis(20)).install(builder).build().expect("builds");
    let upstream = HttpTestServer::start(upstream, HttpConfig::default()).await.expect("binds");
    let handle = Gateway::new()
        .upstream(Upstream::http("t", upstream.url()).prefix("t_"))
        .attach(&server)
        .await
        .expect("attaches");
    (server, handle, upstream)
}

async fn wait_for_tools(client: &TestClient) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tools = client.request("tools/list", json!({})).await;
        if tools.result()["tools"].as_array().is_some_and(|t| t.len() == 5) {
            return;
        }
        assert!(Instant::now() < deadline, "the gateway never mirrored the upstream: {:?}", tools.response);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_tool_that_runs_only_as_a_task_upstream_is_answered_with_the_tasks_result() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::modern(server.clone());
    wait_for_tools(&client).await;
    // The first call learns that the tool needs a task; the second goes as a task at once.
    for (a, b) in [(2, 3), (40, 2)] {
        let reply = client.request("tools/call", json!({ "name": "t_add", "arguments": { "a": a, "b": b } })).await;
        let result = reply.result();
        assert_ne!(result["isError"], json!(true), "{:?}", reply.response);
        assert_eq!(result["content"][0]["text"], json!((a + b).to_string()), "{:?}", reply.response);
        // The answer is the gateway's, not the upstream's.
        let server_info = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
        assert_eq!(server_info["name"], json!("gateway"), "{:?}", reply.response);
    }
    // A session client of the gateway gets the same.
    let session = TestClient::legacy(server, "2025-11-25").await.expect("initialize");
    let reply = session.request("tools/call", json!({ "name": "t_add", "arguments": { "a": 1, "b": 1 } })).await;
    assert_eq!(reply.result()["content"][0]["text"], json!("2"), "{:?}", reply.response);
}

#[tokio::test]
async fn cancelling_our_call_cancels_the_upstream_task() {
    let (server, _gateway, _upstream) = gateway().await;
    wait_for_tools(&TestClient::modern(server.clone())).await;
    let front = HttpTestServer::start(server, HttpConfig::default()).await.expect("binds");
    let client = ClientBuilder::new("test", "1").connect_http(front.url()).await.expect("connects");
    let before = STUCK_CANCELLED.load(Ordering::SeqCst);
    let stop = CancellationToken::new();
    let call = {
        let (client, stop) = (client.clone(), stop.clone());
        tokio::spawn(async move {
            client.call_tool_with("t_stuck", json!({}), RequestOptions::new().cancel_with(stop)).await
        })
    };
    // Long enough for the upstream task to exist and run.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.cancel();
    let answer = call.await.expect("joins");
    assert!(matches!(answer, Err(ClientError::Cancelled { .. })), "{answer:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while STUCK_CANCELLED.load(Ordering::SeqCst) == before {
        assert!(Instant::now() < deadline, "the upstream task was never cancelled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The gateway serves on.
    let result = client.call_tool("t_add", json!({ "a": 1, "b": 2 })).await.expect("answers");
    assert_eq!(result.content[0].as_text(), Some("3"), "{result:?}");
}

/// A timeout filter on the gateway ends a relayed call: the runtime drops the call's future,
/// and the upstream task it was following is cancelled.
#[tokio::test]
async fn a_timeout_on_the_gateway_cancels_the_upstream_task() {
    // Long enough for the plain call, its -32021 and the call that creates the task to be
    // answered first: a deadline while that last call is in flight leaves a task whose id the
    // gateway never learns (docs/composition.md).
    let limit = switchyard::filters::Timeout::per_tool("t_held", Duration::from_secs(2));
    let server = Server::builder("gateway", "1").groups(["none"]).raw_filter(5, limit).build().expect("builds");
    let (server, _gateway, _upstream) = gateway_with(server).await;
    let client = TestClient::modern(server);
    wait_for_tools(&client).await;
    let reply = client.call_tool("t_held", json!({})).await;
    assert_eq!(reply.error()["data"]["reason"], "timeout", "{:?}", reply.response);
    let deadline = Instant::now() + Duration::from_secs(20);
    while HELD_ENDED.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the upstream task was never cancelled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reply = client.call_tool("t_add", json!({ "a": 2, "b": 2 })).await;
    assert_eq!(reply.result()["content"][0]["text"], "4", "{:?}", reply.response);
}

/// A session client of the gateway answers the question of the upstream task at once: the
/// gateway asks it with a request of its own while the call is open, and the answer goes
/// upstream with `tasks/update`.
#[tokio::test]
async fn a_session_client_answers_an_upstream_tasks_question() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::legacy(server, "2025-11-25").await.expect("initialize").answering(ada);
    wait_for_tools(&client).await;
    let reply = client.call_tool("t_greet", json!({})).await;
    assert_eq!(reply.result()["content"][0]["text"], "Hello, Ada!", "{:?}", reply.response);
}

/// A 2026-07-28 client answers in an `input_required` round of its own: the gateway gives up
/// the first upstream task (cancelling it rather than leaving it waiting for input) and, when
/// the client retries with its answer, the new task gets that answer.
#[tokio::test]
async fn a_modern_client_answers_an_upstream_tasks_question_in_a_round() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::modern(server).with_capabilities(json!({ "elicitation": {} })).answering(ada);
    wait_for_tools(&client).await;
    let before = GREET_ABANDONED.load(Ordering::SeqCst);
    let reply = client.call_tool("t_greet", json!({})).await;
    assert_eq!(reply.result()["content"][0]["text"], "Hello, Ada!", "{:?}", reply.response);
    let deadline = Instant::now() + Duration::from_secs(20);
    while GREET_ABANDONED.load(Ordering::SeqCst) == before {
        assert!(Instant::now() < deadline, "the first upstream task was left waiting for input");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A client that cannot answer (no elicitation capability) gets an error naming what was
/// missing, and the upstream task does not wait for input forever.
#[tokio::test]
async fn a_client_that_cannot_answer_an_upstream_tasks_question_gets_an_error() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::modern(server);
    wait_for_tools(&client).await;
    let before = GREET_ABANDONED.load(Ordering::SeqCst);
    let reply = client.call_tool("t_greet", json!({})).await;
    let answered = format!("{:?}", reply.response);
    assert!(
        reply.response.get("error").is_some() || reply.result()["isError"] == true,
        "an error, not Hello: {answered}"
    );
    assert!(answered.contains("elicitation"), "names what was missing: {answered}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while GREET_ABANDONED.load(Ordering::SeqCst) == before {
        assert!(Instant::now() < deadline, "the upstream task was left waiting for input");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A 2026-07-28 upstream task's progress (its status messages) reaches our client as progress
/// reports of its call, before the answer; a session client of ours gets them too.
#[tokio::test]
async fn an_upstream_tasks_progress_reaches_our_client() {
    let (server, _gateway, _upstream) = gateway().await;
    wait_for_tools(&TestClient::modern(server.clone())).await;
    let front = HttpTestServer::start(server, HttpConfig::default()).await.expect("binds");
    for version in ["2026-07-28", "2025-11-25"] {
        let client = ClientBuilder::new("test", "1")
            .protocol_versions([version])
            .connect_http(front.url())
            .await
            .expect("connects");
        let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = reports.clone();
        let options = RequestOptions::new().on_progress(move |update| seen.lock().expect("not poisoned").push(update));
        let result = client.call_tool_with("t_halves", json!({}), options).await.expect("answers");
        assert_eq!(result.content[0].as_text(), Some("both halves"), "{result:?}");
        let reports = reports.lock().expect("not poisoned").clone();
        let messages: Vec<_> = reports.iter().map(|r| r.message.as_deref()).collect();
        assert_eq!(messages, [Some("1 of 2 (50%): the first half")], "{version}: {reports:?}");
        assert_eq!(reports[0].progress, 1.0, "{version}");
    }
}
