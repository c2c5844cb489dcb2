//! Listen fan-out through NATS: N idle `subscriptions/listen` streams (HTTP/2, 100 per
//! connection, as the best of the one-instance fan-out rows) on one instance with the
//! in-process hub, on one instance with a NATS hub, and a third of them on each of three
//! instances sharing a NATS hub; then events published on the first instance (its `bump`
//! trigger), one after the other. With NATS even the publishing instance's own streams get the
//! event back from the broker, so the one-instance NATS column is the broker's round trip and
//! the hub's encoding added to the in-process delivery.

use super::{Broker, cpu_spent, fine_cpu_of, random_key, unique};
use crate::fanout::{EVENTS, open_h2};
use crate::load_http::await_list_changed;
use crate::proc::{ServerProc, spawn_http, spawn_http_with};
use crate::table::{Columns, Figure, Table};
use crate::{Plan, Res};
use std::io::Write;
use std::time::{Duration, Instant};

/// Columns of the fan-out rows; the ratios compare each NATS set-up with the in-process hub.
const HUBS: Columns = Columns { names: ["IN-PROCESS", "NATS-1", "NATS-3"], ratios: [(1, 0), (2, 0)] };

/// Listen streams per HTTP/2 connection.
const PER_CONNECTION: usize = 100;

/// What one fan-out run measured.
struct Delivery {
    /// From publishing to the last stream receiving the event, ms (median of [`EVENTS`]).
    all_ms: f64,
    /// From publishing to the first stream receiving it, ms (median).
    first_ms: f64,
    /// CPU of the instances, summed, ms per event (mean).
    servers_cpu_ms: f64,
    /// CPU of the broker, µs per event (mean), when the harness runs it.
    broker_cpu_us: Option<f64>,
}

/// Starts `instances` `ours-http` processes (sharing a fresh NATS subject when `broker` is
/// given), opens `n` listen streams spread evenly over them, publishes [`EVENTS`] events on the
/// first one and times their delivery.
async fn run(n: usize, instances: usize, broker: Option<&Broker>) -> Res<Delivery> {
    let mut servers: Vec<ServerProc> = Vec::with_capacity(instances);
    match broker {
        None => servers.push(spawn_http("ours-http")?),
        Some(b) => {
            let hub = format!("nats:{}", b.url);
            let subject = unique("switchyard.bench.");
            let key = random_key()?;
            for _ in 0..instances {
                let flags = ["--hub", hub.as_str(), "--hub-subject", subject.as_str()];
                servers.push(spawn_http_with("ours-http", &flags, &[("BENCH_STATE_KEY", &key)])?);
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut streams = Vec::with_capacity(n);
    for (i, s) in servers.iter().enumerate() {
        let share = n / instances + usize::from(i < n % instances);
        streams.extend(open_h2(s.url.as_deref().ok_or("no URL")?, share, PER_CONNECTION).await?);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pids: Vec<u32> = servers.iter().map(ServerProc::pid).chain(broker.and_then(Broker::pid)).collect();
    let (mut all, mut first) = (Vec::with_capacity(EVENTS), Vec::with_capacity(EVENTS));
    let mut spent = vec![0u64; pids.len()];
    for _ in 0..EVENTS {
        let mut waiters = tokio::task::JoinSet::new();
        for body in streams.drain(..) {
            waiters.spawn(await_list_changed(body));
        }
        // Let every waiter reach its first poll before the clock starts.
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = fine_cpu_of(&pids);
        let start = Instant::now();
        let stdin = servers[0].child.stdin.as_mut().ok_or("no stdin")?;
        stdin.write_all(b"bump\n")?;
        stdin.flush()?;
        let mut first_at = None;
        // Streams stay open until the clock stops, as in the one-instance fan-out rows.
        while let Some(r) = tokio::time::timeout(Duration::from_secs(60), waiters.join_next())
            .await
            .map_err(|_| format!("only {} of {n} streams got the event within 60 s", streams.len()))?
        {
            streams.push(r??);
            first_at.get_or_insert_with(|| start.elapsed());
        }
        all.push(start.elapsed().as_secs_f64() * 1000.0);
        first.push(first_at.unwrap_or_default().as_secs_f64() * 1000.0);
        for (total, s) in spent.iter_mut().zip(cpu_spent(&before, &fine_cpu_of(&pids))) {
            *total += s;
        }
    }
    drop(streams);
    all.sort_by(f64::total_cmp);
    first.sort_by(f64::total_cmp);
    let per_event_ms = |us: u64| us as f64 / 1000.0 / EVENTS as f64;
    Ok(Delivery {
        all_ms: all[all.len() / 2],
        first_ms: first[first.len() / 2],
        servers_cpu_ms: per_event_ms(spent[..instances].iter().sum()),
        broker_cpu_us: broker.and_then(Broker::pid).map(|_| spent[instances] as f64 / EVENTS as f64),
    })
}

/// The fan-out rows: in-process, NATS with one instance, NATS with three, interleaved
/// `plan.repeats` times; N is `plan.subscriptions`.
pub async fn rows(plan: &Plan, table: &mut Table) -> Res<()> {
    table.section(HUBS);
    let broker = match Broker::start().await {
        Ok(b) => b,
        Err(e) => {
            let why = format!("scale-fanout: skipped: {e}");
            eprintln!("{why}");
            table.note(why);
            return Ok(());
        }
    };
    if broker.pid().is_none() {
        table.note(format!("scale-fanout: the broker at {} is not the harness's: its CPU is not read", broker.url));
    }
    let n = plan.subscriptions;
    let name = |what: &str| format!("scale fan-out {n} listen streams (HTTP/2), {what}");
    let mut all = Figure::new(name("ms to deliver one event to all (lower)"));
    let mut first = Figure::new(name("ms until the first stream has it (lower)"));
    let mut servers = Figure::new(name("server CPU ms per event, instances summed (lower)"));
    let mut broker_cpu = Figure::new(name("broker CPU µs per event (lower)"));
    for _ in 0..plan.repeats {
        for (col, (instances, via)) in [(1, None), (1, Some(&broker)), (3, Some(&broker))].into_iter().enumerate() {
            eprintln!("scale fan-out: {}, {n} subscriptions", HUBS.names[col]);
            let r = run(n, instances, via).await.map_err(|e| format!("{}: {e}", HUBS.names[col]))?;
            all.add(col, r.all_ms);
            first.add(col, r.first_ms);
            servers.add(col, r.servers_cpu_ms);
            if let Some(b) = r.broker_cpu_us {
                broker_cpu.add(col, b);
            }
        }
    }
    for f in [all, first, servers, broker_cpu] {
        table.push(f);
    }
    Ok(())
}
