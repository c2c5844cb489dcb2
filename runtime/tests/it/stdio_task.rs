//! `serve_io` runs its connection on a runtime task of its own: under a multi-thread runtime's
//! `block_on` (what `#[tokio::main]` is) the connection is read on a worker, not on the main
//! thread; dropping the future stops the connection; a panic inside it reaches the caller.

use serde_json::{Value, json};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::transport::stdio::{StdioConfig, serve_io};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, ReadBuf};

fn server() -> Server {
    Server::builder("stdio-task", "1").groups(["stdio-task"]).build().expect("builds")
}

fn ping(id: u32) -> String {
    format!(
        "{}\n",
        json!({ "jsonrpc": "2.0", "id": id, "method": "ping", "params": {
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {} } } })
    )
}

/// A reader that notes the name of each thread that polls it, and panics when asked to.
struct Watched<R> {
    inner: R,
    threads: Arc<Mutex<Vec<String>>>,
    panic_on_read: bool,
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let name = std::thread::current().name().unwrap_or("unnamed").to_owned();
        self.threads.lock().expect("not poisoned").push(name);
        if self.panic_on_read {
            panic!("the reader failed on purpose");
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

#[test]
fn the_connection_is_read_on_a_runtime_worker_not_in_block_on() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("stdio-task-worker")
        .enable_all()
        .build()
        .expect("runtime");
    let (mut client_out, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, client_in) = tokio::io::duplex(64 * 1024);
    let threads = Arc::new(Mutex::new(Vec::new()));
    let reader = Watched { inner: server_in, threads: threads.clone(), panic_on_read: false };
    // The client runs on the worker; the connection is served from `block_on`, on this thread.
    let client = rt.spawn(async move {
        client_out.write_all(ping(1).as_bytes()).await.expect("write");
        let mut lines = BufReader::new(client_in).lines();
        let line = lines.next_line().await.expect("readable").expect("an answer");
        drop(client_out);
        line
    });
    let served = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), serve_io(server(), reader, server_out, StdioConfig::default()))
            .await
    });
    assert!(matches!(served, Ok(Ok(()))), "the connection ends at EOF: {served:?}");
    let answer: Value = serde_json::from_str(&rt.block_on(client).expect("client ran")).expect("JSON");
    assert_eq!(answer["id"], 1, "{answer}");
    let threads = threads.lock().expect("not poisoned").clone();
    assert!(!threads.is_empty(), "the reader was polled");
    assert!(
        threads.iter().all(|t| t == "stdio-task-worker"),
        "every read ran on the runtime's worker, none on the block_on thread: {threads:?}"
    );
}

#[tokio::test]
async fn dropping_the_future_closes_the_connection() {
    let (mut client_out, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, client_in) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(serve_io(server(), server_in, server_out, StdioConfig::default()));
    let mut lines = BufReader::new(client_in).lines();
    client_out.write_all(ping(1).as_bytes()).await.expect("write");
    let answer = lines.next_line().await.expect("readable").expect("an answer");
    assert!(answer.contains("\"id\":1"), "{answer}");
    // Aborting the task that awaits `serve_io` drops its future; the connection's own task must
    // stop with it, so its writer is dropped and the client reads the end of the stream.
    serving.abort();
    let end = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the connection closes within 10 s of its future being dropped")
        .expect("readable");
    assert_eq!(end, None, "no more lines after the future is dropped");
}

#[tokio::test]
async fn a_panic_in_the_connection_reaches_the_caller() {
    let (_client_out, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, _client_in) = tokio::io::duplex(64 * 1024);
    let reader = Watched { inner: server_in, threads: Arc::default(), panic_on_read: true };
    let caller = tokio::spawn(serve_io(server(), reader, server_out, StdioConfig::default()));
    let outcome = tokio::time::timeout(Duration::from_secs(10), caller).await.expect("the caller ends");
    let error = outcome.expect_err("the caller's task panicked too, rather than returning an error");
    assert!(error.is_panic(), "{error}");
    let message = error.into_panic().downcast::<&str>().map(|m| *m).unwrap_or_default();
    assert_eq!(message, "the reader failed on purpose");
}

#[tokio::test]
async fn dropping_the_future_closes_a_legacy_session_too() {
    let (mut client_out, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, client_in) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(serve_io(server(), server_in, server_out, StdioConfig::default()));
    let mut lines = BufReader::new(client_in).lines();
    // A session: its notifications hold the output open until the connection ends.
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } });
    client_out.write_all(format!("{initialize}\n").as_bytes()).await.expect("write");
    let answer = lines.next_line().await.expect("readable").expect("an answer");
    assert!(answer.contains("\"id\":1"), "{answer}");
    client_out.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.expect("write");
    serving.abort();
    let end = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the session's output closes within 10 s of the future being dropped")
        .expect("readable");
    assert_eq!(end, None, "no more lines after the future is dropped");
}
