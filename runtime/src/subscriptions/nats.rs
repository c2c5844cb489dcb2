//! [`NatsHub`]: a [`DeliveryHub`] over core NATS, for several instances of one server behind a
//! load balancer (docs/scaling.md). An event published on any instance reaches every matching listen
//! stream on every instance.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use switchyard::Server;
//! use switchyard::subscriptions::nats::NatsHub;
//!
//! let hub = NatsHub::builder().subject("weather.switchyard.events").connect("nats://127.0.0.1:4222").await?;
//! let health = hub.clone(); // `health.is_connected()` for a readiness probe
//! let key: [u8; 32] = [7; 32]; // every instance: the same secret, e.g. from the environment
//! let server = Server::builder("weather", "1.0.0").delivery_hub(hub).request_state_key(key).build()?;
//! # let _ = (server, health); Ok(()) }
//! ```
//!
//! # How it works
//!
//! Each hub holds one NATS connection (the official `async-nats` client) and one subscription to
//! one subject (default `switchyard.events`; servers that share a broker each need their own).
//! [`publish`](DeliveryHub::publish) encodes the event as JSON and puts it into a bounded outbox,
//! which one task sends in order. The subscription receives every instance's events, this
//! instance's own included (they come back from the broker), and feeds a local broadcast channel
//! that the local subscribers read; a subscriber more than `capacity` events behind gets
//! [`Lagged`], as with [`InProcessHub`](super::InProcessHub).
//!
//! The link is *up* once, after each (re)connection, a probe message of the hub's own has come
//! back through its subscription: the broker then routes the subject to this instance, so
//! nothing another instance publishes from then on is missed. [`NatsHub::is_connected`] reports
//! exactly that.
//!
//! # Ordering
//!
//! - The events one instance publishes reach every subscriber on every instance in the order
//!   they entered that instance's outbox (for one publishing thread: the order of its calls).
//! - All subscribers on one instance see one sequence, the instance's own events included.
//! - There is no total order across instances: events that two instances publish at the same
//!   time may be interleaved differently on different instances (core NATS orders per
//!   connection only).
//!
//! # Failures
//!
//! A publisher is never blocked and never fails; a listen stream that may have missed an event
//! ends with its result (`Err(Lagged)` from the hub), never silently.
//!
//! | | `publish` | an open listen stream | a new listen stream |
//! |---|---|---|---|
//! | broker unreachable at start | returns at once; queued (below) | — | ends at once |
//! | link drops | returns at once; queued | gets `Err(Lagged)`: ends with its result | ends at once |
//! | link back (probe returned) | the queue is sent, in order | — | normal |
//!
//! - **Start.** [`NatsHubBuilder::connect`] fails only on a malformed address or subject. It
//!   waits for the first connection attempt (at most `initial_wait`, default 5 s); when the
//!   broker is unreachable it returns anyway and keeps trying in the background, with the link
//!   down.
//! - **Queued while down.** Events wait in the outbox (`outbox_capacity`, default 10,000),
//!   then in the client's command queue (2,048 by default, `ConnectOptions::client_capacity`);
//!   both are sent in order once the broker is back, so subscribers opened after the reconnect
//!   may receive events published during the outage. When the outbox is full (the broker is
//!   unreachable and the client's queue has filled, or a burst outruns the connection),
//!   `publish` drops the event, counts it in [`NatsHub::dropped_events`] and warns (at most once
//!   a second).
//! - **Dropped, noticed everywhere.** The next event a hub sends after dropping some is marked,
//!   and every instance that receives it gives each of its local subscribers `Err(Lagged)`
//!   before that event (the mark may come one event early, never late).
//! - **Lost in flight.** What the client had written to the old connection but the broker had
//!   not received is lost. Every event carries its publisher's sequence number, and each hub
//!   announces its last number once its link is back up, so an instance that saw that
//!   publisher's earlier numbers notices the hole (at the announcement or the next event) and
//!   its subscribers get `Err(Lagged)`; so do messages the client dropped for a slow
//!   subscription. An instance that has seen nothing from that publisher since its own link came
//!   up cannot notice; its subscribers opened since then can miss those events.
//! - **Noticing a dead link.** A closed connection is noticed at once; a silent network failure
//!   after two unanswered pings (the client's `ping_interval`, 60 s by default).
//! - **Noticing a stalled broker.** While the link is up the hub sends its probe every
//!   `probe_interval` (default 2 s) and times its round trip ([`NatsHub::round_trip`]). A probe
//!   not back within `stall_timeout` (default 3 s) counts as a stall ([`NatsHub::stalls`]): the
//!   link is down as if the connection had dropped (open streams end with `Err(Lagged)`,
//!   readiness fails) until a probe comes back. A broker that is connected but frozen, or too
//!   loaded to route within the timeout, is therefore noticed within `probe_interval` +
//!   `stall_timeout` + 1 s, not after the client's two pings.
//! - **Readers that go on** after `Err(Lagged)` ([`Publisher::subscribe`](super::Publisher::subscribe)):
//!   they get `Err(Lagged)` when the link drops and again when it is back up; resynchronise from
//!   the source of truth after the second one, since events published elsewhere during the
//!   outage are lost.
//! - **No resuming.** A stream is ended rather than resumed across an outage: resuming needs
//!   replay of what was missed (a JetStream stream, with a consumer per subscriber and a
//!   position to resume from), which costs the broker storage and the client a round trip per
//!   listen; listen clients can simply listen again and re-read the lists.
//! - **Shutdown.** Dropping the last clone of the hub stops its tasks; local streams then end.
//!   While the broker is unreachable, the client library's own connection task keeps retrying
//!   until it reaches the broker (it checks for shutdown only when connected), then ends.
//!
//! Messages on the subject that are not this module's wire form (malformed JSON, an unknown
//! event type) are skipped with a warning. The wire form is private: run the same version of
//! Switchyard on every instance.

use super::{DeliveryHub, Event, EventStream, Lagged};
use crate::context::Metric;
use async_nats::{Client, ConnectOptions, ServerAddr, Subject};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

const DEFAULT_SUBJECT: &str = "switchyard.events";
const DEFAULT_CAPACITY: usize = 1024;
const DEFAULT_OUTBOX: usize = 10_000;
const DEFAULT_INITIAL_WAIT: Duration = Duration::from_secs(5);
/// The broadcast channel allocates all its slots up front.
const MAX_CAPACITY: usize = 1 << 20;
const MAX_OUTBOX: usize = 1 << 24;
/// How often the link is checked against the client's own connection state, in case one of its
/// events was lost (its event queue drops events when full).
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// While the link is down: a probe not back within this time (or the stall timeout, if longer)
/// is sent again.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_secs(2);
const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(3);
/// Sequence numbers are remembered for at most this many publishers (each instance start is a
/// new one); beyond it they are forgotten, which can only miss a hole, never invent one.
const MAX_PUBLISHERS: usize = 4096;

/// Why [`NatsHub::connect`] or [`NatsHubBuilder::connect`] failed. An unreachable broker is not
/// an error (the hub connects in the background).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NatsHubError {
    /// The subject is empty, has an empty token, whitespace, or a wildcard (`*`, `>`).
    #[error("NATS hub: invalid subject `{subject}`: {reason}")]
    InvalidSubject {
        /// The subject given.
        subject: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The broker address is malformed (expected e.g. `nats://host:4222`; several separated by
    /// commas).
    #[error("NATS hub: cannot use the broker address `{url}`: {source}")]
    Address {
        /// The address given.
        url: String,
        /// The client library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The client library refused to start the connection or the subscription.
    #[error("NATS hub: {what}: {source}")]
    Client {
        /// What was being done.
        what: &'static str,
        /// The client library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The settings of a [`NatsHub`]: made by [`NatsHub::builder`], ended by
/// [`connect`](Self::connect).
#[derive(Debug)]
pub struct NatsHubBuilder {
    subject: String,
    capacity: usize,
    outbox: usize,
    initial_wait: Duration,
    probe_interval: Duration,
    stall_timeout: Duration,
    options: Option<ConnectOptions>,
}

impl Default for NatsHubBuilder {
    fn default() -> Self {
        NatsHubBuilder {
            subject: DEFAULT_SUBJECT.to_owned(),
            capacity: DEFAULT_CAPACITY,
            outbox: DEFAULT_OUTBOX,
            initial_wait: DEFAULT_INITIAL_WAIT,
            probe_interval: DEFAULT_PROBE_INTERVAL,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            options: None,
        }
    }
}

impl NatsHubBuilder {
    /// The NATS subject the events travel on (default `switchyard.events`). Every instance of
    /// one server uses the same subject; different servers sharing a broker use different
    /// ones, e.g. `weather.switchyard.events`. Checked by `connect`
    /// ([`NatsHubError::InvalidSubject`]).
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = subject.into();
        self
    }

    /// Events buffered per slow local subscriber before it gets [`Lagged`] (default 1024, as
    /// [`InProcessHub`](super::InProcessHub); clamped to 1..=1,048,576, allocated up front at
    /// 40 bytes an event slot, `capacity` rounded up to a power of two slots).
    pub fn capacity(mut self, events: usize) -> Self {
        self.capacity = events;
        self
    }

    /// Encoded events waiting to be sent (default 10,000; clamped to 1..=16,777,216): what
    /// `publish` can absorb while the broker is slow or unreachable before it drops events.
    pub fn outbox_capacity(mut self, events: usize) -> Self {
        self.outbox = events;
        self
    }

    /// How long `connect` waits for the first connection attempt (default 5 s). `connect`
    /// returns as soon as the link is up or the attempt failed; zero: do not wait (the link is
    /// then reported down until it comes up).
    pub fn initial_wait(mut self, wait: Duration) -> Self {
        self.initial_wait = wait;
        self
    }

    /// How often the hub sends its probe through the broker while the link is up (default 2 s;
    /// at least 100 ms), to time the round trip and to notice a stalled broker. Each probe is one
    /// message of about 40 bytes on the hub's subject, seen by every instance and skipped.
    pub fn probe_interval(mut self, every: Duration) -> Self {
        self.probe_interval = every.max(Duration::from_millis(100));
        self
    }

    /// How long a probe may take to come back through the broker before the link counts as
    /// stalled, i.e. down (default 3 s; at least 100 ms). Checked once a second, so a stall is
    /// noticed within `probe_interval + stall_timeout + 1 s`.
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout.max(Duration::from_millis(100));
        self
    }

    /// Client options of `async-nats` 0.42 (credentials, TLS, `ping_interval`,
    /// `reconnect_delay_callback`, `client_capacity`, `name`, ...). The hub sets
    /// `retry_on_initial_connect` and its own `event_callback` (replacing one given here). Do
    /// not set `no_echo`: the hub needs its own messages back, so the link would never be up.
    pub fn connect_options(mut self, options: ConnectOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// Starts the hub: one connection to `url` (e.g. `nats://127.0.0.1:4222`; several
    /// addresses of one cluster separated by commas), one subscription, and the hub's two
    /// tasks. Must run inside a Tokio runtime. Waits for the first connection attempt (see
    /// [`initial_wait`](Self::initial_wait)); an unreachable broker is not an error.
    ///
    /// Errors: [`NatsHubError::InvalidSubject`], [`NatsHubError::Address`], or
    /// [`NatsHubError::Client`] when the client library refuses to start.
    pub async fn connect(self, url: &str) -> Result<NatsHub, NatsHubError> {
        check_subject(&self.subject)?;
        let addresses = url
            .split(',')
            .map(|a| a.trim().parse::<ServerAddr>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| NatsHubError::Address { url: url.to_owned(), source: Box::new(e) })?;
        let subject = Subject::from(self.subject.as_str());
        // The callback must not wait: the client drops its events while its queue is full.
        let (events_tx, events_rx) = mpsc::channel(64);
        let options = self.options.unwrap_or_default().retry_on_initial_connect().event_callback(move |event| {
            let events_tx = events_tx.clone();
            async move {
                let _ = events_tx.try_send(event);
            }
        });
        let client = options
            .connect(addresses)
            .await
            .map_err(|e| NatsHubError::Client { what: "cannot start the client", source: Box::new(e) })?;
        // Queued in the client before anything this hub publishes, so its own probe and events
        // come back.
        let messages = client
            .subscribe(subject.clone())
            .await
            .map_err(|e| NatsHubError::Client { what: "cannot subscribe", source: Box::new(e) })?;

        let shared = Arc::new(Shared {
            local: broadcast::channel(self.capacity.clamp(1, MAX_CAPACITY)).0,
            link: watch::channel(LinkState::Pending).0,
            dropped: AtomicU64::new(0),
            gap: AtomicBool::new(false),
            started: std::time::Instant::now(),
            last_drop_warning: AtomicU64::new(0),
            round_trip_nanos: AtomicU64::new(NO_ROUND_TRIP),
            stalls: AtomicU64::new(0),
            losses: AtomicU64::new(0),
        });
        let id = rand::random::<u64>();
        let stop = CancellationToken::new();
        let (outbox, outbox_rx) = mpsc::channel(self.outbox.clamp(1, MAX_OUTBOX));
        tokio::spawn(send_outbox(client.clone(), subject.clone(), id, shared.clone(), outbox_rx, stop.clone()));
        let pump = Pump {
            shared: shared.clone(),
            client,
            subject,
            id,
            announce: outbox.clone(),
            seen: Sequences::default(),
            probe: None,
            probes_sent: 0,
            probe_warned: false,
            last_probe: None,
            probe_interval: self.probe_interval,
            stall_timeout: self.stall_timeout,
            loss_warnings: Throttle::default(),
            skip_warnings: Throttle::default(),
        };
        tokio::spawn(pump.run(messages, events_rx, stop.clone()));

        let mut link = shared.link.subscribe();
        let _ = tokio::time::timeout(self.initial_wait, link.wait_for(|s| *s != LinkState::Pending)).await;
        Ok(NatsHub { inner: Arc::new(Inner { shared, outbox, subject: self.subject, _stop: stop.drop_guard() }) })
    }
}

/// Subjects the hub can both publish and subscribe to: dot-separated non-empty tokens without
/// whitespace or wildcards.
fn check_subject(subject: &str) -> Result<(), NatsHubError> {
    let reason = if subject.is_empty() {
        Some("it is empty")
    } else if subject.split('.').any(str::is_empty) {
        Some("it has an empty token (`..`, or a leading or trailing dot)")
    } else if subject.chars().any(char::is_whitespace) {
        Some("it contains whitespace")
    } else if subject.split('.').any(|t| t == "*" || t == ">") {
        Some("it contains a wildcard token (`*` or `>`); events need one concrete subject")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(NatsHubError::InvalidSubject { subject: subject.to_owned(), reason }),
        None => Ok(()),
    }
}

/// A [`DeliveryHub`] over core NATS that lets several server instances share listen
/// subscriptions; the [module docs](crate::subscriptions::nats) say what happens when the broker
/// is unreachable, and what order events keep.
///
/// Cloning is cheap and shares the hub (keep a clone for health checks after handing one to
/// [`ServerBuilder::delivery_hub`](crate::ServerBuilder::delivery_hub)); dropping the last clone
/// stops it. [`spans_instances`](DeliveryHub::spans_instances) is true, so the server needs a
/// [`request_state_key`](crate::ServerBuilder::request_state_key).
#[derive(Clone)]
pub struct NatsHub {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    outbox: mpsc::Sender<Outgoing>,
    subject: String,
    /// Stops both tasks when the last clone of the hub goes.
    _stop: DropGuard,
}

/// What the hub's handle and its tasks share.
struct Shared {
    local: broadcast::Sender<Delivery>,
    link: watch::Sender<LinkState>,
    dropped: AtomicU64,
    /// Events were dropped since the outbox task last sent one: it marks the next one, so that
    /// receivers notice.
    gap: AtomicBool,
    started: std::time::Instant,
    /// When `drop_event` last warned (see there).
    last_drop_warning: AtomicU64,
    /// The last probe's round trip; [`NO_ROUND_TRIP`] before the first one came back.
    round_trip_nanos: AtomicU64,
    /// Probes that did not come back within the stall timeout while the link was up.
    stalls: AtomicU64,
    /// Times the link went from up to down (connection dropped, or a stall).
    losses: AtomicU64,
}

const NO_ROUND_TRIP: u64 = u64::MAX;

impl Shared {
    /// Counts a dropped event and has the next one sent marked. Warns at most once a second:
    /// an unreachable broker can make every publish drop.
    fn drop_event(&self, reason: impl std::fmt::Display) {
        let total = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        self.gap.store(true, Ordering::Release);
        // Milliseconds since the hub started, plus one so that zero means "never warned".
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX).saturating_add(1);
        let last = self.last_drop_warning.load(Ordering::Relaxed);
        if (last == 0 || now.saturating_sub(last) >= 1000)
            && self.last_drop_warning.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            tracing::warn!(
                %reason,
                dropped_so_far = total,
                "NATS hub: event dropped (further drops within a second are only counted)"
            );
        }
    }

    fn is_up(&self) -> bool {
        *self.link.borrow() == LinkState::Up
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkState {
    /// The first connection attempt has not finished.
    Pending,
    Up,
    Down,
}

/// What travels on the local broadcast channel, whose slots are allocated up front: an event
/// behind an `Arc` keeps a slot at 40 bytes (an [`Event`] inline made it 216).
#[derive(Debug, Clone)]
enum Delivery {
    Event(Arc<Event>),
    /// Events may have been lost (the link dropped or came back, or a publisher's numbering
    /// has a hole): every subscriber gets [`Lagged`].
    Gap,
}

impl std::fmt::Debug for NatsHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsHub")
            .field("subject", &self.inner.subject)
            .field("connected", &self.is_connected())
            .field("dropped_events", &self.dropped_events())
            .finish_non_exhaustive()
    }
}

impl NatsHub {
    /// [`NatsHub::builder`]`().connect(url)` with the defaults: subject `switchyard.events`,
    /// capacity 1024, outbox 10,000, initial wait 5 s.
    ///
    /// Errors: see [`NatsHubBuilder::connect`] (never for an unreachable broker).
    pub async fn connect(url: &str) -> Result<NatsHub, NatsHubError> {
        NatsHub::builder().connect(url).await
    }

    /// Settings (subject, capacities, client options) before connecting.
    pub fn builder() -> NatsHubBuilder {
        NatsHubBuilder::default()
    }

    /// True while the link is up: connected, and the hub's own probe came back through its
    /// subscription since the last (re)connection. For readiness checks; while it is false a
    /// new subscription starts with `Err(`[`Lagged`]`)` (a listen stream then ends at once).
    pub fn is_connected(&self) -> bool {
        self.inner.shared.is_up()
    }

    /// Events this hub dropped instead of publishing, since it started: the outbox was full
    /// (broker unreachable or slower than the publishers), or the client refused one (larger
    /// than the broker's `max_payload`, 1 MiB by default). Events lost in flight when the link
    /// dropped are not counted here (their receivers get [`Lagged`]).
    pub fn dropped_events(&self) -> u64 {
        self.inner.shared.dropped.load(Ordering::Relaxed)
    }

    /// The subject the hub publishes and subscribes to.
    pub fn subject(&self) -> &str {
        &self.inner.subject
    }

    /// The round trip of the last probe that came back: from the hub's publish through the
    /// broker to its own subscription, i.e. how late an event reaches the other instances plus
    /// the way back. `None` before the first probe returned. Probes go every `probe_interval`
    /// while the link is up, so the value is at most that old then.
    pub fn round_trip(&self) -> Option<Duration> {
        match self.inner.shared.round_trip_nanos.load(Ordering::Relaxed) {
            NO_ROUND_TRIP => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// Probes that did not come back within `stall_timeout` while the link was up, since the
    /// hub started. Each one took the link down until a later probe returned.
    pub fn stalls(&self) -> u64 {
        self.inner.shared.stalls.load(Ordering::Relaxed)
    }

    /// Times the link went down since the hub started: the connection dropped or the broker
    /// stalled.
    pub fn link_losses(&self) -> u64 {
        self.inner.shared.losses.load(Ordering::Relaxed)
    }
}

impl DeliveryHub for NatsHub {
    /// Encodes `event` and queues it for sending; never waits. A full outbox drops the event
    /// (counted in [`NatsHub::dropped_events`], warned about at most once a second); the next
    /// event sent is marked so that every instance's subscribers get [`Lagged`].
    fn publish(&self, event: Event) {
        match serde_json::value::to_raw_value(&WireEvent::from(&event)) {
            Ok(encoded) => match self.inner.outbox.try_send(Outgoing::Event(encoded)) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => self.inner.shared.drop_event("the outbox is full"),
                Err(mpsc::error::TrySendError::Closed(_)) => self.inner.shared.drop_event("the hub has stopped"),
            },
            Err(_) => self.inner.shared.drop_event("the event cannot be encoded as JSON"),
        }
    }

    /// Every event that reaches this instance from now on, from any instance, in one order for
    /// all local subscribers. Starts with `Err(Lagged)` when the link is not up; `Err(Lagged)`
    /// whenever events may have been lost (link dropped or back, events dropped by a publisher
    /// or lost in flight, the subscriber more than `capacity` behind); ends when the hub stops.
    fn subscribe(&self) -> EventStream {
        // Subscribe before reading the link state: a drop after the read is then seen as a Gap.
        let rx = self.inner.shared.local.subscribe();
        let down = (!self.inner.shared.is_up()).then_some(Err(Lagged));
        let events = futures::stream::unfold(rx, |mut rx| async move {
            match rx.recv().await {
                Ok(Delivery::Event(e)) => Some((Ok(Arc::unwrap_or_clone(e)), rx)),
                Ok(Delivery::Gap) | Err(broadcast::error::RecvError::Lagged(_)) => Some((Err(Lagged), rx)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        });
        Box::pin(futures::stream::iter(down).chain(events))
    }

    /// True: events travel between instances.
    fn spans_instances(&self) -> bool {
        true
    }

    /// `Err` while the link is down ([`NatsHub::is_connected`] is false): listen subscriptions
    /// opened here would miss other instances' events.
    fn health(&self) -> Result<(), String> {
        if self.is_connected() {
            Ok(())
        } else {
            Err(format!("the link to the NATS broker (subject {:?}) is down", self.subject()))
        }
    }

    /// [`NatsHub::dropped_events`].
    fn dropped_events(&self) -> u64 {
        NatsHub::dropped_events(self)
    }

    /// `switchyard.hub.round_trip` (gauge, s: [`NatsHub::round_trip`], once a probe came
    /// back), `switchyard.hub.stalls` (counter, `{stall}`: [`NatsHub::stalls`]) and
    /// `switchyard.hub.link_losses` (counter, `{loss}`: [`NatsHub::link_losses`]).
    fn metrics(&self) -> Vec<Metric> {
        let mut all = Vec::with_capacity(3);
        if let Some(rtt) = self.round_trip() {
            all.push(Metric::gauge(
                "switchyard.hub.round_trip",
                "Round trip of the delivery hub's last probe through the broker (its delivery lag and back)",
                "s",
                rtt.as_secs_f64(),
            ));
        }
        all.push(Metric::counter(
            "switchyard.hub.stalls",
            "Times the broker did not return the hub's probe in time while the link was up",
            "{stall}",
            self.stalls() as f64,
        ));
        all.push(Metric::counter(
            "switchyard.hub.link_losses",
            "Times the delivery hub's broker link went down (connection dropped or broker stalled)",
            "{loss}",
            self.link_losses() as f64,
        ));
        all
    }
}

/// What the outbox task sends.
enum Outgoing {
    /// An encoded event ([`WireEvent`] JSON); numbered when sent.
    Event(Box<RawValue>),
    /// The last number used, after this hub's link came (back) up: receivers that saw the
    /// numbers before notice events lost in flight without waiting for the next event.
    Announce,
}

/// The outbox task: numbers the events and hands them to the client, one at a time, so that
/// one instance's events keep their order.
async fn send_outbox(
    client: Client,
    subject: Subject,
    from: u64,
    shared: Arc<Shared>,
    mut outbox: mpsc::Receiver<Outgoing>,
    stop: CancellationToken,
) {
    let mut seq: u64 = 0;
    loop {
        let next = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            next = outbox.recv() => match next {
                Some(next) => next,
                None => return,
            },
        };
        let (payload, numbered) = match &next {
            Outgoing::Event(event) => {
                // The drops may have come just before or just after this event was queued;
                // marking this one reports them at most one event early, never misses them.
                let lost = shared.gap.swap(false, Ordering::AcqRel);
                seq += 1;
                (Envelope { from, seq: Some(seq), probe: None, event: Some(event), lost }, true)
            }
            Outgoing::Announce => (Envelope { from, seq: Some(seq), probe: None, event: None, lost: false }, false),
        };
        let Ok(payload) = serde_json::to_vec(&payload) else {
            // Not reachable: every part is already JSON.
            continue;
        };
        tokio::select! {
            biased;
            () = stop.cancelled() => return,
            sent = client.publish(subject.clone(), payload.into()) => {
                if let Err(error) = sent && numbered {
                    // Not handed over, so its number is free again; the next event is marked.
                    seq -= 1;
                    shared.drop_event(format_args!("the client refused it: {error}"));
                }
            }
        }
    }
}

/// The receiving task: turns the subscription into local deliveries and follows the link.
struct Pump {
    shared: Arc<Shared>,
    client: Client,
    subject: Subject,
    id: u64,
    /// The outbox, for the announcement after the link comes up.
    announce: mpsc::Sender<Outgoing>,
    seen: Sequences,
    /// The probe in flight: its number and when it was sent.
    probe: Option<(u64, Instant)>,
    probes_sent: u64,
    probe_warned: bool,
    /// When the last probe was sent, for the periodic ones while up.
    last_probe: Option<Instant>,
    probe_interval: Duration,
    stall_timeout: Duration,
    loss_warnings: Throttle,
    skip_warnings: Throttle,
}

/// At most one warning a second of one kind: a flood (of losses, of foreign messages) must not
/// become a flood of log lines. The ones left out are counted in the next.
#[derive(Debug, Default)]
struct Throttle {
    last: Option<Instant>,
    left_out: u64,
}

impl Throttle {
    /// `Some(left out since the last warning)` when a warning may be logged now.
    fn allow(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self.last.is_some_and(|last| now.duration_since(last) < Duration::from_secs(1)) {
            self.left_out += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.left_out))
    }
}

impl Pump {
    async fn run(
        mut self,
        mut messages: async_nats::Subscriber,
        mut link_events: mpsc::Receiver<async_nats::Event>,
        stop: CancellationToken,
    ) {
        let mut check = tokio::time::interval(CHECK_EVERY);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            // Link events first: a drop must reach the subscribers before anything else.
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                Some(event) = link_events.recv() => self.on_link_event(event),
                message = messages.next() => match message {
                    Some(message) => self.on_message(&message.payload),
                    None => {
                        // The client has closed for good; every new subscription ends at once.
                        self.link_lost("the NATS client closed");
                        tracing::error!("NATS hub: the client closed; no more events will be delivered");
                        return;
                    }
                },
                _ = check.tick() => self.check(),
            }
        }
    }

    fn on_link_event(&mut self, event: async_nats::Event) {
        match event {
            async_nats::Event::Connected => {
                if self.shared.is_up() {
                    // Connected again without a Disconnected seen (the client's event queue
                    // can drop events): the link did go down in between.
                    self.link_lost("reconnected");
                }
                self.send_probe();
            }
            async_nats::Event::Disconnected => self.link_lost("disconnected from the broker"),
            async_nats::Event::SlowConsumer(_) => {
                tracing::warn!("NATS hub: the client dropped events (slow consumer); subscribers get Lagged");
                self.seen.forget();
                self.gap();
            }
            async_nats::Event::ClientError(error) => {
                if *self.shared.link.borrow() == LinkState::Pending {
                    tracing::warn!(%error, "NATS hub: the broker is unreachable; connecting in the background");
                    self.shared.link.send_replace(LinkState::Down);
                } else {
                    tracing::debug!(%error, "NATS hub: client error");
                }
            }
            async_nats::Event::ServerError(error) => tracing::warn!(%error, "NATS hub: the broker reported an error"),
            other => tracing::debug!(event = %other, "NATS hub: client event"),
        }
    }

    fn on_message(&mut self, payload: &[u8]) {
        let envelope: Envelope<'_> = match serde_json::from_slice(payload) {
            Ok(e) => e,
            Err(error) => return self.skipped(payload.len(), &error),
        };
        match envelope {
            Envelope { from, seq: None, probe: Some(nonce), event: None, lost: false } => {
                if from == self.id {
                    self.on_probe(nonce);
                }
            }
            Envelope { from, seq: Some(seq), probe: None, event: None, lost: false } => {
                if !self.seen.note(from, seq, false) {
                    self.lost(from, seq, "events were lost in flight");
                }
            }
            Envelope { from, seq: Some(seq), probe: None, event: Some(raw), lost } => {
                if lost {
                    self.lost(from, seq, "the publisher dropped events");
                }
                if !self.seen.note(from, seq, true) {
                    self.lost(from, seq, "events were lost in flight");
                }
                match serde_json::from_str::<WireEvent<'_>>(raw.get()) {
                    // No subscriber is not an error.
                    Ok(wire) => drop(self.shared.local.send(Delivery::Event(Arc::new(wire.into_event())))),
                    Err(error) => self.skipped(payload.len(), &error),
                }
            }
            _ => self.skipped(payload.len(), &"neither an event, an announcement nor a probe"),
        }
    }

    /// A message that is not this module's wire form (another program on the subject, or a
    /// newer Switchyard): skipped, with a warning.
    fn skipped(&mut self, bytes: usize, why: &dyn std::fmt::Display) {
        if let Some(left_out) = self.skip_warnings.allow() {
            tracing::warn!(bytes, %why, left_out, "NATS hub: skipped a message that is not a Switchyard event");
        }
    }

    /// Events from `from` were lost before `seq`: every local subscriber gets `Lagged`.
    fn lost(&mut self, from: u64, seq: u64, what: &'static str) {
        if let Some(left_out) = self.loss_warnings.allow() {
            tracing::warn!(publisher = from, seq, left_out, "NATS hub: {what}; subscribers get Lagged");
        }
        self.gap();
    }

    fn on_probe(&mut self, nonce: u64) {
        let Some((sent_nonce, sent_at)) = self.probe else { return };
        if sent_nonce != nonce {
            return; // an older probe: the link has dropped since it was sent
        }
        let nanos = u64::try_from(sent_at.elapsed().as_nanos()).unwrap_or(NO_ROUND_TRIP - 1);
        self.shared.round_trip_nanos.store(nanos.min(NO_ROUND_TRIP - 1), Ordering::Relaxed);
        self.probe = None;
        self.probe_warned = false;
        if !self.shared.is_up() {
            // What came before this point was checked against numbers from before the outage;
            // subscribers from now on start afresh.
            self.seen.forget();
            // Full outbox: the events in it will show any hole themselves.
            let _ = self.announce.try_send(Outgoing::Announce);
            // Readers that went on after the drop learn that the link is back (resynchronise
            // now); it is sent before the state changes so that new subscribers do not get it.
            self.gap();
            self.shared.link.send_replace(LinkState::Up);
            tracing::info!(subject = %self.subject, "NATS hub: link up");
        }
    }

    fn link_lost(&mut self, why: &'static str) {
        self.probe = None;
        self.seen.forget();
        // The state changes before the Gap goes out: a subscriber that reads the state before
        // the change is already subscribed, so it gets the Gap.
        if self.shared.link.send_replace(LinkState::Down) == LinkState::Up {
            self.shared.losses.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(reason = why, "NATS hub: link to the broker lost; open subscriptions end with Lagged");
            self.gap();
        }
    }

    /// Compares the link with the client's own state, in case one of its events was lost; while
    /// up, sends the periodic probe and counts one that is late as a stall; while down, sends
    /// the probe again when it has not come back.
    fn check(&mut self) {
        let connected = self.client.connection_state() == async_nats::connection::State::Connected;
        let up = self.shared.is_up();
        if up && !connected {
            self.link_lost("the client reports the connection down");
        } else if up {
            match self.probe {
                Some((_, sent)) if sent.elapsed() >= self.stall_timeout => {
                    self.shared.stalls.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        subject = %self.subject,
                        waited_ms = u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX),
                        "NATS hub: the broker did not return the probe in time (stalled or overloaded)"
                    );
                    // Not the no_echo warning while it stays stalled: the probe did come back before.
                    self.probe_warned = true;
                    self.link_lost("the broker stalled");
                }
                Some(_) => {}
                None if self.last_probe.is_none_or(|at| at.elapsed() >= self.probe_interval) => self.send_probe(),
                None => {}
            }
        } else if connected {
            match self.probe {
                None => self.send_probe(),
                // Not sooner than the stall timeout: a broker slower than PROBE_TIMEOUT but within
                // it would otherwise have every reply arrive after its probe was replaced.
                Some((_, sent)) if sent.elapsed() >= PROBE_TIMEOUT.max(self.stall_timeout) => {
                    if !self.probe_warned {
                        self.probe_warned = true;
                        tracing::warn!(
                            subject = %self.subject,
                            "NATS hub: connected, but the hub's own probe did not come back \
                             (is `no_echo` set, or subscribing to the subject denied?); retrying"
                        );
                    }
                    self.send_probe();
                }
                Some(_) => {}
            }
        }
    }

    fn send_probe(&mut self) {
        self.probes_sent += 1;
        let nonce = self.probes_sent;
        let now = Instant::now();
        self.probe = Some((nonce, now));
        self.last_probe = Some(now);
        let Ok(payload) =
            serde_json::to_vec(&Envelope { from: self.id, seq: None, probe: Some(nonce), event: None, lost: false })
        else {
            return;
        };
        let (client, subject) = (self.client.clone(), self.subject.clone());
        // Not awaited here: the client's queue may be full while it reconnects. Bounded, so
        // that a stopped hub does not keep the client alive.
        tokio::spawn(async move {
            let _ = tokio::time::timeout(PROBE_TIMEOUT, client.publish(subject, payload.into())).await;
        });
    }

    fn gap(&self) {
        let _ = self.shared.local.send(Delivery::Gap);
    }
}

/// One message on the subject: `from` is a random id per hub.
/// - an event `{"from": u64, "seq": u64, "event": WireEvent, "lost": true?}`: `seq` counts the
///   hub's events from 1; `lost` says that the hub dropped events just before (or after) it;
/// - an announcement `{"from": u64, "seq": u64}`: the last `seq` used, sent when the link is up;
/// - a link probe `{"from": u64, "probe": u64}`, which only its sender looks at.
#[derive(Serialize, Deserialize)]
struct Envelope<'a> {
    from: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    probe: Option<u64>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    event: Option<&'a RawValue>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    lost: bool,
}

/// The last sequence number seen from each publisher, to notice events lost in flight.
#[derive(Debug, Default)]
struct Sequences {
    last: HashMap<u64, u64>,
}

impl Sequences {
    /// Notes `seq` from publisher `from` (`event`: an event's number, else an announcement of
    /// the last number used). False when numbers are missing in between. The first number seen
    /// from a publisher is taken as it is: this hub may have joined after it started.
    fn note(&mut self, from: u64, seq: u64, event: bool) -> bool {
        if !self.last.contains_key(&from) && self.last.len() >= MAX_PUBLISHERS {
            self.last.clear();
        }
        let expected = |last: u64| if event { last.wrapping_add(1) } else { last };
        self.last.insert(from, seq).is_none_or(|last| seq == expected(last))
    }

    /// After an outage, numbers from before it say nothing about what the subscribers from now
    /// on should get.
    fn forget(&mut self) {
        self.last.clear();
    }
}

/// [`Event`] on the wire: `"toolsListChanged"`, `"promptsListChanged"`,
/// `"resourcesListChanged"`, `{"resourceUpdated": {"uri": ..}}`,
/// `{"extension": {"key": .., "item": .., "method": .., "params": ..}}`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum WireEvent<'a> {
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated { uri: Cow<'a, str> },
    Extension { key: Cow<'a, str>, item: Cow<'a, Value>, method: Cow<'a, str>, params: Cow<'a, Value> },
}

impl<'a> From<&'a Event> for WireEvent<'a> {
    fn from(event: &'a Event) -> Self {
        match event {
            Event::ToolsListChanged => WireEvent::ToolsListChanged,
            Event::PromptsListChanged => WireEvent::PromptsListChanged,
            Event::ResourcesListChanged => WireEvent::ResourcesListChanged,
            Event::ResourceUpdated(uri) => WireEvent::ResourceUpdated { uri: Cow::Borrowed(uri) },
            Event::Extension { key, item, method, params } => WireEvent::Extension {
                key: Cow::Borrowed(key),
                item: Cow::Borrowed(item),
                method: Cow::Borrowed(method),
                params: Cow::Borrowed(params),
            },
        }
    }
}

impl WireEvent<'_> {
    fn into_event(self) -> Event {
        match self {
            WireEvent::ToolsListChanged => Event::ToolsListChanged,
            WireEvent::PromptsListChanged => Event::PromptsListChanged,
            WireEvent::ResourcesListChanged => Event::ResourcesListChanged,
            WireEvent::ResourceUpdated { uri } => Event::ResourceUpdated(uri.into_owned()),
            WireEvent::Extension { key, item, method, params } => Event::Extension {
                key: key.into_owned(),
                item: item.into_owned(),
                method: method.into_owned(),
                params: params.into_owned(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(event: &Event) -> Event {
        let text = serde_json::to_string(&WireEvent::from(event)).expect("encodes");
        serde_json::from_str::<WireEvent<'_>>(&text).expect("decodes").into_event()
    }

    #[test]
    fn every_event_round_trips() {
        for event in [
            Event::ToolsListChanged,
            Event::PromptsListChanged,
            Event::ResourcesListChanged,
            Event::ResourceUpdated("file:///ü/📄?q=\"x\"".into()),
            Event::Extension {
                key: "taskIds".into(),
                item: json!(["a", 1, null]),
                method: "notifications/tasks".into(),
                params: json!({ "z": 1, "a": { "n": [u64::MAX, i64::MIN, 0.5] }, "s": "\u{0}\n" }),
            },
        ] {
            assert_eq!(round_trip(&event), event);
        }
    }

    #[test]
    fn the_wire_form_is_stable() {
        let text = serde_json::to_string(&WireEvent::from(&Event::ResourceUpdated("u".into()))).expect("encodes");
        assert_eq!(text, r#"{"resourceUpdated":{"uri":"u"}}"#);
        assert_eq!(
            serde_json::to_string(&WireEvent::from(&Event::ToolsListChanged)).expect("encodes"),
            r#""toolsListChanged""#
        );
    }

    #[test]
    fn holes_in_a_publishers_numbering_are_noticed() {
        let mut seen = Sequences::default();
        assert!(seen.note(1, 40, true), "the first number is taken as it is");
        assert!(seen.note(1, 41, true));
        assert!(seen.note(1, 41, false), "an announcement of the last number");
        assert!(!seen.note(1, 43, true), "42 is missing");
        assert!(seen.note(2, 1, true), "publishers are counted apart");
        assert!(!seen.note(1, 45, false), "44 and 45 were lost in flight");
        seen.forget();
        assert!(seen.note(1, 90, true), "after an outage the numbering starts afresh");
        assert!(!seen.note(1, 90, true), "a repeated number is not the next one");
    }

    #[test]
    fn the_publisher_table_is_bounded() {
        let mut seen = Sequences::default();
        for from in 0..(MAX_PUBLISHERS as u64 + 10) {
            assert!(seen.note(from, 5, true));
        }
        assert!(seen.last.len() <= MAX_PUBLISHERS);
    }

    #[test]
    fn envelopes_are_compact_and_read_back() {
        let event = serde_json::value::to_raw_value(&WireEvent::from(&Event::ToolsListChanged)).expect("encodes");
        let text =
            serde_json::to_string(&Envelope { from: 7, seq: Some(1), probe: None, event: Some(&event), lost: false })
                .expect("encodes");
        assert_eq!(text, r#"{"from":7,"seq":1,"event":"toolsListChanged"}"#);
        let back: Envelope<'_> =
            serde_json::from_str(r#"{"from":7,"seq":2,"event":"toolsListChanged","lost":true}"#).expect("decodes");
        assert!(back.lost && back.seq == Some(2) && back.event.is_some());
    }

    #[test]
    fn subjects_are_checked() {
        for bad in ["", "a..b", ".a", "a.", "a b", "a.*", ">", "a.>.b"] {
            assert!(matches!(check_subject(bad), Err(NatsHubError::InvalidSubject { .. })), "{bad:?}");
        }
        for good in ["switchyard.events", "a", "a-b_c.d1", "weather.switchyard.events"] {
            assert!(check_subject(good).is_ok(), "{good:?}");
        }
    }
}
