use super::message_filters::MessageFilters;
use super::queue;
use crate::jsonrpc::{RequestId, ResultObject};
use crate::protocol::LogLevel;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::future::Future;
use tokio_util::sync::CancellationToken;

/// One item on an outbound queue: what a request (or a connection) sends towards its client.
///
/// Every transport drains the same item type from the same queue
/// ([`outbound_channel`]): the HTTP transport one queue per request (that request's response
/// stream), stdio one per connection (its writer, which also carries the answers, so a
/// request's notifications are written before its answer).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outbound {
    /// A JSON-RPC message (notification, server→client request, or an answer) to write.
    Message(Payload),
    /// Ask the transport to end the request's HTTP response stream now while the request goes
    /// on; the client resumes with `GET` + `Last-Event-ID` (legacy Streamable HTTP, SEP-1699).
    /// Transports without resumable streams ignore it.
    CloseStream,
}

/// One JSON-RPC message in the form its sender had at hand; a transport writes it with
/// [`write_json`](Self::write_json) or reads it with [`into_value`](Self::into_value).
///
/// Listen deliveries are encoded once per event and only the subscription id differs per
/// subscriber, so building and dropping a `Value` tree per subscriber would be most of the
/// cost of a fan-out: they travel as [`Payload::Encoded`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Payload {
    /// A JSON-RPC message as a `Value`.
    Value(Value),
    /// The compact JSON text of a JSON-RPC message (one line: serde_json escapes newlines).
    Encoded(String),
    /// A success response `{"jsonrpc":"2.0","id":id,"result":result}` in parts, written without
    /// building (and dropping) its envelope map, and its result as the server made it (an
    /// encoded result is copied, not parsed).
    Success(RequestId, ResultObject),
}

impl Payload {
    /// The message as a `Value`. Encoded text comes from serde_json in this crate, so it
    /// parses; `Null` would mark a bug, never a client's input.
    pub fn into_value(self) -> Value {
        match self {
            Payload::Value(v) => v,
            Payload::Encoded(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
            Payload::Success(id, result) => crate::jsonrpc::success_response(&id, result.into_value()),
        }
    }

    /// The length of [`write_json`](Self::write_json)'s output when it is known without
    /// writing it: text, or a success whose result is text. A buffer of exactly that capacity
    /// becomes `Bytes` without an allocation of its own (`Bytes::from(Vec)` allocates a shared
    /// header when length and capacity differ).
    #[cfg(feature = "http")]
    pub(crate) fn json_len(&self) -> Option<usize> {
        match self {
            Payload::Encoded(text) => Some(text.len()),
            Payload::Success(id, ResultObject::Encoded(result)) => {
                Some(SUCCESS_HEAD.len() + id.json_len() + SUCCESS_RESULT.len() + result.as_str().len() + 1)
            }
            Payload::Value(_) | Payload::Success(_, ResultObject::Value(_)) => None,
        }
    }

    /// Appends the message's compact JSON (no newline) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        // Cannot fail: writing into a Vec does no I/O, and a `Value`'s map keys are strings.
        match self {
            Payload::Value(v) => {
                let _ = serde_json::to_writer(out, v);
            }
            Payload::Encoded(text) => out.extend_from_slice(text.as_bytes()),
            Payload::Success(id, result) => {
                // The key order of `success_response`, so the same bytes as its `Value`.
                out.extend_from_slice(SUCCESS_HEAD);
                let _ = serde_json::to_writer(&mut *out, id);
                out.extend_from_slice(SUCCESS_RESULT);
                result.write_json(out);
                out.push(b'}');
            }
        }
    }
}

/// A success response's bytes before its id, and between the id and the result.
const SUCCESS_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
const SUCCESS_RESULT: &[u8] = br#","result":"#;

/// The sending side of an outbound queue (cheap to clone; any number of senders).
pub type OutboundSender = queue::Sender<Outbound>;

/// The receiving side of an outbound queue: `recv().await` the next [`Outbound`], `None` once
/// every sender is gone and the queue is empty.
pub type OutboundReceiver = queue::Receiver<Outbound>;

/// A bounded outbound queue holding at most `capacity` items (at least 1): a [`Notifier`]
/// made with its sender waits while it is full, so a slow client slows the handler down
/// rather than growing memory.
pub fn outbound_channel(capacity: usize) -> (OutboundSender, OutboundReceiver) {
    queue::channel(capacity)
}

/// The channel a request's own notifications (progress, log messages) travel on to the transport,
/// which writes them on that request's response stream only
/// ([request and response](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns#request-and-response)).
///
/// Writes into an outbound queue ([`outbound_channel`]) through the server's outgoing message
/// filters; sends after cancellation are dropped.
#[derive(Debug, Clone)]
pub struct Notifier {
    /// The queue and the token that closes it; `None` when disconnected (which then makes no
    /// token: a JSON-only reply allocates nothing for its notifier).
    sink: Option<(OutboundSender, CancellationToken)>,
    filters: MessageFilters,
}

/// What [`Notifier::send`] returns: ready at once when the message was queued (or dropped),
/// boxed only when it must wait for room or pass through message filters. A named type, not
/// `impl Future`, so that it does not capture the closures that built the message.
type Delivery<'a> = futures::future::Either<futures::future::Ready<bool>, BoxFuture<'a, bool>>;

impl Notifier {
    /// A notifier writing into `tx`; nothing is sent once `cancel` fires.
    pub fn new(tx: OutboundSender, cancel: CancellationToken) -> Self {
        Notifier { sink: Some((tx, cancel)), filters: MessageFilters::default() }
    }

    /// Runs every notification through the server's outgoing message filters.
    pub fn with_filters(mut self, filters: MessageFilters) -> Self {
        self.filters = filters;
        self
    }

    /// A notifier that drops everything (no stream to write on).
    pub fn disconnected() -> Self {
        Notifier { sink: None, filters: MessageFilters::default() }
    }

    /// The queue, unless disconnected or cancelled.
    fn open(&self) -> Option<&OutboundSender> {
        self.sink.as_ref().filter(|(_, cancel)| !cancel.is_cancelled()).map(|(tx, _)| tx)
    }

    /// True when notifications reach the client (the transport holds a stream for this
    /// request); false on a transport that answers with one JSON body only.
    pub fn can_deliver(&self) -> bool {
        self.sink.is_some()
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
    /// built only when the encoding is missing or an outgoing message filter needs a `Value`.
    /// The listen loop sends every event this way.
    pub(crate) fn send_encoded(
        &self,
        text: impl FnOnce() -> Option<String>,
        message: impl FnOnce() -> Value,
    ) -> Delivery<'_> {
        self.deliver(text, message)
    }

    /// Queues `text()` when no message filter has to see the message, else `message()`; waits
    /// (boxed) only when the queue is full or filters run.
    fn deliver(&self, text: impl FnOnce() -> Option<String>, message: impl FnOnce() -> Value) -> Delivery<'_> {
        use futures::future::{Either, ready};
        let Some(sink) = self.open() else {
            return Either::Left(ready(false));
        };
        if !self.filters.is_empty() {
            return Either::Right(Box::pin(self.send_message(message())) as BoxFuture<'_, bool>);
        }
        let payload = match text() {
            Some(t) => Payload::Encoded(t),
            None => Payload::Value(message()),
        };
        match sink.try_send(Outbound::Message(payload)) {
            Ok(sent) => Either::Left(ready(sent)),
            Err(item) => Either::Right(Box::pin(async move { sink.send(item).await.is_ok() }) as BoxFuture<'_, bool>),
        }
    }

    /// Sends a complete JSON-RPC message (a server→client request of a legacy session) on the
    /// request's stream, through the message filters; returns false when it was dropped.
    pub(crate) async fn send_message(&self, msg: Value) -> bool {
        let Some(sink) = self.open() else {
            return false;
        };
        let mut sent = false;
        for m in self.filters.outgoing(msg) {
            sent = sink.send(Outbound::Message(Payload::Value(m))).await.is_ok();
        }
        sent
    }

    /// Sends [`Outbound::CloseStream`]; returns false when there is no stream.
    pub async fn close_stream(&self) -> bool {
        match self.open() {
            Some(sink) => sink.send(Outbound::CloseStream).await.is_ok(),
            None => false,
        }
    }
}

/// Progress reporting for the current request (`notifications/progress`,
/// [spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress)).
///
/// Reports are sent only when the client opted in with `_meta.progressToken`; otherwise every
/// call is a no-op. `progress` must increase between calls; `total` and `progress` may be
/// fractional. When the context has a [`ProgressSink`](super::ProgressSink) (inside a task of
/// the Tasks extension, say), every report goes to the sink instead and no notification is
/// sent.
#[derive(Debug, Clone)]
pub struct Progress {
    pub(crate) token: Option<Value>,
    pub(crate) notifier: Notifier,
    pub(crate) sink: Option<std::sync::Arc<dyn super::ProgressSink>>,
}

impl Progress {
    /// True when reports go somewhere: the context has a progress sink, or the client asked
    /// for progress on this request.
    pub fn is_enabled(&self) -> bool {
        self.sink.is_some() || self.token.is_some()
    }

    /// Hands `(progress, total?, message?)` to the context's progress sink when it has one;
    /// otherwise sends `notifications/progress` `{progressToken, progress, total?, message?}`
    /// when the client sent a `progressToken`.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.sink {
            return sink.report(progress, total, message).await;
        }
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

/// Log messages for the current request (`notifications/message`,
/// [spec](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging)).
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
    use crate::context::{MessageFilter, MessageFilters};
    use crate::jsonrpc::EncodedResult;
    use futures::future::Either;
    use std::sync::Arc;
    use std::time::Duration;

    /// `json_len` is what `write_json` writes, for ids of every width, sign and escape, and
    /// `None` where the length is only known by writing.
    #[test]
    #[cfg(feature = "http")]
    fn the_known_length_is_the_written_length() {
        let mut ids: Vec<RequestId> =
            [0, 7, 9, 10, 99, 100, -1, -9, -10, 123_456_789, i64::MAX, i64::MIN].map(RequestId::Number).into();
        for s in ["", "a", "a\"b", "\\", "\u{1}", "\u{1f}", "\u{7f}", "é€😀", "\n\r\t\u{8}\u{c}", "<>&'/", "\u{0}x"]
        {
            ids.push(RequestId::String(s.to_owned()));
        }
        for id in ids {
            assert_eq!(id.json_len(), serde_json::to_string(&id).expect("an id").len(), "{id:?}");
            for text in ["{}", r#"{"content":[],"isError":false}"#] {
                let message = Payload::Success(id.clone(), ResultObject::Encoded(EncodedResult::new(text.to_owned())));
                let mut out = Vec::new();
                message.write_json(&mut out);
                assert_eq!(message.json_len(), Some(out.len()), "{id:?} {text}");
            }
            assert_eq!(Payload::Success(id, ResultObject::Value(json!({}))).json_len(), None);
        }
        let encoded = Payload::Encoded(r#"{"jsonrpc":"2.0","method":"m"}"#.to_owned());
        assert_eq!(encoded.json_len(), Some(30));
        assert_eq!(Payload::Value(json!({})).json_len(), None);
    }

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

    fn encoded(n: i64) -> Option<Outbound> {
        Some(Outbound::Message(Payload::Encoded(text(n))))
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
    async fn encoded_text_waits_for_room_and_keeps_its_place() {
        let (tx, mut rx) = outbound_channel(1);
        let notifier = Notifier::new(tx, CancellationToken::new());
        assert!(
            matches!(notifier.send_encoded(|| Some(text(1)), || message(1)), Either::Left(_)),
            "room: queued at once"
        );
        let second = notifier.send_encoded(|| Some(text(2)), || message(2));
        assert!(matches!(second, Either::Right(_)), "full: the send waits");
        assert_eq!(rx.recv().await, encoded(1));
        assert!(within(second).await);
        assert_eq!(rx.recv().await, encoded(2), "still text, in order");
    }

    /// Without an encoding the `Value` is queued as it is, also after waiting for room.
    #[tokio::test]
    async fn values_are_queued_as_values_also_after_waiting_for_room() {
        let (tx, mut rx) = outbound_channel(1);
        let notifier = Notifier::new(tx, CancellationToken::new());
        assert!(matches!(notifier.send_encoded(|| None, || message(1)), Either::Left(_)));
        let second = notifier.send_encoded(|| None, || message(2));
        assert!(matches!(second, Either::Right(_)), "full: the send waits");
        assert_eq!(rx.recv().await, Some(Outbound::Message(Payload::Value(message(1)))));
        assert!(within(second).await);
        assert_eq!(rx.recv().await, Some(Outbound::Message(Payload::Value(message(2)))));
    }

    /// With an outgoing message filter the filter gets the `Value` and its output is queued.
    #[tokio::test]
    async fn message_filters_see_the_value_and_their_output_is_sent() {
        let filters = MessageFilters::new(vec![Arc::new(Tag) as Arc<dyn MessageFilter>]);
        let unused = || -> Option<String> { panic!("a filtered send must not encode") };
        let mut tagged = message(1);
        tagged["params"]["tagged"] = json!(true);
        let (tx, mut rx) = outbound_channel(1);
        let notifier = Notifier::new(tx, CancellationToken::new()).with_filters(filters);
        assert!(within(notifier.send_encoded(unused, || message(1))).await);
        assert_eq!(rx.recv().await, Some(Outbound::Message(Payload::Value(tagged))));
    }

    #[tokio::test]
    async fn nothing_is_encoded_or_queued_after_cancellation() {
        let (tx, mut rx) = outbound_channel(1);
        let cancel = CancellationToken::new();
        let notifier = Notifier::new(tx, cancel.clone());
        cancel.cancel();
        let unused = || -> Option<String> { panic!("a cancelled send must not encode") };
        assert!(!within(notifier.send_encoded(unused, || panic!("nor build a Value"))).await);
        assert!(!notifier.close_stream().await);
        drop(notifier);
        assert_eq!(rx.recv().await, None);
    }

    /// Every form of a message writes the same JSON as its `Value`.
    #[test]
    fn every_payload_form_writes_the_json_of_its_value() {
        let id = RequestId::Number(7);
        let forms = [
            Payload::Value(message(1)),
            Payload::Encoded(text(1)),
            Payload::Success(id.clone(), json!({ "ok": true }).into()),
            Payload::Success(id.clone(), ResultObject::Encoded(EncodedResult::new(r#"{"ok":[1,"\n"]}"#.into()))),
        ];
        for form in forms {
            let mut out = Vec::new();
            form.write_json(&mut out);
            let written: Value = serde_json::from_slice(&out).expect("valid JSON");
            assert_eq!(written, form.into_value());
        }
    }
}
