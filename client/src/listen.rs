//! `subscriptions/listen` (2026-07-28): one long request whose notifications, tagged with its
//! id, report list changes and resource updates
//! ([subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).
//! The client reads the acknowledgement first, then the events, and opens the subscription
//! again when the server ends it with its result (a graceful shutdown).

use crate::error::ClientError;
use crate::peer::Peer;
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchyard::jsonrpc::Notification;
use switchyard::protocol::META_SUBSCRIPTION_ID;
use tokio::sync::broadcast;

/// How many times in a row a subscription is opened again when the server ends it before any
/// event: a server that ends every stream at once cannot keep the client reopening forever.
const MAX_EMPTY_REOPENS: u32 = 3;

/// What a subscription asks for (`SubscriptionFilter`): every field absent or `false` means not
/// subscribed. JSON: `{"toolsListChanged"?:true,"promptsListChanged"?:true,
/// "resourcesListChanged"?:true,"resourceSubscriptions"?:["uri",..],...}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs (and resources under them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
    /// Fields of extensions (the Tasks extension's `taskIds`, ...), as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SubscriptionFilter {
    /// Nothing yet; add with the methods below.
    pub fn new() -> Self {
        SubscriptionFilter::default()
    }

    /// Asks for `notifications/tools/list_changed`.
    pub fn tools(mut self) -> Self {
        self.tools_list_changed = true;
        self
    }

    /// Asks for `notifications/prompts/list_changed`.
    pub fn prompts(mut self) -> Self {
        self.prompts_list_changed = true;
        self
    }

    /// Asks for `notifications/resources/list_changed`.
    pub fn resources(mut self) -> Self {
        self.resources_list_changed = true;
        self
    }

    /// Asks for `notifications/resources/updated` of the resource at `uri`.
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource_subscriptions.push(uri.into());
        self
    }
}

/// An open subscription: a [`Stream`] of the notifications it was granted, in order.
///
/// The stream ends when the connection does, or with an `Err` when the subscription could not
/// be opened again. When the server ends the subscription gracefully, it is opened again with
/// the same filter and the stream goes on. Dropping it ends the subscription (over HTTP its
/// stream is closed; on stdio `notifications/cancelled` is sent).
pub struct Subscription {
    granted: SubscriptionFilter,
    events: std::pin::Pin<Box<dyn Stream<Item = Result<Notification, ClientError>> + Send>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("granted", &self.granted).finish_non_exhaustive()
    }
}

impl Subscription {
    /// What the server's acknowledgement said it will send: the requested filter, less what it
    /// does not support.
    pub fn granted(&self) -> &SubscriptionFilter {
        &self.granted
    }
}

impl Stream for Subscription {
    type Item = Result<Notification, ClientError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}

/// One open listen request: its id, the notifications receiver, and the request in flight.
struct Open {
    id: i64,
    notes: broadcast::Receiver<Notification>,
    answer: futures::future::BoxFuture<'static, Result<Box<serde_json::value::RawValue>, ClientError>>,
}

/// Opens a subscription and waits for its acknowledgement (at most `timeout`).
///
/// `params` are the request's, `_meta` included.
///
/// Errors: [`ClientError::Rpc`] when the server refuses (`-32601` from a server without
/// subscriptions); [`ClientError::Protocol`] when the stream ends or answers before the
/// acknowledgement; [`ClientError::Timeout`] when no acknowledgement comes in time.
pub(crate) async fn listen(peer: Arc<Peer>, params: Value, timeout: Duration) -> Result<Subscription, ClientError> {
    let (open, granted) = open(&peer, &params, timeout).await?;
    let state = (peer, params, timeout, Some(open), 0u32);
    let events = futures::stream::unfold(state, move |(peer, params, timeout, open, empty)| async move {
        let mut open = open?;
        let mut empty = empty;
        loop {
            tokio::select! {
                answer = &mut open.answer => match answer {
                    // The server ended it gracefully: open it again.
                    Ok(_) if empty < MAX_EMPTY_REOPENS => {
                        empty += 1;
                        match self::open(&peer, &params, timeout).await {
                            Ok((next, _)) => open = next,
                            Err(e) => return Some((Err(e), (peer, params, timeout, None, empty))),
                        }
                    }
                    Ok(_) => {
                        let e = ClientError::Protocol(format!(
                            "the server ended the subscription {MAX_EMPTY_REOPENS} times in a row without an event"
                        ));
                        return Some((Err(e), (peer, params, timeout, None, empty)));
                    }
                    Err(ClientError::Closed) => return None,
                    Err(e) => return Some((Err(e), (peer, params, timeout, None, empty))),
                },
                note = open.notes.recv() => match note {
                    Ok(note) if tagged(&note, open.id) && note.method != "notifications/subscriptions/acknowledged" => {
                        return Some((Ok(note), (peer, params, timeout, Some(open), 0)));
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(target: "switchyard_client", missed, "subscription events were missed by a slow reader");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
            }
        }
    });
    Ok(Subscription { granted, events: Box::pin(events) })
}

/// Sends one `subscriptions/listen` and reads up to its acknowledgement.
async fn open(peer: &Arc<Peer>, params: &Value, timeout: Duration) -> Result<(Open, SubscriptionFilter), ClientError> {
    // Subscribed before the request goes out: the acknowledgement may come at once.
    let mut notes = peer.subscribe();
    let id = peer.reserve_id();
    let answer: futures::future::BoxFuture<'static, Result<Box<serde_json::value::RawValue>, ClientError>> = {
        let peer = peer.clone();
        let params = params.clone();
        Box::pin(async move { peer.request_as(id, "subscriptions/listen", params, None).await })
    };
    let mut open = Open { id, notes: peer.subscribe(), answer };
    let acknowledged = tokio::time::timeout(timeout, async {
        loop {
            tokio::select! {
                answer = &mut open.answer => {
                    return Err(match answer {
                        Ok(_) => ClientError::Protocol("subscriptions/listen ended before its acknowledgement".into()),
                        Err(e) => e,
                    });
                }
                note = notes.recv() => match note {
                    Ok(note) if tagged(&note, id) && note.method == "notifications/subscriptions/acknowledged" => {
                        let granted = note.params.as_ref().and_then(|p| p.get("notifications")).cloned().unwrap_or(json!({}));
                        return serde_json::from_value::<SubscriptionFilter>(granted).map_err(|e| {
                            ClientError::Protocol(format!("the subscription acknowledgement does not decode: {e}"))
                        });
                    }
                    Ok(note) if tagged(&note, id) => {
                        return Err(ClientError::Protocol(format!(
                            "{} came before the subscription's acknowledgement",
                            note.method
                        )));
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Err(ClientError::Closed),
                },
            }
        }
    })
    .await
    .map_err(|_| ClientError::Timeout { method: "subscriptions/listen".into(), timeout })??;
    // Events after the acknowledgement are read from the second receiver, made before the
    // request went out, so none is lost between the two.
    Ok((open, acknowledged))
}

/// Whether `note` belongs to the subscription with request id `id`.
fn tagged(note: &Notification, id: i64) -> bool {
    let tag = note.params.as_ref().and_then(|p| p.get("_meta")).and_then(|m| m.get(META_SUBSCRIPTION_ID));
    tag.and_then(Value::as_i64) == Some(id)
}
