//! A full-replacement `subscriptions/listen` handler: the server author owns the subscription's
//! stream instead of the built-in grant, acknowledgement and fan-out.

use super::{DeliveryHub, EventStream, Refused};
use crate::context::{Notifier, RequestContext};
use crate::jsonrpc::McpError;
use crate::protocol::META_SUBSCRIPTION_ID;
use crate::registry::BoxFuture;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A handler installed with
/// [`ServerBuilder::replace_listen`](crate::ServerBuilder::replace_listen).
pub(crate) type ListenReplacement =
    Arc<dyn Fn(RequestContext, ListenStream) -> BoxFuture<Result<Value, McpError>> + Send + Sync>;

/// How long a replacement handler may take to return its result once the server shuts down;
/// after that it is dropped and the standard result is sent for it, so that one handler that
/// ignores shutdown cannot keep the process alive.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Why a subscription served by a replacement handler ended (see [`ListenStream::ended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListenEnd {
    /// The client ended it: closed the HTTP response, or sent `notifications/cancelled` for the
    /// listen id on stdio. Nothing more reaches the client, and the handler's future is dropped
    /// at once, so only tasks the handler spawned with a clone of the stream observe this.
    ClientClosed,
    /// The server is shutting down: return the listen result (e.g.
    /// [`ListenStream::result`]) so the client learns the subscription ended
    /// ([graceful closure](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#graceful-closure)).
    Shutdown,
}

/// The stream of one `subscriptions/listen` request served by a replacement handler
/// ([subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)):
/// what the client asked for, and a sink for tagged notifications on that subscription's stream
/// (the HTTP SSE response, or stdout on stdio).
///
/// Nothing is sent for the handler: no acknowledgement, no automatic `list_changed` or
/// `resources/updated` frames. The handler acknowledges first
/// ([`acknowledge`](Self::acknowledge)), then sends what it likes with [`send`](Self::send),
/// which tags every frame with `_meta["io.modelcontextprotocol/subscriptionId"]`. Cheap to clone;
/// every clone writes to the same stream.
#[derive(Clone)]
pub struct ListenStream {
    id: Value,
    requested: Map<String, Value>,
    notifier: Notifier,
    cancel: CancellationToken,
    shutdown: CancellationToken,
    hub: Arc<dyn DeliveryHub>,
}

impl std::fmt::Debug for ListenStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenStream").field("id", &self.id).field("requested", &self.requested).finish_non_exhaustive()
    }
}

impl ListenStream {
    /// The subscription id: the JSON-RPC id of the listen request, keeping its JSON type
    /// (number or string).
    pub fn subscription_id(&self) -> &Value {
        &self.id
    }

    /// The filter the client sent, `params.notifications` (a `SubscriptionFilter` object: the
    /// standard keys `toolsListChanged`, `promptsListChanged`, `resourcesListChanged` (booleans)
    /// and `resourceSubscriptions` (URI strings) are already type-checked; other keys as sent).
    pub fn requested(&self) -> &Map<String, Value> {
        &self.requested
    }

    /// Sends `notifications/subscriptions/acknowledged` with `params.notifications = granted`
    /// ([acknowledgment](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#acknowledgment)).
    /// Send it before anything else, and grant no more than
    /// [`requested`](Self::requested). Returns false when it was dropped (the
    /// client is gone).
    pub async fn acknowledge(&self, granted: Map<String, Value>) -> bool {
        self.notifier
            .send(
                "notifications/subscriptions/acknowledged",
                json!({ "notifications": granted, "_meta": { META_SUBSCRIPTION_ID: self.id } }),
            )
            .await
    }

    /// Sends the notification `method` with `params` (a JSON object, or `null` for none) on this
    /// subscription's stream, with `params._meta["io.modelcontextprotocol/subscriptionId"]` set
    /// to the subscription id (other `_meta` keys are kept). Waits while the transport's
    /// bounded buffer is full.
    ///
    /// Returns false, sending nothing, when `params` is neither an object nor `null`, or when
    /// the client is gone.
    pub async fn send(&self, method: &str, params: Value) -> bool {
        let mut params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            _ => return false,
        };
        let meta = params.entry("_meta").or_insert_with(|| json!({}));
        match meta.as_object_mut() {
            Some(m) => {
                m.insert(META_SUBSCRIPTION_ID.to_owned(), self.id.clone());
            }
            None => *meta = json!({ META_SUBSCRIPTION_ID: self.id }),
        }
        self.notifier.send(method, Value::Object(params)).await
    }

    /// The server's published events ([`Publisher`](super::Publisher)) from now on, in
    /// publishing order, for a handler that routes them itself. Subscribe before acknowledging
    /// so nothing published after the acknowledgement is missed.
    pub fn events(&self) -> EventStream {
        self.hub.subscribe()
    }

    /// Waits until the subscription ends from outside the handler and says why.
    pub async fn ended(&self) -> ListenEnd {
        self.cancel.cancelled().await;
        if self.shutdown.is_cancelled() { ListenEnd::Shutdown } else { ListenEnd::ClientClosed }
    }

    /// The standard listen result `{"_meta": {"io.modelcontextprotocol/subscriptionId": ID}}`
    /// (`SubscriptionsListenResult`; `resultType` is added when it is sent).
    pub fn result(&self) -> Value {
        super::listen::listen_result(&self.id)
    }
}

/// Serves a listen request with the replacement `handler`.
///
/// The transport must hold a stream (else `-32601`), the filter must be well-formed (`-32602`,
/// [notification filter](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions#notification-filter)),
/// and the connection and caller must be under their [`ListenLimits`](super::ListenLimits)
/// (`-32603` with `data.reason = "listenLimit"`).
/// The handler's future is dropped without an answer when the client ends the subscription, and
/// after [`SHUTDOWN_GRACE`] once the server shuts down (the standard result is then sent). Its
/// result gets `_meta.subscriptionId` when it lacks one.
pub(crate) async fn listen(
    server: &impl super::listen::ListenHost,
    handler: &ListenReplacement,
    ctx: RequestContext,
    params: Map<String, Value>,
) -> Result<Value, McpError> {
    if !ctx.notifier().can_deliver() {
        return Err(McpError::method_not_found("subscriptions/listen"));
    }
    let requested = super::listen::requested(&params)?;
    // Held until the handler's future ends or is dropped.
    let _slot = server.listen_slots().acquire(ctx.connection(), ctx.principal()).map_err(Refused::into_error)?;
    let shutdown = server.closing().clone();
    let cancel = ctx.cancellation().clone();
    let stream = ListenStream {
        id: ctx.request_id().to_value(),
        requested,
        notifier: ctx.notifier().clone(),
        cancel: cancel.clone(),
        shutdown: shutdown.clone(),
        hub: server.hub().clone(),
    };
    let standard = stream.result();
    let sid = stream.id.clone();
    let work = handler(ctx, stream);
    let client_closed = async {
        cancel.cancelled().await;
        // The request token is a child of the shutdown token: a shutdown is not the client's doing.
        if shutdown.is_cancelled() {
            std::future::pending::<()>().await;
        }
    };
    let overdue = async {
        shutdown.cancelled().await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        // The client's end first: the handler is then dropped before it could observe it.
        biased;
        _ = client_closed => Err(McpError::internal("subscription cancelled by the client")),
        r = work => r.map(|v| with_subscription_id(v, &sid)),
        _ = overdue => {
            tracing::warn!(subscription = %sid, "the listen handler did not return within {SHUTDOWN_GRACE:?} of shutdown; sending the standard result");
            Ok(standard)
        }
    }
}

/// Adds `_meta.subscriptionId` to an object result that lacks it (the schema requires it).
fn with_subscription_id(mut result: Value, sid: &Value) -> Value {
    if let Some(obj) = result.as_object_mut() {
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.entry(META_SUBSCRIPTION_ID).or_insert_with(|| sid.clone());
        }
    }
    result
}
