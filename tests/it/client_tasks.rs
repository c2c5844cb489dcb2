//! The client following tasks of the Tasks extension: status from `notifications/tasks` where
//! the server grants a `taskIds` subscription, typed outputs of tasks, and a tool error inside
//! a task as `ToolFailed`. The server suggests polling once a minute, so a test that finishes
//! saw its changes through the subscription.

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use switchyard_client::{Client, ClientBuilder, ClientError, ToolCall};

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Nap {
    /// How long to sleep, in milliseconds.
    ms: u64,
    /// Whether to fail as a tool at the end.
    #[serde(default)]
    fail: bool,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
struct Slept {
    ms: u64,
}

/// Sleeps, always as a task.
#[mcp_tool(task_support = "required", group = "client_tasks")]
async fn nap(args: Nap) -> Result<Json<Slept>, ToolError> {
    tokio::time::sleep(Duration::from_millis(args.ms)).await;
    if args.fail {
        return Err(ToolError::new("woke up on the wrong side"));
    }
    Ok(Json(Slept { ms: args.ms }))
}

/// Reports its two stages, as a task only.
#[mcp_tool(task_support = "required", group = "client_tasks")]
async fn stages(ctx: RequestContext) -> Result<String, ToolError> {
    for stage in [1.0, 2.0] {
        ctx.progress().report(stage, Some(2.0), Some("a stage")).await;
        // Longer than the Tasks extension's 250 ms between two status writes.
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    Ok("staged".to_owned())
}

async fn connect() -> Client {
    // "default" holds the extension's own methods.
    let builder = Server::builder("client-tasks", "1").groups(["default", "client_tasks"]);
    let server = switchyard_tasks::TasksExtension::new()
        .poll_interval(Duration::from_secs(60))
        .install(builder)
        .build()
        .expect("builds");
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    tokio::spawn(serve_io(server, server_reader, server_writer, StdioConfig::default()));
    let (reader, writer) = tokio::io::split(client_end);
    ClientBuilder::new("client-tasks", "0").connect_io(reader, writer).await.expect("connects")
}

fn task(call: ToolCall) -> switchyard_client::TaskHandle {
    match call {
        ToolCall::Task(task) => task,
        other => panic!("a task: {other:?}"),
    }
}

/// Guards against a hang only: a stuck test fails with a message instead.
async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future).await.expect("done long before the first poll")
}

#[tokio::test]
async fn status_changes_come_through_the_subscription() {
    let client = connect().await;
    let nap = task(client.call_as_task::<nap>(Nap { ms: 200, fail: false }).await.expect("tools/call"));
    let states: Vec<_> = within(nap.updates().collect::<Vec<_>>()).await;
    let states: Vec<_> = states.into_iter().map(|s| s.expect("a state")).collect();
    assert_eq!(states.first().map(|s| s.status.as_str()), Some("working"), "{states:?}");
    let last = states.last().expect("a last state");
    assert_eq!(last.status, "completed", "{states:?}");
    assert!(
        last.raw["_meta"].get("io.modelcontextprotocol/subscriptionId").is_some(),
        "the end came as notifications/tasks: {last:?}"
    );
    let statuses: Vec<_> = states.iter().map(|s| s.status.as_str()).collect();
    assert!(statuses.windows(2).all(|w| w[0] != "completed"), "nothing after the end: {statuses:?}");
    client.close().await;
}

#[tokio::test]
async fn a_task_s_output_is_typed() {
    let client = connect().await;
    let call = client.call_as_task::<nap>(Nap { ms: 50, fail: false }).await.expect("tools/call");
    assert_eq!(within(call.output::<nap>()).await.expect("slept"), Slept { ms: 50 });

    let failing = task(client.call_as_task::<nap>(Nap { ms: 10, fail: true }).await.expect("tools/call"));
    match within(failing.output::<nap>()).await {
        Err(ClientError::ToolFailed { name, result }) => {
            assert_eq!(name, "nap");
            assert_eq!(result.is_error, Some(true));
        }
        other => panic!("expected ToolFailed, got {other:?}"),
    }
    // The untyped result of the same task is the isError result itself.
    let result = within(failing.result()).await.expect("completed");
    assert_eq!(result.is_error, Some(true));
    client.close().await;
}

#[tokio::test]
async fn a_cancelled_task_s_updates_end_with_cancelled() {
    let client = connect().await;
    let long = task(client.call_as_task::<nap>(Nap { ms: 600_000, fail: false }).await.expect("tools/call"));
    let mut updates = std::pin::pin!(long.updates());
    let first = within(updates.next()).await.expect("a first state").expect("tasks/get");
    assert_eq!(first.status, "working");
    long.cancel().await.expect("tasks/cancel");
    let rest: Vec<_> = within(updates.collect::<Vec<_>>()).await;
    let last = rest.last().expect("a state after cancel").as_ref().expect("a state");
    assert_eq!(last.status, "cancelled", "{rest:?}");
    client.close().await;
}

/// Each status message of a running task is a progress report of `result_with`'s options,
/// counted from 1, in order.
#[tokio::test]
async fn a_task_s_status_messages_are_progress_reports() {
    let client = connect().await;
    let staged = task(client.call_tool_as_task("stages", serde_json::json!({})).await.expect("tools/call"));
    let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = reports.clone();
    let options = switchyard_client::RequestOptions::new()
        .on_progress(move |update| seen.lock().expect("not poisoned").push(update));
    let result = within(staged.result_with(options)).await.expect("completed");
    assert_eq!(result.content[0].as_text(), Some("staged"));
    let reports: Vec<_> =
        reports.lock().expect("not poisoned").iter().map(|r| (r.progress, r.total, r.message.clone())).collect();
    let expected =
        [(1.0, None, Some("1 of 2 (50%): a stage".to_owned())), (2.0, None, Some("2 of 2 (100%): a stage".to_owned()))];
    assert_eq!(reports, expected);
    client.close().await;
}
