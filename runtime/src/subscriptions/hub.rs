use super::Event;
use crate::context::Metric;
use futures::stream::BoxStream;
use std::sync::Arc;
use tokio::sync::broadcast;

/// A subscriber fell so far behind that events were lost; its subscription is ended with its
/// result rather than silently skipping events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lagged;

/// The events a subscriber receives, in publishing order.
pub type EventStream = BoxStream<'static, Result<Event, Lagged>>;

/// Carries events from publishers to every open subscription of a server.
///
/// Contract: `publish` never blocks and never fails the publisher; every subscription opened
/// before `publish` is called sees that event (or [`Lagged`]), in the order events were
/// published from one thread; a slow subscriber never delays the others. The default
/// [`InProcessHub`] serves one process; an implementation over a message broker lets several
/// server instances share subscriptions.
pub trait DeliveryHub: Send + Sync + 'static {
    /// Publishes an event to every current subscriber.
    fn publish(&self, event: Event);
    /// Opens a subscription to events published from now on.
    fn subscribe(&self) -> EventStream;

    /// True when events travel between processes (a broker shared by several server instances
    /// behind one address). [`ServerBuilder::build`](crate::ServerBuilder::build) then requires a
    /// `requestState` key (`ServerBuilder::request_state_key`), since the retry of an
    /// input-required call may reach another instance, which must accept the state the first one
    /// signed
    /// ([MRTR server requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#server-requirements-basic-workflow)).
    /// Default `false`.
    fn spans_instances(&self) -> bool {
        false
    }

    /// `Err(reason)` while events cannot travel (a broker hub that lost its link), `Ok(())`
    /// otherwise. A hub that [spans instances](Self::spans_instances) is a readiness check of the
    /// server ([`ServerBuilder::readiness_check`](crate::ServerBuilder::readiness_check), named
    /// `"delivery hub"`), so a load balancer stops sending requests to an instance cut off
    /// from the others. Default `Ok(())`.
    fn health(&self) -> Result<(), String> {
        Ok(())
    }

    /// Events dropped instead of published since the hub started (a broker hub's outbox was
    /// full, the broker refused one), for the `switchyard.hub.dropped_events` metric. Default 0.
    fn dropped_events(&self) -> u64 {
        0
    }

    /// The hub's own further readings (e.g. a broker hub's round trip and stalls), added to
    /// [`Server::metrics`](crate::Server::metrics) after `switchyard.hub.connected` and
    /// `switchyard.hub.dropped_events` when the hub [spans instances](Self::spans_instances).
    /// Must be cheap: read from memory, no I/O. Default: none.
    fn metrics(&self) -> Vec<Metric> {
        Vec::new()
    }
}

/// The in-process hub: a bounded broadcast channel shared by every connection of a server.
/// A subscriber more than `capacity` events behind gets [`Lagged`].
#[derive(Debug)]
pub struct InProcessHub {
    /// Events travel behind an `Arc`: the channel allocates every slot up front, and a slot
    /// holding an [`Event`] itself (its largest variant, two `String`s and two `Value`s) made
    /// the default 1,024 slots 221 KB of every server's memory, against 32 KB this way.
    tx: broadcast::Sender<Arc<Event>>,
}

impl InProcessHub {
    /// A hub that buffers up to `capacity` events per slow subscriber (at least 1). The buffer
    /// is allocated when the hub is made: 32 bytes a slot, `capacity` rounded up to a power of
    /// two slots, plus the events still buffered.
    pub fn new(capacity: usize) -> Self {
        InProcessHub { tx: broadcast::channel(capacity.max(1)).0 }
    }
}

impl Default for InProcessHub {
    fn default() -> Self {
        InProcessHub::new(1024)
    }
}

impl DeliveryHub for InProcessHub {
    fn publish(&self, event: Event) {
        // No subscriber is not an error: nobody is listening (and nothing to allocate for).
        if self.tx.receiver_count() == 0 {
            return;
        }
        let _ = self.tx.send(Arc::new(event));
    }

    fn subscribe(&self) -> EventStream {
        let rx = self.tx.subscribe();
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(e) => Some((Ok(Arc::unwrap_or_clone(e)), rx)),
                Err(broadcast::error::RecvError::Lagged(_)) => Some((Err(Lagged), rx)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::{DeliveryHub, Event, InProcessHub, Lagged};
    use futures::StreamExt;
    use serde_json::json;

    fn extension(item: u32) -> Event {
        Event::Extension {
            key: "taskIds".into(),
            item: json!(format!("task-{item}")),
            method: "notifications/tasks".into(),
            params: json!({"taskId": format!("task-{item}"), "status": "working"}),
        }
    }

    #[tokio::test]
    async fn every_subscriber_gets_each_event_whole_and_in_order() {
        let hub = InProcessHub::default();
        let (mut a, mut b) = (hub.subscribe(), hub.subscribe());
        let sent = [Event::ToolsListChanged, extension(1), Event::ResourceUpdated("file:///a".into()), extension(2)];
        for e in sent.clone() {
            hub.publish(e);
        }
        for stream in [&mut a, &mut b] {
            for e in &sent {
                assert_eq!(stream.next().await, Some(Ok(e.clone())));
            }
        }
    }

    #[tokio::test]
    async fn a_subscriber_more_than_capacity_behind_is_told_it_lagged() {
        let hub = InProcessHub::new(2);
        let mut late = hub.subscribe();
        for i in 0..3 {
            hub.publish(extension(i));
        }
        assert_eq!(late.next().await, Some(Err(Lagged)));
        // It goes on from the oldest event still buffered.
        assert_eq!(late.next().await, Some(Ok(extension(1))));
        assert_eq!(late.next().await, Some(Ok(extension(2))));
    }
}
