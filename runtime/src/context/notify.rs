use crate::pipeline::MessageFilters;
use crate::protocol::LogLevel;
use crate::transport::stdio::OutLine;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::future::Future;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One item on a request's outbound channel.
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// A complete JSON-RPC notification object to write on the request's stream.
    Message(Value),
    /// Ask the transport to end the request's HTTP response stream now while the request goes
    /// on; the client resumes with `GET` + `Last-Event-ID` (legacy Streamable HTTP, SEP-1699).
    /// Transports without resumable streams ignore it.
    CloseStream,
}

/// A message on its way to a transport's own queue: a `Value`, or JSON text encoded by the
/// sender (listen deliveries: the event is encoded once and only the subscription id differs
/// per subscriber, so building and dropping a `Value` tree per subscriber would be most of
/// the cost of a fan-out).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Payload {
    /// A JSON-RPC message.
    Value(Value),
    /// The compact JSON text of a JSON-RPC message (one line: serde_json escapes newlines).
    Encoded(String),
}

impl Payload {
    /// The message as a `Value`. Encoded text comes from serde_json in this crate, so it
    /// parses; `Null` would mark a bug, never a client's input.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Payload::Value(v) => v,
            Payload::Encoded(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    /// Writes the message's compact JSON into `out`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            // Cannot fail: writing into a Vec does no I/O, and a `Value`'s map keys are strings.
            Payload::Value(v) => {
                let _ = serde_json::to_writer(out, v);
            }
            Payload::Encoded(text) => out.extend_from_slice(text.as_bytes()),
        }
    }
}

/// One item on a transport's own request queue (the HTTP transport's): [`Outbound`] with its
/// message as a [`Payload`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Queued {
    /// A notification (or legacy server→client request) for the request's stream.
    Message(Payload),
    /// [`Outbound::CloseStream`].
    CloseStream,
}

/// The channel a request's own notifications (progress, log messages) travel on to the
/// transport, which writes them on that request's response stream only (spec digest §8).
///
/// Each item is a complete JSON-RPC notification object. The channel is bounded (a slow client
/// slows the handler down rather than growing memory); sends after cancellation are dropped.
#[derive(Debug, Clone)]
pub struct Notifier {
    sink: Sink,
    cancel: CancellationToken,
    filters: MessageFilters,
}

/// What [`Notifier::send`] returns: ready at once when the message was queued (or dropped),
/// boxed only when it must wait for room or pass through message filters. A named type, not
/// `impl Future`, so that it does not capture the closures that built the message.
type Delivery<'a> = futures::future::Either<futures::future::Ready<bool>, BoxFuture<'a, bool>>;

/// Where a [`Notifier`]'s messages go.
#[derive(Debug, Clone)]
enum Sink {
    /// No stream: everything is dropped.
    None,
    /// A channel the transport drains onto that request's stream (a custom transport's).
    Request(mpsc::Sender<Outbound>),
    /// The request's own queue, which the HTTP transport drains onto that request's stream.
    Queue(super::queue::Sender<Queued>),
    /// The connection's writer queue (stdio): every request shares one stream, so a separate
    /// channel per request (allocated for every request, mostly never used) would only be
    /// forwarded into this queue. The request's answer is queued after its work ends, so
    /// notifications still come before it.
    Connection(mpsc::Sender<OutLine>),
}

impl Sink {
    /// True when the sink takes [`Payload::Encoded`] as it is (a custom transport's channel
    /// carries [`Outbound`], which holds a `Value`).
    fn takes_encoded(&self) -> bool {
        matches!(self, Sink::Queue(_) | Sink::Connection(_))
    }

    /// Queues one message; false when the receiving side is gone or there is none.
    async fn send(&self, msg: Payload) -> bool {
        match self {
            Sink::None => false,
            Sink::Request(tx) => tx.send(Outbound::Message(msg.into_value())).await.is_ok(),
            Sink::Queue(tx) => tx.send(Queued::Message(msg)).await.is_ok(),
            Sink::Connection(tx) => tx.send(OutLine::from(msg)).await.is_ok(),
        }
    }

    /// Queues one message if there is room now: `Ok(sent)` as [`send`](Self::send) would
    /// return, `Err(msg)` when the queue is full.
    fn try_send(&self, msg: Payload) -> Result<bool, Payload> {
        use tokio::sync::mpsc::error::TrySendError;
        // Only a message goes in, so only a message can come back when the queue is full; the
        // other arms cannot happen and count as not sent.
        match self {
            Sink::None => Ok(false),
            Sink::Request(tx) => match tx.try_send(Outbound::Message(msg.into_value())) {
                Ok(()) => Ok(true),
                Err(TrySendError::Closed(_)) => Ok(false),
                Err(TrySendError::Full(Outbound::Message(m))) => Err(Payload::Value(m)),
                Err(TrySendError::Full(Outbound::CloseStream)) => Ok(false),
            },
            Sink::Queue(tx) => tx.try_send(Queued::Message(msg)).map_err(|q| match q {
                Queued::Message(m) => m,
                Queued::CloseStream => Payload::Value(Value::Null),
            }),
            Sink::Connection(tx) => match tx.try_send(OutLine::from(msg)) {
                Ok(()) => Ok(true),
                Err(TrySendError::Closed(_)) => Ok(false),
                Err(TrySendError::Full(OutLine::Message(m))) => Err(Payload::Value(m)),
                Err(TrySendError::Full(OutLine::Encoded(t))) => Err(Payload::Encoded(t)),
                Err(TrySendError::Full(_)) => Ok(false),
            },
        }
    }
}

impl Notifier {
    /// A notifier writing into `tx`; nothing is sent once `cancel` fires.
    pub fn new(tx: mpsc::Sender<Outbound>, cancel: CancellationToken) -> Self {
        Notifier { sink: Sink::Request(tx), cancel, filters: MessageFilters::default() }
    }

    /// A notifier writing into a request's own queue (the HTTP transport's).
    pub(crate) fn queued(tx: super::queue::Sender<Queued>, cancel: CancellationToken) -> Self {
        Notifier { sink: Sink::Queue(tx), cancel, filters: MessageFilters::default() }
    }

    /// A notifier writing straight into a connection's writer queue (stdio), where
    /// [`Outbound::CloseStream`] has no meaning.
    pub(crate) fn connection(tx: mpsc::Sender<OutLine>, cancel: CancellationToken) -> Self {
        Notifier { sink: Sink::Connection(tx), cancel, filters: MessageFilters::default() }
    }

    /// Runs every notification through the server's outgoing message filters.
    pub fn with_filters(mut self, filters: MessageFilters) -> Self {
        self.filters = filters;
        self
    }

    /// A notifier that drops everything (no stream to write on).
    pub fn disconnected() -> Self {
        Notifier { sink: Sink::None, cancel: CancellationToken::new(), filters: MessageFilters::default() }
    }

    /// True when notifications reach the client (the transport holds a stream for this
    /// request); false on a transport that answers with one JSON body only.
    pub fn can_deliver(&self) -> bool {
        !matches!(self.sink, Sink::None)
    }

    /// Sends one notification `{"jsonrpc":"2.0","method":method,"params":params}`; returns false
    /// when it was dropped (no stream, request cancelled, stream closed). Waits while the
    /// request's queue is full.
    ///
    /// Cancellation is checked and, without message filters, the message queued when this is
    /// called; await the returned future right away (it is what waits when the queue is full).
    ///
    /// The returned future is 16 bytes: the message is queued synchronously when there is room
    /// (the usual case), and only a send that must wait (or pass through message filters) is
    /// boxed. A listen subscription holds this future in its state for its whole life.
    pub fn send(&self, method: &str, params: Value) -> impl Future<Output = bool> + Send + '_ {
        self.deliver(|| None, move || json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// [`send`](Self::send) for a notification the caller can encode itself: `text()` is its
    /// compact JSON (or `None`: use `message()`), `message()` the same message as a `Value`,
    /// built only when the encoding is missing or a sink or an outgoing message filter needs a
    /// `Value`. The listen loop sends every event this way.
    pub(crate) fn send_encoded(
        &self,
        text: impl FnOnce() -> Option<String>,
        message: impl FnOnce() -> Value,
    ) -> Delivery<'_> {
        self.deliver(text, message)
    }

    /// Queues `text()` when the sink takes encoded text and no message filter has to see the
    /// message, else `message()`; waits (boxed) only when the queue is full or filters run.
    fn deliver(&self, text: impl FnOnce() -> Option<String>, message: impl FnOnce() -> Value) -> Delivery<'_> {
        use futures::future::{Either, ready};
        if !self.can_deliver() || self.cancel.is_cancelled() {
            return Either::Left(ready(false));
        }
        if !self.filters.is_empty() {
            return Either::Right(Box::pin(self.send_message(message())) as BoxFuture<'_, bool>);
        }
        let payload = match self.sink.takes_encoded().then(text).flatten() {
            Some(t) => Payload::Encoded(t),
            None => Payload::Value(message()),
        };
        match self.sink.try_send(payload) {
            Ok(sent) => Either::Left(ready(sent)),
            Err(msg) => Either::Right(Box::pin(self.sink.send(msg)) as BoxFuture<'_, bool>),
        }
    }

    /// Sends a complete JSON-RPC message (a server→client request of a legacy session) on the
    /// request's stream, through the message filters; returns false when it was dropped.
    pub(crate) async fn send_message(&self, msg: Value) -> bool {
        if !self.can_deliver() || self.cancel.is_cancelled() {
            return false;
        }
        let mut sent = false;
        for m in self.filters.outgoing(msg) {
            sent = self.sink.send(Payload::Value(m)).await;
        }
        sent
    }

    /// Sends [`Outbound::CloseStream`]; returns false when there is no stream. On a connection
    /// stream (stdio) there is nothing to close: true while the stream is open.
    pub async fn close_stream(&self) -> bool {
        if self.cancel.is_cancelled() {
            return false;
        }
        match &self.sink {
            Sink::None => false,
            Sink::Request(tx) => tx.send(Outbound::CloseStream).await.is_ok(),
            Sink::Queue(tx) => tx.send(Queued::CloseStream).await.is_ok(),
            Sink::Connection(tx) => !tx.is_closed(),
        }
    }
}

/// Progress reporting for the current request (`notifications/progress`, spec digest §8.2).
///
/// Reports are sent only when the client opted in with `_meta.progressToken`; otherwise every
/// call is a no-op. `progress` must increase between calls; `total` and `progress` may be
/// fractional.
#[derive(Debug, Clone)]
pub struct Progress {
    pub(crate) token: Option<Value>,
    pub(crate) notifier: Notifier,
}

impl Progress {
    /// True when the client asked for progress on this request.
    pub fn is_enabled(&self) -> bool {
        self.token.is_some()
    }

    /// Sends `{progressToken, progress, total?, message?}`.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.token else { return };
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(t) = total {
            params["total"] = json!(t);
        }
        if let Some(m) = message {
            params["message"] = json!(m);
        }
        self.notifier.send("notifications/progress", params).await;
    }
}

/// Log messages for the current request (`notifications/message`, spec digest §8.1).
///
/// Messages are sent only at or above the level the client chose: per request with
/// `_meta["io.modelcontextprotocol/logLevel"]` on 2026-07-28 (no key: nothing is sent), or with
/// `logging/setLevel` on a legacy session.
#[derive(Debug, Clone)]
pub struct Logger {
    pub(crate) threshold: Option<LogLevel>,
    pub(crate) notifier: Notifier,
    pub(crate) name: Option<String>,
}

impl Logger {
    /// A logger that tags its messages with `logger: name`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// True when a message at `level` would be sent.
    pub fn enabled(&self, level: LogLevel) -> bool {
        self.threshold.is_some_and(|t| level >= t)
    }

    /// Sends `{level, logger?, data}` when `level` passes the client's threshold.
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        if !self.enabled(level) {
            return;
        }
        let mut params = json!({ "level": level, "data": data.into() });
        if let Some(n) = &self.name {
            params["logger"] = json!(n);
        }
        self.notifier.send("notifications/message", params).await;
    }

    /// `log(LogLevel::Debug, data)`.
    pub async fn debug(&self, data: impl Into<Value>) {
        self.log(LogLevel::Debug, data).await
    }

    /// `log(LogLevel::Info, data)`.
    pub async fn info(&self, data: impl Into<Value>) {
        self.log(LogLevel::Info, data).await
    }

    /// `log(LogLevel::Warning, data)`.
    pub async fn warning(&self, data: impl Into<Value>) {
        self.log(LogLevel::Warning, data).await
    }

    /// `log(LogLevel::Error, data)`.
    pub async fn error(&self, data: impl Into<Value>) {
        self.log(LogLevel::Error, data).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{MessageFilter, MessageFilters};
    use futures::future::Either;
    use std::sync::Arc;
    use std::time::Duration;

    /// A liveness bound for a send that must complete once room was made.
    async fn within<T>(f: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(5), f).await.expect("completes once there is room")
    }

    fn message(n: i64) -> Value {
        json!({ "jsonrpc": "2.0", "method": "notifications/x", "params": { "n": n } })
    }

    fn text(n: i64) -> String {
        message(n).to_string()
    }

    /// A message filter that tags what it sees (so a test knows it saw a `Value`).
    struct Tag;

    impl MessageFilter for Tag {
        fn outgoing(&self, mut message: Value) -> Vec<Value> {
            message["params"]["tagged"] = json!(true);
            vec![message]
        }
    }

    #[tokio::test]
    async fn encoded_text_waits_for_room_on_the_http_queue_and_keeps_its_place() {
        let (tx, mut rx) = super::super::queue::channel::<Queued>(1);
        let notifier = Notifier::queued(tx, CancellationToken::new());
        assert!(
            matches!(notifier.send_encoded(|| Some(text(1)), || message(1)), Either::Left(_)),
            "room: queued at once"
        );
        let second = notifier.send_encoded(|| Some(text(2)), || message(2));
        assert!(matches!(second, Either::Right(_)), "full: the send waits");
        assert_eq!(rx.recv().await, Some(Queued::Message(Payload::Encoded(text(1)))));
        assert!(within(second).await);
        assert_eq!(rx.recv().await, Some(Queued::Message(Payload::Encoded(text(2)))), "still text, in order");
    }

    #[tokio::test]
    async fn encoded_text_waits_for_room_on_the_stdio_writer_queue_and_keeps_its_place() {
        let (tx, mut rx) = mpsc::channel::<OutLine>(1);
        let notifier = Notifier::connection(tx, CancellationToken::new());
        assert!(matches!(notifier.send_encoded(|| Some(text(1)), || message(1)), Either::Left(_)));
        let second = notifier.send_encoded(|| Some(text(2)), || message(2));
        assert!(matches!(second, Either::Right(_)), "full: the send waits");
        assert!(matches!(rx.recv().await, Some(OutLine::Encoded(t)) if t == text(1)));
        assert!(within(second).await);
        assert!(matches!(rx.recv().await, Some(OutLine::Encoded(t)) if t == text(2)), "still text, in order");
    }

    /// A custom transport's channel carries `Outbound`, so it gets the `Value` (never text
    /// parsed back), also when the send had to wait.
    #[tokio::test]
    async fn custom_transports_get_the_value_also_after_waiting_for_room() {
        let (tx, mut rx) = mpsc::channel::<Outbound>(1);
        let notifier = Notifier::new(tx, CancellationToken::new());
        let unused = || -> Option<String> { panic!("a custom transport's send must not encode") };
        assert!(matches!(notifier.send_encoded(unused, || message(1)), Either::Left(_)));
        let second = notifier.send_encoded(unused, || message(2));
        assert!(matches!(second, Either::Right(_)), "full: the send waits");
        assert_eq!(rx.recv().await, Some(Outbound::Message(message(1))));
        assert!(within(second).await);
        assert_eq!(rx.recv().await, Some(Outbound::Message(message(2))));
    }

    /// With an outgoing message filter the filter gets the `Value` and its output is queued,
    /// on every sink that would otherwise take text.
    #[tokio::test]
    async fn message_filters_see_the_value_and_their_output_is_sent() {
        let filters = || MessageFilters::new(vec![Arc::new(Tag) as Arc<dyn MessageFilter>]);
        let unused = || -> Option<String> { panic!("a filtered send must not encode") };
        let mut tagged = message(1);
        tagged["params"]["tagged"] = json!(true);

        let (tx, mut rx) = super::super::queue::channel::<Queued>(1);
        let notifier = Notifier::queued(tx, CancellationToken::new()).with_filters(filters());
        assert!(within(notifier.send_encoded(unused, || message(1))).await);
        assert_eq!(rx.recv().await, Some(Queued::Message(Payload::Value(tagged.clone()))));

        let (tx, mut rx) = mpsc::channel::<OutLine>(1);
        let notifier = Notifier::connection(tx, CancellationToken::new()).with_filters(filters());
        assert!(within(notifier.send_encoded(unused, || message(1))).await);
        assert!(matches!(rx.recv().await, Some(OutLine::Message(v)) if v == tagged));
    }

    #[tokio::test]
    async fn nothing_is_encoded_or_queued_after_cancellation() {
        let (tx, mut rx) = super::super::queue::channel::<Queued>(1);
        let cancel = CancellationToken::new();
        let notifier = Notifier::queued(tx, cancel.clone());
        cancel.cancel();
        let unused = || -> Option<String> { panic!("a cancelled send must not encode") };
        assert!(!within(notifier.send_encoded(unused, || panic!("nor build a Value"))).await);
        drop(notifier);
        assert_eq!(rx.recv().await, None);
    }
}
