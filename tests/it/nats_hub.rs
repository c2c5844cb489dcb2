//! `NatsHub` (runtime feature `nats`): two hubs on one subject stand for two server instances.
//!
//! Needs a NATS broker:
//! `SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222 cargo test -p switchyard-tests --test it nats_hub::`;
//! without it each test is reported ignored (tests/build.rs); under CI (`CI` set) they run and
//! fail.
//! The outage tests start and kill their own `nats-server` (path from `SWITCHYARD_NATS_SERVER`,
//! else `nats-server` on PATH, else /usr/sbin/nats-server) on a free loopback port, never
//! touching the shared broker.
//! Every test uses its own subject, so they run in parallel. Every wait is bounded by `WAIT`:
//! a timeout only turns a hang into a failure, nothing here measures speed.

use crate::common::free_port;
use futures::StreamExt;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use switchyard::prelude::*;
use switchyard::subscriptions::nats::NatsHub;
use switchyard::subscriptions::{DeliveryHub, Event, EventStream, Lagged};
use switchyard::testing::TestClient;

const WAIT: Duration = Duration::from_secs(30);
const RUN: &str = "SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222 cargo test -p switchyard-tests --test it nats_hub::";

/// The shared broker's URL, or `None` (and a note) when the tests are not asked to use one.
fn shared_broker(test: &str) -> Option<String> {
    match std::env::var("SWITCHYARD_TEST_NATS") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            crate::common::skip(&format!("nats_hub::{test}"), "no NATS broker given (SWITCHYARD_TEST_NATS)", RUN);
            None
        }
    }
}

/// A subject no other test (or run) uses.
fn subject(test: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("switchyard.test.{test}.{}.{nanos}", std::process::id())
}

/// A hub that retries quickly after an outage (the client's default backoff grows to 4 s).
async fn hub(url: &str, subject: &str) -> NatsHub {
    hub_with(url, subject, 1024).await
}

async fn hub_with(url: &str, subject: &str, capacity: usize) -> NatsHub {
    NatsHub::builder()
        .subject(subject)
        .capacity(capacity)
        .connect_options(async_nats::ConnectOptions::new().reconnect_delay_callback(|_| Duration::from_millis(100)))
        .connect(url)
        .await
        .expect("the hub starts")
}

async fn next(stream: &mut EventStream) -> Result<Event, Lagged> {
    tokio::time::timeout(WAIT, stream.next()).await.expect("an item within WAIT").expect("the stream goes on")
}

async fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Reads until the stream reports `Lagged`, skipping events.
async fn until_lagged(stream: &mut EventStream) {
    while next(stream).await.is_ok() {}
}

fn numbered(who: &str, n: usize) -> Event {
    Event::ResourceUpdated(format!("{who}/{n}"))
}

/// Delivery works from every hub of `from` to a new subscription on `to`: a marker from each
/// arrives. Events queued during an outage may still be arriving and make the new subscriber
/// lag; it then subscribes again and sends new markers.
async fn delivery_works(from: &[&NatsHub], to: &NatsHub) {
    let deadline = Instant::now() + WAIT;
    for round in 0.. {
        assert!(Instant::now() < deadline, "no round of markers got through");
        let mut stream = to.subscribe();
        let markers: Vec<String> = (0..from.len()).map(|i| format!("marker/{round}/{i}")).collect();
        for (hub, marker) in from.iter().zip(&markers) {
            hub.publish(Event::ResourceUpdated(marker.clone()));
        }
        let mut missing = markers.clone();
        while !missing.is_empty() {
            match next(&mut stream).await {
                Ok(Event::ResourceUpdated(uri)) => missing.retain(|m| *m != uri),
                Ok(_) => {}
                Err(Lagged) => break,
            }
        }
        if missing.is_empty() {
            return;
        }
    }
}

/// A `nats-server` of this test's own on a free loopback port; killed when dropped.
struct Broker {
    child: Option<Child>,
    port: u16,
}

impl Broker {
    /// A free port with no broker on it yet.
    fn unstarted() -> Broker {
        Broker { child: None, port: free_port() }
    }

    async fn started() -> Broker {
        let mut broker = Broker::unstarted();
        broker.start().await;
        broker
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn spawn(binary: &str, port: u16) -> std::io::Result<Child> {
        Command::new(binary)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }

    async fn start(&mut self) {
        let child = match std::env::var("SWITCHYARD_NATS_SERVER") {
            Ok(path) => Broker::spawn(&path, self.port).unwrap_or_else(|e| panic!("cannot start {path}: {e}")),
            Err(_) => Broker::spawn("nats-server", self.port)
                .or_else(|_| Broker::spawn("/usr/sbin/nats-server", self.port))
                .unwrap_or_else(|e| panic!("cannot start nats-server (set SWITCHYARD_NATS_SERVER): {e}")),
        };
        self.child = Some(child);
        let deadline = Instant::now() + WAIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen on {}", self.port);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends `SIG<name>` (`STOP`, `CONT`) to the broker.
    fn signal(&self, name: &str) {
        let pid = self.child.as_ref().expect("the broker runs").id().to_string();
        let status = Command::new("kill").args([&format!("-{name}"), &pid]).status().expect("kill runs");
        assert!(status.success(), "kill -{name} {pid}");
    }

    /// Kills the broker at once (no lame-duck mode): a crash, as the hubs see it.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn two_instances_see_each_publishers_events_in_order() {
    let Some(url) = shared_broker("two_instances_see_each_publishers_events_in_order") else { return };
    let subject = subject("order");
    // Room for the whole run: this test is about order, not about slow readers.
    let (a, b) = (hub_with(&url, &subject, 8192).await, hub_with(&url, &subject, 8192).await);
    assert!(a.is_connected() && b.is_connected(), "connect waits for the link on a reachable broker");
    assert!(a.spans_instances());
    let mut streams = vec![a.subscribe(), a.subscribe(), b.subscribe(), b.subscribe()];
    const EACH: usize = 1000;
    for n in 0..EACH {
        a.publish(numbered("a", n));
        b.publish(numbered("b", n));
    }
    let mut seen_by = Vec::new();
    for stream in &mut streams {
        let mut expected = [0usize; 2];
        let mut seen = Vec::new();
        for _ in 0..2 * EACH {
            let Ok(Event::ResourceUpdated(uri)) = next(stream).await else { panic!("an event, not Lagged") };
            let (who, n) = uri.split_once('/').expect("who/n");
            let slot = usize::from(who == "b");
            assert_eq!(n.parse::<usize>().expect("a number"), expected[slot], "{who}'s events in publishing order");
            expected[slot] += 1;
            seen.push(uri);
        }
        seen_by.push(seen);
    }
    // One order per instance, its own events included.
    assert_eq!(seen_by[0], seen_by[1]);
    assert_eq!(seen_by[2], seen_by[3]);
    assert_eq!(a.dropped_events() + b.dropped_events(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn every_event_variant_crosses_instances_unchanged() {
    let Some(url) = shared_broker("every_event_variant_crosses_instances_unchanged") else { return };
    let subject = subject("variants");
    let (a, b) = (hub(&url, &subject).await, hub(&url, &subject).await);
    let nested = json!({
        "zeta": 1, "alpha": [1, -1, 0, 0.5, 1.0e300, -2.5e-300, u64::MAX, i64::MIN, 9007199254740993u64],
        "deep": { "a": { "b": { "c": [[], {}, null, true, false, ""] } } },
        "text": "héllo wörld — 日本語 🦀 \u{0} \u{1f} \"quoted\" \\ back\\slash \n\t",
        "_meta": { "io.modelcontextprotocol/related": "x" },
    });
    let events = vec![
        Event::ToolsListChanged,
        Event::PromptsListChanged,
        Event::ResourcesListChanged,
        Event::ResourceUpdated("file:///tmp/ü ñ/📄.txt?q=1&r=\"2\"#frag".into()),
        Event::ResourceUpdated(String::new()),
        Event::Extension {
            key: "taskIds".into(),
            item: json!("task-🦀-1"),
            method: "notifications/tasks".into(),
            params: nested.clone(),
        },
        Event::Extension { key: "k".into(), item: json!([1, { "x": null }]), method: "m".into(), params: Value::Null },
        Event::Extension { key: String::new(), item: json!(-0.0), method: "m/ü".into(), params: json!([nested]) },
    ];
    let mut on_b = b.subscribe();
    let mut on_a = a.subscribe();
    for e in &events {
        a.publish(e.clone());
    }
    for stream in [&mut on_b, &mut on_a] {
        for sent in &events {
            let got = next(stream).await.expect("an event");
            assert_eq!(&got, sent);
            // Exact text too: key order and number forms survive.
            if let (Event::Extension { params: g, .. }, Event::Extension { params: s, .. }) = (&got, sent) {
                assert_eq!(g.to_string(), s.to_string());
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn a_subscriber_that_never_reads_lags_while_another_keeps_receiving() {
    let Some(url) = shared_broker("a_subscriber_that_never_reads_lags_while_another_keeps_receiving") else { return };
    let subject = subject("slow");
    const CAPACITY: usize = 32;
    let a = hub_with(&url, &subject, CAPACITY).await;
    let b = hub(&url, &subject).await;
    let mut idle = a.subscribe();
    let mut reader = a.subscribe();
    // In rounds smaller than the capacity, so that only the idle subscriber can fall behind.
    for round in 0..8 {
        for i in 0..8 {
            b.publish(numbered("b", round * 8 + i));
        }
        for i in 0..8 {
            assert_eq!(next(&mut reader).await, Ok(numbered("b", round * 8 + i)));
        }
    }
    assert_eq!(next(&mut idle).await, Err(Lagged), "64 events behind with room for {CAPACITY}");
}

/// Current-thread runtime: the outbox task cannot run during the publishing loop, so exactly
/// the first event fits in an outbox of one.
#[tokio::test]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn events_dropped_by_a_full_outbox_end_subscriptions_on_every_instance() {
    let Some(url) = shared_broker("events_dropped_by_a_full_outbox_end_subscriptions_on_every_instance") else {
        return;
    };
    let subject = subject("dropped");
    let a = NatsHub::builder().subject(&subject).outbox_capacity(1).connect(&url).await.expect("the hub starts");
    let b = hub(&url, &subject).await;
    let (mut on_a, mut on_b) = (a.subscribe(), b.subscribe());
    for n in 0..100 {
        a.publish(numbered("a", n));
    }
    assert_eq!(a.dropped_events(), 99);
    for stream in [&mut on_a, &mut on_b] {
        assert_eq!(next(stream).await, Err(Lagged), "the drops are reported, not silent");
        assert_eq!(next(stream).await, Ok(numbered("a", 0)));
    }
    // Then delivery goes on as usual.
    a.publish(numbered("a", 100));
    for stream in [&mut on_a, &mut on_b] {
        assert_eq!(next(stream).await, Ok(numbered("a", 100)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn garbage_on_the_subject_is_skipped() {
    let Some(url) = shared_broker("garbage_on_the_subject_is_skipped") else { return };
    let subject = subject("garbage");
    let a = hub(&url, &subject).await;
    let mut stream = a.subscribe();
    let raw = async_nats::connect(url.as_str()).await.expect("a raw client");
    let mut echo = raw.subscribe(subject.clone()).await.expect("subscribes");
    raw.flush().await.expect("flushed");
    let garbage: Vec<&[u8]> = vec![
        b"not json",
        b"",
        b"\xff\xfe\x00",
        b"{}",
        b"[1,2,3]",
        br#"{"from":"x","seq":1,"event":"toolsListChanged"}"#,
        br#"{"from":1}"#,
        br#"{"from":1,"seq":1}"#,
        br#"{"from":2,"seq":1,"event":{"noSuchEvent":{}}}"#,
        br#"{"from":3,"seq":1,"event":{"resourceUpdated":{"uri":7}}}"#,
        br#"{"from":4,"probe":1,"seq":1,"event":"toolsListChanged"}"#,
    ];
    for g in &garbage {
        raw.publish(subject.clone(), g.to_vec().into()).await.expect("published");
    }
    // Once the raw client has its own messages back, the broker has queued them to the hub too,
    // ahead of anything published after.
    for _ in &garbage {
        tokio::time::timeout(WAIT, echo.next()).await.expect("echo within WAIT").expect("echo");
    }
    a.publish(Event::PromptsListChanged);
    assert_eq!(next(&mut stream).await, Ok(Event::PromptsListChanged), "garbage skipped, no Lagged");
    assert!(a.is_connected());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(all(svc_nats, svc_nats_server)),
    ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222 and nats-server"
)]
async fn an_unreachable_broker_at_start_does_not_stop_the_hub() {
    if shared_broker("an_unreachable_broker_at_start_does_not_stop_the_hub").is_none() {
        return;
    }
    let subject = subject("unreachable");
    let mut broker = Broker::unstarted();
    const OUTBOX: usize = 10_000;
    let a = NatsHub::builder()
        .subject(&subject)
        .outbox_capacity(OUTBOX)
        .connect_options(async_nats::ConnectOptions::new().reconnect_delay_callback(|_| Duration::from_millis(100)))
        .connect(&broker.url())
        .await
        .expect("connect returns without a broker");
    let b = hub(&broker.url(), &subject).await;
    assert!(!a.is_connected() && !b.is_connected());

    const CALLS: usize = 100_000;
    let started = Instant::now();
    for n in 0..CALLS {
        a.publish(numbered("a", n));
    }
    eprintln!("{CALLS} publish calls without a broker: {:?}", started.elapsed());
    // The outbox holds OUTBOX, the client's own queue about 2,048 more; the rest is dropped.
    let dropped = usize::try_from(a.dropped_events()).expect("fits");
    assert!(
        (CALLS - OUTBOX - 4096..=CALLS - OUTBOX).contains(&dropped),
        "dropped {dropped} of {CALLS} with an outbox of {OUTBOX}"
    );

    let mut early = b.subscribe();
    assert_eq!(next(&mut early).await, Err(Lagged), "a subscription while the link is down ends at once");

    broker.start().await;
    wait_until("both hubs are connected", || a.is_connected() && b.is_connected()).await;
    delivery_works(&[&a, &b], &b).await;
    delivery_works(&[&a, &b], &a).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(all(svc_nats, svc_nats_server)),
    ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222 and nats-server"
)]
async fn a_broker_killed_mid_stream_ends_open_streams_and_recovers() {
    if shared_broker("a_broker_killed_mid_stream_ends_open_streams_and_recovers").is_none() {
        return;
    }
    let subject = subject("killed");
    let mut broker = Broker::started().await;
    let (a, b) = (hub(&broker.url(), &subject).await, hub(&broker.url(), &subject).await);
    assert!(a.is_connected() && b.is_connected());
    let mut streams = [a.subscribe(), b.subscribe()];
    a.publish(numbered("a", 0));
    b.publish(numbered("b", 0));
    for stream in &mut streams {
        let mut got = [next(stream).await, next(stream).await];
        got.sort_by_key(|e| format!("{e:?}"));
        assert_eq!(got, [Ok(numbered("a", 0)), Ok(numbered("b", 0))]);
    }

    broker.kill();
    for stream in &mut streams {
        until_lagged(stream).await;
    }
    wait_until("both hubs report the link down", || !a.is_connected() && !b.is_connected()).await;
    let started = Instant::now();
    for n in 1..=1000 {
        a.publish(numbered("a", n));
        b.publish(numbered("b", n));
    }
    eprintln!("2,000 publish calls while the broker is down: {:?}", started.elapsed());
    let mut during = a.subscribe();
    assert_eq!(next(&mut during).await, Err(Lagged));

    broker.start().await;
    wait_until("both hubs are connected again", || a.is_connected() && b.is_connected()).await;
    delivery_works(&[&a, &b], &a).await;
    delivery_works(&[&a, &b], &b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(all(svc_nats, svc_nats_server)),
    ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222 and nats-server"
)]
async fn a_frozen_broker_counts_as_a_stall_and_the_link_comes_back() {
    if shared_broker("a_frozen_broker_counts_as_a_stall_and_the_link_comes_back").is_none() {
        return;
    }
    let subject = subject("frozen");
    let broker = Broker::started().await;
    let a = NatsHub::builder()
        .subject(&subject)
        .probe_interval(Duration::from_millis(200))
        .stall_timeout(Duration::from_millis(500))
        .connect(&broker.url())
        .await
        .expect("the hub starts");
    assert!(a.is_connected());
    wait_until("a probe came back", || a.round_trip().is_some()).await;
    assert_eq!((a.stalls(), a.link_losses()), (0, 0));
    let mut stream = a.subscribe();
    a.publish(numbered("a", 0));
    assert_eq!(next(&mut stream).await, Ok(numbered("a", 0)));

    // SIGSTOP: the TCP connection stays open and the client's pings are far apart, so only the
    // hub's own probes can notice.
    broker.signal("STOP");
    wait_until("the frozen broker takes the link down", || !a.is_connected()).await;
    assert!(a.stalls() >= 1 && a.link_losses() >= 1, "stalls {} losses {}", a.stalls(), a.link_losses());
    assert_eq!(next(&mut stream).await, Err(Lagged), "an open stream ends when the broker stalls");
    assert!(DeliveryHub::health(&a).is_err(), "readiness fails while stalled");
    let names: Vec<_> = DeliveryHub::metrics(&a).iter().map(|m| (m.name, m.value)).collect();
    assert!(names.iter().any(|(n, v)| *n == "switchyard.hub.stalls" && *v >= 1.0), "{names:?}");
    assert!(names.iter().any(|(n, _)| *n == "switchyard.hub.round_trip"), "{names:?}");

    broker.signal("CONT");
    wait_until("the link is back once the broker runs again", || a.is_connected()).await;
    let mut after = a.subscribe();
    a.publish(numbered("a", 1));
    // Events published during the stall may arrive first; the new one arrives in order.
    loop {
        if next(&mut after).await == Ok(numbered("a", 1)) {
            break;
        }
    }
}

/// Something for a listen subscription to be granted.
#[mcp_tool(group = "nats_hub")]
async fn noop() -> Result<String, ToolError> {
    Ok(String::new())
}

fn server(hub: NatsHub) -> Server {
    Server::builder("nats-hub-test", "1")
        .groups(["nats_hub"])
        .delivery_hub(hub)
        .request_state_key([7u8; 32])
        .build()
        .expect("builds")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn a_listen_on_one_server_hears_a_list_change_published_on_another() {
    let Some(url) = shared_broker("a_listen_on_one_server_hears_a_list_change_published_on_another") else {
        return;
    };
    let subject = subject("servers");
    let (one, two) = (server(hub(&url, &subject).await), server(hub(&url, &subject).await));
    let client = TestClient::modern(one);
    let listen = json!({ "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true },
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "nats-hub-test", "version": "0" },
        } } });
    client.send_line(&listen.to_string()).await;
    let ack = client
        .wait_for_notification(|m| m["method"] == "notifications/subscriptions/acknowledged", WAIT)
        .await
        .unwrap_or_else(|| panic!("no acknowledgement in {:?}", client.notifications()));
    assert_eq!(ack["params"]["notifications"], json!({ "toolsListChanged": true }));
    two.publisher().tools_list_changed();
    let changed = client
        .wait_for_notification(|m| m["method"] == "notifications/tools/list_changed", WAIT)
        .await
        .unwrap_or_else(|| panic!("no list change in {:?}", client.notifications()));
    assert_eq!(changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
}

/// Needs no broker: the hub connects in the background and `build` only asks the hub whether
/// it spans instances.
#[tokio::test]
async fn build_fails_without_a_request_state_key() {
    let nowhere = Broker::unstarted();
    let hub = NatsHub::builder().initial_wait(Duration::ZERO).connect(&nowhere.url()).await.expect("starts");
    let Err(error) = Server::builder("nats-hub-test", "1").groups(["nats_hub"]).delivery_hub(hub.clone()).build()
    else {
        panic!("a hub that spans instances needs a request_state_key");
    };
    let message = error.to_string();
    assert!(message.contains("request_state_key"), "{message}");
    assert!(message.contains("nats_hub.rs"), "names where the hub was set: {message}");
    Server::builder("nats-hub-test", "1")
        .groups(["nats_hub"])
        .delivery_hub(hub)
        .request_state_key([7u8; 32])
        .build()
        .expect("builds with the key");
}

/// Needs no broker: settings are checked before connecting.
#[tokio::test]
async fn malformed_settings_are_errors() {
    let bad_subject = NatsHub::builder().subject("events.*").connect("nats://127.0.0.1:4222").await;
    let Err(error) = bad_subject else { panic!("a wildcard subject is refused") };
    assert!(error.to_string().contains("events.*"), "{error}");
    let Err(error) = NatsHub::connect("nats://127.0.0.1:not-a-port").await else {
        panic!("a malformed address is refused")
    };
    assert!(error.to_string().contains("not-a-port"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(not(svc_nats), ignore = "needs NATS: set SWITCHYARD_TEST_NATS=nats://127.0.0.1:4222")]
async fn dropping_the_last_clone_stops_the_hub_and_ends_its_streams() {
    let Some(url) = shared_broker("dropping_the_last_clone_stops_the_hub_and_ends_its_streams") else { return };
    let subject = subject("drop");
    let a = hub(&url, &subject).await;
    let clone = a.clone();
    let mut stream = a.subscribe();
    drop(a);
    clone.publish(Event::ToolsListChanged);
    assert_eq!(next(&mut stream).await, Ok(Event::ToolsListChanged), "a clone keeps the hub running");
    drop(clone);
    let end = tokio::time::timeout(WAIT, stream.next()).await.expect("the stream ends within WAIT");
    assert!(end.is_none(), "ended, not {end:?}");
}
