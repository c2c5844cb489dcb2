//! Write coalescing for HTTP/2 connections.
//!
//! hyper runs every HTTP/2 stream as its own task. A stream that produces a frame wakes its
//! connection's task, and on tokio's multi-thread scheduler a task woken by the running task
//! goes into the worker's LIFO slot and runs next. When one event reaches many streams of one
//! connection (a listen fan-out, or many replies finishing together), the connection therefore
//! runs once per stream and writes once per stream: measured 10,000 `writev` calls to deliver
//! one event to 10,000 subscriptions on 100 connections, against 100 on the current-thread
//! scheduler, which has no LIFO slot.
//!
//! [`BatchedWrites`] makes the first write of each burst yield once: the connection's task
//! wakes itself and returns `Pending`, which sends it to the back of the run queue (tokio does
//! not put a self-wake into the LIFO slot). The streams already woken run first and queue their
//! frames; when the connection runs again it writes them together. Later writes of the same
//! burst, up to the flush that ends it, go straight through, so a burst costs one extra poll of
//! the connection task and never stalls: the yield wakes the task before returning.
//!
//! Only HTTP/2 connections are batched (recognised by the client's connection preface,
//! `PRI * HTTP/2.0…`, RFC 9113 §3.4): an HTTP/1.1 connection serves one request at a time and
//! writes from its own task, so it has nothing to gather.

use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The first bytes of the HTTP/2 client connection preface (RFC 9113 §3.4).
const H2_PREFACE_START: &[u8] = b"PRI * HTTP/2.0";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// The protocol is not known yet: the bytes read so far, this many, begin the preface.
    /// A first read can be a single byte, and `P` also starts `POST`, `PUT` and `PATCH`.
    Unknown(usize),
    /// HTTP/1.x (or anything but HTTP/2): writes pass through.
    PassThrough,
    /// HTTP/2, no burst in progress: the next write yields first.
    Idle,
    /// HTTP/2, yielded for this burst: writes pass through until the next flush.
    Writing,
}

pin_project! {
    /// An I/O object whose HTTP/2 write bursts start after one yield (module docs).
    pub(crate) struct BatchedWrites<T> {
        #[pin]
        inner: T,
        mode: Mode,
    }
}

impl<T> BatchedWrites<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self { inner, mode: Mode::Unknown(0) }
    }

    /// Whether a write should yield first; moves an idle HTTP/2 connection into its burst.
    fn yield_first(mode: &mut Mode, cx: &mut Context<'_>) -> bool {
        if *mode != Mode::Idle {
            return false;
        }
        *mode = Mode::Writing;
        cx.waker().wake_by_ref();
        true
    }
}

impl<T: AsyncRead> AsyncRead for BatchedWrites<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        let polled = this.inner.poll_read(cx, buf);
        if let Mode::Unknown(seen) = *this.mode {
            let read = &buf.filled()[before..];
            let n = read.len().min(H2_PREFACE_START.len() - seen);
            if n > 0 {
                *this.mode = if read[..n] != H2_PREFACE_START[seen..seen + n] {
                    Mode::PassThrough
                } else if seen + n == H2_PREFACE_START.len() {
                    Mode::Idle
                } else {
                    Mode::Unknown(seen + n)
                };
            }
        }
        polled
    }
}

impl<T: AsyncWrite> AsyncWrite for BatchedWrites<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.project();
        if Self::yield_first(this.mode, cx) {
            return Poll::Pending;
        }
        this.inner.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        if Self::yield_first(this.mode, cx) {
            return Poll::Pending;
        }
        this.inner.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        let flushed = this.inner.poll_flush(cx);
        if flushed.is_ready() && *this.mode == Mode::Writing {
            *this.mode = Mode::Idle;
        }
        flushed
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair() -> (BatchedWrites<tokio::io::DuplexStream>, tokio::io::DuplexStream) {
        let (server, client) = tokio::io::duplex(1 << 16);
        (BatchedWrites::new(server), client)
    }

    /// Counts how often a write returned `Pending` before it completed.
    async fn pending_writes(io: &mut BatchedWrites<tokio::io::DuplexStream>, data: &[u8]) -> usize {
        let mut pendings = 0;
        std::future::poll_fn(|cx| match Pin::new(&mut *io).poll_write(cx, data) {
            Poll::Pending => {
                pendings += 1;
                Poll::Pending
            }
            Poll::Ready(r) => Poll::Ready(r),
        })
        .await
        .expect("write");
        pendings
    }

    #[tokio::test]
    async fn an_http2_burst_yields_once_then_writes_through_until_the_flush() {
        let (mut server, mut client) = pair().await;
        client.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.expect("duplex io");
        let mut preface = [0u8; 24];
        server.read_exact(&mut preface).await.expect("duplex io");

        assert_eq!(pending_writes(&mut server, b"one").await, 1, "the burst's first write yields");
        assert_eq!(pending_writes(&mut server, b"two").await, 0, "later writes of the burst do not");
        server.flush().await.expect("duplex io");
        assert_eq!(pending_writes(&mut server, b"three").await, 1, "a flush ends the burst");
        server.flush().await.expect("duplex io");

        let mut got = [0u8; 11];
        client.read_exact(&mut got).await.expect("duplex io");
        assert_eq!(&got, b"onetwothree", "nothing is lost or reordered");
    }

    #[tokio::test]
    async fn http1_writes_pass_through() {
        let (mut server, mut client) = pair().await;
        client.write_all(b"POST /mcp HTTP/1.1\r\n").await.expect("duplex io");
        let mut line = [0u8; 20];
        server.read_exact(&mut line).await.expect("duplex io");
        assert_eq!(pending_writes(&mut server, b"reply").await, 0);
    }

    /// A burst whose writes the socket holds back (the peer reads slowly, so the inner write
    /// returns `Pending` on its own) still completes once the peer reads, bytes whole and in
    /// order, and the burst after the flush is delivered as well.
    #[tokio::test]
    async fn writes_the_socket_holds_back_complete_once_the_peer_reads() {
        let (server, mut client) = tokio::io::duplex(7);
        let mut server = BatchedWrites::new(server);
        let sent: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        let expected = sent.clone();
        let serving = tokio::spawn(async move {
            let mut preface = [0u8; 24];
            server.read_exact(&mut preface).await.expect("duplex io");
            for half in sent.chunks(2048) {
                server.write_all(half).await.expect("duplex io");
                server.flush().await.expect("duplex io");
            }
        });
        let exchange = async {
            client.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.expect("duplex io");
            let mut got = vec![0u8; expected.len()];
            client.read_exact(&mut got).await.expect("duplex io");
            got
        };
        // A liveness bound, not a timing requirement.
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), exchange).await.expect("no stall");
        assert!(got == expected, "nothing is lost or reordered");
        serving.await.expect("the writer finishes");
    }

    /// Reads `parts` one by one, each in its own read, as a client sending them apart would
    /// have them arrive.
    async fn read_apart(
        server: &mut BatchedWrites<tokio::io::DuplexStream>,
        client: &mut tokio::io::DuplexStream,
        parts: &[&[u8]],
    ) {
        for part in parts {
            client.write_all(part).await.expect("duplex io");
            let mut got = vec![0u8; part.len()];
            server.read_exact(&mut got).await.expect("duplex io");
        }
    }

    #[tokio::test]
    async fn a_preface_split_across_reads_is_recognised_once_it_is_whole() {
        let (mut server, mut client) = pair().await;
        read_apart(&mut server, &mut client, &[b"P", b"RI * HT", b"TP/2.0\r\n\r\nSM\r\n\r\n"]).await;
        assert_eq!(pending_writes(&mut server, b"x").await, 1);
    }

    /// hyper-util reads the first bytes however they arrive, so a first read can hold one byte;
    /// `P` starts HTTP/1.1 methods too.
    #[tokio::test]
    async fn http1_methods_starting_like_the_preface_pass_through() {
        for parts in [
            &[&b"P"[..], b"OST /mcp HTTP/1.1\r\n"][..],
            &[b"P", b"UT /mcp HTTP/1.1\r\n"],
            &[b"PR", b"I /mcp HTTP/1.1\r\n"],
        ] {
            let (mut server, mut client) = pair().await;
            read_apart(&mut server, &mut client, parts).await;
            assert_eq!(pending_writes(&mut server, b"reply").await, 0, "{parts:?}");
        }
    }
}
