use crate::jsonrpc::McpError;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;
use http::header::AsHeaderName;
use std::borrow::Cow;
use std::fmt::Display;

/// `Mcp-Method` (mirrors the body's `method`).
pub(crate) static MCP_METHOD: http::HeaderName = http::HeaderName::from_static("mcp-method");
/// `Mcp-Name` (mirrors the params field that names the target).
pub(crate) static MCP_NAME: http::HeaderName = http::HeaderName::from_static("mcp-name");

/// `value` trimmed of ASCII whitespace, lossily decoded when it is not UTF-8; borrowed from
/// the header map in the usual (visible ASCII) case, so a lookup allocates nothing.
///
/// Trimmed before decoding, as bytes: `str::trim` and `from_utf8_lossy` walk the value
/// char by char, which cost two lookups a POST 200 instructions. Only ASCII whitespace is
/// trimmed (a field value's optional whitespace is spaces and tabs, RFC 9110 §5.6.3).
fn trimmed_lossy(value: &http::HeaderValue) -> Cow<'_, str> {
    let bytes = value.as_bytes().trim_ascii();
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `Mcp-Session-Id`, when present, trimmed.
pub(crate) fn session_id(headers: &HeaderMap) -> Option<Cow<'_, str>> {
    // A `HeaderName` rather than a `&str`: a `&str` key is parsed into a name on every lookup.
    static NAME: http::HeaderName = http::HeaderName::from_static("mcp-session-id");
    // A value that is not visible ASCII is kept (lossily decoded): it names no session (ids are
    // hex), so it is refused as unknown rather than as missing.
    headers.get(&NAME).map(trimmed_lossy)
}

/// `MCP-Protocol-Version`, trimmed. A value that is not visible ASCII is returned as it is
/// (lossily decoded) so that the version checks reject it by name rather than as missing.
pub(crate) fn protocol_version(headers: &HeaderMap) -> Option<Cow<'_, str>> {
    // As in `session_id`: read on every POST.
    static NAME: http::HeaderName = http::HeaderName::from_static("mcp-protocol-version");
    headers.get(&NAME).map(trimmed_lossy)
}

/// Reads a header that mirrors a body value: trims optional whitespace and decodes the
/// `=?base64?...?=` sentinel strictly
/// ([value encoding](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#value-encoding)).
///
/// Returns `Ok(None)` when the header is absent. Errors (`-32020`): a value that is not
/// visible ASCII, a sentinel whose base64 is malformed or padded wrongly, or whose bytes are
/// not UTF-8.
///
/// `name` is best a `&HeaderName` (e.g. [`MCP_METHOD`]): a `&str` is parsed into one per call.
pub(crate) fn mirrored<K: AsHeaderName + Display + Copy>(
    headers: &HeaderMap,
    name: K,
) -> Result<Option<Cow<'_, str>>, McpError> {
    let mut values = headers.get_all(name).iter();
    let Some(raw) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(McpError::header_mismatch(format!("{name} is sent more than once")));
    }
    let text = raw
        .to_str()
        .map_err(|_| {
            McpError::header_mismatch(format!("{name} holds characters that are not allowed; base64-encode the value"))
        })
        // `to_str` let through visible ASCII and tabs only, so this trims exactly HTTP's
        // optional whitespace (spaces and tabs, RFC 9110 §5.6.3).
        .map(str::trim_ascii)?;
    let Some(inner) = text.strip_prefix("=?base64?").and_then(|t| t.strip_suffix("?=")) else {
        return Ok(Some(Cow::Borrowed(text)));
    };
    let bytes = STANDARD
        .decode(inner)
        .map_err(|_| McpError::header_mismatch(format!("{name}: the =?base64?...?= value is not valid base64")))?;
    String::from_utf8(bytes)
        .map(|s| Some(Cow::Owned(s)))
        .map_err(|_| McpError::header_mismatch(format!("{name}: the decoded value is not UTF-8")))
}

/// The W3C trace context of the `traceparent`, `tracestate` and `baggage` headers (SEP-414's
/// fallback where `params._meta` carries none); `None` without a valid `traceparent`. Values
/// that are not visible ASCII are dropped like malformed ones.
pub(crate) fn trace_context(headers: &axum::http::HeaderMap) -> Option<crate::protocol::TraceContext> {
    // Names, not `&str`s, as in `session_id`: every POST looks `traceparent` up.
    static TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");
    static TRACESTATE: http::HeaderName = http::HeaderName::from_static("tracestate");
    static BAGGAGE: http::HeaderName = http::HeaderName::from_static("baggage");
    let traceparent = headers.get(&TRACEPARENT)?.to_str().ok()?;
    let text = |name: &http::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    crate::protocol::TraceContext::parse(traceparent, text(&TRACESTATE), text(&BAGGAGE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(name: &'static str, v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(v).expect("valid test header"));
        h
    }

    #[test]
    fn decodes_the_base64_sentinel_strictly() {
        assert_eq!(
            mirrored(&with("mcp-name", "=?base64?SGVsbG8=?="), "mcp-name").ok().flatten().as_deref(),
            Some("Hello")
        );
        assert!(mirrored(&with("mcp-name", "=?base64?SGVsbG8?="), "mcp-name").is_err());
        assert!(mirrored(&with("mcp-name", "=?base64?SGVs!!!bG8=?="), "mcp-name").is_err());
        assert_eq!(mirrored(&with("mcp-name", "SGVsbG8="), "mcp-name").ok().flatten().as_deref(), Some("SGVsbG8="));
        assert_eq!(
            mirrored(&with("mcp-name", "=?base64?SGVsbG8="), "mcp-name").ok().flatten().as_deref(),
            Some("=?base64?SGVsbG8=")
        );
        assert_eq!(mirrored(&with("mcp-name", "  greet  "), "mcp-name").ok().flatten().as_deref(), Some("greet"));
    }

    /// Only the optional whitespace at the ends goes: what is inside, and a value that is
    /// nothing but whitespace, come out as a mirrored header or a session id is read.
    #[test]
    fn values_lose_the_whitespace_at_their_ends_only() {
        assert_eq!(
            mirrored(&with("mcp-name", " \t greet me\t "), "mcp-name").ok().flatten().as_deref(),
            Some("greet me")
        );
        assert_eq!(mirrored(&with("mcp-name", "\t"), "mcp-name").ok().flatten().as_deref(), Some(""));
        let mut h = HeaderMap::new();
        h.insert("mcp-session-id", http::HeaderValue::from_bytes(b" \tab\xffcd \t").expect("obs-text"));
        assert_eq!(session_id(&h).as_deref(), Some("ab\u{fffd}cd"));
        assert_eq!(session_id(&with("mcp-session-id", "  0a1b  ")).as_deref(), Some("0a1b"));
    }

    /// A session id that is not visible ASCII is still a session id (refused as unknown, 404),
    /// not a missing one.
    #[test]
    fn an_unreadable_session_id_is_present() {
        let mut h = HeaderMap::new();
        h.insert("mcp-session-id", http::HeaderValue::from_bytes(b"\xff\xfe").expect("obs-text"));
        assert!(session_id(&h).is_some_and(|id| !id.is_empty()));
        assert_eq!(session_id(&HeaderMap::new()), None);
    }
}
