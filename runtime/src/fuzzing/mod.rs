//! Entry points for the fuzz targets in `fuzz/` and for the test that replays their corpus
//! (`examples/tests/fuzz_corpus.rs`). Not public API: names here may change in any release.
//!
//! Each function drives the same code the transports run on untrusted bytes, so a crash found
//! by the fuzzer is a crash a peer could cause.

#[cfg(feature = "http")]
mod http_router;

#[cfg(feature = "http")]
pub use http_router::{HttpTarget, http_request};

use crate::jsonrpc::{McpError, error_response, parse_message};
use serde_json::Value;
use std::time::Duration;

/// Decodes `bytes` as one JSON-RPC message the way both transports do.
///
/// Returns the error response a transport answers a malformed message with
/// (`{"jsonrpc":"2.0","id":..,"error":{"code":-32700|-32600,..}}`), or `None` when the bytes
/// are a well-formed message or a malformed notification (which gets no answer).
pub fn decode_envelope(bytes: &[u8]) -> Option<Value> {
    match parse_message(bytes) {
        Ok(_) => None,
        Err(f) if f.notification => None,
        Err(f) => Some(error_response(f.id.as_ref(), &f.error)),
    }
}

/// Validates `bytes` as the value of a header that mirrors a body field (`Mcp-Name`, `Mcp-Method`,
/// `Mcp-Param-*`), with the strict `=?base64?...?=` sentinel
/// ([value encoding](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#value-encoding)).
///
/// Returns `Ok(None)` when `bytes` cannot be an HTTP header value at all (the HTTP layer
/// rejects those before the transport sees them), `Ok(Some(text))` for the decoded text, and
/// the `-32020` error otherwise.
#[cfg(feature = "http")]
pub fn mirrored_header(bytes: &[u8]) -> Result<Option<String>, McpError> {
    let Ok(value) = http::HeaderValue::from_bytes(bytes) else { return Ok(None) };
    let mut headers = http::HeaderMap::new();
    headers.insert("mcp-name", value);
    crate::transport::http::fuzz_mirrored(&headers, "mcp-name")
}

/// Feeds `input` to `server` over the stdio transport (an in-memory pipe, then EOF) and
/// returns every line the server wrote, without the newline.
///
/// Requests still running 100 ms after EOF are cancelled (run it on a runtime with paused time
/// to skip the wait). Errors: I/O errors of the in-memory pipe only.
#[cfg(feature = "stdio")]
pub async fn stdio_exchange(server: crate::Server, input: &[u8]) -> std::io::Result<Vec<Vec<u8>>> {
    use crate::transport::stdio::{StdioConfig, serve_io};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut client_w, server_r) = tokio::io::duplex(64 * 1024);
    let (server_w, mut client_r) = tokio::io::duplex(64 * 1024);
    let config = StdioConfig::default().eof_grace(Duration::from_millis(100));
    let serving = tokio::spawn(serve_io(server, server_r, server_w, config));
    let write = async {
        client_w.write_all(input).await?;
        client_w.shutdown().await?;
        drop(client_w);
        std::io::Result::Ok(())
    };
    let mut out = Vec::new();
    let (w, r) = tokio::join!(write, client_r.read_to_end(&mut out));
    w?;
    r?;
    serving.await.map_err(std::io::Error::other)??;
    Ok(out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect())
}

/// Methods the dispatch fuzz target sends its params to, picked by the first input byte.
pub const DISPATCH_METHODS: &[&str] = &[
    "tools/call",
    "prompts/get",
    "resources/read",
    "completion/complete",
    "tools/list",
    "resources/templates/list",
    "subscriptions/listen",
    "logging/setLevel",
    "ping",
    "server/discover",
];

/// The stdio input of the dispatch fuzz target: the first byte of `data` picks a method of
/// [`DISPATCH_METHODS`] and, when odd, a legacy `initialize` handshake first; the rest is
/// spliced verbatim as that request's `params`. One line per message.
pub fn dispatch_input(data: &[u8]) -> Vec<u8> {
    let (selector, params) = data.split_first().map(|(s, p)| (*s, p)).unwrap_or((0, &[][..]));
    let method = DISPATCH_METHODS[usize::from(selector >> 1) % DISPATCH_METHODS.len()];
    let mut input = Vec::with_capacity(params.len() + 256);
    if selector & 1 == 1 {
        input.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
        );
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    }
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":""#);
    input.extend_from_slice(method.as_bytes());
    input.extend_from_slice(br#"","params":"#);
    // A newline inside would split the request into two lines: fine, that is input too.
    input.extend_from_slice(params);
    input.extend_from_slice(b"}\n");
    input
}

/// Checks that `line` is one well-formed JSON-RPC message a server may send: a response
/// (`id` plus exactly one of `result` or `error {code: integer, message: string}`), a
/// notification or a request (`method` string).
///
/// Errors: a sentence saying what is wrong.
pub fn check_server_message(line: &[u8]) -> Result<(), String> {
    let v: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON ({e})"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("\"jsonrpc\" is not \"2.0\"".into());
    }
    if obj.get("method").is_some() {
        return if obj["method"].is_string() { Ok(()) } else { Err("method is not a string".into()) };
    }
    let id = obj.get("id").ok_or("a response without id")?;
    if !(id.is_string() || id.is_i64() || id.is_u64() || id.is_null()) {
        return Err(format!("id {id} is not a string, integer or null"));
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => Ok(()),
        (None, Some(e)) => {
            let code_ok = e.get("code").is_some_and(|c| c.is_i64());
            let message_ok = e.get("message").is_some_and(Value::is_string);
            if code_ok && message_ok { Ok(()) } else { Err(format!("malformed error object {e}")) }
        }
        _ => Err("a response needs exactly one of result and error".into()),
    }
}

/// The fixed key of the `requestState` seam below (32 bytes, the shortest accepted).
const STATE_KEY: &[u8; 32] = b"switchyard-fuzz-request-state-k!";

fn state_codec() -> std::sync::Arc<crate::input::StateCodec> {
    std::sync::Arc::new(crate::input::StateCodec::new(Some(STATE_KEY.to_vec()), Duration::from_secs(600)))
}

/// The params of a `tools/call echo {text}` retry, for the `requestState` seam.
fn echo_params(text: &str) -> serde_json::Map<String, Value> {
    let mut params = serde_json::Map::new();
    params.insert("name".into(), Value::String("echo".into()));
    params.insert("arguments".into(), serde_json::json!({ "text": text }));
    params
}

/// A `requestState` this seam's key issued for `tools/call echo {text}` that carries the
/// answer `{"confirm": {"action": "accept"}}`: the valid token the `request_state` fuzz target
/// tampers with.
pub fn seal_request_state(text: &str) -> String {
    let binding = crate::input::Binding::of("tools/call", &echo_params(text), None);
    let mut answers = serde_json::Map::new();
    answers.insert("confirm".into(), serde_json::json!({ "action": "accept" }));
    let carried = crate::input::Carried { answers, data: None };
    state_codec().seal(&binding, &carried, std::time::SystemTime::now())
}

/// Verifies `state` and `input_responses` the way a 2026-07-28 `tools/call echo {text}` retry is
/// verified before its handler runs (`params.requestState`, `params.inputResponses`;
/// [MRTR server requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#server-requirements-basic-workflow)),
/// with this seam's fixed key.
///
/// Returns the answers the handler would see (carried ones merged under the new responses)
/// or the `-32602` error the request gets: `requestState` or `inputResponses` of the wrong
/// type, or a state that does not verify (malformed, tampered, expired, other binding).
pub fn verify_request_state(
    text: &str,
    state: Value,
    input_responses: Option<Value>,
) -> Result<serde_json::Map<String, Value>, McpError> {
    let mut params = echo_params(text);
    params.insert("requestState".into(), state);
    if let Some(r) = input_responses {
        params.insert("inputResponses".into(), r);
    }
    let channel =
        crate::input::ModernChannel::from_params(state_codec(), "tools/call", &mut params, &Default::default(), None)?;
    Ok(channel.visible_answers())
}
