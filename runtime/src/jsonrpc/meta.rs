use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The `params._meta` of a request
/// ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta)), taken out
/// of `params` when the message is parsed and kept as its JSON text: the keys the server reads
/// on every request are decoded from that text without building a map
/// ([`protocol::parse_modern_meta`](crate::protocol::parse_modern_meta)), and the map is
/// made only when something asks for it ([`map`](Self::map)).
///
/// Absent (the [`Default`]) when the request had no `_meta`. Any JSON value is kept as sent
/// (the parser checked it as a `Value` would: a lone surrogate or a number out of range is
/// `-32700` like anywhere else in the message), including one that is not an object, which the
/// 2026-07-28 checks refuse (`-32602`) and a legacy request reads as an empty map.
#[derive(Clone, Default)]
pub struct RequestMeta {
    raw: Option<Box<RawValue>>,
    map: OnceLock<Map<String, Value>>,
}

impl RequestMeta {
    /// The `_meta` whose JSON text the parser captured.
    pub(crate) fn from_raw(raw: Box<RawValue>) -> Self {
        RequestMeta { raw: Some(raw), map: OnceLock::new() }
    }

    /// A `_meta` from its value, for a request made in code rather than parsed (a test, a
    /// transport that decodes messages its own way).
    pub fn from_value(value: Value) -> Self {
        let map = OnceLock::new();
        // Serializing a `Value` cannot fail (its keys are strings), so `raw` is always set.
        let raw = serde_json::value::to_raw_value(&value).ok();
        if let Value::Object(m) = value {
            let _ = map.set(m);
        }
        RequestMeta { raw, map }
    }

    /// True when the request had a `_meta`.
    pub fn is_present(&self) -> bool {
        self.raw.is_some()
    }

    /// The JSON text of `_meta` as sent; `None` when the request had none.
    pub fn raw(&self) -> Option<&RawValue> {
        self.raw.as_deref()
    }

    /// `_meta` as a map, parsed from its text the first time it is asked for; empty when the
    /// request had none or it is not an object.
    pub fn map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| match &self.raw {
            Some(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
            None => Map::new(),
        })
    }

    /// `_meta` as a value, as sent, whatever its type (`None` when absent): what a step that
    /// reads the undecoded `params` (a raw filter) gets back under the `_meta` key.
    pub fn to_value(&self) -> Option<Value> {
        let raw = self.raw.as_ref()?;
        match self.map.get() {
            // The map is `_meta` itself only when `_meta` is an object.
            Some(m) if raw.get().trim_start().starts_with('{') => Some(Value::Object(m.clone())),
            _ => serde_json::from_str(raw.get()).ok(),
        }
    }

    /// False only when `_meta` certainly has no key `key`: absent, or its text neither holds
    /// `key` nor any escape (a key may be written with `\u` escapes). Lets a rarely used key be
    /// looked up without parsing the map on every request.
    pub fn may_contain(&self, key: &str) -> bool {
        match (&self.raw, self.map.get()) {
            (None, _) => false,
            (Some(_), Some(m)) => m.contains_key(key),
            (Some(raw), None) => {
                let text = raw.get();
                text.contains(key) || text.contains('\\')
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
        match &self.raw {
            None => f.write_str("RequestMeta(absent)"),
            Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
                Ok(v) => write!(f, "RequestMeta({v})"),
                Err(_) => write!(f, "RequestMeta({})", raw.get()),
            },
        }
    }
}

/// Checks that `text` (one JSON value whose syntax serde_json already scanned) is what a
/// [`Value`] would accept: every string's escapes (no lone surrogate), every number in range,
/// nesting within serde_json's depth limit. Nothing is kept.
///
/// Errors: serde_json's, naming what is wrong and where.
pub(crate) fn check_json(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<Checked>(text).map(|_| ())
}

/// Reads every string, number and nesting level of a value and keeps none of it.
struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> serde::de::Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<Checked, A::Error> {
        while access.next_key::<Checked>()?.is_some() {
            access.next_value::<Checked>()?;
        }
        Ok(Checked)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut access: A) -> Result<Checked, A::Error> {
        while access.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(text: &str) -> RequestMeta {
        RequestMeta::from_raw(RawValue::from_string(text.to_owned()).expect("JSON"))
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
}
