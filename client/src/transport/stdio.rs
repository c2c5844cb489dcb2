//! stdio framing: one JSON-RPC message per line, UTF-8, no embedded newlines
//! ([stdio](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio)).

use crate::error::ClientError;
use crate::peer::Incoming;
use futures::{Sink, Stream};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

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

/// Writes each message as one line and flushes it.
pub(crate) fn write_lines<W>(writer: W) -> impl Sink<Value, Error = ClientError> + Send + Unpin + 'static
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    Box::pin(futures::sink::unfold(writer, |mut writer, message: Value| async move {
        // serde_json escapes newlines inside strings, so a message is always one line.
        let mut bytes = serde_json::to_vec(&message)
            .map_err(|e| ClientError::Encode(format!("a message could not be encoded: {e}")))?;
        bytes.push(b'\n');
        writer.write_all(&bytes).await.map_err(|e| ClientError::transport("writing to the server", e))?;
        writer.flush().await.map_err(|e| ClientError::transport("writing to the server", e))?;
        Ok::<_, ClientError>(writer)
    }))
}
