//! The raw reference: what answering the same JSON-RPC messages costs with no framework.
//! HTTP: hyper; stdio: a blocking read-parse-write loop. Two decodings share these transports:
//! [`Decoding::Typed`] (borrowed structs in, a struct out: the RAW column, roles `raw-stdio`
//! and `raw-http`) and [`Decoding::Value`] (a `serde_json::Value` in, `json!` out: roles
//! `raw-value-stdio` and `raw-value-http`, the RAW column with `--raw value`).

mod typed;
mod value;

use crate::Res;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::io::{BufRead, Read, Write};

/// How a raw server decodes a message and encodes its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoding {
    /// Borrowed `#[derive(Deserialize)]` structs, a `#[derive(Serialize)]` answer.
    Typed,
    /// A `serde_json::Value` tree, an answer built with `json!`.
    Value,
}

/// What a raw server did with one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It wrote the answer to a request.
    Answered,
    /// A notification: nothing written (HTTP: 202 with no body).
    Notification,
    /// It wrote a JSON-RPC error for input it could not decode (HTTP: 400).
    Rejected,
}

impl Decoding {
    /// Writes the answer to `msg` (one JSON-RPC message) into `out`.
    pub fn answer<W: Write>(self, msg: &[u8], out: W) -> std::io::Result<Outcome> {
        match self {
            Decoding::Typed => typed::answer(msg, out),
            Decoding::Value => value::answer(msg, out),
        }
    }
}

/// Reads newline-delimited JSON-RPC on stdin and answers on stdout.
pub fn stdio(decoding: Decoding) -> Res<()> {
    serve_lines(decoding, std::io::stdin().lock(), std::io::stdout().lock())
}

/// The stdio loop over any byte streams: one answer line per request line, flushed only when
/// no more input is buffered.
fn serve_lines(decoding: Decoding, input: impl Read, output: impl Write) -> Res<()> {
    let mut input = std::io::BufReader::with_capacity(64 * 1024, input);
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, output);
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if decoding.answer(&line, &mut output)? != Outcome::Notification {
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(())
}

async fn handle(decoding: Decoding, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = req.into_body().collect().await?.to_bytes();
    let mut reply = Vec::with_capacity(256);
    let status = match decoding.answer(&body, &mut reply) {
        Ok(Outcome::Answered) => StatusCode::OK,
        Ok(Outcome::Notification) => StatusCode::ACCEPTED,
        Ok(Outcome::Rejected) => StatusCode::BAD_REQUEST,
        // Writing into a Vec fails only if serializing does, which these answers cannot.
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let mut resp = Response::new(Full::new(Bytes::from(reply)));
    *resp.status_mut() = status;
    resp.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    // Enough for the legacy handshake of the load generator; the raw server keeps no sessions.
    resp.headers_mut().insert("mcp-session-id", HeaderValue::from_static("raw"));
    Ok(resp)
}

/// Serves HTTP/1.1 at `addr`, answering every POST body as one JSON-RPC message.
pub async fn http(addr: String, decoding: Decoding) -> Res<()> {
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(decoding, req));
            let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            let _ = conn.await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{Decoding, Outcome, serve_lines};
    use serde_json::Value;

    /// The messages both decodings must answer alike: the handshake, a notification, calls in
    /// both wires' shapes (the text with escapes, ids of each kind, an escaped method name),
    /// and input that is not JSON.
    const MESSAGES: &[&str] = &[
        crate::load_stdio::INITIALIZE,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello 1"}}}"#,
        r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"q\" b\\ n\n t\t u\u00e9 \ud83d\ude00 s\/"}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello from wrk"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"0"}}}}"#,
        r#" { "params" : { "arguments" : { "text" : "spaced" } } , "method" : "tools\/call" , "id" : 12345678901234567890 , "jsonrpc" : "2.0" } "#,
        r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":null}"#,
        "not json",
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"cut"#,
        "",
    ];

    fn answer(decoding: Decoding, msg: &str) -> (Outcome, Option<Value>) {
        let mut out = Vec::new();
        let outcome = decoding.answer(msg.as_bytes(), &mut out).expect("answers into a Vec");
        let parsed = (!out.is_empty()).then(|| serde_json::from_slice(&out).expect("the answer is JSON"));
        (outcome, parsed)
    }

    #[test]
    fn typed_and_value_answer_alike() {
        for msg in MESSAGES {
            let typed = answer(Decoding::Typed, msg);
            assert_eq!(typed, answer(Decoding::Value, msg), "{msg}");
            let (outcome, reply) = &typed;
            let expected = if msg.contains("\"method\"") && !msg.contains("\"id\"") {
                Outcome::Notification
            } else if serde_json::from_str::<Value>(msg).is_err() {
                Outcome::Rejected
            } else {
                Outcome::Answered
            };
            assert_eq!(*outcome, expected, "{msg}");
            if let (Outcome::Rejected, Some(reply)) = (outcome, reply) {
                assert_eq!(reply["error"]["code"], -32700, "{msg}");
            }
        }
        let escaped = answer(Decoding::Typed, MESSAGES[3]).1.expect("an answer");
        assert_eq!(escaped["id"], "a\"b");
        assert_eq!(escaped["result"]["content"][0]["text"], "q\" b\\ n\n t\t u\u{e9} \u{1f600} s/");
    }

    #[test]
    fn the_stdio_loops_answer_alike() {
        let input = MESSAGES.iter().map(|m| format!("{m}\n")).collect::<String>();
        let run = |decoding| {
            let mut out = Vec::new();
            serve_lines(decoding, input.as_bytes(), &mut out).expect("the loop ends at EOF");
            let lines = String::from_utf8(out).expect("UTF-8");
            lines.lines().map(|l| serde_json::from_str::<Value>(l).expect("a JSON line")).collect::<Vec<_>>()
        };
        let typed = run(Decoding::Typed);
        // One line per message but the notification.
        assert_eq!(typed.len(), MESSAGES.len() - 1);
        assert_eq!(typed, run(Decoding::Value));
    }
}
