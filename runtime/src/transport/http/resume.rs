//! Resumable SSE streams of legacy sessions (2025-11-25 Streamable HTTP, SEP-1699): every event
//! on a POST reply stream gets an id `STREAM-SEQ`; the events are kept (bounded) so a client that
//! lost the connection, or whose stream the server closed on purpose, reconnects with `GET` and
//! `Last-Event-ID` and receives what it missed, then the rest.

use super::respond::sse_event;
use bytes::Bytes;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Events kept per stream for replay; older ones are dropped first.
const MAX_EVENTS: usize = 1024;
/// Finished streams kept per session for late reconnections.
const MAX_STREAMS: usize = 64;
/// How long a finished stream stays resumable.
const FINISHED_TTL: Duration = Duration::from_secs(300);
/// Buffer of the live connection; a client slower than this loses the connection and resumes.
const LIVE_BUFFER: usize = 256;

/// The events of one stream and its live connection, if any.
pub(crate) struct EventLog {
    stream: u64,
    next_seq: u64,
    events: VecDeque<(u64, Bytes)>,
    live: Option<mpsc::Sender<Bytes>>,
    finished_at: Option<Instant>,
}

impl EventLog {
    /// Records `msg` and writes it to the live connection. A full or closed connection is
    /// detached; the event stays in the log for replay.
    pub(crate) fn push(&mut self, msg: &Value) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let event = sse_event(msg, Some(&format!("{}-{seq}", self.stream)));
        if let Some(live) = &self.live
            && live.try_send(event.clone()).is_err()
        {
            self.live = None;
        }
        self.events.push_back((seq, event));
        if self.events.len() > MAX_EVENTS {
            self.events.pop_front();
        }
    }

    /// Writes a keep-alive comment; false once there is no live connection.
    pub(crate) fn keep_alive(&mut self) -> bool {
        let alive = self.live.as_ref().is_some_and(|l| l.try_send(Bytes::from_static(b": keep-alive\n\n")).is_ok());
        if !alive {
            self.live = None;
        }
        alive
    }

    /// Ends the live connection; the stream stays resumable.
    pub(crate) fn detach(&mut self) {
        self.live = None;
    }

    /// Marks the stream complete and ends the live connection.
    pub(crate) fn finish(&mut self) {
        self.finished_at = Some(Instant::now());
        self.live = None;
    }
}

/// The resumable streams of one session.
#[derive(Default)]
pub(crate) struct Streams {
    next: AtomicU64,
    logs: Mutex<HashMap<u64, Arc<Mutex<EventLog>>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Streams {
    /// Opens a stream. With `priming` (a `retry` hint), its first event is the priming event
    /// (an id, the hint and no data), so the client can resume even before any message was
    /// sent; sessions older than 2025-11-25 get none (see
    /// [`primes_sse_streams`](crate::protocol::primes_sse_streams)).
    pub(crate) fn open(&self, priming: Option<Duration>) -> (Arc<Mutex<EventLog>>, mpsc::Receiver<Bytes>) {
        let stream = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::channel(LIVE_BUFFER);
        if let Some(retry) = priming {
            let _ = tx.try_send(Bytes::from(format!("id: {stream}-0\nretry: {}\ndata: \n\n", retry.as_millis())));
        }
        let log = Arc::new(Mutex::new(EventLog {
            stream,
            next_seq: 1,
            events: VecDeque::new(),
            live: Some(tx),
            finished_at: None,
        }));
        let mut logs = lock(&self.logs);
        logs.retain(|_, l| lock(l).finished_at.is_none_or(|t| t.elapsed() < FINISHED_TTL));
        if logs.len() >= MAX_STREAMS
            && let Some(oldest) = logs.iter().filter(|(_, l)| lock(l).finished_at.is_some()).map(|(k, _)| *k).min()
        {
            logs.remove(&oldest);
        }
        logs.insert(stream, log.clone());
        (log, rx)
    }

    /// Reattaches to the stream named by a `Last-Event-ID` of the form `STREAM-SEQ`: replays the
    /// events after `SEQ`, then follows the stream live (or ends, if it is finished). `None` when
    /// the id is malformed or the stream is no longer kept.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<mpsc::Receiver<Bytes>> {
        let (stream, seq) = last_event_id.split_once('-')?;
        let (stream, seq): (u64, u64) = (stream.parse().ok()?, seq.parse().ok()?);
        let log = lock(&self.logs).get(&stream)?.clone();
        let mut log = lock(&log);
        let missed: Vec<Bytes> = log.events.iter().filter(|(s, _)| *s > seq).map(|(_, e)| e.clone()).collect();
        let (tx, rx) = mpsc::channel(LIVE_BUFFER.max(missed.len() + 1));
        for e in missed {
            let _ = tx.try_send(e);
        }
        if log.finished_at.is_none() {
            log.live = Some(tx);
        }
        Some(rx)
    }
}
