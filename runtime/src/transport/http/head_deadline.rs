//! The deadline on a client's HTTP/1.1 request heads
//! ([`ConnectionLimits::header_read_timeout`](super::ConnectionLimits::header_read_timeout)),
//! kept by one timer per connection.
//!
//! hyper's own header-read timeout makes a timer for every wait between two requests, and asks
//! its dispatcher for one more turn after each head to start it: 1,500 instructions and an
//! allocation per request (docs/performance.md). Here the connection's one timer is moved only
//! when it fires (at most once per timeout on a busy connection): the requests just record
//! when they were over, and a read that finds no bytes checks the deadline that follows.
//!
//! The deadline runs from the connection's start, and from the end of each request, until the
//! next request's head has arrived (hyper hands it to the connection's service as soon as it
//! is parsed). A request ends when both its body and its answer have: hyper has read the body
//! to its end (or the application dropped it), and hyper has taken the answer's last frame (or
//! dropped the answer) and the client has taken what it was sent: while a write cannot finish,
//! the deadline runs from when the client last took bytes (or the request's end, if later), so
//! a slow reader is served and one that stops reading is cut off. A client that connects and
//! sends nothing, part of a head, or fewer than the 24 bytes hyper-util reads to choose between
//! HTTP/1.1 and HTTP/2, is cut off, and so is an idle kept-alive connection; while a request is
//! read or answered (a long SSE stream included) nothing is timed. A connection that starts with
//! the HTTP/2 preface is not timed once the preface is in (HTTP/2 has no request heads to wait
//! for; an idle HTTP/2 connection is held, as it was under hyper's own timeout), nor is one
//! that another protocol took over (`101 Switching Protocols`, a `CONNECT` tunnel). When the
//! deadline passes, a read fails with `TimedOut` and hyper closes the connection without an
//! answer, as its own timeout does. While a request is under way the timer is looked at once
//! per timeout, at least a second, so a timeout under a second may be enforced up to a second
//! late.

use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The HTTP/2 connection preface (RFC 9113 §3.4), which hyper-util reads before it chooses a
/// protocol.
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection's requests tell its [`HeadDeadline`]. Over HTTP/1.1 hyper calls the
/// service, polls the answer, reads the request body, drops the answer's body and reads the
/// socket on the connection's task; an application may end a request's body on another task
/// (one it moved the body to), so the end of a request publishes its time before the request
/// counts as over (release and acquire).
pub(super) struct HeadClock {
    /// Bits 0–1: how many of the current request's two halves (its body, its answer) are not
    /// over yet; the rest: how many request heads have arrived.
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

    /// A request's head has arrived; returns the request's number, for [`Half::of`]. An
    /// HTTP/2 request returns `None` (and stops the timing, had the preface not).
    pub(super) fn head_arrived(&self, version: http::Version) -> Option<u64> {
        if version >= http::Version::HTTP_2 {
            self.stop();
            return None;
        }
        let number = (self.exchange.load(Relaxed) >> 2) + 1;
        self.exchange.store(number << 2 | 2, Relaxed);
        Some(number)
    }

    /// One half of request `number` (its body or its answer) is over; once both are, the
    /// deadline for the next head starts. Each half says so once ([`Half`]); a half of an
    /// earlier request changes nothing.
    fn half_over(&self, number: u64) {
        let mut current = self.exchange.load(Relaxed);
        while current >> 2 == number && current & 3 > 0 {
            if current & 3 == 1 {
                // Stored before the request counts as over: while a half is open, nothing
                // reads it.
                self.restart_wait_at(self.start.elapsed());
            }
            match self.exchange.compare_exchange(current, current - 1, Release, Relaxed) {
                Ok(_) => return,
                Err(now) => current = now,
            }
        }
    }

    /// The wait for a head restarts now, when the connection is waiting for one: the client
    /// has just taken an answer it had left unread ([`HeadDeadline`]'s writes).
    fn restart_wait(&self) {
        if self.exchange.load(Acquire) & 3 == 0 {
            self.restart_wait_at(self.start.elapsed());
        }
    }

    fn restart_wait_at(&self, since: Duration) {
        // The latest wins: a half ending on another task may store after a later request's.
        self.waiting_since.fetch_max(u64::try_from(since.as_nanos()).unwrap_or(u64::MAX), Relaxed);
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

    /// Whether the connection is waiting for a head: no request is read or answered.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> bool {
        self.exchange.load(Relaxed) & 3 == 0
    }

    /// When the wait for a head times out; `None` while a request is read or answered.
    fn deadline(&self, timeout: Duration) -> Option<Instant> {
        if self.exchange.load(Acquire) & 3 != 0 {
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
        // Since when writes and flushes cannot finish: the client is not taking what it was
        // sent. `None` while they finish.
        blocked_since: Option<Instant>,
    }
}

impl<T> HeadDeadline<T> {
    /// `io`, timed by `clock` (which the connection's service updates) with `timeout`, at most
    /// a day.
    pub(super) fn new(io: T, clock: Arc<HeadClock>, timeout: Duration) -> Self {
        let timer = Box::pin(tokio::time::sleep_until(clock.start + timeout));
        HeadDeadline { io, clock, timer, timeout, preface_read: 0, blocked_since: None }
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
            // A finished answer the client is not taking: the timeout runs from when it stopped.
            let deadline = match (this.clock.deadline(*this.timeout), *this.blocked_since) {
                (Some(deadline), Some(since)) => Some(deadline.max(since + *this.timeout)),
                (deadline, _) => deadline,
            };
            match deadline {
                Some(deadline) if deadline <= now => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client sent no complete request head within the header read timeout",
                    )));
                }
                Some(deadline) => this.timer.as_mut().reset(deadline),
                // A request is under way: look again one timeout from now (at least a second,
                // so that a zero timeout does not wake the connection at every tick).
                None => this.timer.as_mut().reset(now + (*this.timeout).max(Duration::from_secs(1))),
            }
        }
        Poll::Pending
    }
}

impl<T> HeadDeadline<T> {
    /// Notes whether a write or flush finished: the first that cannot starts the client's
    /// stall, and the first that does after it ends the stall and restarts the wait for a head,
    /// which the client's slowness must not have used up.
    fn wrote<R>(self: Pin<&mut Self>, polled: Poll<R>) -> Poll<R> {
        let this = self.project();
        match polled {
            Poll::Pending => {
                this.blocked_since.get_or_insert_with(Instant::now);
            }
            Poll::Ready(_) => {
                if this.blocked_since.take().is_some() {
                    this.clock.restart_wait();
                }
            }
        }
        polled
    }
}

impl<T: AsyncWrite> AsyncWrite for HeadDeadline<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = self.as_mut().project().io.poll_write(cx, buf);
        self.wrote(polled)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = self.as_mut().project().io.poll_flush(cx);
        self.wrote(polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().io.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = self.as_mut().project().io.poll_write_vectored(cx, bufs);
        self.wrote(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// One half of an HTTP/1.1 request (its body or its answer), which tells the connection's
/// [`HeadClock`] when it is over, once: when [`over`](Half::over) is called or, at the latest,
/// when it is dropped. The default tells nothing.
#[derive(Default)]
pub(super) struct Half(Option<(Arc<HeadClock>, u64)>);

impl Half {
    /// A half of request `number` on `clock`'s connection; `None` (nothing to tell) over
    /// HTTP/2.
    pub(super) fn of(clock: &Arc<HeadClock>, number: Option<u64>) -> Half {
        Half(number.map(|n| (clock.clone(), n)))
    }

    /// This half is over (the first call counts).
    pub(super) fn over(&mut self) {
        if let Some((clock, number)) = self.0.take() {
            clock.half_over(number);
        }
    }

    /// The connection is handed to another protocol: nothing is timed from now on.
    pub(super) fn stop_timing(&mut self) {
        if let Some((clock, _)) = self.0.take() {
            clock.stop();
        }
    }
}

impl Drop for Half {
    fn drop(&mut self) {
        self.over();
    }
}

pin_project! {
    /// The body of an HTTP/1.1 request or answer, over when it has been read to its end or
    /// dropped. Wrapped in place (a request's before axum boxes it, an answer's after), so
    /// neither costs an allocation.
    pub(super) struct HalfBody<B> {
        #[pin]
        inner: B,
        half: Half,
    }
}

impl<B> HalfBody<B> {
    pub(super) fn new(inner: B, half: Half) -> Self {
        HalfBody { inner, half }
    }
}

impl<B: http_body::Body> http_body::Body for HalfBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.half.over();
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
    use axum::body::Body;
    use bytes::Bytes;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    const TIMEOUT: Duration = Duration::from_secs(5);
    const V11: http::Version = http::Version::HTTP_11;

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

    /// Both halves of request `number`, as the body's and the answer's wrappers say them.
    fn halves(clock: &Arc<HeadClock>, number: Option<u64>) -> (Half, Half) {
        (Half::of(clock, number), Half::of(clock, number))
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

    /// While a request is read or answered nothing is timed, however long it takes; once both
    /// its body and its answer are over, the next head has the whole timeout, and then the
    /// connection is cut off.
    #[tokio::test(start_paused = true)]
    async fn the_wait_starts_when_the_body_and_the_answer_are_over() {
        let mut buf = [0u8; 8];
        for answer_first in [true, false] {
            let (_client, mut io, clock) = timed();
            let (mut body, mut answer) = halves(&clock, clock.head_arrived(V11));
            let (first, second) = if answer_first { (&mut answer, &mut body) } else { (&mut body, &mut answer) };
            let still = tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await;
            assert!(still.is_err(), "a minute into a request, the connection is not cut off");
            first.over();
            first.over();
            let still = tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await;
            assert!(still.is_err(), "one half over (answer first: {answer_first}), the other is not");
            second.over();
            assert_eq!(clock.deadline(TIMEOUT), Some(Instant::now() + TIMEOUT));
            assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));
        }

        // The halves of an earlier request do not end a later one.
        let (_client, mut io, clock) = timed();
        let (mut body, mut answer) = halves(&clock, clock.head_arrived(V11));
        body.over();
        let (mut body2, answer2) = halves(&clock, clock.head_arrived(V11));
        answer.over();
        body2.over();
        let still = tokio::time::timeout(Duration::from_secs(60), io.read(&mut buf)).await;
        assert!(still.is_err(), "the second request is still being answered");
        drop(answer2);
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));
    }

    /// A kept-alive connection whose client sends each next request within the timeout of the
    /// previous one's end is never cut off, however long it lives; the reads wait for the
    /// client, so each wait is timed.
    #[tokio::test(start_paused = true)]
    async fn prompt_requests_keep_a_connection() {
        let (mut client, mut io, clock) = timed();
        let writer = tokio::spawn(async move {
            for _ in 0..20 {
                tokio::time::sleep(TIMEOUT - Duration::from_secs(1)).await;
                client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.expect("write");
            }
            client
        });
        let mut buf = [0u8; 64];
        for _ in 0..20 {
            assert_eq!(io.read(&mut buf).await.expect("a head"), 18);
            drop(halves(&clock, clock.head_arrived(V11)));
        }
        let _client = writer.await.expect("the writer");
        assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT));
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

    /// A client slow to take a finished answer is served: the wait for its next head starts
    /// once the last write has gone through, with the whole timeout. One that stops taking it
    /// is cut off a timeout after it stopped. Through plain and vectored writes alike.
    #[tokio::test(start_paused = true)]
    async fn a_finished_answer_is_timed_by_the_clients_progress() {
        for vectored in [false, true] {
            let (mut client, server) = tokio::io::duplex(64);
            let clock = HeadClock::new();
            let (mut read, mut write) = tokio::io::split(HeadDeadline::new(server, clock.clone(), TIMEOUT));
            // Over for hyper (its last frame taken), not yet sent: more than the pipe holds.
            drop(halves(&clock, clock.head_arrived(V11)));
            let writer = tokio::spawn(async move {
                let answer = [b'x'; 1000];
                let mut sent = 0;
                while sent < answer.len() {
                    sent += if vectored {
                        write.write_vectored(&[io::IoSlice::new(&answer[sent..])]).await
                    } else {
                        write.write(&answer[sent..]).await
                    }
                    .expect("written");
                }
                write
            });
            // The client takes 8 bytes every 4 s: slower than the pipe, never stalled a timeout.
            let mut buf = [0u8; 8];
            let mut taken = vec![0u8; 8];
            for _ in 0..15 {
                let still = tokio::time::timeout(Duration::from_secs(4), read.read(&mut buf)).await;
                assert!(still.is_err(), "a slow reader is not cut off (vectored: {vectored})");
                client.read_exact(&mut taken).await.expect("8 bytes");
            }
            let mut rest = vec![0u8; 1000 - 15 * 8];
            client.read_exact(&mut rest).await.expect("the rest of the answer");
            let _write = writer.await.expect("the writer");
            let started = Instant::now();
            let err = read.read(&mut buf).await.expect_err("times out");
            assert_eq!(err.kind(), io::ErrorKind::TimedOut);
            assert_eq!(started.elapsed(), TIMEOUT, "the wait began when the answer was taken");
        }

        // A client that stops taking its answer is cut off a timeout later.
        let (_client, server) = tokio::io::duplex(64);
        let clock = HeadClock::new();
        let (mut read, mut write) = tokio::io::split(HeadDeadline::new(server, clock.clone(), TIMEOUT));
        drop(halves(&clock, clock.head_arrived(V11)));
        let _writer = tokio::spawn(async move { write.write_all(&[b'x'; 1000]).await });
        tokio::task::yield_now().await;
        let started = Instant::now();
        let mut buf = [0u8; 8];
        let err = read.read(&mut buf).await.expect_err("times out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), TIMEOUT, "cut off a timeout after the client stopped taking bytes");
    }

    /// A body's half is over when its last frame has been taken, or when it is dropped unread.
    #[tokio::test(start_paused = true)]
    async fn a_body_ends_its_half_at_its_end_or_when_dropped() {
        for read_to_the_end in [true, false] {
            let (_client, mut io, clock) = timed();
            let number = clock.head_arrived(V11);
            let mut request = HalfBody::new(Body::from("{}"), Half::of(&clock, number));
            let mut answer = HalfBody::new(Body::from("{}"), Half::of(&clock, number));
            tokio::time::sleep(Duration::from_secs(1)).await;
            if read_to_the_end {
                for body in
                    [&mut answer as &mut (dyn http_body::Body<Data = Bytes, Error = axum::Error> + Unpin), &mut request]
                {
                    while std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await.is_some() {}
                }
            } else {
                drop((request, answer));
            }
            assert_eq!(clock.deadline(TIMEOUT), Some(Instant::now() + TIMEOUT));
            assert_eq!(times_out_after(&mut io).await, Some(TIMEOUT), "read to the end: {read_to_the_end}");
        }
        let (_client, mut io, clock) = timed();
        assert_eq!(clock.head_arrived(http::Version::HTTP_2), None, "HTTP/2 requests are not numbered");
        assert_eq!(times_out_after(&mut io).await, None, "and HTTP/2 connections not timed");
    }
}
