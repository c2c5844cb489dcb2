//! `notifications/resources/updated` of an upstream's resources: while a client of ours is
//! subscribed to our URI of a resource served from the upstream (a mirrored resource, or a URI
//! matching a mirrored template), the gateway is subscribed to the upstream's URI of it, so
//! that the client hears when it changes upstream.
//!
//! On a session upstream that declares `resources.subscribe` this is a `resources/subscribe`
//! per resource (and `resources/unsubscribe` when no client of ours wants it); the updates come
//! with the session's other notifications. On 2026-07-28 it is a `subscriptions/listen` whose
//! `resourceSubscriptions` name them all, opened again when the set changes
//! ([subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).

use futures::stream::{self, BoxStream, StreamExt};
use std::collections::BTreeSet;
use switchyard::jsonrpc::Notification;
use switchyard_client::{Client, SubscriptionFilter};

/// Most `resources/subscribe` (or `resources/unsubscribe`) requests in flight at once on a
/// session upstream.
const SUBSCRIBING: usize = 16;

/// The upstream resources subscribed to on one connection, and (on 2026-07-28) the stream
/// their updates come on.
pub(crate) struct ResourceUpdates {
    subscribed: BTreeSet<String>,
    stream: BoxStream<'static, Notification>,
}

impl ResourceUpdates {
    /// Nothing subscribed yet.
    pub(crate) fn new() -> Self {
        ResourceUpdates { subscribed: BTreeSet::new(), stream: stream::pending().boxed() }
    }

    /// Subscribes to exactly `uris` (the upstream's own URIs of the resources our clients want) when
    /// the upstream can notify of updates; a failure is logged and the rest goes on (that
    /// resource's updates are not heard).
    pub(crate) async fn follow(&mut self, upstream: &str, client: &Client, uris: BTreeSet<String>) {
        if uris == self.subscribed {
            return;
        }
        if client.protocol_version() == switchyard::protocol::MODERN_VERSION {
            self.listen(upstream, client, uris).await;
            return;
        }
        if client.capabilities().pointer("/resources/subscribe") != Some(&serde_json::Value::Bool(true)) {
            return;
        }
        // A request per resource, up to SUBSCRIBING at a time: one after another, an upstream
        // with hundreds of resources would keep its updates unheard for hundreds of round trips.
        let gone: Vec<&String> = self.subscribed.difference(&uris).collect();
        stream::iter(gone)
            .for_each_concurrent(SUBSCRIBING, |gone| async move {
                if let Err(e) = client.unsubscribe_resource(gone).await {
                    tracing::debug!(target: "switchyard_gateway", upstream, uri = gone, "resources/unsubscribe failed: {e}");
                }
            })
            .await;
        let (kept, new): (BTreeSet<String>, BTreeSet<String>) =
            uris.into_iter().partition(|uri| self.subscribed.contains(uri));
        let mut subscribed = kept;
        let mut answers = stream::iter(new)
            .map(|uri| async move {
                let answer = client.subscribe_resource(&uri).await;
                (uri, answer)
            })
            .buffer_unordered(SUBSCRIBING);
        while let Some((uri, answer)) = answers.next().await {
            match answer {
                Ok(()) => {
                    subscribed.insert(uri);
                }
                Err(e) => {
                    tracing::warn!(target: "switchyard_gateway", upstream, uri, "updates of this resource will not be heard: resources/subscribe failed: {e}");
                }
            }
        }
        self.subscribed = subscribed;
    }

    /// Replaces the 2026-07-28 subscription with one for `uris` (none when empty). The new one
    /// is open before the old one ends, so an update of a URI in both is not missed between.
    async fn listen(&mut self, upstream: &str, client: &Client, uris: BTreeSet<String>) {
        if uris.is_empty() {
            // The old subscription ends when its stream is dropped.
            self.stream = stream::pending().boxed();
            self.subscribed.clear();
            return;
        }
        let filter = uris.iter().fold(SubscriptionFilter::new(), |filter, uri| filter.resource(uri.clone()));
        match client.listen(filter).await {
            Ok(subscription) => {
                self.stream = subscription.filter_map(|event| async move { event.ok() }).boxed();
                self.subscribed = uris;
            }
            Err(e) => {
                tracing::warn!(target: "switchyard_gateway", upstream, "updates of its resources will not be heard: subscriptions/listen failed: {e}");
                self.stream = stream::pending().boxed();
                self.subscribed.clear();
            }
        }
    }

    /// The next update (on a session they come with the session's notifications instead);
    /// pending for ever once the stream has ended.
    pub(crate) async fn next(&mut self) -> Notification {
        loop {
            if let Some(note) = self.stream.next().await {
                return note;
            }
            // The subscription could not be kept (the client reopens one the server ended
            // gracefully): the next listing change subscribes again.
            self.stream = stream::pending().boxed();
            self.subscribed.clear();
        }
    }
}
