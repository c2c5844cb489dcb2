//! A `tools/call` result that may stay the JSON text a peer sent, for a tool that relays calls
//! (a gateway's): written as it came, it is neither decoded nor encoded again.

use super::CallToolResult;
use crate::protocol::META_SERVER_INFO;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
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
#[derive(Debug, Clone)]
pub struct ToolResultText(ToolResultParts);

/// The two forms a [`ToolResultText`] holds ([`ToolResultText::into_parts`]).
#[derive(Debug, Clone)]
pub(crate) enum ToolResultParts {
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
    /// - `structuredContent` (its objects are checked by decoding, for a key written twice),
    ///   a block member that is `null`, a `resultType` other than `"complete"`, a `_meta` with
    ///   any other key.
    ///
    /// The kept text is written from the members as the peer wrote each of them, without the
    /// whitespace between them: one line, whatever the peer's layout.
    ///
    /// Cost: one pass over the text without building values (each kept string is scanned once
    /// more for surrogate escapes), and one copy of the members kept. A refused text has paid
    /// for that pass before it is decoded: give text only where most results are kept.
    pub fn from_peer_text(text: &str) -> Option<Self> {
        let mut kept = String::with_capacity(text.len() + STAMP_ROOM);
        let mut de = serde_json::Deserializer::from_str(text);
        let is_error = Envelope(&mut kept).deserialize(&mut de).ok()?;
        de.end().ok()?;
        if let Some(flag) = is_error {
            kept.push_str(if flag { r#","isError":true"# } else { r#","isError":false"# });
        }
        kept.push('}');
        Some(ToolResultText(ToolResultParts::Text(kept)))
    }

    /// The JSON text this result is written as, when it was kept as text: one line, an
    /// object of `content` and, when the peer sent it, `isError`.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            ToolResultParts::Text(text) => Some(text),
            ToolResultParts::Typed(_) => None,
        }
    }

    /// Kept text, as [`into_parts`](Self::into_parts) gave it.
    pub(crate) fn kept(text: String) -> Self {
        ToolResultText(ToolResultParts::Text(text))
    }

    /// The form it holds: the kept text, or the typed result.
    pub(crate) fn into_parts(self) -> ToolResultParts {
        self.0
    }

    /// The result typed, decoding kept text (which decodes: it was checked).
    ///
    /// Errors: the decode error, should the text not decode after all.
    pub fn into_result(self) -> Result<CallToolResult, serde_json::Error> {
        match self.0 {
            ToolResultParts::Text(text) => serde_json::from_str(&text),
            ToolResultParts::Typed(result) => Ok(result),
        }
    }
}

impl From<CallToolResult> for ToolResultText {
    fn from(result: CallToolResult) -> Self {
        ToolResultText(ToolResultParts::Typed(result))
    }
}

/// Bytes reserved beyond the kept text for the 2026-07-28 stamp the server appends (about 100
/// bytes and its name and version), so that appending it seldom reallocates.
const STAMP_ROOM: usize = 160;

/// Reads a result object, writing `{"content":[..]` of its plain blocks to the string it
/// holds, and returns its `isError`. Refuses (an error) any member other than `content`,
/// `isError` and the stamp's two, a member written twice, and a block not kept as text.
/// `null` reads as absent in the last three, as the typed decode reads it.
struct Envelope<'k>(&'k mut String);

impl<'de> DeserializeSeed<'de> for Envelope<'_> {
    type Value = Option<bool>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<bool>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Envelope<'_> {
    type Value = Option<bool>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CallToolResult object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<bool>, A::Error> {
        let refused = |why: &str| de::Error::custom(format_args!("not kept as text: {why}"));
        let (mut seen, mut is_error) = (0u8, None);
        while let Some(key) = map.next_key::<&'de str>()? {
            let bit = match key {
                "content" => 1,
                "isError" => 2,
                "resultType" => 4,
                "_meta" => 8,
                _ => return Err(refused("a member of no plain result")),
            };
            if seen & bit != 0 {
                return Err(refused("a member written twice"));
            }
            seen |= bit;
            match bit {
                1 => {
                    self.0.push_str(r#"{"content":"#);
                    if !map.next_value_seed(Blocks(&mut *self.0))? {
                        return Err(refused("a block"));
                    }
                }
                2 => is_error = map.next_value::<Option<bool>>()?,
                4 => {
                    if map.next_value::<Option<&'de str>>()?.is_some_and(|t| t != "complete") {
                        return Err(refused("a result other than complete"));
                    }
                }
                _ => {
                    map.next_value::<Option<StampOnly>>()?;
                }
            }
        }
        if seen & 1 == 0 {
            return Err(refused("no content"));
        }
        Ok(is_error)
    }
}

/// Reads an array of blocks, writing each to the string it holds while each is
/// [plain](Block::is_plain); `false` at the first that is not.
struct Blocks<'k>(&'k mut String);

impl<'de> DeserializeSeed<'de> for Blocks<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Blocks<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of content blocks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        self.0.push('[');
        let mut first = true;
        while let Some(block) = seq.next_element::<Block<'de>>()? {
            if !block.is_plain() {
                return Ok(false);
            }
            if !first {
                self.0.push(',');
            }
            first = false;
            block.write(self.0);
        }
        self.0.push(']');
        Ok(true)
    }
}

/// A `_meta` object holding the peer's `serverInfo` and nothing else (not an array, which a
/// derived struct would read by position), the value one a [`Value`](serde_json::Value) reads.
struct StampOnly;

impl<'de> Deserialize<'de> for StampOnly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = StampOnly;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a _meta object holding serverInfo alone")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StampOnly, A::Error> {
                let mut seen = false;
                while let Some(key) = map.next_key::<&'de str>()? {
                    if seen || key != META_SERVER_INFO {
                        return Err(de::Error::custom("not kept as text: a _meta key of the result's own"));
                    }
                    seen = true;
                    map.next_value::<Readable>()?;
                }
                match seen {
                    true => Ok(StampOnly),
                    false => Err(de::Error::custom("not kept as text: a _meta without serverInfo")),
                }
            }
        }
        d.deserialize_map(Members)
    }
}

/// Any value a [`Value`](serde_json::Value) reads (strings decoded, numbers in range, within
/// the nesting limit), read without building it.
struct Readable;

impl<'de> Deserialize<'de> for Readable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Readable;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_bool<E>(self, _: bool) -> Result<Readable, E> {
                Ok(Readable)
            }

            fn visit_i64<E>(self, _: i64) -> Result<Readable, E> {
                Ok(Readable)
            }

            fn visit_u64<E>(self, _: u64) -> Result<Readable, E> {
                Ok(Readable)
            }

            fn visit_f64<E>(self, _: f64) -> Result<Readable, E> {
                Ok(Readable)
            }

            fn visit_str<E>(self, _: &str) -> Result<Readable, E> {
                Ok(Readable)
            }

            fn visit_unit<E>(self) -> Result<Readable, E> {
                Ok(Readable)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Readable, A::Error> {
                while seq.next_element::<Readable>()?.is_some() {}
                Ok(Readable)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Readable, A::Error> {
                while map.next_entry::<Readable, Readable>()?.is_some() {}
                Ok(Readable)
            }
        }
        d.deserialize_any(Any)
    }
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
    /// Writes a [plain](Self::is_plain) block, its members in the order serde writes them.
    fn write(&self, out: &mut String) {
        let mut member = |name: &str, value: Option<&RawValue>| {
            if let Some(value) = value {
                out.push_str(name);
                out.push_str(value.get());
            }
        };
        member(r#"{"type":"#, self.kind);
        member(r#","text":"#, self.text);
        member(r#","data":"#, self.data);
        member(r#","mimeType":"#, self.mime_type);
        out.push('}');
    }

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

#[cfg(test)]
mod tests;
