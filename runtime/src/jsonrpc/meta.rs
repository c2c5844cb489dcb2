use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The `params._meta` of a request
/// ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta)), taken out
/// of `params` when the message is parsed and kept as its JSON text: the keys the server reads
/// on every request are decoded from that text without building a map
/// ([`protocol::parse_modern_meta`](crate::protocol::parse_modern_meta); the parser notes
/// where their values are, so only those are read again), and the map is made only when
/// something asks for it ([`map`](Self::map)).
///
/// Absent (the [`Default`]) when the request had no `_meta`. Any JSON value is kept as sent
/// (the parser checked it as a `Value` would: a lone surrogate or a number out of range is
/// `-32700` like anywhere else in the message), including one that is not an object, which the
/// 2026-07-28 checks refuse (`-32602`) and a legacy request reads as an empty map.
#[derive(Clone, Default)]
pub struct RequestMeta {
    /// The JSON text, checked (absent when the request had no `_meta`).
    text: Option<Box<str>>,
    /// What is made from `text` when asked for. Boxed, like the rest kept small: every request
    /// carries a `RequestMeta` from transport to handler, moved at each step.
    made: OnceLock<Box<Made>>,
    /// Where the values of [`ENVELOPE_KEYS`] are in `text`, when the parser read them in its
    /// one pass over an object `_meta`; `None` when the map must be read instead.
    envelope: Option<EnvelopeSpans>,
}

/// The forms of a `_meta` made from its text on demand.
#[derive(Clone, Default)]
struct Made {
    /// The text as a [`RawValue`] ([`RequestMeta::raw`]).
    raw: OnceLock<Option<Box<RawValue>>>,
    /// The text parsed ([`RequestMeta::map`]).
    map: OnceLock<Map<String, Value>>,
}

/// The `_meta` keys every 2026-07-28 request is checked for: the protocol version, the client
/// capabilities, the log level and the progress token (`protocol::META_PROTOCOL_VERSION`,
/// `META_CLIENT_CAPABILITIES`, `META_LOG_LEVEL`; a test holds them equal), then the W3C
/// `traceparent` (`protocol::META_TRACEPARENT`) every request is looked up for. Named here,
/// below `protocol`, so that the parser can note where they are.
pub(crate) const ENVELOPE_KEYS: [&str; 5] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/logLevel",
    "progressToken",
    "traceparent",
];

/// The byte range of each [`ENVELOPE_KEYS`] value in a `_meta` text (`(0, 0)`: the key is not
/// there; a value is never empty). Every key was written without escapes and none twice:
/// otherwise the parser notes no spans and the map answers. `u16`, to keep `RequestMeta`
/// small: a `_meta` over 64 KiB is read through the map.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EnvelopeSpans([(u16, u16); ENVELOPE_KEYS.len()]);

impl EnvelopeSpans {
    /// Notes that the value of envelope key `index` is `text[start..end]`; false when the key
    /// was noted already (a repeated key, which the map reads as its last value) or the
    /// range does not fit.
    pub(crate) fn note(&mut self, index: usize, start: usize, end: usize) -> bool {
        let (Ok(start), Ok(end)) = (u16::try_from(start), u16::try_from(end)) else { return false };
        let span = &mut self.0[index];
        if *span != (0, 0) || start >= end {
            return false;
        }
        *span = (start, end);
        true
    }

    /// Whether envelope key `key` was there; `None` when `key` is no envelope key.
    fn noted(&self, key: &str) -> Option<bool> {
        let index = ENVELOPE_KEYS.iter().position(|k| *k == key)?;
        Some(self.0[index] != (0, 0))
    }
}

impl RequestMeta {
    /// The `_meta` the parser read: `text` (checked, as sent) and, when it read an object in
    /// one pass, where its envelope keys' values are (`None`: read the map).
    pub(crate) fn from_parsed(text: Box<str>, envelope: Option<EnvelopeSpans>) -> Self {
        RequestMeta { text: Some(text), made: OnceLock::new(), envelope }
    }

    /// A `_meta` from its value, for a request made in code rather than parsed (a test, a
    /// transport that decodes messages its own way).
    pub fn from_value(value: Value) -> Self {
        let made = Made::default();
        // Serializing a `Value` cannot fail (its keys are strings), so `text` is always set.
        let text = serde_json::to_string(&value).ok().map(String::into_boxed_str);
        if let Value::Object(m) = value {
            let _ = made.map.set(m);
        }
        RequestMeta { text, made: OnceLock::from(Box::new(made)), envelope: None }
    }

    /// True when the request had a `_meta`.
    pub fn is_present(&self) -> bool {
        self.text.is_some()
    }

    /// The JSON text of `_meta` as sent; `None` when the request had none.
    pub fn raw(&self) -> Option<&RawValue> {
        let text = self.text.as_deref()?;
        // Checked or serialized JSON, so this parses.
        self.made().raw.get_or_init(|| RawValue::from_string(text.to_owned()).ok()).as_deref()
    }

    /// The JSON text of `_meta`, as [`raw`](Self::raw) without making a `RawValue`.
    pub(crate) fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The text of the value of each of [`ENVELOPE_KEYS`] (`None`: absent), when the parser
    /// noted where they are; `None` when they must be read from the map.
    pub(crate) fn envelope(&self) -> Option<[Option<&str>; ENVELOPE_KEYS.len()]> {
        let (text, spans) = (self.text.as_deref()?, self.envelope?);
        let mut values = [None; ENVELOPE_KEYS.len()];
        for (value, (start, end)) in values.iter_mut().zip(spans.0) {
            if end > 0 {
                *value = Some(text.get(usize::from(start)..usize::from(end))?);
            }
        }
        Some(values)
    }

    fn made(&self) -> &Made {
        self.made.get_or_init(Box::default)
    }

    /// `_meta` as a map, parsed from its text the first time it is asked for; empty when the
    /// request had none or it is not an object.
    pub fn map(&self) -> &Map<String, Value> {
        self.made().map.get_or_init(|| match &self.text {
            Some(text) => serde_json::from_str(text).unwrap_or_default(),
            None => Map::new(),
        })
    }

    /// `_meta` as a value, as sent, whatever its type (`None` when absent): what a step that
    /// reads the undecoded `params` (a raw filter) gets back under the `_meta` key.
    pub fn to_value(&self) -> Option<Value> {
        let text = self.text.as_deref()?;
        match self.made.get().and_then(|made| made.map.get()) {
            // The map is `_meta` itself only when `_meta` is an object.
            Some(m) if text.trim_start().starts_with('{') => Some(Value::Object(m.clone())),
            _ => serde_json::from_str(text).ok(),
        }
    }

    /// False only when `_meta` certainly has no key `key`: absent, or its text neither holds
    /// `key` nor any escape (a key may be written with `\u` escapes). Lets a rarely used key be
    /// looked up without parsing the map on every request.
    pub fn may_contain(&self, key: &str) -> bool {
        match (&self.text, self.made.get().and_then(|made| made.map.get())) {
            (None, _) => false,
            (Some(_), Some(m)) => m.contains_key(key),
            (Some(text), None) => {
                // The parser noted spans only when no key of the object had an escape and no
                // envelope key came twice, so an envelope key without a span is certainly absent.
                if let Some(noted) = self.envelope.and_then(|spans| spans.noted(key)) {
                    return noted;
                }
                // The crate's vectorized `memchr` for the escape, not `contains('\\')`: core's
                // byte search goes a word at a time and cost as much as the key's search.
                memchr::memchr(b'\\', text.as_bytes()).is_some() || text.contains(key)
            }
        }
    }

    /// True when `_meta` is an object with the key `key`; the map is parsed only when
    /// [`may_contain`](Self::may_contain) says the key may be there.
    pub fn contains_key(&self, key: &str) -> bool {
        self.may_contain(key) && self.map().contains_key(key)
    }

    /// The value under `key`, parsing the map only when [`may_contain`](Self::may_contain)
    /// says the key may be there.
    pub fn get(&self, key: &str) -> Option<&Value> {
        if !self.may_contain(key) {
            return None;
        }
        self.map().get(key)
    }
}

/// Shows the parsed map: the same `_meta` reads the same whatever whitespace it was sent with.
impl std::fmt::Debug for RequestMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.text {
            None => f.write_str("RequestMeta(absent)"),
            Some(text) => match serde_json::from_str::<Value>(text) {
                Ok(v) => write!(f, "RequestMeta({v})"),
                Err(_) => write!(f, "RequestMeta({text})"),
            },
        }
    }
}

/// Checks that `text` (one JSON value whose syntax serde_json already scanned, found inside
/// `enclosing` arrays and objects of its message) is what a [`Value`] parse of the whole
/// message would accept: every string's escapes (no lone surrogate), every number in range,
/// nesting within serde_json's depth limit counted from the message's root. Nothing is kept.
///
/// Errors: serde_json's, naming what is wrong and where.
pub(crate) fn check_json(text: &str, enclosing: usize) -> Result<(), serde_json::Error> {
    let levels = MAX_NESTING.saturating_sub(enclosing);
    if plainly_valid(text, levels) {
        return Ok(());
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde::de::DeserializeSeed::deserialize(Checked { levels }, &mut de)?;
    de.end()
}

/// True when scanned JSON `text` certainly holds nothing a `Value` parse refuses, so the full
/// check can be skipped: no escape (a lone surrogate needs one), no exponent and no run of
/// digits long enough to overflow an `f64` (more than 308), and no more than `levels` arrays
/// and objects in all. Each test is a plain pass over the bytes; anything it cannot rule out
/// (an `e` after a digit inside a string, say) goes to the full check.
fn plainly_valid(text: &str, levels: usize) -> bool {
    let bytes = text.as_bytes();
    if memchr::memchr(b'\\', bytes).is_some() {
        return false;
    }
    // A string without escapes holds no number and no nesting, and its characters were
    // checked by the scan: the usual `_meta` value, a tool's name, which the passes below
    // would cost several times this check.
    if bytes.first() == Some(&b'"') {
        return true;
    }
    if bytes.len() > levels && memchr::memchr2_iter(b'[', b'{', bytes).count() > levels {
        return false;
    }
    if may_have_exponent(bytes) {
        return false;
    }
    bytes.len() < LONGEST_SAFE_DIGITS || bytes.split(|b| !b.is_ascii_digit()).all(|run| run.len() < LONGEST_SAFE_DIGITS)
}

/// True when some `e` or `E` in `bytes` follows a digit or a `.`, as a number's exponent does.
///
/// Every pair of neighbours is tested and the answers folded together without an early exit,
/// a loop the compiler turns into vector instructions: `_meta` is full of `e`s (in
/// `io.modelcontextprotocol`), and stopping at each, as a search does, cost more than the rest
/// of the check.
fn may_have_exponent(bytes: &[u8]) -> bool {
    let Some(rest) = bytes.get(1..) else {
        return false;
    };
    let number_before = |b: u8| b.is_ascii_digit() | (b == b'.');
    bytes.iter().zip(rest).fold(false, |found, (&before, &b)| found | ((b | 0x20) == b'e') & number_before(before))
}

/// Fewer digits than this in a row make a number no `f64` overflows on (1e308 is the largest
/// power of ten it holds).
const LONGEST_SAFE_DIGITS: usize = 300;

/// The most arrays and objects serde_json's `Value` parse accepts inside one another.
const MAX_NESTING: usize = 127;

/// Reads every string, number and nesting level of a value and keeps none of it; `levels`
/// arrays and objects may still open inside one another.
#[derive(Clone, Copy)]
struct Checked {
    levels: usize,
}

impl<'de> serde::de::DeserializeSeed<'de> for Checked {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Checked {
    /// The seed of what a container holds, or the error when it may hold nothing more.
    fn inner<E: serde::de::Error>(self) -> Result<Checked, E> {
        match self.levels.checked_sub(1) {
            Some(levels) => Ok(Checked { levels }),
            None => Err(E::custom("recursion limit exceeded")),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while access.next_key_seed(inner)?.is_some() {
            access.next_value_seed(inner)?;
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while access.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Whatever the quick scan lets through, the full check (and a `Value` parse of the
    /// text wrapped in `enclosing` arrays) accepts: thousands of generated texts with escapes,
    /// exponents, long digit runs and deep nesting, each also checked in full.
    #[test]
    fn the_quick_scan_passes_only_what_the_full_check_passes() {
        let pieces = [
            r#""plain""#,
            r#""\ud800""#,
            r#""\ud83d\ude00""#,
            r#""\u00e9""#,
            "1e400",
            "1e5",
            "-2.5E-3",
            "1.0",
            "12345678901234567890",
            r#""1e400""#,
            "true",
            "null",
            r#""tab\t""#,
            // A raw control character, which a string may not hold unescaped.
            "\"tab\u{9}\"",
            "\"line\u{1}\"",
            "0",
        ];
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut quick, mut total) = (0, 0);
        for _ in 0..4000 {
            let mut text = pieces[next(pieces.len())].to_owned();
            for _ in 0..next(6) {
                text = match next(4) {
                    0 => format!("[{text},{}]", pieces[next(pieces.len())]),
                    1 => format!(r#"{{"k":{text},"e1":{}}}"#, pieces[next(pieces.len())]),
                    2 => format!("[[{text}]]"),
                    _ => text,
                };
            }
            if next(10) == 0 {
                text = format!("[{}]", "9".repeat(290 + next(30)));
            }
            // What serde_json's scan refuses never reaches the check.
            if serde_json::from_str::<Box<RawValue>>(&text).is_err() {
                continue;
            }
            for enclosing in [0, 2, 124] {
                total += 1;
                let levels = MAX_NESTING - enclosing;
                let wrapped = format!("{}{text}{}", "[".repeat(enclosing), "]".repeat(enclosing));
                let accepted = serde_json::from_str::<Value>(&wrapped).is_ok();
                if plainly_valid(&text, levels) {
                    quick += 1;
                    assert!(accepted, "the quick scan let through {text} at {enclosing}");
                }
                let mut de = serde_json::Deserializer::from_str(&text);
                let full = serde::de::DeserializeSeed::deserialize(Checked { levels }, &mut de).and_then(|()| de.end());
                assert_eq!(full.is_ok(), accepted, "the full check of {text} at {enclosing}");
                assert_eq!(check_json(&text, enclosing).is_ok(), accepted, "{text} at {enclosing}");
            }
        }
        assert!(quick > total / 10 && quick < total, "both paths taken: {quick} of {total}");
    }

    /// The folded scan finds an exponent where a search for each `e` does, at every position
    /// and next to every byte.
    #[test]
    fn the_exponent_scan_agrees_with_a_search() {
        let search = |bytes: &[u8]| {
            memchr::memchr2_iter(b'e', b'E', bytes)
                .any(|i| i > 0 && (bytes[i - 1].is_ascii_digit() || bytes[i - 1] == b'.'))
        };
        let fillers: [&[u8]; 3] = [b"", b"a\"b", b"io.modelcontextprotocol/protocolVersion"];
        for filler in fillers {
            for before in 0..=255u8 {
                for b in [b'e', b'E', b'f', b'\xc5', b'e' ^ 0x20 ^ 0x80] {
                    for at in [0, 1, filler.len()] {
                        let mut bytes = filler.to_vec();
                        bytes.splice(at.min(bytes.len())..at.min(bytes.len()), [before, b]);
                        assert_eq!(may_have_exponent(&bytes), search(&bytes), "{bytes:?}");
                    }
                }
            }
        }
        assert!(!may_have_exponent(b"") && !may_have_exponent(b"e") && may_have_exponent(b"1e"));
    }

    /// The `_meta` of a request parsed with `text` as its `_meta`.
    fn parsed(text: &str) -> RequestMeta {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{text}}}}}"#);
        match crate::jsonrpc::parse_message(line.as_bytes()) {
            Ok(crate::jsonrpc::Message::Request(req)) => req.meta,
            other => panic!("{line}: {other:?}"),
        }
    }

    /// The text's answers are the map's, escapes, nesting and non-objects included.
    #[test]
    fn lookups_on_the_text_agree_with_the_map() {
        let texts = [
            r#"{"progressToken":1,"a":{"progressToken":2}}"#,
            r#"{"a":{"progressToken":2}}"#,
            r#"{"progress\u0054oken":"t"}"#,
            r#"{"x":"progressToken"}"#,
            r#"["progressToken"]"#,
            r#""progressToken""#,
            r#"{}"#,
            r#"null"#,
            r#"{"progressToken":null,"progressToken":[1,{"k":"v"}]}"#,
        ];
        for text in texts {
            let meta = parsed(text);
            let map = match serde_json::from_str::<Value>(text).expect("JSON") {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            for key in ["progressToken", "a", "x", "absent"] {
                assert_eq!(meta.contains_key(key), map.contains_key(key), "{text} {key}");
                assert_eq!(meta.get(key), map.get(key), "{text} {key}");
            }
            assert_eq!(meta.map(), &map, "{text}");
            // Once the map is made, it answers.
            assert_eq!(meta.contains_key("progressToken"), map.contains_key("progressToken"), "{text}");
        }
        // A non-object keeps its value after its (empty) map was asked for.
        let five = parsed("5");
        assert!(five.map().is_empty());
        assert_eq!(five.to_value(), Some(json!(5)));
        let absent = RequestMeta::default();
        assert!(!absent.is_present() && !absent.contains_key("a") && absent.map().is_empty());
        assert_eq!(absent.to_value(), None);
    }

    #[test]
    fn a_meta_made_from_a_value_reads_like_a_parsed_one() {
        let value = json!({ "progressToken": "p", "b": [1, 2] });
        let made = RequestMeta::from_value(value.clone());
        let read = parsed(&value.to_string());
        assert_eq!(made.to_value(), Some(value.clone()));
        assert_eq!(read.to_value(), Some(value));
        assert_eq!(made.map(), read.map());
        assert_eq!(format!("{made:?}"), format!("{read:?}"));
        assert_eq!(made.raw().map(RawValue::get), Some(r#"{"progressToken":"p","b":[1,2]}"#));
    }

    /// An envelope key the parser noted no span for is absent: `may_contain` answers from the
    /// spans exactly as the map would, for `_meta` texts with the key, without it, with it
    /// only inside a nested value or a string, written with an escape, or twice.
    #[test]
    fn may_contain_answers_an_envelope_key_as_the_map_does() {
        let traceparent = r#""00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01""#;
        let texts = [
            format!(r#"{{"traceparent":{traceparent},"progressToken":1}}"#),
            r#"{"progressToken":1,"x":{"traceparent":"nested"},"y":"traceparent"}"#.to_owned(),
            format!(r#"{{"trace\u0070arent":{traceparent}}}"#),
            format!(r#"{{"traceparent":{traceparent},"traceparent":{traceparent}}}"#),
            r#"{"io.modelcontextprotocol/logLevel":"info"}"#.to_owned(),
        ];
        let mut answered_from_spans = 0;
        for text in &texts {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{text}}}}}"#);
            let Ok(super::super::Message::Request(req)) = super::super::parse_message(line.as_bytes()) else {
                panic!("a request: {line}")
            };
            let map: Map<String, Value> = serde_json::from_str(text).expect("an object");
            answered_from_spans += usize::from(req.meta.envelope.is_some());
            for key in ENVELOPE_KEYS.iter().chain(&["x", "absent"]) {
                // Asked before the map is made, so the spans or the text answer: exactly for
                // an envelope key with spans noted, else never "no" for a key that is there.
                let (may, is) = (req.meta.may_contain(key), map.contains_key(*key));
                if req.meta.envelope.is_some() && ENVELOPE_KEYS.contains(key) {
                    assert_eq!(may, is, "{key} in {text}");
                } else {
                    assert!(may || !is, "{key} in {text}");
                }
                assert_eq!(req.meta.contains_key(key), is, "{key} in {text}");
            }
        }
        assert_eq!(answered_from_spans, 3, "the one pass noted the keys of three of the texts");
    }
}
