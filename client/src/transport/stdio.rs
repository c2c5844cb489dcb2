//! stdio framing: one JSON-RPC message per line, UTF-8, no embedded newlines
//! ([stdio](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio)).

use crate::error::ClientError;
use crate::peer::Incoming;
use futures::{Sink, Stream, ready};
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

/// The messages read from `reader`, one per line. A line over `max_bytes` is skipped whole
/// (with a warning) and reading goes on; end of input or a read error ends the stream.
pub(crate) fn read_lines<R>(reader: R, max_bytes: usize) -> impl Stream<Item = Incoming> + Send + Unpin + 'static
where
    R: AsyncRead + Send + Unpin + 'static,
{
    let state = (BufReader::new(reader), Vec::new());
    Box::pin(futures::stream::unfold(state, move |(mut reader, mut line)| async move {
        loop {
            line.clear();
            match read_line(&mut reader, &mut line, max_bytes).await {
                Ok(Line::Complete) => {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let message = std::mem::take(&mut line);
                    return Some((Incoming::Message(message), (reader, line)));
                }
                Ok(Line::TooLong) => {
                    tracing::warn!(
                        target: "switchyard_client",
                        max_bytes,
                        "the server sent a line longer than the limit; skipped"
                    );
                }
                Ok(Line::End) => return None,
                Err(e) => {
                    let error = ClientError::transport("reading the server's output", e);
                    return Some((Incoming::Broken(error), (reader, line)));
                }
            }
        }
    }))
}

enum Line {
    Complete,
    TooLong,
    End,
}

/// Reads up to and without the next `\n` into `line`, keeping at most `max` bytes: a longer
/// line is consumed to its end and reported as too long, so memory stays bounded whatever the
/// server sends.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut over = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // A last line without its newline still counts.
            return Ok(if over {
                Line::TooLong
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Complete
            });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], Some(at)),
            None => (available, None),
        };
        if !over && line.len() + chunk.len() <= max {
            line.extend_from_slice(chunk);
        } else {
            over = true;
            line.clear();
        }
        let used = found.map_or(chunk.len(), |at| at + 1);
        reader.consume(used);
        if found.is_some() {
            return Ok(if over { Line::TooLong } else { Line::Complete });
        }
    }
}

/// Writes each message as one line. Lines are kept in a buffer until the sink is flushed
/// (`send` flushes each; the client's writer feeds every message waiting and flushes once),
/// so messages sent together cost one write, not one each.
pub(crate) fn write_lines<W>(writer: W) -> impl Sink<Value, Error = ClientError> + Send + Unpin + 'static
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    LineWriter { writer, buffer: Vec::new(), written: 0 }
}

/// Lines waiting past this many bytes are written before another message is taken.
const FLUSH_AT: usize = 64 * 1024;

/// [`write_lines`]' sink: `buffer[written..]` is what has still to be written.
struct LineWriter<W> {
    writer: W,
    buffer: Vec<u8>,
    written: usize,
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    /// Writes the buffer out and flushes the writer.
    fn poll_out(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        let failed = |e| ClientError::transport("writing to the server", e);
        while self.written < self.buffer.len() {
            let n = ready!(Pin::new(&mut self.writer).poll_write(cx, &self.buffer[self.written..])).map_err(failed)?;
            if n == 0 {
                return Poll::Ready(Err(failed(std::io::ErrorKind::WriteZero.into())));
            }
            self.written += n;
        }
        self.buffer.clear();
        self.written = 0;
        Pin::new(&mut self.writer).poll_flush(cx).map_err(failed)
    }
}

impl<W: AsyncWrite + Unpin> Sink<Value> for LineWriter<W> {
    type Error = ClientError;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        let this = self.get_mut();
        if this.buffer.len() >= FLUSH_AT {
            return this.poll_out(cx);
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, message: Value) -> Result<(), ClientError> {
        let this = self.get_mut();
        // serde_json escapes newlines inside strings, so a message is always one line.
        let before = this.buffer.len();
        if let Err(e) = serde_json::to_writer(&mut this.buffer, &message) {
            // Not half a message on the wire.
            this.buffer.truncate(before);
            return Err(ClientError::Encode(format!("a message could not be encoded: {e}")));
        }
        this.buffer.push(b'\n');
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        self.get_mut().poll_out(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        let this = self.get_mut();
        ready!(this.poll_out(cx))?;
        Pin::new(&mut this.writer)
            .poll_shutdown(cx)
            .map_err(|e| ClientError::transport("closing the server's input", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::SinkExt;
    use serde_json::json;

    /// Fed messages wait in the buffer; one flush writes them all, each on its line, in order.
    #[tokio::test]
    async fn fed_lines_go_out_together_on_flush() {
        let mut sink = LineWriter { writer: Vec::new(), buffer: Vec::new(), written: 0 };
        for id in 1..=3 {
            sink.feed(json!({ "jsonrpc": "2.0", "id": id, "method": "ping" })).await.expect("fed");
        }
        assert!(sink.writer.is_empty(), "nothing written before the flush");
        sink.flush().await.expect("flushed");
        let text = String::from_utf8(sink.writer.clone()).expect("UTF-8");
        let ids: Vec<u64> = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("one message a line")["id"].as_u64().expect("id"))
            .collect();
        assert_eq!(ids, [1, 2, 3]);
        assert!(text.ends_with('\n') && sink.buffer.is_empty());
        // `send` flushes at once.
        sink.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await.expect("sent");
        assert_eq!(sink.writer.iter().filter(|b| **b == b'\n').count(), 4);
    }
}
