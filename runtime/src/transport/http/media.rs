//! Content negotiation of the MCP endpoint: what a POST body must be and what a client must be
//! able to read
//! ([sending messages](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages-to-the-server)).
//!
//! A body is JSON-RPC in JSON, so `Content-Type` must be `application/json` (parameters such as
//! `charset=utf-8` allowed; another charset is refused, JSON being UTF-8 by RFC 8259 §8.1).
//! Checked before the body is read and before any handler runs, this also keeps a web page from
//! reaching a handler with a "simple" cross-site request (`text/plain`, form encodings), which
//! browsers send without a CORS preflight.

use super::respond;
use crate::jsonrpc::McpError;
use axum::response::Response;
use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};

/// What the client's `Accept` header lets the server answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepts {
    /// `application/json` (a single JSON body).
    pub(crate) json: bool,
    /// `text/event-stream` (an SSE stream).
    pub(crate) sse: bool,
}

/// 415 with a `-32600` error unless `Content-Type` is `application/json`; `None` when it is.
pub(crate) fn refuse_body(headers: &HeaderMap) -> Option<Response> {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return Some(unsupported("no Content-Type"));
    };
    // What every client sends, without the parser's allocations.
    if value.as_bytes() == b"application/json" {
        return None;
    }
    let text = String::from_utf8_lossy(value.as_bytes());
    let is_json = value.to_str().ok().and_then(|v| v.parse::<mime::Mime>().ok()).is_some_and(|m| {
        m.essence_str() == "application/json" && m.get_param(mime::CHARSET).is_none_or(|c| c == mime::UTF_8)
    });
    (!is_json).then(|| unsupported(&format!("Content-Type {text:?}")))
}

fn unsupported(what: &str) -> Response {
    let err = McpError::invalid_request(format!(
        "{what}: a request body is a JSON-RPC message sent as Content-Type: application/json"
    ));
    respond::error(415, None, &err)
}

/// What the `Accept` header allows; a request without one accepts anything (RFC 9110 §12.5.1).
/// Media ranges with `q=0` are refusals; entries that do not parse are skipped.
pub(crate) fn accepts(headers: &HeaderMap) -> Accepts {
    let mut values = headers.get_all(ACCEPT).iter().peekable();
    let Some(first) = values.peek() else {
        return Accepts { json: true, sse: true };
    };
    // What the spec tells clients to send, without the parser's allocations.
    if first.as_bytes() == b"application/json, text/event-stream" {
        return Accepts { json: true, sse: true };
    }
    let mut found = Accepts { json: false, sse: false };
    for range in values.filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')) {
        let Ok(m) = range.trim().parse::<mime::Mime>() else { continue };
        let refused = m.get_param("q").is_some_and(|q| q.as_str().parse::<f32>().map_or(true, |q| q <= 0.0));
        if refused {
            continue;
        }
        let (ty, sub) = (m.type_(), m.subtype());
        let any = ty == mime::STAR;
        found.json |= any || (ty == mime::APPLICATION && (sub == mime::STAR || sub == mime::JSON));
        found.sse |= any || (ty == mime::TEXT && (sub == mime::STAR || sub == mime::EVENT_STREAM));
    }
    found
}

/// 406 with a `-32600` error naming what the server can send (`offered`, e.g.
/// `application/json or text/event-stream`).
pub(crate) fn not_acceptable(headers: &HeaderMap, offered: &str) -> Response {
    let sent = headers
        .get_all(ACCEPT)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect::<Vec<_>>()
        .join(", ");
    let err = McpError::invalid_request(format!(
        "Accept {sent:?} allows nothing this endpoint sends: send Accept: {offered}"
    ));
    respond::error(406, None, &err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(name: http::HeaderName, value: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_static(value));
        h
    }

    #[test]
    fn only_json_bodies_are_taken() {
        for ok in ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"] {
            assert!(refuse_body(&headers(CONTENT_TYPE, ok)).is_none(), "{ok}");
        }
        for refused in [
            "text/plain",
            "text/plain; charset=utf-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=latin1",
            "application/jsonx",
            "application/json-seq",
            "application/*",
            "json",
            "",
        ] {
            let r = refuse_body(&headers(CONTENT_TYPE, refused)).expect(refused);
            assert_eq!(r.status(), 415, "{refused}");
        }
        assert_eq!(refuse_body(&HeaderMap::new()).expect("none").status(), 415);
    }

    #[test]
    fn accept_ranges_wildcards_and_refusals() {
        let of = |v: &'static str| accepts(&headers(ACCEPT, v));
        let both = Accepts { json: true, sse: true };
        let json = Accepts { json: true, sse: false };
        let sse = Accepts { json: false, sse: true };
        let neither = Accepts { json: false, sse: false };
        assert_eq!(accepts(&HeaderMap::new()), both);
        assert_eq!(of("application/json, text/event-stream"), both);
        assert_eq!(of("*/*"), both);
        assert_eq!(of("application/*"), json);
        assert_eq!(of("text/*;q=0.5"), sse);
        assert_eq!(of("application/json"), json);
        assert_eq!(of("text/event-stream"), sse);
        assert_eq!(of("text/html"), neither);
        assert_eq!(of("application/json;q=0, text/html"), neither);
        assert_eq!(of("application/json;q=0.0"), neither);
        assert_eq!(of("application/json;q=bogus"), neither);
        assert_eq!(of("garbage, ,;;"), neither);
        let mut two = HeaderMap::new();
        two.append(ACCEPT, HeaderValue::from_static("text/html"));
        two.append(ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert_eq!(accepts(&two), sse);
    }
}
