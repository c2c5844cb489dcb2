use super::Engine;
use super::method::CacheRule;
use super::rpc::ErasedValue;
use crate::jsonrpc::{EncodedResult, McpError, ResultObject};
use crate::model::{CallToolResult, ToolResultParts, ToolResultText};
use crate::protocol::Era;
use crate::protocol::META_SERVER_INFO;
use serde_json::map::Entry;
use serde_json::{Map, Value, json};

/// The hints of a `CacheableResult` under `rule`
/// ([caching](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching#cacheable-results)).
fn cache_hints(server: &Engine, rule: CacheRule) -> Option<(u128, &'static str)> {
    let c = &server.cache;
    match rule {
        CacheRule::Discover => Some((c.discover_ttl.as_millis(), "public")),
        CacheRule::List => Some((c.list_ttl.as_millis(), if server.lists_vary() { "private" } else { "public" })),
        CacheRule::Read => Some((c.read_ttl.as_millis(), "private")),
        CacheRule::Never => None,
    }
}

/// Stamps a 2026-07-28 result: `resultType` (default `"complete"`), the server's identity in
/// `_meta["io.modelcontextprotocol/serverInfo"]`, and `ttlMs`/`cacheScope` on cacheable
/// complete results.
pub(crate) fn stamp_modern(server: &Engine, cache: CacheRule, result: Value) -> Value {
    let mut obj = match result {
        Value::Object(o) => o,
        // Every MCP result is an object; a handler that produced something else is wrapped so
        // the wire stays schema-valid.
        other => {
            let mut o = Map::new();
            o.insert("value".into(), other);
            o
        }
    };
    // Compared in place: a clone of the value would cost an allocation per result.
    let complete = match obj.entry("resultType") {
        Entry::Vacant(v) => {
            v.insert(json!("complete"));
            true
        }
        Entry::Occupied(o) => o.get() == "complete",
    };
    let meta = obj.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = meta {
        m.entry(META_SERVER_INFO).or_insert_with(|| server.server_info());
    }
    if complete && let Some((ttl, scope)) = cache_hints(server, cache) {
        obj.entry("ttlMs").or_insert_with(|| json!(ttl as u64));
        obj.entry("cacheScope").or_insert_with(|| json!(scope));
    }
    Value::Object(obj)
}

/// What a 2026-07-28 complete result that is never cached gets from [`stamp_modern`] when it has
/// neither `resultType` nor `_meta`, as the JSON text that follows its last member:
/// `,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{..}}}`. Made once
/// per server from its `serverInfo` object.
pub(crate) fn modern_stamp(info: &Value) -> String {
    let meta = json!({ META_SERVER_INFO: info });
    format!(r#","resultType":"complete","_meta":{meta}}}"#)
}

/// The era a typed result of a request in `era` is encoded for, straight into JSON text, or
/// `None` when it must stay a `Value`: a raw filter reads and may change the result as one,
/// and an older revision's results lose the keys its schema lacks
/// ([`fit_result`](crate::protocol::revision::fit_result)).
pub(crate) fn encodes_directly(server: &Engine, era: Era) -> Option<Era> {
    let fits = era.is_modern() || crate::protocol::revision::has_every_key(era);
    (server.raw.is_empty() && fits).then_some(era)
}

/// Bytes reserved for a `tools/call` result's own JSON before the stamp (what `serde_json`'s
/// `to_string` starts with).
const RESULT_ROOM: usize = 128;

/// A `tools/call` result as the request's answer: with `direct` (see [`encodes_directly`]) its
/// JSON text, stamped for 2026-07-28 as [`stamp_modern`] would stamp its `Value`, else its
/// `Value` (stamped later). A result with a `_meta` of its own stays a `Value`, for the stamp
/// to merge `serverInfo` into it.
///
/// A [`ToolResultText`] kept as text is that text, stamped the same way
/// ([`tool_result_text`]). Only a call with no filter on the method takes a tool's text entry
/// point (with `direct`), and it encodes its answer unerased; an erased `ToolResultText` is
/// handled the same way should one come.
///
/// Errors: `-32603` when the value is neither a `CallToolResult` nor a `ToolResultText`, or
/// cannot be serialized.
pub(crate) fn call_tool_result(
    server: &Engine,
    direct: Option<Era>,
    result: ErasedValue,
) -> Result<ResultObject, McpError> {
    let mismatch = || McpError::internal("tools/call result type mismatch");
    match result.downcast::<CallToolResult>() {
        Ok(result) => typed_tool_result(server, direct, &result),
        Err(other) => tool_result_text(server, direct, *other.downcast::<ToolResultText>().map_err(|_| mismatch())?),
    }
}

/// [`call_tool_result`] of a [`ToolResultText`].
///
/// Errors: `-32603` when the typed result cannot be serialized.
pub(crate) fn tool_result_text(
    server: &Engine,
    direct: Option<Era>,
    result: ToolResultText,
) -> Result<ResultObject, McpError> {
    match result.into_parts() {
        ToolResultParts::Text(text) => Ok(ResultObject::Encoded(EncodedResult::new(stamped(server, direct, text)))),
        ToolResultParts::Typed(result) => typed_tool_result(server, direct, &result),
    }
}

/// [`call_tool_result`] of a [`CallToolResult`].
///
/// Errors: `-32603` when it cannot be serialized.
pub(crate) fn typed_tool_result(
    server: &Engine,
    direct: Option<Era>,
    result: &CallToolResult,
) -> Result<ResultObject, McpError> {
    let unencodable = |e: serde_json::Error| McpError::internal(format!("tool result could not be encoded: {e}"));
    let Some(era) = direct.filter(|_| result.meta.is_none() && !writes_a_key_twice(result)) else {
        return serde_json::to_value(result).map(ResultObject::Value).map_err(unencodable);
    };
    // Room for a short result and the stamp, so that appending the stamp rarely reallocates.
    let stamp_len = if era.is_modern() { server.modern_stamp.len() } else { 0 };
    let mut bytes = Vec::with_capacity(RESULT_ROOM + stamp_len);
    if !write_one_text_block(result, &mut bytes) {
        serde_json::to_writer(&mut bytes, result).map_err(unencodable)?;
    }
    let text = String::from_utf8(bytes).map_err(|e| McpError::internal(format!("tool result is not UTF-8: {e}")))?;
    Ok(ResultObject::Encoded(EncodedResult::new(stamped(server, Some(era), text))))
}

/// Writes `result` when it is one plain text block and at most `isError` (what a tool that
/// returns a `String`, or fails with a `ToolError`, gives), as serde's derived serializer
/// would write it, and returns `true`; anything else is left to that serializer (`false`,
/// nothing written). The derived path walks the struct, the `Vec` and the tagged enum (~920
/// instructions of a stdio `tools/call`, callgrind); this writes two constants around the
/// escaped text, ~580 fewer.
fn write_one_text_block(result: &CallToolResult, bytes: &mut Vec<u8>) -> bool {
    // Every field named: a field added to either type stops this from compiling rather than
    // being left out of what is written.
    let CallToolResult { content, structured_content: None, is_error, meta: None } = result else {
        return false;
    };
    let [crate::model::Content::Text { text, annotations: None, meta: None }] = content.as_slice() else {
        return false;
    };
    let start = bytes.len();
    bytes.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
    // A `Vec` never fails a write, and a `str` always serializes.
    if serde_json::to_writer(&mut *bytes, text.as_str()).is_err() {
        bytes.truncate(start);
        return false;
    }
    bytes.extend_from_slice(match is_error {
        None => b"}]}".as_slice(),
        Some(true) => br#"}],"isError":true}"#.as_slice(),
        Some(false) => br#"}],"isError":false}"#.as_slice(),
    });
    true
}

/// `text`, a result object with neither `resultType` nor `_meta`, stamped for 2026-07-28 as
/// [`stamp_modern`] would stamp its `Value` (other eras: unchanged). The method's cache rule
/// is `Never` (no `ttlMs`), so the stamp is the same for every call.
fn stamped(server: &Engine, era: Option<Era>, mut text: String) -> String {
    if era.is_some_and(|era| era.is_modern()) && text.ends_with('}') {
        text.pop();
        let stamp = server.modern_stamp.as_str();
        // `{}` has no member for the stamp's leading comma to follow.
        text.push_str(if text.len() == 1 { &stamp[1..] } else { stamp });
    }
    text
}

/// True when serializing `result` would write some key twice: a `resource_link` block's
/// passed-through fields (`extra`, flattened) may repeat one of its own, which a `Value` map
/// merges (the last wins) and text would keep twice.
fn writes_a_key_twice(result: &CallToolResult) -> bool {
    result.content.iter().any(|block| match block {
        crate::model::Content::ResourceLink { extra, .. } => {
            ["type", "uri", "name", "annotations", "_meta"].iter().any(|k| extra.contains_key(*k))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::write_one_text_block;
    use crate::model::{Annotations, CallToolResult, Content};
    use serde_json::json;

    /// The texts a block may hold: escapes of every kind, control characters, non-ASCII.
    const TEXTS: &[&str] =
        &["", "hello 1", "a \"quoted\" \\ back", "line\nbreak\ttab\r", "\u{0}\u{1f}\u{7f}", "é ✓ 𝄞", "</script>"];

    #[test]
    fn one_text_block_is_written_as_serde_writes_it() {
        for text in TEXTS {
            for is_error in [None, Some(true), Some(false)] {
                let result = CallToolResult { is_error, ..CallToolResult::success(vec![Content::text(*text)]) };
                let mut bytes = Vec::new();
                assert!(write_one_text_block(&result, &mut bytes), "not written: {result:?}");
                let expected = serde_json::to_vec(&result).expect("serializes");
                assert_eq!(String::from_utf8(bytes).expect("UTF-8"), String::from_utf8(expected).expect("UTF-8"));
            }
        }
    }

    #[test]
    fn every_other_shape_is_left_to_serde() {
        let annotated = Content::Text {
            text: "x".into(),
            annotations: Some(Annotations { priority: Some(0.5), ..Default::default() }),
            meta: None,
        };
        let with_meta = Content::Text {
            text: "x".into(),
            annotations: None,
            meta: Some(json!({"k": 1}).as_object().expect("an object").clone()),
        };
        let others = [
            CallToolResult::success(vec![]),
            CallToolResult::success(vec![Content::text("a"), Content::text("b")]),
            CallToolResult::success(vec![annotated]),
            CallToolResult::success(vec![with_meta]),
            CallToolResult::success(vec![Content::image(b"hi", "image/png")]),
            CallToolResult::success(vec![Content::text("a")]).with_structured_content(json!({"a": 1})),
            CallToolResult { meta: Some(serde_json::Map::new()), ..CallToolResult::success(vec![Content::text("a")]) },
        ];
        for result in others {
            let mut bytes = Vec::new();
            assert!(!write_one_text_block(&result, &mut bytes), "written: {result:?}");
            assert!(bytes.is_empty());
        }
    }
}
