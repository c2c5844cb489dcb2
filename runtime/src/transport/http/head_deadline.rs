//! The deadline on a client's HTTP/1.1 request heads
//! ([`ConnectionLimits::header_read_timeout`](super::ConnectionLimits::header_read_timeout)),
//! kept by one timer per connection.
//!
//! hyper's own header-read timeout makes a timer for every wait between two requests, and asks
//! its dispatcher for one more turn after each head to start it: 1,500 instructions and an
//! allocation per request (docs/performance.md). Here the connection's one timer is moved only
//! when it fires (at most once per timeout on a busy connection): the requests just record
//! when their answers ended, and a read that finds no bytes checks the deadline that follows
//! from it.
//!
//! The deadline runs from the connection's start and from the end of each answer (its body
//! sent or dropped) until the next request's head has arrived: a client that connects and sends
//! nothing, part of a head, or fewer than the 24 bytes hyper-util reads to choose between
//! HTTP/1.1 and HTTP/2, is cut off, and so is an idle kept-alive connection. While a request is
//! answered (a long SSE stream included) nothing is timed. A connection that starts with the
//! HTTP/2 preface is not timed once the preface is in: HTTP/2 has no request heads to wait
//! for, and hyper's HTTP/2 settings govern it; nor is one that another protocol took over
//! (`101 Switching Protocols`, a `CONNECT` tunnel). When the deadline passes, a read fails with
//! `TimedOut` and hyper closes the connection without an answer, as its own timeout does.

use axum::body::Body;
use bytes::Bytes;
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The HTTP/2 connection preface (RFC 9113 §3.4), which hyper-util reads before it chooses a
/// protocol.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection's requests tell its [`HeadDeadline`]. Only the connection's own task
/// touches it over HTTP/1.1 (hyper calls the service, polls the answer, drops its body and
/// reads on that task), so the atomics are for `Sync`, not for ordering.
pub(super) struct HeadClock {
    /// Bit 0: a request is being answered; the rest: how many request heads have arrived.
    exchange: AtomicU64,
    /// When the connection last started waiting for a head: nanoseconds after `start`.
    waiting_since: AtomicU64,
    start: Instant,
    /// The connection speaks HTTP/2 or was upgraded to another protocol: nothing is timed.
    untimed: AtomicBool,
}

impl HeadClock {
    pub(super) fn new() -> Arc<HeadClock> {
        Arc::new(HeadClock {
            exchange: AtomicU64::new(0),
            waiting_since: AtomicU64::new(0),
            start: Instant::now(),
            untimed: AtomicBool::new(false),
        })
    }

    /// A request's head has arrived; returns the request's number, for [`answered`](Self::answered).
    /// An HTTP/2 request returns `None` (and stops the timing, had the preface not).
    pub(super) fn head_arrived(&self, version: http::Version) -> Option<u64> {
        if version >= http::Version::HTTP_2 {
            self.stop();
            return None;
        }
        let number = (self.exchange.load(Relaxed) >> 1) + 1;
        self.exchange.store(number << 1 | 1, Relaxed);
        Some(number)
    }

    /// The answer to request `number` is over: the deadline for the next head starts now. An
    /// answer of an earlier request changes nothing.
    pub(super) fn answered(&self, number: u64) {
        if self.exchange.compare_exchange(number << 1 | 1, number << 1, Relaxed, Relaxed).is_ok() {
            let since = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.waiting_since.store(since, Relaxed);
        }
    }

    /// Nothing is timed from now on: the connection became HTTP/2, or another protocol took it
    /// over (`101 Switching Protocols`, a tunnel after `CONNECT`), whose reads are not ours to time.
    pub(super) fn stop(&self) {
        self.untimed.store(true, Relaxed);
    }

    /// Whether the connection's heads are still timed.
    #[cfg(test)]
    pub(super) fn timed(&self) -> bool {
        !self.untimed.load(Relaxed)
    }

    /// When the wait for a head times out; `None` while a request is answered.
    fn deadline(&self, timeout: Duration) -> Option<Instant> {
        if self.exchange.load(Relaxed) & 1 == 1 {
            return None;
        }
        let since = Duration::from_nanos(self.waiting_since.load(Relaxed));
        Some(self.start + since + timeout)
    }
}

pin_project! {
    /// `io` whose client must send each HTTP/1.1 request head within `timeout` (module docs).
    pub(super) struct HeadDeadline<T> {
        #[pin]
        io: T,
        clock: Arc<HeadClock>,
        // Boxed, so the wrapper stays `Unpin` as hyper's connection wants its IO to be.
        timer: Pin<Box<Sleep>>,
        timeout: Duration,
        // Bytes read while they could still be the HTTP/2 preface; past it, `usize::MAX`.
        preface_read: usize,
    }
}

impl<T> HeadDeadline<T> {
    /// `io`, timed by `clock` (which the connection's service updates) with `timeout`, at most
    /// a day.
    pub(super) fn new(io: T, clock: Arc<HeadClock>, timeout: Duration) -> Self {
        let timer = Box::pin(tokio::time::sleep_until(clock.start + timeout));
        HeadDeadline { io, clock, timer, timeout, preface_read: 0 }
    }
}

impl<T: AsyncRead> AsyncRead for HeadDeadline<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        let polled = this.io.poll_read(cx, buf);
        if *this.preface_read < PREFACE.len()
            && let Poll::Ready(Ok(())) = &polled
        {
            let read = &buf.filled()[before..];
            let expected = &PREFACE[*this.preface_read..];
            let n = read.len().min(expected.len());
            if read[..n] != expected[..n] {
                *this.preface_read = usize::MAX;
            } else {
                *this.preface_read += n;
                if *this.preface_read == PREFACE.len() {
                    this.clock.stop();
                }
            }
        }
        if polled.is_ready() || this.clock.untimed.load(Relaxed) {
            return polled;
        }
        // Nothing to read: the client is waiting, or we are. The timer fires at or before the
        // deadline; each time it does, it is moved to the deadline as it now stands.
        while this.timer.as_mut().poll(cx).is_ready() {
            let now = Instant::now();
            match this.clock.deadline(*this.timeout) {
                Some(deadline) if deadline <= now => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client sent no complete request head within the header read timeout",
                    )));
                }
                Some(deadline) => this.timer.as_mut().reset(deadline),
                // Answering: look again one timeout from now.
                None => this.timer.as_mut().reset(now + *this.timeout),
            }
        }
        Poll::Pending
    }
}

impl<T: AsyncWrite> AsyncWrite for HeadDeadline<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.project().io.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().io.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// The body of an HTTP/1.1 answer, which tells the connection's [`HeadClock`] when it is over
/// (sent, or dropped unsent): the wait for the next head starts then. Not boxed again, so the
/// answer costs no allocation more.
pub(super) struct AnswerBody {
    inner: Body,
    /// The clock and the request's number; `None` over HTTP/2.
    answered: Option<(Arc<HeadClock>, u64)>,
}

impl AnswerBody {
    pub(super) fn new(inner: Body, answered: Option<(Arc<HeadClock>, u64)>) -> Self {
        AnswerBody { inner, answered }
    }
}

impl Drop for AnswerBody {
    fn drop(&mut self) {
        if let Some((clock, number)) = self.answered.take() {
            clock.answered(number);
        }
    }
}

impl http_body::Body for AnswerBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some((clock, number)) = self.answered.take()
        {
            clock.answered(number);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    const TIMEOUT: Duration = Duration::from_secs(5);

    fn timed() -> (DuplexStream, HeadDeadline<DuplexStream>, Arc<HeadClock>) {
        let (client, server) = tokio::io::duplex(256);
        let clock = HeadClock::new();
        (client, HeadDeadline::new(server, clock.clone(), TIMEOUT), clock)
    }

    /// How long a read waits until it fails with `TimedOut`; `None` if it has not after a minute
    /// (or read bytes instead).
    async fn times_out_after(io: &mut HeadDeadline<DuplexStream>) -> Option<Duration> {
        let started = Instant::now();
        let mut buf = [0u8; 64];
        match tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await {
            Ok(Err(e)) if e.kind() == io::ErrorKind::TimedOut => Some(started.elapsed()),
            _ => None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_client_and_a_partial_head_time_out() {
        let (_client, mut io, _) = timed();
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));

        let (mut client, mut io, _) = timed();
        client.write_all(b"POST /mcp HTTP/1.1\r\nHost: a").await.expect("write");
        let mut buf = [0u8; 64];
        assert_eq!(io.read(&mut buf).await.expect("the bytes sent"), 27);
        // Two seconds on, one byte more: the deadline still runs from the start.
        tokio::time::sleep(Duration::from_secs(2)).await;
        client.write_all(b"b").await.expect("write");
        assert_eq!(io.read(&mut buf).await.expect("one byte"), 1);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT - Duration::from_secs(2)));
    }

    /// While a request is answered nothing is timed, however long it takes; from the end of its
    /// answer the next head has the whole timeout, and then it is cut off.
    #[tokio::test(start_paused = true)]
    async fn the_wait_starts_when_an_answer_ends() {
        let (_client, mut io, clock) = timed();
        let first = clock.head_arrived(http::Version::HTTP_11).expect("HTTP/1.1 is timed");
        let mut buf = [0u8; 8];
        let still = tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await;
        assert!(still.is_err(), "a minute into an answer, the connection is not cut off");
        clock.answered(first);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));

        // An earlier request's answer ending does not start the wait of a later one.
        let (_client, mut io, clock) = timed();
        let first = clock.head_arrived(http::Version::HTTP_11).expect("timed");
        clock.answered(first);
        let second = clock.head_arrived(http::Version::HTTP_11).expect("timed");
        clock.answered(first);
        let still = tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await;
        assert!(still.is_err(), "the second request is still being answered");
        clock.answered(second);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));
    }

    /// A kept-alive connection whose client sends its next requests in time is never cut off,
    /// however long it lives.
    #[tokio::test(start_paused = true)]
    async fn prompt_requests_keep_a_connection() {
        let (mut client, mut io, clock) = timed();
        let mut buf = [0u8; 64];
        for _ in 0..20 {
            tokio::time::sleep(TIMEOUT - Duration::from_secs(1)).await;
            client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.expect("write");
            assert_eq!(io.read(&mut buf).await.expect("a head"), 18);
            let number = clock.head_arrived(http::Version::HTTP_11).expect("timed");
            clock.answered(number);
        }
    }

    /// After the HTTP/2 preface nothing is timed; a connection that starts like it but
    /// differs, or stops inside it, is timed as HTTP/1.1.
    #[tokio::test(start_paused = true)]
    async fn the_http2_preface_ends_the_timing() {
        let (mut client, mut io, _) = timed();
        // In two writes, as a client may send it.
        client.write_all(&PREFACE[..10]).await.expect("write");
        let mut buf = [0u8; 64];
        assert_eq!(io.read(&mut buf).await.expect("bytes"), 10);
        client.write_all(&PREFACE[10..]).await.expect("write");
        assert_eq!(io.read(&mut buf).await.expect("bytes"), 14);
        assert_eq!(times_out_after(&mut io).await, None);

        let (mut client, mut io, _) = timed();
        client.write_all(b"PRI * HTTP/2").await.expect("write");
        assert_eq!(io.read(&mut buf).await.expect("bytes"), 12);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));

        let (mut client, mut io, _) = timed();
        client.write_all(b"PRI * HTTP/1.1\r\n\r\nSM\r\n\r\nxx").await.expect("write");
        assert_eq!(io.read(&mut buf).await.expect("bytes"), 26);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));
    }

    /// The answer's body ends the request when hyper drops it, sent or not.
    #[tokio::test(start_paused = true)]
    async fn an_answer_body_ends_its_request_when_dropped() {
        let (_client, mut io, clock) = timed();
        let number = clock.head_arrived(http::Version::HTTP_11).expect("timed");
        let body = AnswerBody::new(Body::from("{}"), Some((clock.clone(), number)));
        let mut buf = [0u8; 8];
        assert!(tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await.is_err());
        drop(body);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));
        assert_eq!(clock.head_arrived(http::Version::HTTP_2), None, "HTTP/2 requests are not numbered");
    }
}
