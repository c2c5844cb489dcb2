//! The stdio transport
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio)):
//! newline-delimited JSON-RPC on stdin/stdout.
//!
//! - Each message is one line; the single writer task writes every line whole, so concurrent
//!   responses never interleave.
//! - Requests run concurrently, at most [`StdioConfig::max_in_flight`] at once. Requests beyond
//!   that wait, in order, in a short backlog ([`StdioConfig::max_backlog`]); reading pauses only
//!   when the backlog is full too. Until then responses and notifications keep being read, so
//!   requests waiting for the client (a legacy session's `elicitation/create`) or long-lived
//!   subscriptions can always be answered or cancelled. `notifications/cancelled {requestId}`
//!   cancels one request (running or waiting) and suppresses its response.
//! - An `initialize` turns the process into a legacy session: from then on every request is served
//!   under the negotiated legacy version
//!   ([backward compatibility](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#backward-compatibility-with-initialization-based-versions)),
//!   and one carrying the 2026-07-28 `_meta` envelope is `-32600`. Without it, each request is
//!   served statelessly from its own `_meta` (2026-07-28).
//! - Only `initialize` chooses the era. Whatever comes before it leaves the choice open:
//!   notifications (`notifications/cancelled` included) and responses, malformed lines, a `ping`
//!   without the 2026-07-28 `_meta` (answered `{}`, as the legacy lifecycle allows before
//!   initialization: <https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle>),
//!   and 2026-07-28 requests (each served statelessly). See [`Server::handle_request`].
//! - After an `initialize` that negotiated 2025-03-26, a line may be a JSON-RPC batch (an
//!   array; <https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#stdio>):
//!   its requests are answered together on one line, as an array in the order of the batch;
//!   a batch of notifications and responses only gets no line. Its requests run concurrently
//!   as ordinary requests of the connection (same permits, same backlog, each cancellable by its
//!   id), so a batch runs no more work at once than the same requests on separate lines; the
//!   batch is at most [`MAX_BATCH_LEN`](crate::jsonrpc::MAX_BATCH_LEN) messages. Other eras
//!   answer a batch with one `-32600`.
//! - On a current-thread runtime a request is first polled on the connection's own task and gets
//!   a task of its own only if it has to wait: a request that finishes at once (most tool calls)
//!   costs no task, and is answered before the next line is read. So a `notifications/cancelled`
//!   sent right behind such a request finds it answered already (the cancellation race the
//!   spec allows), and a request reusing the id of one that was answered at once is not
//!   refused as already in flight. On a multi-thread runtime every request is spawned, so
//!   that reading goes on while a handler holds its thread and other workers can take
//!   requests: ~0.6 µs more CPU per pipelined request (docs/performance.md in the repository,
//!   "Where stdio's CPU time goes beyond its instructions"). A process that serves only stdio
//!   and whose tools neither call `tokio::task::block_in_place` (which panics on a
//!   current-thread runtime) nor need CPU-bound work in parallel is cheaper on
//!   `#[tokio::main(flavor = "current_thread")]`.
//! - EOF on stdin cancels everything in flight and returns `Ok(())`.
//! - Only MCP messages go to stdout; diagnostics go through `tracing` (send it to stderr).

use crate::auth::Principal;
use crate::context::{Origin, Outbound, OutboundReceiver, OutboundSender, Payload, outbound_channel};
use crate::jsonrpc::{
    McpError, Message, ParseFailure, Request, RequestId, ResultObject, error_response, parse_batch, parse_entry,
    parse_message, success_response,
};
use crate::pipeline::MessageFilters;
use crate::protocol::{META_PROTOCOL_VERSION, accepts_batches, batch_refused};
use crate::server::{LegacySession, Server};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::{AbortOnDropHandle, TaskTracker};

/// Limits of the stdio transport.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StdioConfig {
    /// Longest accepted line in bytes (default 16 MiB). A longer line is answered with `-32700`
    /// and skipped; the connection stays usable.
    pub max_line_bytes: usize,
    /// Requests served at once (default 256), listen subscriptions included.
    pub max_in_flight: usize,
    /// Requests received beyond `max_in_flight` that wait to start, in order (default 64).
    /// Reading stops while the backlog is full, which is the back-pressure on a client that
    /// pipelines faster than the server answers; memory stays bounded by
    /// `(max_in_flight + max_backlog) × max_line_bytes`. A JSON-RPC batch (2025-03-26 sessions)
    /// may queue all its requests at once, past this limit, but they come from one line, and
    /// reading waits until the backlog drains below the limit again.
    pub max_backlog: usize,
    /// After EOF on stdin, how long requests already received may still run and answer before
    /// they are cancelled (default 2 s). `printf REQUEST | server` thus gets its answer, and the
    /// process still exits promptly.
    pub eof_grace: Duration,
    /// Who the peer is. stdio has no authentication of its own: the process that launched the
    /// server decides (e.g. from a command-line flag). `None` (the default): anonymous.
    pub principal: Option<Principal>,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            max_line_bytes: 16 * 1024 * 1024,
            max_in_flight: 256,
            max_backlog: 64,
            eof_grace: Duration::from_secs(2),
            principal: None,
        }
    }
}

impl StdioConfig {
    /// Sets [`max_line_bytes`](Self::max_line_bytes).
    pub fn max_line_bytes(mut self, max_line_bytes: usize) -> Self {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Sets [`max_in_flight`](Self::max_in_flight).
    pub fn max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`max_backlog`](Self::max_backlog).
    pub fn max_backlog(mut self, max_backlog: usize) -> Self {
        self.max_backlog = max_backlog;
        self
    }

    /// Sets [`eof_grace`](Self::eof_grace).
    pub fn eof_grace(mut self, eof_grace: Duration) -> Self {
        self.eof_grace = eof_grace;
        self
    }

    /// Sets [`principal`](Self::principal).
    pub fn principal(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal;
        self
    }
}

/// Serves `server` on this process's stdin and stdout until EOF or [`Server::shutdown`]: the
/// pipes of [`process_streams`] served by [`serve_io`].
///
/// Errors: those of [`serve_io`] (I/O errors writing to stdout, the runtime shutting down);
/// malformed input is answered, never fatal.
pub async fn serve(server: Server) -> std::io::Result<()> {
    let (reader, writer) = process_streams();
    serve_io(server, reader, writer, StdioConfig::default()).await
}

/// Boxed reading half of [`process_streams`].
pub type StdinStream = Box<dyn AsyncRead + Unpin + Send>;
/// Boxed writing half of [`process_streams`].
pub type StdoutStream = Box<dyn AsyncWrite + Unpin + Send>;

/// This process's stdin and stdout for [`serve_io`]. When both are pipes (as MCP clients launch
/// servers) on Linux, they are reopened through `/proc/self/fd` as non-blocking pipes driven by
/// the I/O reactor; otherwise they are tokio's `stdin()`/`stdout()`, which hand every read and
/// write to a blocking thread (a thread hop per message, several times slower under load).
/// Reopening gives the process its own open file descriptions, so the non-blocking flag never
/// leaks to the parent or to children that inherit fds 0 and 1.
pub fn process_streams() -> (StdinStream, StdoutStream) {
    #[cfg(target_os = "linux")]
    {
        use tokio::net::unix::pipe::OpenOptions;
        // Both or neither: a pipe on one side only keeps the blocking handles for simplicity.
        if let (Ok(rx), Ok(tx)) =
            (OpenOptions::new().open_receiver("/proc/self/fd/0"), OpenOptions::new().open_sender("/proc/self/fd/1"))
        {
            return (Box::new(rx), Box::new(tx));
        }
    }
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

/// Serves `server` on any byte stream pair with stdio framing (also used for Unix sockets,
/// TCP, and by [`testing::TestClient`](crate::testing::TestClient) over an in-memory pipe).
///
/// The connection runs as a task of its own on the current runtime (`tokio::spawn`; like its
/// requests' tasks, it is outside the caller's `tracing` span), whatever task awaits this:
/// under `#[tokio::main]` that task is the main thread's `block_on`, which is no runtime
/// worker, so a reader there would hand every request to a worker and wait to be woken for the
/// next line (two futex calls and an eventfd write per request; a gateway's hop went from 86 to
/// 60–64 µs of CPU per relayed call at one call in flight without it: docs/composition.md,
/// "The reader on the main thread").
/// Dropping the returned future aborts the connection's task: the requests still running are
/// cancelled and answer nothing, and `writer` is closed once they have ended. A panic in the
/// connection's task is resumed here.
///
/// Errors: I/O errors writing to `writer` (malformed input is answered, never fatal); also
/// when the runtime shuts down under the connection (`ErrorKind::Other`).
pub async fn serve_io<R, W>(server: Server, reader: R, writer: W, config: StdioConfig) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let connection = AbortOnDropHandle::new(tokio::spawn(serve_here(server, reader, writer, config)));
    match connection.await {
        Ok(outcome) => outcome,
        Err(stopped) if stopped.is_panic() => std::panic::resume_unwind(stopped.into_panic()),
        Err(stopped) => Err(std::io::Error::other(format!("the stdio transport stopped: {stopped}"))),
    }
}

/// [`serve_io`]'s connection, on the task that polls it.
async fn serve_here<R, W>(server: Server, reader: R, writer: W, config: StdioConfig) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = outbound_channel(1024);
    let writer_gone = CancellationToken::new();
    let writer_task = tokio::spawn(write_lines(writer, out_rx, writer_gone.clone()));
    let mut conn = Connection {
        server: server.clone(),
        out: out_tx,
        in_flight: Arc::new(Mutex::new(InFlightMap::default())),
        next_seq: 0,
        session: None,
        permits: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
        tasks: TaskTracker::new(),
        principal: config.principal.clone().map(Arc::new),
        identity: crate::context::Connection::new(None),
        input_closed: writer_gone.child_token(),
        backlog: VecDeque::new(),
        poll_here_first: tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::CurrentThread,
        queue_full: false,
    };
    // When this future is dropped before it returns (the caller dropped `serve_io`'s), the
    // session-wide notifications and the running requests end too, as at EOF; they hold the
    // writer's queue open, and the writer closes the output only when no one can write to it.
    let _closing = Closing { input_closed: conn.input_closed.clone(), in_flight: conn.in_flight.clone() };
    let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, reader);
    let mut lines = LineReader::default();
    let shutdown = server.shutdown_token().clone();
    let max_backlog = config.max_backlog.max(1);
    // The pending wait for a permit outlives loop turns: re-creating it for every line read
    // while requests wait would queue and unqueue a semaphore waiter per line (a quarter of the
    // pipelined throughput, measured).
    let mut acquire: Option<Pin<Box<dyn Future<Output = Option<OwnedSemaphorePermit>> + Send>>> = None;
    loop {
        if !conn.backlog.is_empty() && acquire.is_none() {
            let permits = conn.permits.clone();
            acquire = Some(Box::pin(async move { permits.acquire_owned().await.ok() }));
        }
        let can_read = conn.backlog.len() < max_backlog;
        // A line already buffered, with no permit to wait for, is taken without the `select!`:
        // its shutdown branch made and dropped a waiter on the token (two locks) for every line,
        // ~400 instructions of a pipelined call (callgrind). Shutdown is still checked first,
        // and so is the task's budget, which the `select!` checks too: a task that spent it
        // (requests polled here use tokio's resources) yields there, letting the writer and
        // the spawned requests run, instead of reading on through all it holds.
        let buffered =
            if acquire.is_none() && can_read && tokio::task::coop::has_budget_remaining() && !shutdown.is_cancelled() {
                lines.next_buffered(&mut reader, config.max_line_bytes)
            } else {
                None
            };
        // The read is cancel-safe (the line reader keeps a partly read line for the next call);
        // the permit wait is kept, not dropped, when a line comes first.
        let step = if let Some(line) = buffered {
            Step::Read(Ok(line))
        } else {
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break,
                p = async { acquire.as_mut().expect("guarded by the branch condition").await }, if acquire.is_some() => {
                    acquire = None;
                    match p {
                        Some(p) => Step::Permit(p),
                        None => break,
                    }
                }
                r = lines.next(&mut reader, config.max_line_bytes), if can_read => Step::Read(r),
            }
        };
        let read = match step {
            Step::Permit(p) => {
                conn.start_waiting(p);
                continue;
            }
            Step::Read(r) => r,
        };
        match read {
            Ok(Line::Eof) => break,
            Ok(Line::Complete) => {
                conn.on_line(&lines.buf).await;
                // Lines already buffered are read without yielding, and a request polled here
                // queues its answer for the writer, which runs only when this task yields: with
                // the queue full, each further answer would wait in a task of its own.
                if std::mem::take(&mut conn.queue_full) {
                    tokio::task::yield_now().await;
                }
            }
            Ok(Line::TooLong) => {
                let err = McpError::parse_error(format!("message longer than {} bytes", config.max_line_bytes));
                conn.send(error_response(None, &err)).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "stdio: read failed; closing");
                break;
            }
        }
    }
    // EOF (or shutdown): requests already received get `eof_grace` to finish and answer, then
    // whatever still runs is cancelled and sends nothing.
    // On shutdown every request was cancelled by the server: each still answers (a listen
    // subscription with its result, then `notifications/cancelled`; others with an error).
    let deadline = tokio::time::Instant::now() + config.eof_grace;
    if shutdown.is_cancelled() {
        // Requests still waiting never started: they get an answer, like the running ones.
        for (req, _, slot) in std::mem::take(&mut conn.backlog) {
            let err = McpError::internal("the server shut down before this request could start");
            conn.answer(slot, error_response(Some(&req.id), &err)).await;
        }
    }
    // Waiting requests may still start while the grace lasts.
    while !conn.backlog.is_empty() {
        match tokio::time::timeout_at(deadline, conn.permits.clone().acquire_owned()).await {
            Ok(Ok(p)) => conn.start_waiting(p),
            _ => break,
        }
    }
    conn.input_closed.cancel();
    conn.tasks.close();
    let _ = tokio::time::timeout_at(deadline, conn.tasks.wait()).await;
    for (_, entry) in conn.in_flight.lock().unwrap_or_else(|e| e.into_inner()).drain() {
        entry.token.cancel();
    }
    conn.tasks.close();
    conn.tasks.wait().await;
    drop(conn);
    writer_task.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// Ends what would keep a connection's output open once its loop is gone: the session-wide
/// notifications (`input_closed`) and every request still in flight, which then answers nothing.
struct Closing {
    input_closed: CancellationToken,
    in_flight: Arc<Mutex<InFlightMap>>,
}

impl Drop for Closing {
    fn drop(&mut self) {
        self.input_closed.cancel();
        for entry in self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).values() {
            entry.token.cancel();
        }
    }
}

/// Writes the session-wide notifications of a legacy session until the server shuts down (the
/// process ends with its stdio).
async fn broadcast_to_session(
    server: Server,
    session: Arc<LegacySession>,
    out: OutboundSender,
    input_closed: CancellationToken,
) {
    use futures::StreamExt;
    let mut events = server.events();
    let shutdown = server.shutdown_token().clone();
    loop {
        let event = tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = input_closed.cancelled() => return,
            e = events.next() => e,
        };
        match event {
            Some(Ok(e)) => {
                if let Some(n) = session.notification_for(&e) {
                    emit(&out, server.message_filters(), n).await;
                }
            }
            // A lagging session misses list changes; clients re-list on reconnect anyway.
            Some(Err(_)) => {}
            None => return,
        }
    }
}

/// Sends a server message through the outgoing message filters.
async fn emit(out: &OutboundSender, filters: &crate::context::MessageFilters, msg: Value) {
    // The writer only stops when stdout is gone; then there is no one left to tell.
    if filters.is_empty() {
        let _ = out.send(Outbound::Message(Payload::Value(msg))).await;
        return;
    }
    for m in filters.outgoing(msg) {
        let _ = out.send(Outbound::Message(Payload::Value(m))).await;
    }
}

#[derive(Debug)]
enum Line {
    Complete,
    TooLong,
    Eof,
}

/// One turn of the read loop.
enum Step {
    Read(std::io::Result<Line>),
    Permit(OwnedSemaphorePermit),
}

/// Splits the input into `\n`-terminated lines, keeping a partly read line across calls, so that
/// [`next`](Self::next) is cancel-safe (the read loop races it against permits and shutdown).
#[derive(Default)]
struct LineReader {
    /// The last complete line (without the terminator), or the part read so far.
    buf: Vec<u8>,
    too_long: bool,
    any: bool,
    /// `buf` holds a line already returned: the next call starts a new one.
    returned: bool,
}

impl LineReader {
    /// Reads one line into `buf`. A line longer than `max` bytes is consumed and reported as
    /// [`Line::TooLong`] without being buffered, so no input can make the transport hold more
    /// than `max` bytes or lose its place in the stream. Bytes are not required to be UTF-8
    /// here: the JSON parser reports bad text as `-32700`.
    async fn next<R: AsyncBufRead + Unpin>(&mut self, reader: &mut R, max: usize) -> std::io::Result<Line> {
        loop {
            // The only await: dropping the future here consumes nothing.
            let available = reader.fill_buf().await?;
            // The crate's vectorized search: `position` goes a byte at a time, some 6
            // instructions a byte, 7% of a 2026-07-28 `tools/call` (callgrind).
            let newline = memchr::memchr(b'\n', available);
            let (used, line) = self.take(available, newline, max);
            Pin::new(&mut *reader).consume(used);
            if let Some(line) = line {
                return Ok(line);
            }
        }
    }

    /// The next line if the reader already holds all of it (its `\n`), without waiting and
    /// without reading from the input: the read loop's path while a burst is buffered.
    fn next_buffered<R: AsyncRead + Unpin>(
        &mut self,
        reader: &mut tokio::io::BufReader<R>,
        max: usize,
    ) -> Option<Line> {
        let available = reader.buffer();
        let newline = memchr::memchr(b'\n', available)?;
        let (used, line) = self.take(available, Some(newline), max);
        Pin::new(reader).consume(used);
        line
    }

    /// Takes what it can of `available` (the reader's buffered bytes, empty at EOF, with the
    /// position of their first `\n` if any) into the line being read. Returns how many bytes
    /// it used and, when a line ended, what it was.
    fn take(&mut self, available: &[u8], newline: Option<usize>, max: usize) -> (usize, Option<Line>) {
        if self.returned {
            self.buf.clear();
            self.too_long = false;
            self.any = false;
            self.returned = false;
        }
        if available.is_empty() {
            self.returned = true;
            return (
                0,
                Some(match (self.any, self.too_long) {
                    (false, _) => Line::Eof,
                    (true, true) => Line::TooLong,
                    (true, false) => Line::Complete,
                }),
            );
        }
        self.any = true;
        let (chunk, done) = match newline {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !self.too_long && self.buf.len() + chunk.len() <= max {
            self.buf.extend_from_slice(chunk);
        } else {
            self.too_long = true;
            self.buf.clear();
        }
        let used = done.unwrap_or(available.len());
        if done.is_none() {
            return (used, None);
        }
        self.returned = true;
        (used, Some(if self.too_long { Line::TooLong } else { Line::Complete }))
    }
}

/// How much [`write_lines`] gathers before it writes: its buffer's room at first. The line
/// that crosses the mark grows the buffer once, and the room it grew to is kept (up to four
/// times this) for the connection's later bursts.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// Writes the queued messages, one a line. Answers queued together leave in one write (one
/// syscall, or one blocking-thread hop, per burst rather than per answer): lines gather in one
/// buffer, written whenever the queue is empty, so no line waits for one behind it, and once
/// [`WRITE_BUFFER_BYTES`] are gathered.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: OutboundReceiver,
    writer_gone: CancellationToken,
) -> std::io::Result<()> {
    // Whatever ends the writer (EOF of the queue or a broken stdout), the tasks that feed it
    // learn it at once.
    let _gone = writer_gone.drop_guard();
    let mut buf = Vec::with_capacity(WRITE_BUFFER_BYTES);
    while let Some(item) = rx.recv().await {
        // One stream for every request: there is no request stream to close.
        let Outbound::Message(msg) = item else {
            // Lines gathered while this item was queued behind them leave now.
            if rx.is_empty() {
                write_gathered(&mut writer, &mut buf).await?;
            }
            continue;
        };
        // serde_json escapes control characters, so a serialized message never holds a newline.
        msg.write_json(&mut buf);
        buf.push(b'\n');
        if buf.len() >= WRITE_BUFFER_BYTES || rx.is_empty() {
            write_gathered(&mut writer, &mut buf).await?;
        }
    }
    // Every turn that empties the queue writes, so nothing is gathered here; written all the
    // same, should that change.
    write_gathered(&mut writer, &mut buf).await?;
    writer.flush().await
}

/// Writes and flushes the lines `buf` gathered, if any, and empties it.
async fn write_gathered<W: AsyncWrite + Unpin>(writer: &mut W, buf: &mut Vec<u8>) -> std::io::Result<()> {
    if buf.is_empty() {
        return Ok(());
    }
    writer.write_all(buf).await?;
    writer.flush().await?;
    buf.clear();
    // A message far larger than the room does not keep its size for the connection's life.
    if buf.capacity() > 4 * WRITE_BUFFER_BYTES {
        buf.shrink_to(WRITE_BUFFER_BYTES);
    }
    Ok(())
}

/// A request registered under its id until it answers or the client cancels it.
#[derive(Clone)]
struct InFlight {
    /// Which request holds the id: a client may reuse the id of a request it cancelled while
    /// that one is still winding down, and the old request must not unregister the new one.
    seq: u64,
    token: CancellationToken,
}

/// The requests in flight by id. The ids are the peer's (the process that started the
/// server), and the map holds only the requests running or waiting (`max_in_flight` and
/// `max_backlog`, which one batch may overrun by at most [`MAX_BATCH_LEN`] entries): too few
/// for colliding ids to cost much. foldhash rather than SipHash, which cost ~650 instructions
/// per request over its insert, lookup and removal.
///
/// [`MAX_BATCH_LEN`]: crate::jsonrpc::MAX_BATCH_LEN
type InFlightMap = HashMap<RequestId, InFlight, foldhash::fast::RandomState>;

struct Connection {
    server: Server,
    out: OutboundSender,
    in_flight: Arc<Mutex<InFlightMap>>,
    /// The `seq` of the next registered request.
    next_seq: u64,
    session: Option<Arc<LegacySession>>,
    permits: Arc<Semaphore>,
    tasks: TaskTracker,
    principal: Option<Arc<Principal>>,
    /// This connection as its requests name it (the listen limits count per connection).
    identity: crate::context::Connection,
    /// Cancelled at EOF: ends the session-wide notification task, which would otherwise hold
    /// the writer open and keep `serve_io` from returning.
    input_closed: CancellationToken,
    /// Requests received while every permit was taken, in arrival order, each with its place in
    /// its batch if it came in one.
    backlog: VecDeque<(Request, InFlight, Option<BatchSlot>)>,
    /// Whether a request's work is first polled here, on the connection's task, and spawned
    /// only if it has to wait (see [`Connection::start`]): on a current-thread runtime, which
    /// runs one task at a time anyway.
    poll_here_first: bool,
    /// Set when a request polled here had to wait because the writer's queue was full: the
    /// loop then lets the writer run before it reads on.
    queue_full: bool,
}

impl Connection {
    async fn send(&self, msg: Value) {
        emit(&self.out, self.server.message_filters(), msg).await;
    }

    /// Sends the answer `msg` to a request: on its own line, or into its batch's answer.
    async fn answer(&self, slot: Option<BatchSlot>, msg: Value) {
        match slot {
            Some(slot) => slot.answer(Some(msg)).await,
            None => self.send(msg).await,
        }
    }

    async fn on_line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // Before the whole-line message filter: filters see each message of a batch, not the array.
        if let Some(batch) = parse_batch(line) {
            return self.on_batch(batch).await;
        }
        let filters = self.server.message_filters();
        if !filters.is_empty()
            && let Ok(v) = serde_json::from_slice::<Value>(line)
            && !filters.incoming(&v)
        {
            return;
        }
        match parse_message(line) {
            // JSON-RPC never answers a notification, not even a malformed one.
            Err(f) if f.notification => {}
            Err(f) => self.send(error_response(f.id.as_ref(), &f.error)).await,
            Ok(Message::Notification(n)) => self.on_notification(&n.method, n.params.as_ref()),
            Ok(Message::Response { id, outcome }) => self.on_response(id, outcome),
            Ok(Message::Request(req)) => self.on_request(req, None).await,
        }
    }

    /// A JSON-RPC batch (2025-03-26 sessions only): each message handled as if it had come on
    /// its own line, in order, except that the answers of its requests, and the errors of its
    /// malformed entries, go out together as one array once the last one is known.
    async fn on_batch(&mut self, batch: Result<Vec<Value>, Box<ParseFailure>>) {
        let entries = match batch {
            Ok(entries) => entries,
            Err(f) => return self.send(error_response(None, &f.error)).await,
        };
        let version = self.session.as_ref().map(|s| s.version);
        if !version.is_some_and(accepts_batches) {
            return self.send(error_response(None, &batch_refused(version))).await;
        }
        let filters = self.server.message_filters().clone();
        let reply = BatchReply::new(self.out.clone(), filters.clone());
        // Holds the answer back until every entry has been seen, so that entries answered at
        // once cannot complete the batch early.
        let reading = reply.slot(usize::MAX);
        for (index, entry) in entries.into_iter().enumerate() {
            if !filters.is_empty() && !filters.incoming(&entry) {
                continue;
            }
            match parse_entry(entry) {
                Err(f) if f.notification => {}
                Err(f) => reply.slot(index).answer(Some(error_response(f.id.as_ref(), &f.error))).await,
                Ok(Message::Notification(n)) => self.on_notification(&n.method, n.params.as_ref()),
                Ok(Message::Response { id, outcome }) => self.on_response(id, outcome),
                Ok(Message::Request(req)) if req.method == "initialize" => {
                    let err = McpError::invalid_request("initialize must not be part of a JSON-RPC batch");
                    reply.slot(index).answer(Some(error_response(Some(&req.id), &err))).await;
                }
                Ok(Message::Request(req)) => self.on_request(req, Some(reply.slot(index))).await,
            }
        }
        reading.answer(None).await;
    }

    /// Answers to the session's server→client requests (elicitation, sampling, roots).
    fn on_response(&self, id: RequestId, outcome: Result<Value, Value>) {
        let delivered = self.session.as_ref().is_some_and(|s| s.client_requests().deliver(&id, outcome));
        if !delivered {
            tracing::debug!(%id, "stdio: ignoring a response to no pending server request");
        }
    }

    fn on_notification(&mut self, method: &str, params: Option<&serde_json::Map<String, Value>>) {
        match method {
            "notifications/cancelled" => {
                // Malformed or unknown cancellations are ignored
                // (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation#error-handling).
                let id = params.and_then(|p| p.get("requestId")).and_then(RequestId::from_value);
                if let Some(id) = id
                    && let Some(entry) = self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).remove(&id)
                {
                    entry.token.cancel();
                }
            }
            "notifications/initialized" => {
                if let Some(s) = &self.session {
                    s.mark_initialized();
                }
            }
            other => tracing::debug!(method = other, "stdio: ignoring notification"),
        }
    }

    /// A request, answered on its own line (`slot` `None`) or inside its batch's answer.
    async fn on_request(&mut self, req: Request, slot: Option<BatchSlot>) {
        if req.method == "initialize" && !req.meta.contains_key(META_PROTOCOL_VERSION) {
            let reply = if self.session.is_some() {
                Err(McpError::invalid_request("this process is already initialized"))
            } else {
                self.server.initialize(req.params.as_ref(), String::new(), true)
            };
            match reply {
                Ok((session, result)) => {
                    self.session = Some(session.clone());
                    self.send(success_response(&req.id, result)).await;
                    let closed = self.input_closed.clone();
                    self.tasks.spawn(broadcast_to_session(self.server.clone(), session, self.out.clone(), closed));
                }
                Err(e) => self.send(error_response(Some(&req.id), &e)).await,
            }
            return;
        }
        let entry = InFlight { seq: self.next_seq, token: self.server.shutdown_token().child_token() };
        self.next_seq += 1;
        // Later requests queue behind earlier ones, so requests start in arrival order. A batch
        // may push the backlog past `max_backlog`; reading then waits until it drains, and the
        // batch itself is bounded by `MAX_BATCH_LEN`.
        let permit = if self.backlog.is_empty() { self.permits.clone().try_acquire_owned().ok() } else { None };
        // A request polled here first is registered only if that poll has to wait (`Work`):
        // until the poll ends nothing is read that could cancel it or reuse its id, and most
        // requests end in it. Then only the id's check takes the map's lock; its insertion, its
        // removal (and that lock) and the id's copy are saved.
        let register_now = !(self.poll_here_first && permit.is_some());
        let duplicate = {
            let mut map = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if register_now {
                // One lookup (the id's hash once) for both the check and the insertion.
                match map.entry(req.id.clone()) {
                    std::collections::hash_map::Entry::Occupied(_) => true,
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(entry.clone());
                        false
                    }
                }
            } else {
                map.contains_key(&req.id)
            }
        };
        if duplicate {
            let err = McpError::invalid_request(format!("request id {} is already in flight", req.id));
            self.answer(slot, error_response(Some(&req.id), &err)).await;
            return;
        }
        match permit {
            Some(permit) => self.start(req, entry, permit, slot, register_now),
            None => self.backlog.push_back((req, entry, slot)),
        }
    }

    /// Starts the oldest waiting request with `permit`; one the client cancelled meanwhile is
    /// dropped without an answer, like a cancelled running request.
    fn start_waiting(&mut self, permit: OwnedSemaphorePermit) {
        while let Some((req, entry, slot)) = self.backlog.pop_front() {
            if !entry.token.is_cancelled() {
                self.start(req, entry, permit, slot, true);
                return;
            }
            if let Some(slot) = slot {
                // Its batch may be waiting for this one alone.
                self.tasks.spawn(slot.answer(None));
            }
        }
    }

    /// Starts `req` with `permit`. `registered`: its `entry` is in the in-flight map already;
    /// otherwise it is polled here first, and registers itself if that poll has to wait.
    fn start(
        &mut self,
        req: Request,
        entry: InFlight,
        permit: OwnedSemaphorePermit,
        slot: Option<BatchSlot>,
        registered: bool,
    ) {
        let work = RequestWork {
            server: self.server.clone(),
            session: self.session.clone(),
            out: self.out.clone(),
            in_flight: self.in_flight.clone(),
            principal: self.principal.clone(),
            identity: self.identity.clone(),
        }
        .run(req, entry, permit, slot, registered);
        // Boxed before it is spawned: tokio aligns a task cell to the cache line, and glibc
        // serves an aligned allocation of this future's size through its large-request path,
        // which consolidates the free lists on every spawn (`perf`, pipelined calls on a
        // multi-thread runtime: 3.6% in `malloc_consolidate` and `unlink_chunk`, ~3% copying the
        // future into the cell; 11% less CPU boxed). A plain box and a small cell cost less.
        let mut work = Box::pin(work);
        if !self.poll_here_first {
            debug_assert!(registered, "a request spawned at once is registered first");
            self.tasks.spawn(work);
            return;
        }
        // On a current-thread runtime a spawned request would run on this thread anyway, after
        // this one yields; most requests (a tool that computes its answer) finish in their first
        // poll, so that poll runs here and only work that has to wait gets a task of its own.
        // That saves the task (a cache-aligned allocation, scheduling, the tracker's count) per
        // request. The spawned task polls the work again, which then registers the task's
        // waker: nothing the no-op waker missed is lost. On a multi-thread runtime, even with
        // one worker, spawning first keeps reading going while a handler holds its thread
        // (`block_in_place` hands the worker to another thread, but not this task), and lets
        // other workers run requests side by side.
        let mut cx = Context::from_waker(Waker::noop());
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(())) => {}
            Ok(Poll::Pending) => {
                self.tasks.spawn(work);
                self.queue_full = self.out.is_full();
            }
            // Handlers' and filters' panics are answered inside the pipeline; this is the
            // transport's own bookkeeping, which a spawned task would have lost the same way.
            Err(panic) => {
                let what = crate::pipeline::serve::panic_message(panic.as_ref());
                tracing::error!(panic = %what, "stdio: delivering a request's answer panicked");
            }
        }
    }
}

/// What a request's work takes from its connection.
struct RequestWork {
    server: Server,
    session: Option<Arc<LegacySession>>,
    out: OutboundSender,
    in_flight: Arc<Mutex<InFlightMap>>,
    principal: Option<Arc<Principal>>,
    identity: crate::context::Connection,
}

impl RequestWork {
    /// The request served, its answer delivered and its id released.
    ///
    /// The future holds the pipeline's and is boxed whole by [`Connection::start`]; what else
    /// it could hold is kept out (the answer is queued without waiting when it can be, and
    /// every other way of delivering it is a boxed future of its own), so that the box stays
    /// within the sizes glibc serves from its per-thread cache (1,032 bytes; a test holds it
    /// there). `registered`: the request is in the in-flight map already; otherwise it is
    /// registered when its handling first has to wait.
    fn run(
        self,
        req: Request,
        entry: InFlight,
        permit: OwnedSemaphorePermit,
        slot: Option<BatchSlot>,
        registered: bool,
    ) -> impl Future<Output = ()> + Send + 'static {
        let RequestWork { server, session, out, in_flight, principal, identity } = self;
        let InFlight { seq, token } = entry;
        let answer = AnswerTo {
            id: req.id.clone(),
            is_listen: req.method == "subscriptions/listen",
            server,
            out: out.clone(),
            in_flight,
            seq,
            slot,
        };
        let register = (!registered).then(|| token.clone());
        // The request's notifications go straight into the writer queue; its answer is queued
        // after the handling ended, so it follows them.
        let notifier = answer.server.notifier(out, token.clone());
        let origin = Origin::new(token, notifier).principal(principal).connection(Some(identity));
        Work {
            // Made by the first poll: a spawned request's checks run on its own task, not on
            // the connection's, which has reading to do.
            stage: Stage::Start {
                start: Some(move |server: &Server| server.handle_request(req, session.as_ref(), origin)),
            },
            register,
            answer: Some(answer),
            delivery: None,
            _permit: permit,
        }
    }
}

/// What delivering a request's answer takes, kept while the request is handled.
struct AnswerTo {
    server: Server,
    out: OutboundSender,
    in_flight: Arc<Mutex<InFlightMap>>,
    id: RequestId,
    seq: u64,
    slot: Option<BatchSlot>,
    is_listen: bool,
}

pin_project_lite::pin_project! {
    /// A request's work ([`RequestWork::run`]): its handling, then its answer's delivery.
    /// Written out rather than as an `async` block, which would keep room for everything it
    /// captures for as long as it lives, beside the handling that took it over.
    struct Work<M, F> {
        #[pin]
        stage: Stage<M, F>,
        // While the request is handled and not registered: the token it is registered with if
        // the handling has to wait.
        register: Option<CancellationToken>,
        // `None` once the handling ended.
        answer: Option<AnswerTo>,
        // The answer's delivery, when it has to wait.
        delivery: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
        _permit: OwnedSemaphorePermit,
    }
}

pin_project_lite::pin_project! {
    /// A request's handling: the call that makes it (`Server::handle_request`, whose checks
    /// run when it is called), the future it made, and nothing once that ended (so that what
    /// the future still held, such as the request's span, goes before the answer's delivery).
    #[project = StageProjection]
    enum Stage<M, F> {
        Start { start: Option<M> },
        Handling { #[pin] handling: F },
        Done,
    }
}

impl<M, F> Future for Work<M, F>
where
    M: FnOnce(&Server) -> F,
    F: Future<Output = Result<ResultObject, McpError>>,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        if let Some(answer) = this.answer.as_ref() {
            if let StageProjection::Start { start } = this.stage.as_mut().project()
                && let Some(start) = start.take()
            {
                this.stage.set(Stage::Handling { handling: start(&answer.server) });
            }
            let polled = match this.stage.as_mut().project() {
                StageProjection::Handling { handling } => handling.poll(cx),
                // Set just above, and `answer` is `None` once the handling ended.
                StageProjection::Start { .. } | StageProjection::Done => {
                    unreachable!("a request's handling is made before it is polled, and not polled once it ended")
                }
            };
            let outcome = match polled {
                Poll::Ready(outcome) => outcome,
                Poll::Pending => {
                    if let Some(token) = this.register.take() {
                        // Before the poll that waits returns, so before the connection reads
                        // on: a cancellation or a reused id read next finds it.
                        let entry = InFlight { seq: answer.seq, token };
                        answer.in_flight.lock().unwrap_or_else(|e| e.into_inner()).insert(answer.id.clone(), entry);
                    }
                    return Poll::Pending;
                }
            };
            this.stage.set(Stage::Done);
            let never_registered = this.register.take().is_some();
            if let Some(AnswerTo { server, out, in_flight, id, seq, slot, is_listen }) = this.answer.take() {
                let answered = if never_registered {
                    // Handled within the first poll, on the connection's task, before it could
                    // read anything else: nothing could cancel it there but a shutdown, which
                    // is answered.
                    true
                } else {
                    // Still registered unless the client cancelled it (which unregisters it) or
                    // EOF's grace ran out: only those are answered, and of those cancelled (the
                    // server shuts down, or the connection's future was dropped), only at
                    // shutdown.
                    let registered = {
                        let mut map = in_flight.lock().unwrap_or_else(|e| e.into_inner());
                        match map.get(&id) {
                            Some(e) if e.seq == seq => map.remove(&id),
                            _ => None,
                        }
                    };
                    registered
                        .is_some_and(|entry| !entry.token.is_cancelled() || server.shutdown_token().is_cancelled())
                };
                *this.delivery = deliver(server, out, id, answered.then_some(outcome), slot, is_listen);
            }
        }
        match this.delivery.as_mut() {
            Some(delivery) => {
                std::task::ready!(delivery.as_mut().poll(cx));
                *this.delivery = None;
                Poll::Ready(())
            }
            None => Poll::Ready(()),
        }
    }
}

/// Queues a request's answer (`None`: it is not answered, the client cancelled it), after its
/// notifications. Returns what is left to wait for, if anything: an answer of a batch, one
/// through outgoing message filters, a full queue, the end of a subscription at shutdown.
fn deliver(
    server: Server,
    out: OutboundSender,
    id: RequestId,
    outcome: Option<Result<ResultObject, McpError>>,
    slot: Option<BatchSlot>,
    is_listen: bool,
) -> Option<Pin<Box<dyn Future<Output = ()> + Send>>> {
    let ends_subscription = is_listen && server.shutdown_token().is_cancelled();
    match (outcome, slot) {
        (Some(Ok(result)), None) if server.message_filters().is_empty() && !ends_subscription => {
            // The writer only stops when stdout is gone; then there is no one left to tell.
            match out.try_send(Outbound::Message(Payload::Success(id, result))) {
                Ok(_) => None,
                Err(full) => Some(Box::pin(async move {
                    let _ = out.send(full).await;
                })),
            }
        }
        (outcome, Some(slot)) => Some(Box::pin(async move {
            let msg = outcome.map(|outcome| match outcome {
                Ok(result) => success_response(&id, result.into_value()),
                Err(e) => error_response(Some(&id), &e),
            });
            slot.answer(msg).await
        })),
        (None, None) => None,
        (Some(outcome), None) => Some(Box::pin(async move {
            match outcome {
                Ok(result) if server.message_filters().is_empty() => {
                    let _ = out.send(Outbound::Message(Payload::Success(id.clone(), result))).await;
                }
                Ok(result) => emit(&out, server.message_filters(), success_response(&id, result.into_value())).await,
                Err(e) => emit(&out, server.message_filters(), error_response(Some(&id), &e)).await,
            }
            if is_listen && server.shutdown_token().is_cancelled() {
                // The subscription ended from the server side: say so on the shared channel too:
                // result first, then this
                // (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation,
                // https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#graceful-closure).
                let note = serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": { "requestId": id.to_value(), "reason": "server shutdown" } });
                emit(&out, server.message_filters(), note).await;
            }
        })),
    }
}

/// The answers of one JSON-RPC batch, written as one array line once every request of the
/// batch has answered or was cancelled (a cancelled request has no answer in it, and a batch
/// with no answer at all writes nothing).
struct BatchReply {
    out: OutboundSender,
    filters: MessageFilters,
    state: Mutex<BatchState>,
}

#[derive(Default)]
struct BatchState {
    /// Answers so far, with the index of their entry in the batch.
    answers: Vec<(usize, Value)>,
    /// Slots not settled yet.
    pending: usize,
}

impl BatchReply {
    fn new(out: OutboundSender, filters: MessageFilters) -> Arc<Self> {
        Arc::new(BatchReply { out, filters, state: Mutex::new(BatchState::default()) })
    }

    /// A place for the answer of entry `index`; the batch is written once every slot settled.
    fn slot(self: &Arc<Self>, index: usize) -> BatchSlot {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).pending += 1;
        BatchSlot { batch: Some(self.clone()), index }
    }

    /// Records one settled slot; the whole answer (in batch order, after the outgoing message
    /// filters) when it was the last one and there is anything to send.
    fn settle(&self, index: usize, answer: Option<Value>) -> Option<Value> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = answer {
            state.answers.push((index, a));
        }
        state.pending -= 1;
        if state.pending > 0 {
            return None;
        }
        let mut answers = std::mem::take(&mut state.answers);
        drop(state);
        answers.sort_by_key(|(i, _)| *i);
        let messages: Vec<Value> = answers.into_iter().flat_map(|(_, m)| self.filters.outgoing(m)).collect();
        (!messages.is_empty()).then_some(Value::Array(messages))
    }
}

/// One request's place in its batch's answer. Settled by [`answer`](Self::answer), or, if it is
/// dropped unsettled (a request dropped at EOF), with no answer.
struct BatchSlot {
    /// `None` once settled.
    batch: Option<Arc<BatchReply>>,
    index: usize,
}

impl BatchSlot {
    /// Settles the slot with `answer` (`None`: the request gets none, e.g. it was cancelled),
    /// and writes the batch's answer if this was the last slot.
    async fn answer(mut self, answer: Option<Value>) {
        let Some(batch) = self.batch.take() else { return };
        if let Some(line) = batch.settle(self.index, answer) {
            // The writer only stops when stdout is gone; then there is no one left to tell.
            let _ = batch.out.send(Outbound::Message(Payload::Value(line))).await;
        }
    }
}

impl Drop for BatchSlot {
    fn drop(&mut self) {
        if let Some(batch) = self.batch.take()
            && let Some(line) = batch.settle(self.index, None)
        {
            // Only when the connection is being torn down: no task is left to await the send.
            let _ = batch.out.try_send(Outbound::Message(Payload::Value(line)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{InFlight, InFlightMap, RequestWork};
    use crate::jsonrpc::{Request, RequestId};
    use crate::server::Server;
    use std::sync::{Arc, Mutex};
    use tokio::sync::Semaphore;
    use tokio_util::sync::CancellationToken;

    /// Every request's work is boxed: over 1,032 bytes, glibc's malloc would serve it from its
    /// shared bins instead of the per-thread cache, a slower path on every request (and slower
    /// still with many requests in flight). It is 728 bytes as `Work` (1,032 as the `async`
    /// block it replaced, which kept room for what it had captured).
    #[test]
    fn the_request_work_fits_the_allocators_thread_cache() {
        let server = Server::builder("t", "0").groups(["none"]).build().expect("builds");
        let (out, _rx) = crate::context::outbound_channel(1);
        let work = RequestWork {
            server,
            session: None,
            out,
            in_flight: Arc::new(Mutex::new(InFlightMap::default())),
            principal: None,
            identity: crate::context::Connection::new(None),
        };
        let permit = Arc::new(Semaphore::new(1)).try_acquire_owned().expect("a permit");
        let entry = InFlight { seq: 0, token: CancellationToken::new() };
        let work = work.run(Request::new(RequestId::Number(1), "tools/call", None), entry, permit, None, false);
        assert!(std::mem::size_of_val(&work) <= 1032, "{} bytes", std::mem::size_of_val(&work));
    }

    /// An output that records each write it is given.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<Vec<u8>>>>);

    impl Recorder {
        fn writes(&self) -> Vec<Vec<u8>> {
            self.0.lock().expect("not poisoned").clone()
        }

        /// Waits (10 s at most) until `len` bytes were written, and returns them.
        async fn written(&self, len: usize) -> String {
            let all = async {
                loop {
                    let all = self.writes().concat();
                    if all.len() >= len {
                        return all;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                }
            };
            let all = tokio::time::timeout(std::time::Duration::from_secs(10), all).await.expect("not written");
            String::from_utf8(all).expect("UTF-8")
        }
    }

    impl tokio::io::AsyncWrite for Recorder {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.0.lock().expect("not poisoned").push(buf.to_vec());
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Lines gather in one buffer and leave when nothing else is queued or once a buffer's
    /// worth is gathered: a burst goes out in several writes, each ended by the line that
    /// filled the buffer, every line whole and in order, also one three times the buffer; a line
    /// queued alone goes out at once, and so does one followed only by an item that is no
    /// message, while the queue stays open; then the queue closes with nothing more written.
    #[tokio::test]
    async fn the_writer_writes_every_line_in_order() {
        use super::{Outbound, WRITE_BUFFER_BYTES, write_lines};
        use crate::context::Payload;
        let (out, rx) = crate::context::outbound_channel(1 << 14);
        let output = Recorder::default();
        let gone = CancellationToken::new();
        let writing = tokio::spawn(write_lines(output.clone(), rx, gone.clone()));
        let big = "x".repeat(3 * WRITE_BUFFER_BYTES);
        let mut expected = String::new();
        let mut longest = 0;
        for i in 0..10_000 {
            let text = if i == 700 { big.clone() } else { format!("line {i}") };
            let line = serde_json::to_string(&serde_json::json!({ "n": i, "text": text })).expect("serializes");
            longest = longest.max(line.len() + 1);
            expected.push_str(&line);
            expected.push('\n');
            out.try_send(Outbound::Message(Payload::Encoded(line))).expect("room");
        }
        assert!(output.written(expected.len()).await == expected, "the burst differs");
        let writes = output.writes();
        assert!(writes.len() > 2, "{} writes", writes.len());
        for (i, write) in writes.iter().enumerate() {
            assert!(write.ends_with(b"\n"), "write {i} ends inside a line");
            if i + 1 < writes.len() {
                let len = write.len();
                assert!(len >= WRITE_BUFFER_BYTES && len < WRITE_BUFFER_BYTES + longest, "write {i}: {len} bytes");
            }
        }
        let burst = expected.len();
        out.send(Outbound::Message(Payload::Encoded("{\"lone\":1}".into()))).await.expect("sent");
        assert_eq!(&output.written(burst + 11).await[burst..], "{\"lone\":1}\n");
        out.try_send(Outbound::Message(Payload::Encoded("{\"last\":2}".into()))).expect("room");
        out.try_send(Outbound::CloseStream).expect("room");
        assert_eq!(&output.written(burst + 22).await[burst + 11..], "{\"last\":2}\n");
        drop(out);
        writing.await.expect("joins").expect("writes");
        assert!(gone.is_cancelled(), "the writer's end is not announced");
        assert_eq!(output.writes().concat().len(), burst + 22, "more was written");
    }

    /// Lines taken from the reader's buffer are the lines [`LineReader::next`] reads: an empty
    /// line and an overlong one taken from the buffer, a line split across two reads, which
    /// the buffer does not hold whole, and a last line without its `\n`.
    #[tokio::test]
    async fn buffered_lines_are_the_lines_read() {
        use super::{Line, LineReader};
        use tokio::io::AsyncReadExt;
        // Two reads: the buffer holds the first part only, which ends inside a line.
        let input = || (&b"first\n\nsecond li"[..]).chain(&b"ne\n0123456789abcdef\ntail"[..]);
        let max = 12;
        let mut expected = Vec::new();
        let mut plain = LineReader::default();
        let mut reader = tokio::io::BufReader::with_capacity(64, input());
        loop {
            match plain.next(&mut reader, max).await.expect("reads") {
                Line::Eof => break,
                line => expected.push((format!("{line:?}"), plain.buf.clone())),
            }
        }
        let mut got = Vec::new();
        let mut from_buffer = Vec::new();
        let mut mixed = LineReader::default();
        let mut reader = tokio::io::BufReader::with_capacity(64, input());
        loop {
            let line = match mixed.next_buffered(&mut reader, max) {
                Some(line) => {
                    from_buffer.push(format!("{line:?} {:?}", String::from_utf8_lossy(&mixed.buf)));
                    line
                }
                None => mixed.next(&mut reader, max).await.expect("reads"),
            };
            match line {
                Line::Eof => break,
                line => got.push((format!("{line:?}"), mixed.buf.clone())),
            }
        }
        assert_eq!(got, expected);
        assert_eq!(expected.len(), 5, "{expected:?}");
        assert_eq!(from_buffer, ["Complete \"\"", "TooLong \"\""], "taken from the buffer");
    }
}
