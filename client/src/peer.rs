//! The JSON-RPC side of a connection: ids, the table of requests waiting for their response,
//! the reader and writer tasks, answers to the server's own requests, and cancellation.
//!
//! Transports hand the peer a message stream in each direction (`transport/`); the peer knows
//! nothing of MCP methods beyond `ping` and `notifications/cancelled`, and hands the server's
//! other requests to the application's input handlers (`input.rs`).

use crate::error::ClientError;
use crate::input::InputHandlers;
use crate::options::InputFn;
use futures::{Sink, SinkExt, Stream, StreamExt};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::jsonrpc::{
    Message, Notification, ParseFailure, error_response, parse_entry, parse_message, parse_success, success_response,
};
use switchyard::{ErrorCode, McpError, RequestId};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The `_meta` key tying a message to a task (2025-11-25,
/// [tasks](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#related-task-metadata)).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Where [`RELATED_TASK`] sits in a request's params.
const RELATED_TASK_POINTER: &str = "/_meta/io.modelcontextprotocol~1related-task";

/// What arrives from the transport.
pub(crate) enum Incoming {
    /// One JSON-RPC message (or batch) as the server sent it.
    Message(Vec<u8>),
    /// One message (or batch) that came on the response stream of our request `id` (Streamable
    /// HTTP): a request of the server's among it belongs to that request.
    #[cfg(feature = "http")]
    Related(i64, Vec<u8>),
    /// The transport failed for request `id` alone (an HTTP status without a JSON-RPC body):
    /// that request fails with the error, the connection goes on.
    #[cfg(feature = "http")]
    Failed(i64, ClientError),
    /// Reading failed; the connection is over.
    Broken(ClientError),
}

/// How many notifications a slow subscriber may fall behind before it misses some.
const NOTIFICATION_BUFFER: usize = 256;
/// How many of the server's requests may be answered at once: a server that floods the client
/// with requests for input gets errors beyond this.
const MAX_SERVING: usize = 64;
/// How many outgoing messages may wait for the writer.
const OUTGOING_BUFFER: usize = 1024;

/// What a waiting request receives: a result as JSON text (as sent, for a plain success
/// response; encoded again from its `Value` for one in a batch or of an unusual shape), decoded
/// by whoever asked into the type it expects.
enum Answer {
    Result(Box<RawValue>),
    Error(McpError),
    /// No result for a reason of the transport's or the client's own, not the server's error.
    Failed(ClientError),
}

type Waiter = oneshot::Sender<Answer>;

/// One JSON-RPC connection to a server.
pub(crate) struct Peer {
    outgoing: mpsc::Sender<Value>,
    pending: Mutex<HashMap<i64, Waiter>>,
    next_id: AtomicI64,
    closed: CancellationToken,
    notifications: broadcast::Sender<Notification>,
    handlers: Arc<InputHandlers>,
    /// The server's requests being answered, by id (as JSON text), so a
    /// `notifications/cancelled` from the server can stop the handler.
    serving: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// Requests of ours on a session with an input handler of their own
    /// ([`RequestOptions::on_input`](crate::RequestOptions::on_input)), by id.
    asking: Mutex<HashMap<i64, Asking>>,
    /// Whether the transport says which request a server's request belongs to (Streamable
    /// HTTP: the response stream it came on); stdio does not.
    relates_by_stream: bool,
}

/// A request's own input handler on a session, and how many questions it was asked.
struct Asking {
    handler: InputFn,
    asked: u32,
    /// The server's requests this handler is answering, stopped (and answered with an error)
    /// when our request ends: a question must not outlive the call it belongs to.
    questions: Vec<RequestId>,
}

/// Who answers one request of the server's: the input handler of our request `target`, with
/// the key of this question, or (`None`) the client's handlers.
type Asker = Option<(i64, InputFn, String)>;

impl Peer {
    /// Starts the reader and writer tasks on the current Tokio runtime.
    pub(crate) fn start<I, O>(
        incoming: I,
        outgoing: O,
        handlers: Arc<InputHandlers>,
        relates_by_stream: bool,
    ) -> Arc<Peer>
    where
        I: Stream<Item = Incoming> + Send + Unpin + 'static,
        O: Sink<Value, Error = ClientError> + Send + Unpin + 'static,
    {
        let (tx, rx) = mpsc::channel(OUTGOING_BUFFER);
        let peer = Arc::new(Peer {
            outgoing: tx,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            closed: CancellationToken::new(),
            notifications: broadcast::channel(NOTIFICATION_BUFFER).0,
            handlers,
            serving: Mutex::new(HashMap::new()),
            asking: Mutex::new(HashMap::new()),
            relates_by_stream,
        });
        tokio::spawn(write_loop(rx, outgoing, peer.closed.clone()));
        tokio::spawn(read_loop(incoming, Arc::downgrade(&peer), peer.closed.clone()));
        peer
    }

    /// Sends a request and waits for its response, at most `timeout` in all (queueing it
    /// included: a server that stops reading cannot hold the caller longer). Dropping the
    /// returned future after the request went out cancels it (`notifications/cancelled`),
    /// except `initialize`, which the lifecycle forbids cancelling. `Value::Null` params are
    /// left out of the message. The result is JSON text, as sent for a plain success response.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Box<RawValue>, ClientError> {
        self.request_as(self.reserve_id(), method, params, Some(timeout)).await
    }

    /// [`request`](Self::request) on a session whose own questions (the server's requests
    /// that belong to it) `handler` answers: over Streamable HTTP those that come on its
    /// response stream; over stdio, which does not say, any while it is the only such request
    /// in flight. Each question gets the key `input-N`, N counting from 1 in the order asked.
    /// An `Err` of the handler answers the server's request with it; the `input_required`
    /// outcome ([`McpError::input_required`]) also ends this request with
    /// [`ClientError::Rpc`] carrying it (and the server gets `notifications/cancelled`).
    pub(crate) async fn request_asking(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        handler: InputFn,
    ) -> Result<Box<RawValue>, ClientError> {
        let id = self.reserve_id();
        self.asking().insert(id, Asking { handler, asked: 0, questions: Vec::new() });
        let _asking = Unregister { peer: self, id };
        self.request_as(id, method, params, Some(timeout)).await
    }

    /// Whether this is a Streamable HTTP connection (it alone tells which request a server's
    /// request belongs to).
    pub(crate) fn is_streamable_http(&self) -> bool {
        self.relates_by_stream
    }

    fn asking(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Asking>> {
        self.asking.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Who answers a request of the server's that came related to our request `related`
    /// (or unrelated: `None`).
    fn asker(&self, related: Option<i64>) -> Asker {
        let mut asking = self.asking();
        let target = match related {
            Some(id) => id,
            None if !self.relates_by_stream && asking.len() == 1 => *asking.keys().next()?,
            None => return None,
        };
        let entry = asking.get_mut(&target)?;
        entry.asked += 1;
        Some((target, entry.handler.clone(), format!("input-{}", entry.asked)))
    }

    /// Stops answering the server's request `question` (the request of ours it belongs to has
    /// ended) and answers it with an error, unless its answer went out already.
    fn stop_question(&self, question: &RequestId) {
        let running = self.serving.lock().unwrap_or_else(|p| p.into_inner()).remove(&id_key(question));
        if let Some(handler) = running {
            handler.abort();
            let error = McpError::internal("the request this question belongs to has ended; nobody will answer it");
            self.answer(question, Err(error));
        }
    }

    /// Ends our request `target` with `error` (its own input handler's `input_required`
    /// outcome), telling the server it no longer waits.
    fn abandon(&self, target: i64, error: McpError) {
        let Some(waiter) = self.lock().remove(&target) else { return };
        let _ = waiter.send(Answer::Error(error));
        let message = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": target, "reason": "the client asks its own client for input first" },
        });
        let _ = self.outgoing.try_send(message);
    }

    /// A fresh request id, for a request whose id must be known before it is sent (a
    /// `subscriptions/listen`, whose notifications name it).
    pub(crate) fn reserve_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// [`request`](Self::request) with the id `id` (from [`reserve_id`](Self::reserve_id)),
    /// waiting without limit when `timeout` is `None` (or too long for the clock).
    pub(crate) async fn request_as(
        &self,
        id: i64,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, ClientError> {
        // A timeout beyond what the clock can count (`Duration::MAX`, a server's vast `ttl`)
        // is none.
        let deadline = timeout.and_then(|t| tokio::time::Instant::now().checked_add(t));
        let timed_out = || ClientError::Timeout { method: method.to_owned(), timeout: timeout.unwrap_or_default() };
        if self.closed.is_cancelled() {
            return Err(ClientError::Closed);
        }
        // One timer and one wait for the connection's end serve both waits below: made afresh
        // for each, they could be registered (the timer in the wheel, the wait in the token's
        // list) and removed again, under a lock, twice per request.
        let expired = async move {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(expired);
        let closed = self.closed.cancelled();
        tokio::pin!(closed);
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id, tx);
        // From here every way out that leaves no answer behind (a timeout, the connection's end,
        // the future dropped) removes the waiter.
        let mut guard = CancelOnDrop { peer: self, id, waiting: true, armed: false };
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        // The queue has room almost always: only a full one makes the request wait for it (that
        // wait boxed, so that its future does not size every request's).
        let queued = match self.outgoing.try_send(message) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Closed(_)) => false,
            Err(mpsc::error::TrySendError::Full(message)) => tokio::select! {
                queued = Box::pin(self.outgoing.send(message)) => queued.is_ok(),
                () = &mut expired => return Err(timed_out()),
                () = &mut closed => false,
            },
        };
        if !queued {
            return Err(ClientError::Closed);
        }
        guard.armed = method != "initialize";
        let outcome = tokio::select! {
            answer = rx => answer,
            () = &mut expired => return Err(timed_out()),
            // The reader may have cleared the table between the check above and the insert.
            () = &mut closed => return Err(ClientError::Closed),
        };
        // Answered: the reader took the waiter out of the table to answer it.
        (guard.waiting, guard.armed) = (false, false);
        match outcome {
            Ok(Answer::Result(result)) => Ok(result),
            Ok(Answer::Error(error)) => Err(ClientError::Rpc { method: method.to_owned(), error: Box::new(error) }),
            Ok(Answer::Failed(error)) => Err(error),
            Err(_) => Err(ClientError::Closed),
        }
    }

    /// Sends a notification; no answer comes. Waits at most `timeout` for room in the queue.
    pub(crate) async fn notify(&self, method: &str, params: Value, timeout: Duration) -> Result<(), ClientError> {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        tokio::select! {
            queued = self.outgoing.send(message) => queued.map_err(|_| ClientError::Closed),
            () = tokio::time::sleep(timeout) => Err(ClientError::Timeout { method: method.to_owned(), timeout }),
            () = self.closed.cancelled() => Err(ClientError::Closed),
        }
    }

    /// The server's notifications from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Notification> {
        self.notifications.subscribe()
    }

    /// Whether the connection has ended.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Ends the connection: the writer flushes and closes, waiting requests fail with
    /// [`ClientError::Closed`].
    pub(crate) fn close(&self) {
        self.closed.cancel();
        self.fail_pending();
        for (_, handler) in self.serving.lock().unwrap_or_else(|p| p.into_inner()).drain() {
            handler.abort();
        }
    }

    /// Resolves when the connection has ended.
    pub(crate) async fn closed(&self) {
        self.closed.cancelled().await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Waiter>> {
        // A panic while holding this lock leaves the map consistent (inserts and removes only).
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn fail_pending(&self) {
        // Dropping the senders wakes every waiter with `Closed`.
        self.lock().clear();
    }

    fn resolve(&self, id: &RequestId, outcome: Result<Value, Value>) {
        let answer = match outcome {
            // Rare here: a plain success came through `parse_success`.
            Ok(result) => match serde_json::value::to_raw_value(&result) {
                Ok(text) => Answer::Result(text),
                Err(e) => Answer::Failed(ClientError::Protocol(format!("the result could not be kept: {e}"))),
            },
            Err(object) => Answer::Error(error_from_object(&object)),
        };
        match id {
            RequestId::Number(n) => self.answer_waiter(*n, answer),
            RequestId::String(_) => {
                tracing::warn!(target: "switchyard_client", %id, "a response to no request of ours; ignored")
            }
        }
    }

    /// Hands `answer` to whoever waits for our request `id`.
    fn answer_waiter(&self, id: i64, answer: Answer) {
        let waiter = self.lock().remove(&id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(answer);
            }
            None => tracing::warn!(target: "switchyard_client", id, "a response to no request of ours; ignored"),
        }
    }

    #[cfg(feature = "http")]
    fn fail(&self, id: i64, error: ClientError) {
        if let Some(waiter) = self.lock().remove(&id) {
            let _ = waiter.send(Answer::Failed(error));
        }
    }

    /// Runs the input handler for the server's request on a task of its own (a user filling a
    /// form must not stall the reader), answering when it is done; a `notifications/cancelled`
    /// for the id or the end of the connection stops it unanswered, and the end of the request
    /// of ours it belongs to (`asker`) stops it with an error answer.
    fn serve(self: &Arc<Self>, request: switchyard::jsonrpc::Request, asker: Asker) {
        let key = id_key(&request.id);
        let question = request.id.clone();
        let target = asker.as_ref().map(|(target, ..)| *target);
        let peer = self.clone();
        let serving = key.clone();
        // Held while spawning, so the task's own removal cannot come before the insert.
        let mut table = self.serving.lock().unwrap_or_else(|p| p.into_inner());
        if table.contains_key(&key) {
            drop(table);
            let error = McpError::invalid_request(format!("request id {key} is already being answered"));
            return self.answer(&request.id, Err(error));
        }
        if table.len() >= MAX_SERVING {
            drop(table);
            let error = McpError::internal(format!("more than {MAX_SERVING} requests for input at once"));
            return self.answer(&request.id, Err(error));
        }
        let task = tokio::spawn(async move {
            // Handlers read the server's params whole, `_meta` included, which the parser
            // keeps apart (`Request::meta`), as it keeps a `tools/call`'s `arguments` and `name`.
            let arguments = request.arguments().and_then(|text| serde_json::from_str::<Value>(text).ok());
            let name = request.tool_name().map(str::to_owned);
            let mut params = request.params.unwrap_or_default();
            if let Some(name) = name {
                params.entry("name").or_insert(Value::String(name));
            }
            if let Some(meta) = request.meta.to_value() {
                params.insert("_meta".to_owned(), meta);
            }
            if let Some(arguments) = arguments {
                params.insert("arguments".to_owned(), arguments);
            }
            let params = Value::Object(params);
            // A question asked for a task (2025-11-25) is answered as that task's: the answer
            // carries the same `related-task` key.
            let related = params.pointer(RELATED_TASK_POINTER).cloned();
            let mut outcome = match &asker {
                Some((_, handler, key)) => handler(key.clone(), request.method.clone(), params).await,
                None => peer.handlers.answer(&request.method, params).await,
            };
            if let (Some((target, ..)), Err(error)) = (&asker, &outcome)
                && error.as_input_required().is_some()
            {
                peer.abandon(*target, error.clone());
            }
            if let (Some(related), Ok(Value::Object(result))) = (related, outcome.as_mut()) {
                let meta = result.entry("_meta").or_insert_with(|| Value::Object(Default::default()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.to_owned(), related);
                }
            }
            // Whoever takes the entry answers: a question stopped meanwhile (its call ended, the
            // server cancelled it) is answered there, or not at all.
            if peer.serving.lock().unwrap_or_else(|p| p.into_inner()).remove(&serving).is_some() {
                peer.answer(&request.id, outcome);
            }
        });
        table.insert(key, task.abort_handle());
        drop(table);
        if let Some(target) = target {
            let mut asking = self.asking();
            match asking.get_mut(&target) {
                Some(entry) => entry.questions.push(question),
                // Our request ended between choosing its handler and now.
                None => {
                    drop(asking);
                    self.stop_question(&question);
                }
            }
        }
    }

    /// Stops the handler of the server's request `request_id`, if it still runs.
    fn cancel_serving(&self, request_id: &Value) {
        let handler = self.serving.lock().unwrap_or_else(|p| p.into_inner()).remove(&request_id.to_string());
        if let Some(handler) = handler {
            handler.abort();
        }
    }

    fn answer(&self, id: &RequestId, outcome: Result<Value, McpError>) {
        let message = match outcome {
            Ok(result) => success_response(id, result),
            Err(error) => error_response(Some(id), &error),
        };
        // A full queue means the writer is far behind; the server's request then goes
        // unanswered rather than blocking the reader (which would stall every response).
        if self.outgoing.try_send(message).is_err() {
            tracing::warn!(target: "switchyard_client", %id, "could not queue the answer to a server request");
        }
    }
}

/// Removes a request's own input handler when the request ends, however it ends.
struct Unregister<'a> {
    peer: &'a Peer,
    id: i64,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        let ended = self.peer.asking().remove(&self.id);
        for question in ended.map(|a| a.questions).unwrap_or_default() {
            self.peer.stop_question(&question);
        }
    }
}

/// A request's waiter in the table while it waits (`waiting`): removed when the request ends
/// without its answer, with `notifications/cancelled` sent once the request went out
/// (`armed`).
struct CancelOnDrop<'a> {
    peer: &'a Peer,
    id: i64,
    waiting: bool,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.waiting {
            self.peer.lock().remove(&self.id);
        }
        if !self.armed {
            return;
        }
        let message = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": self.id, "reason": "the client no longer waits for the answer" },
        });
        let _ = self.peer.outgoing.try_send(message);
    }
}

/// A request id as JSON text (`5`, `"a"`): the key both the request and a
/// `notifications/cancelled` naming it give.
fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// An error object as the server sent it; a malformed one keeps what it can.
fn error_from_object(object: &Value) -> McpError {
    let code = object.get("code").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok());
    let message = object.get("message").and_then(Value::as_str).unwrap_or("(the error object has no message)");
    let error = McpError::new(ErrorCode(code.unwrap_or(ErrorCode::INTERNAL_ERROR.0)), message);
    match object.get("data") {
        Some(data) => error.with_data(data.clone()),
        None => error,
    }
}

async fn write_loop<O>(mut rx: mpsc::Receiver<Value>, mut sink: O, closed: CancellationToken)
where
    O: Sink<Value, Error = ClientError> + Unpin,
{
    loop {
        let message = tokio::select! {
            biased;
            message = rx.recv() => message,
            () = closed.cancelled() => None,
        };
        let Some(message) = message else { break };
        // Every message already waiting goes out with this one, in one flush. A server that
        // stops reading blocks the write; closing the client ends it.
        let sent = tokio::select! {
            sent = async {
                sink.feed(message).await?;
                while let Ok(message) = rx.try_recv() {
                    sink.feed(message).await?;
                }
                sink.flush().await
            } => sent,
            () = closed.cancelled() => break,
        };
        if let Err(e) = sent {
            tracing::debug!(target: "switchyard_client", error = %e, "writing to the server failed");
            break;
        }
    }
    // A server that stops reading would hold a final flush forever.
    let _ = tokio::time::timeout(Duration::from_secs(5), sink.close()).await;
    closed.cancel();
}

async fn read_loop<I>(mut incoming: I, peer: std::sync::Weak<Peer>, closed: CancellationToken)
where
    I: Stream<Item = Incoming> + Unpin,
{
    loop {
        let next = tokio::select! {
            next = incoming.next() => next,
            () = closed.cancelled() => None,
        };
        let Some(peer) = peer.upgrade() else { break };
        match next {
            Some(Incoming::Message(bytes)) => dispatch(&peer, &bytes, None),
            #[cfg(feature = "http")]
            Some(Incoming::Related(id, bytes)) => dispatch(&peer, &bytes, Some(id)),
            #[cfg(feature = "http")]
            Some(Incoming::Failed(id, error)) => peer.fail(id, error),
            Some(Incoming::Broken(e)) => {
                tracing::debug!(target: "switchyard_client", error = %e, "reading from the server failed");
                peer.close();
                break;
            }
            None => {
                peer.close();
                break;
            }
        }
    }
    closed.cancel();
}

fn dispatch(peer: &Arc<Peer>, bytes: &[u8], related: Option<i64>) {
    // A batch (an HTTP server may answer several messages in one body): each entry on its own,
    // classified from the parsed value rather than encoded and parsed again.
    if bytes.first() == Some(&b'[')
        && let Ok(Value::Array(entries)) = serde_json::from_slice::<Value>(bytes)
    {
        for entry in entries {
            dispatch_one(peer, parse_entry(entry), bytes, related);
        }
        return;
    }
    // Nearly every message is the answer to a request of ours: its result stays text.
    if let Some(success) = parse_success(bytes) {
        return peer.answer_waiter(success.id, Answer::Result(success.result));
    }
    dispatch_one(peer, parse_message(bytes), bytes, related);
}

/// Acts on one parsed message; `bytes` is what it came in, shown when it is no message;
/// `related` the request of ours whose response stream it came on.
fn dispatch_one(peer: &Arc<Peer>, parsed: Result<Message, Box<ParseFailure>>, bytes: &[u8], related: Option<i64>) {
    match parsed {
        Ok(Message::Response { id, outcome }) => peer.resolve(&id, outcome),
        Ok(Message::Notification(notification)) => {
            if notification.method == "notifications/cancelled"
                && let Some(id) = notification.params.as_ref().and_then(|p| p.get("requestId"))
            {
                peer.cancel_serving(id);
            }
            // Nobody listening is fine: notifications are advisory.
            let _ = peer.notifications.send(notification);
        }
        Ok(Message::Request(request)) => {
            if request.method == "ping" {
                peer.answer(&request.id, Ok(Value::Object(Map::new())));
            } else if let Some(asker) = peer.asker(related) {
                peer.serve(request, Some(asker));
            } else if peer.handlers.serves(&request.method) {
                peer.serve(request, None);
            } else {
                // A request for input the client declared no handler for, or none the client
                // side knows. The name is cut short: the answer must not grow with what the
                // server sends.
                let method: String = request.method.chars().take(64).collect();
                peer.answer(&request.id, Err(McpError::method_not_found(&method)));
            }
        }
        Err(failure) => {
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            tracing::warn!(
                target: "switchyard_client",
                error = %failure.error.message(),
                message = %shown,
                "the server sent something that is no JSON-RPC message; ignored"
            );
        }
    }
}
