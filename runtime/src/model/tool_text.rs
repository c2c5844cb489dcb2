//! A `tools/call` result that may stay the JSON text a peer sent, for a tool that relays calls
//! (a gateway's): written as it came, it is neither decoded nor encoded again.

use super::CallToolResult;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// The answer of a tool's text entry point
/// ([`DynamicTool::text_call`](crate::server::DynamicTool::text_call)): a
/// [`CallToolResult`] kept as the JSON text a peer sent, or a typed one.
///
/// Text is kept only when writing it as it came gives what decoding it into a
/// [`CallToolResult`] and encoding that would: the checks of [`from_peer_text`](Self::from_peer_text)
/// make sure of it. Built from a typed result (`From<CallToolResult>`), it is written as the
/// tool's typed results are.
///
/// Spec: [`CallToolResult`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#calling-tools).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultText(Repr);

#[derive(Debug, Clone, PartialEq)]
enum Repr {
    /// `{"content":[..]}` or `{"content":[..],"isError":..}`, the members as the peer wrote them.
    Text(String),
    Typed(CallToolResult),
}

impl ToolResultText {
    /// The result a peer answered a `tools/call` with (the `result` member of its JSON-RPC
    /// response, as text), kept as text when nothing in it needs decoding. The 2026-07-28 stamp
    /// (`resultType: "complete"`, a `_meta` holding only
    /// `io.modelcontextprotocol/serverInfo`) is dropped: it names the peer, and the server
    /// writing the result stamps its own.
    ///
    /// `None` (decode the text into a [`CallToolResult`] instead) for anything else:
    /// - text that is no JSON object of `content` (an array), `isError` and the stamp's two
    ///   members, each at most once;
    /// - a block other than `{"type":"text","text":".."}` or
    ///   `{"type":"image"|"audio","data":"..","mimeType":".."}` with exactly those members (a
    ///   link may need another URI, and `annotations` or `_meta` are decoded to be checked);
    /// - a line break between tokens (a stdio message is one line);
    /// - `structuredContent` (its objects are checked by decoding, for a key written twice),
    ///   a block member that is `null`, a `resultType` other than `"complete"`, a `_meta` with
    ///   any other key.
    ///
    /// Cost: one pass over the text without building values, a second over the blocks, and
    /// one copy of the members kept.
    pub fn from_peer_text(text: &str) -> Option<Self> {
        // A derived struct also reads an array by position; a result is an object.
        if !text.trim_start().starts_with('{') {
            return None;
        }
        let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
        let content = envelope.content?;
        // A line break between tokens is valid JSON, but would end a stdio message early.
        let one_line = !content.get().contains(['\n', '\r']);
        if !one_line || envelope.result_type.is_some_and(|t| t != "complete") || !checks_blocks(content.get()) {
            return None;
        }
        let is_error = envelope.is_error.map(|flag| if flag { "true" } else { "false" });
        let room = content.get().len() + is_error.map_or(0, |f| f.len() + 11) + 12 + STAMP_ROOM;
        let mut kept = String::with_capacity(room);
        kept.push_str(r#"{"content":"#);
        kept.push_str(content.get());
        if let Some(flag) = is_error {
            kept.push_str(r#","isError":"#);
            kept.push_str(flag);
        }
        kept.push('}');
        Some(ToolResultText(Repr::Text(kept)))
    }

    /// The JSON text this result is written as, when it was kept as text: one line, an
    /// object of `content` and, when the peer sent it, `isError`.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(text) => Some(text),
            Repr::Typed(_) => None,
        }
    }

    /// Kept text, as [`into_parts`](Self::into_parts) gave it.
    pub(crate) fn kept(text: String) -> Self {
        ToolResultText(Repr::Text(text))
    }

    /// Either form: `Ok` the kept text, `Err` the typed result.
    pub(crate) fn into_parts(self) -> Result<String, CallToolResult> {
        match self.0 {
            Repr::Text(text) => Ok(text),
            Repr::Typed(result) => Err(result),
        }
    }

    /// The result typed, decoding kept text (which decodes: it was checked).
    ///
    /// Errors: the decode error, should the text not decode after all.
    pub fn into_result(self) -> Result<CallToolResult, serde_json::Error> {
        match self.0 {
            Repr::Text(text) => serde_json::from_str(&text),
            Repr::Typed(result) => Ok(result),
        }
    }
}

impl From<CallToolResult> for ToolResultText {
    fn from(result: CallToolResult) -> Self {
        ToolResultText(Repr::Typed(result))
    }
}

/// Bytes reserved beyond the kept text for the 2026-07-28 stamp the server appends (about 100
/// bytes and its name and version), so that appending it seldom reallocates.
const STAMP_ROOM: usize = 160;

/// A value present in the text, `null` included (an `Option<&RawValue>` reads `null` as
/// absent, where the typed decode of `content` refuses it).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The members a `CallToolResult` kept as text may have; any other is refused (and a member
/// written twice is an error of serde's). `null` reads as absent in the last three, as the
/// typed decode reads it; their values are not kept.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    content: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<&'a str>,
    #[serde(rename = "_meta", default)]
    _meta: Option<StampOnly>,
}

/// A `_meta` object holding the peer's `serverInfo` and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StampOnly {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    _server_info: IgnoredAny,
}

/// The members of a block kept as text, each as it is written.
#[derive(Default)]
struct Block<'a> {
    kind: Option<&'a RawValue>,
    text: Option<&'a RawValue>,
    data: Option<&'a RawValue>,
    mime_type: Option<&'a RawValue>,
}

impl<'de> Deserialize<'de> for Block<'de> {
    /// An object (not an array, which a derived struct would read by position) of the four
    /// members, each at most once; any other member is refused.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Block<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a text, image or audio block")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block<'de>, A::Error> {
                let mut block = Block::default();
                while let Some(key) = map.next_key::<&'de str>()? {
                    let slot = match key {
                        "type" => &mut block.kind,
                        "text" => &mut block.text,
                        "data" => &mut block.data,
                        "mimeType" => &mut block.mime_type,
                        _ => return Err(de::Error::custom("a member not kept as text")),
                    };
                    if slot.replace(map.next_value()?).is_some() {
                        return Err(de::Error::custom("a member written twice"));
                    }
                }
                Ok(block)
            }
        }
        d.deserialize_map(Members)
    }
}

impl Block<'_> {
    /// True for a block [`Content`](super::Content) decodes into the members it has, each a
    /// string.
    fn is_plain(&self) -> bool {
        let string = |v: Option<&RawValue>| v.is_some_and(|v| decodes_as_string(v.get()));
        match self.kind.map(RawValue::get) {
            Some(r#""text""#) => string(self.text) && self.data.is_none() && self.mime_type.is_none(),
            Some(r#""image""# | r#""audio""#) => string(self.data) && string(self.mime_type) && self.text.is_none(),
            _ => false,
        }
    }
}

/// True when `raw`, valid JSON, is a string serde decodes: the parse that captured it lets
/// through a `\u` escape of half a surrogate pair that is not followed (or preceded) by the
/// other half, which decoding into a `String` refuses.
fn decodes_as_string(raw: &str) -> bool {
    let Some(mut rest) = raw.strip_prefix('"') else { return false };
    // After the first half of a pair, the next thing must be the escape of the second.
    let mut high = false;
    while let Some(at) = rest.find('\\') {
        if high && at != 0 {
            return false;
        }
        let escape = &rest[at + 1..];
        let (next, code) = match escape.as_bytes().first() {
            Some(b'u') => match escape.get(1..5).and_then(|hex| u16::from_str_radix(hex, 16).ok()) {
                Some(code) => (5, Some(code)),
                None => return false,
            },
            Some(_) => (1, None),
            None => return false,
        };
        match code {
            Some(0xD800..=0xDBFF) if !high => high = true,
            Some(0xDC00..=0xDFFF) if high => high = false,
            Some(0xD800..=0xDFFF) => return false,
            _ if high => return false,
            _ => {}
        }
        rest = &escape[next..];
    }
    !high
}

/// True when `content` is an array of blocks each [plain](Block::is_plain).
fn checks_blocks(content: &str) -> bool {
    struct Blocks;
    impl<'de> Visitor<'de> for Blocks {
        type Value = bool;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array of content blocks")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            while let Some(block) = seq.next_element::<Block<'de>>()? {
                if !block.is_plain() {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
    struct Plain(bool);
    impl<'de> Deserialize<'de> for Plain {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_seq(Blocks).map(Plain)
        }
    }
    serde_json::from_str::<Plain>(content).is_ok_and(|plain| plain.0)
}

#[cfg(test)]
mod tests;
