//! Typed calls through the client: the declarations of `typed_api` (a crate the server and the
//! client share), implemented here with `declared = ...`, called over the stdio framing in
//! both eras and over Streamable HTTP.

use std::sync::Mutex;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use switchyard_client::{Client, ClientBuilder, ClientError};
use typed_api::{Found, NewNote, Note, Query, Stats};

/// The notes, in a static rather than server state: the other servers of this test binary
/// select every group and provide no state. Only one test uses them, one server at a time.
static NOTES: Mutex<Vec<Note>> = Mutex::new(Vec::new());

fn notes() -> std::sync::MutexGuard<'static, Vec<Note>> {
    NOTES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stores a note.
#[mcp_tool(name = "notes.add", group = "typed", declared = typed_api::add_note)]
async fn add_note(note: NewNote) -> Result<Json<Note>, ToolError> {
    if note.text.is_empty() {
        return Err(ToolError::new("a note needs some text"));
    }
    let mut notes = notes();
    let stored = Note { id: notes.len() as u64 + 1, text: note.text, tags: note.tags };
    notes.push(stored.clone());
    Ok(Json(stored))
}

/// Finds notes by tag.
#[mcp_tool(group = "typed", declared = typed_api::find_notes)]
async fn find_notes(query: Query) -> Json<Found> {
    let notes = notes();
    Json(Found { notes: notes.iter().filter(|n| n.tags.contains(&query.tag)).cloned().collect() })
}

/// Forgets the notes.
#[mcp_tool(group = "typed", declared = typed_api::clear)]
async fn clear() -> String {
    let n = std::mem::take(&mut *notes()).len();
    format!("forgot {n} notes")
}

#[mcp_rpc("acme/notes.stats", group = "typed", declared = typed_api::stats)]
async fn stats() -> Result<Stats, McpError> {
    let notes = notes();
    if notes.len() > 2 {
        return Err(McpError::invalid_params("too many notes to count"));
    }
    Ok(Stats { notes: notes.len() as u64, tags: 0 })
}

/// The params of `count_to`.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Count {
    /// Where to stop.
    to: u32,
}

/// Counts to `to`, reporting each step as progress; waits a minute first when `to` is 0.
#[mcp_tool(group = "typed")]
async fn count_to(ctx: RequestContext, count: Count) -> String {
    if count.to == 0 {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    }
    for step in 1..=count.to {
        ctx.progress().report(f64::from(step), Some(f64::from(count.to)), None).await;
    }
    format!("counted to {}", count.to)
}

fn server() -> Server {
    Server::builder("typed", "0").groups(["typed"]).build().expect("builds")
}

async fn over_pipe(version: &str) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_reader, server_writer) = tokio::io::split(server_end);
    tokio::spawn(serve_io(server(), server_reader, server_writer, StdioConfig::default()));
    let (reader, writer) = tokio::io::split(client_end);
    ClientBuilder::new("typed-test", "0")
        .protocol_versions([version])
        .connect_io(reader, writer)
        .await
        .expect("connects")
}

/// Every typed call of `typed_api`, its failures included, against a fresh server.
async fn exercise(client: &Client) {
    let note = typed_api::add_note::call(client, NewNote { text: "milk".into(), tags: vec!["errands".into()] });
    assert_eq!(note.await.expect("adds"), Note { id: 1, text: "milk".into(), tags: vec!["errands".into()] });
    typed_api::add_note::call(client, NewNote { text: "tea".into(), tags: Vec::new() }).await.expect("adds");

    let found = typed_api::find_notes::call(client, Query { tag: "errands".into() }).await.expect("finds");
    assert_eq!(found.notes.iter().map(|n| n.id).collect::<Vec<_>>(), [1]);
    assert_eq!(typed_api::stats::call(client, ()).await.expect("counts"), Stats { notes: 2, tags: 0 });

    let err = typed_api::add_note::call(client, NewNote { text: String::new(), tags: Vec::new() }).await;
    match err {
        Err(ClientError::ToolFailed { name, result }) => {
            assert_eq!(name, "notes.add");
            assert_eq!(result.is_error, Some(true));
        }
        other => panic!("expected ToolFailed, got {other:?}"),
    }
    typed_api::add_note::call(client, NewNote { text: "jam".into(), tags: Vec::new() }).await.expect("adds");
    let err = typed_api::stats::call(client, ()).await.expect_err("three notes are too many");
    assert_eq!(err.as_rpc().map(|e| e.code().0), Some(-32602), "{err:?}");

    assert_eq!(typed_api::clear::call(client, ()).await.expect("clears"), "forgot 3 notes");
    assert_eq!(typed_api::stats::call(client, ()).await.expect("counts"), Stats { notes: 0, tags: 0 });
}

/// A typed call carries the client's per-request options: progress reports reach the callback,
/// and the call's own timeout and cancellation token apply.
#[tokio::test]
async fn typed_calls_take_request_options() {
    use std::sync::Arc;
    use switchyard_client::RequestOptions;
    for version in ["2026-07-28", "2025-11-25"] {
        let client = over_pipe(version).await;
        let steps = Arc::new(Mutex::new(Vec::new()));
        let seen = steps.clone();
        let options = RequestOptions::new().on_progress(move |p| seen.lock().expect("not poisoned").push(p.progress));
        let counted = count_to::call(&client.with_options(options), Count { to: 3 }).await.expect("counts");
        assert_eq!(counted, "counted to 3");
        assert_eq!(*steps.lock().expect("not poisoned"), [1.0, 2.0, 3.0], "{version}");

        // `Duration::MAX` is no deadline at all.
        let patient = RequestOptions::new().timeout(std::time::Duration::MAX);
        assert_eq!(
            count_to::call(&client.with_options(patient), Count { to: 1 }).await.expect("counts"),
            "counted to 1"
        );
        let hurried = RequestOptions::new().timeout(std::time::Duration::from_millis(100));
        let late = count_to::call(&client.with_options(hurried), Count { to: 0 }).await;
        assert!(matches!(late, Err(ClientError::Timeout { .. })), "{late:?}");
        let token = tokio_util::sync::CancellationToken::new();
        token.cancel();
        let stopped =
            count_to::call(&client.with_options(RequestOptions::new().cancel_with(token)), Count { to: 0 }).await;
        assert!(matches!(stopped, Err(ClientError::Cancelled { .. })), "{stopped:?}");
        client.close().await;
    }
}

/// One test for every wire, so the calls on the static notes never interleave.
#[tokio::test]
async fn typed_calls_over_a_pipe_in_both_eras_and_over_streamable_http() {
    for version in ["2026-07-28", "2025-11-25", "2025-06-18"] {
        let client = over_pipe(version).await;
        assert_eq!(client.protocol_version(), version);
        exercise(&client).await;
        client.close().await;
    }
    for version in ["2026-07-28", "2025-11-25"] {
        let http = HttpTestServer::start(server(), HttpConfig::default()).await.expect("a loopback port");
        let client = ClientBuilder::new("typed-test", "0")
            .protocol_versions([version])
            .connect_http(http.url())
            .await
            .expect("connects");
        exercise(&client).await;
        client.close().await;
    }
}
