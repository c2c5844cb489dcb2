//! A deadline on a connection's first bytes. hyper's header-read timeout starts once HTTP/1.1
//! is chosen, but hyper-util's automatic HTTP/1.1-or-HTTP/2 detection first reads up to the 24
//! bytes of the HTTP/2 preface with no timeout of its own: a client that connects and sends
//! fewer, or nothing, would hold its connection forever. Until those bytes have arrived, a read
//! after the deadline fails with `TimedOut` (hyper then closes the connection); from there on
//! the wrapper only counts.

use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// The length of the HTTP/2 connection preface (RFC 9113 §3.4), the most the detection reads.
const PREFACE: usize = 24;

pin_project! {
    /// `io` whose first [`PREFACE`] bytes must arrive before a deadline.
    pub(super) struct PrefaceDeadline<T> {
        #[pin]
        io: T,
        // Boxed, so the wrapper stays `Unpin` as hyper's connection wants its IO to be.
        deadline: Option<Pin<Box<Sleep>>>,
        read: usize,
    }
}

impl<T> PrefaceDeadline<T> {
    pub(super) fn new(io: T, within: Duration) -> Self {
        PrefaceDeadline { io, deadline: Some(Box::pin(tokio::time::sleep(within))), read: 0 }
    }
}

impl<T: AsyncRead> AsyncRead for PrefaceDeadline<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        let polled = this.io.poll_read(cx, buf);
        if this.deadline.is_none() {
            return polled;
        }
        if let Poll::Ready(Ok(())) = &polled {
            *this.read += buf.filled().len() - before;
            if *this.read >= PREFACE {
                *this.deadline = None;
            }
            return polled;
        }
        if polled.is_pending()
            && let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client sent no request within the header read timeout",
            )));
        }
        polled
    }
}

impl<T: AsyncWrite> AsyncWrite for PrefaceDeadline<T> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_silent_peer_times_out_and_a_prompt_one_never_does() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut silent = PrefaceDeadline::new(server, Duration::from_secs(5));
        let mut buf = [0u8; 8];
        let err = silent.read(&mut buf).await.expect_err("times out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);

        let (mut client2, server2) = tokio::io::duplex(64);
        let mut prompt = PrefaceDeadline::new(server2, Duration::from_secs(5));
        client2.write_all(&[b'x'; PREFACE]).await.expect("write");
        let mut got = [0u8; PREFACE];
        prompt.read_exact(&mut got).await.expect("the preface");
        // Long after the deadline, the connection reads as any other.
        tokio::time::sleep(Duration::from_secs(60)).await;
        client2.write_all(b"later").await.expect("write");
        let mut later = [0u8; 5];
        prompt.read_exact(&mut later).await.expect("no deadline any more");
        assert_eq!(&later, b"later");
        client.shutdown().await.expect("shutdown");
    }

    #[tokio::test(start_paused = true)]
    async fn a_partial_preface_still_times_out() {
        let (mut client, server) = tokio::io::duplex(64);
        let mut io = PrefaceDeadline::new(server, Duration::from_secs(5));
        client.write_all(b"POST /").await.expect("write");
        let mut buf = [0u8; 64];
        assert_eq!(io.read(&mut buf).await.expect("some bytes"), 6);
        let err = io.read(&mut buf).await.expect_err("times out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }
}
