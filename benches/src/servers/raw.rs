//! The raw reference: what answering the same JSON-RPC request costs with no framework.
//! HTTP: hyper + serde_json; stdio: a blocking read-parse-write loop.

use crate::Res;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::io::{BufRead, Write};

/// The answer to one parsed JSON-RPC message; `None` for a notification (no `id`).
fn answer(msg: &Value) -> Option<Value> {
    let id = msg.get("id")?.clone();
    let result = if msg.get("method").and_then(Value::as_str) == Some("initialize") {
        json!({ "protocolVersion": "2025-11-25", "capabilities": { "tools": {} },
                "serverInfo": { "name": "raw", "version": "0" } })
    } else {
        let text = msg.pointer("/params/arguments/text").cloned().unwrap_or(Value::Null);
        json!({ "content": [{ "type": "text", "text": text }], "isError": false })
    };
    Some(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

/// Reads newline-delimited JSON-RPC on stdin and answers on stdout, flushing only when no more
/// input is buffered.
pub fn stdio() -> Res<()> {
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let reply = match serde_json::from_slice::<Value>(&line) {
            Ok(msg) => answer(&msg),
            Err(e) => Some(json!({ "jsonrpc": "2.0", "id": null,
                                   "error": { "code": -32700, "message": e.to_string() } })),
        };
        if let Some(reply) = reply {
            serde_json::to_writer(&mut output, &reply)?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(())
}

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let body = req.into_body().collect().await?.to_bytes();
    let (status, reply) = match serde_json::from_slice::<Value>(&body) {
        Ok(msg) => match answer(&msg) {
            Some(r) => (StatusCode::OK, r.to_string()),
            None => (StatusCode::ACCEPTED, String::new()),
        },
        Err(e) => (
            StatusCode::BAD_REQUEST,
            json!({ "jsonrpc": "2.0", "id": null,
            "error": { "code": -32700, "message": e.to_string() } })
            .to_string(),
        ),
    };
    let mut resp = Response::new(Full::new(Bytes::from(reply)));
    *resp.status_mut() = status;
    resp.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    // Enough for the legacy handshake of the load generator; the raw server keeps no sessions.
    resp.headers_mut().insert("mcp-session-id", hyper::header::HeaderValue::from_static("raw"));
    Ok(resp)
}

/// Serves HTTP/1.1 at `addr`, answering every POST body as one JSON-RPC message.
pub async fn http(addr: String) -> Res<()> {
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), hyper::service::service_fn(handle));
            let _ = conn.await;
        });
    }
}
