use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

/// The `arguments` object of a
/// [`tools/call`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#calling-tools)
/// request (`{"name": ..., "arguments": {..}}`), kept as the JSON text it came in until
/// something needs it as a map.
///
/// A tool's parameters are decoded straight from that text
/// ([`decode`](Self::decode)), so a call whose arguments no filter reads, on a server with no
/// raw filter (raw filters get `arguments` as a `Value` inside `params`, and the tool then
/// gets that map), builds no `Value` map of them. Reading it as a map (`Deref<Target = Map<String, Value>>`: `get`, `iter`,
/// `contains_key`, ...) parses the text once, the first time; changing it (`DerefMut`:
/// `insert`, `remove`, ...) makes the map the arguments from then on and forgets the text.
///
/// Always an object: a `tools/call` whose `arguments` is `null` or absent has the empty map
/// (the [`Default`]), and one whose `arguments` is another type is refused (`-32602`) before
/// any filter or tool runs. Serialized as that object, deserialized from an object or `null`.
pub struct ToolArguments {
    /// The object's text as received, while it is the arguments; `None` when made from a map
    /// and once changed through `DerefMut`.
    ///
    /// Shared with the `requestState` binding, which digests the same text.
    text: Option<Arc<str>>,
    /// The map of `text`, parsed when first asked for (boxed: most calls never ask, and the
    /// arguments travel inside every call's future).
    parsed: OnceLock<Box<Map<String, Value>>>,
    /// The arguments when there is no text.
    own: Map<String, Value>,
}

impl ToolArguments {
    /// Arguments from the text of a JSON object that a `Value` parse accepts (the parser
    /// checked it, [`check_json`](super::meta::check_json)).
    pub(crate) fn from_checked_text(text: Arc<str>) -> Self {
        ToolArguments { text: Some(text), parsed: OnceLock::new(), own: Map::new() }
    }

    /// The arguments as the JSON text they were received in, while no one has changed them;
    /// `None` for arguments made from a map or changed since.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The arguments as a map.
    pub fn into_map(self) -> Map<String, Value> {
        let ToolArguments { text, parsed, own } = self;
        match text {
            None => own,
            Some(text) => parsed.into_inner().map_or_else(|| parse_object(&text), |map| *map),
        }
    }

    /// The arguments as a `Value::Object`.
    pub fn into_value(self) -> Value {
        Value::Object(self.into_map())
    }

    /// Runs `f` on the arguments as a `Value::Object` without copying them (a schema
    /// validator reads a `Value`); the text, if any, stays the arguments.
    pub(crate) fn with_value<R>(&mut self, f: impl FnOnce(&Value) -> R) -> R {
        let map = match &self.text {
            None => std::mem::take(&mut self.own),
            Some(text) => self.parsed.take().map_or_else(|| parse_object(text), |map| *map),
        };
        let value = Value::Object(map);
        let answer = f(&value);
        let Value::Object(map) = value else { return answer };
        match &self.text {
            None => self.own = map,
            Some(_) => {
                let _ = self.parsed.set(Box::new(map));
            }
        }
        answer
    }

    /// Decodes the arguments as `T`: from their text while it is the arguments (as
    /// `serde_json::from_str` does), else from the map (as `serde_json::from_value` does).
    ///
    /// A decoding that fails on the text is done again from the map, whose answer and error
    /// wording are the ones returned: the text's error would also name a line and column, and
    /// a key sent twice fails a struct there where the map keeps the last value. Only that
    /// second decoding tracks the failing value's path, which costs an allocation per key read.
    ///
    /// Where the two readings differ on a decoding that succeeds, the text's is the one the
    /// client sent: an integer beyond 64 bits (a `u128` field; a map holds it as an `f64`), an
    /// `f32` (read from the decimal, not rounded through an `f64`), a `RawValue` field (the
    /// text as sent), a key sent twice inside a type that tries alternatives (`untagged`,
    /// `flatten`). The map is what the tool decodes from on a server with a raw filter, after a
    /// typed filter changed the arguments, and for a request parsed on the general path (an
    /// entry of a batch, a message with a key JSON-RPC does not define or a key sent twice, a
    /// server with incoming message filters) or made with `Request::new`.
    ///
    /// Errors: serde's, with the path of the value that failed (`serde_path_to_error`).
    pub fn decode<T: DeserializeOwned>(self) -> Result<T, serde_path_to_error::Error<serde_json::Error>> {
        if let Some(text) = &self.text
            && let Ok(decoded) = serde_json::from_str(text)
        {
            return Ok(decoded);
        }
        serde_path_to_error::deserialize(self.into_value())
    }
}

/// The map `text` holds. Only the parser makes text arguments, from an object it checked a
/// `Value` parse accepts (`Request::arguments` cannot be set outside this crate), so the empty
/// map is never what a request gets for arguments it sent.
fn parse_object(text: &str) -> Map<String, Value> {
    serde_json::from_str(text).unwrap_or_default()
}

impl Default for ToolArguments {
    fn default() -> Self {
        Map::new().into()
    }
}

impl From<Map<String, Value>> for ToolArguments {
    fn from(map: Map<String, Value>) -> Self {
        ToolArguments { text: None, parsed: OnceLock::new(), own: map }
    }
}

impl Deref for ToolArguments {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        match &self.text {
            None => &self.own,
            Some(text) => self.parsed.get_or_init(|| Box::new(parse_object(text))),
        }
    }
}

impl DerefMut for ToolArguments {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        // From here on the map is the arguments; the text would say what they were.
        if let Some(text) = self.text.take() {
            self.own = self.parsed.take().map_or_else(|| parse_object(&text), |map| *map);
        }
        &mut self.own
    }
}

impl Clone for ToolArguments {
    fn clone(&self) -> Self {
        ToolArguments { text: self.text.clone(), parsed: self.parsed.clone(), own: self.own.clone() }
    }
}

/// Shows the map: the same arguments read the same whatever whitespace they were sent with.
impl std::fmt::Debug for ToolArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.deref(), f)
    }
}

impl PartialEq for ToolArguments {
    fn eq(&self, other: &Self) -> bool {
        self.deref() == other.deref()
    }
}

impl Serialize for ToolArguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.deref().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolArguments {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<Map<String, Value>>::deserialize(d)?.unwrap_or_default().into())
    }
}

#[cfg(test)]
mod tests {
    use super::ToolArguments;
    use serde::Deserialize;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;

    fn from_text(text: &str) -> ToolArguments {
        ToolArguments::from_checked_text(std::sync::Arc::from(text))
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Args {
        text: String,
        #[serde(default)]
        n: Option<u32>,
    }

    #[test]
    fn text_and_map_read_alike() {
        let text = r#"{ "text" : "h\u00e9", "n": 3, "extra": [1, {"a": null}] }"#;
        let sent = from_text(text);
        assert_eq!(sent.text(), Some(text));
        assert_eq!(sent.get("text"), Some(&json!("hé")));
        assert_eq!(sent.len(), 3);
        assert_eq!(sent.text(), Some(text), "reading keeps the text");
        let made = ToolArguments::from(
            json!({"text": "hé", "n": 3, "extra": [1, {"a": null}]}).as_object().cloned().unwrap_or_default(),
        );
        assert_eq!(sent, made);
        assert_eq!(format!("{sent:?}"), format!("{made:?}"));
        assert_eq!(serde_json::to_string(&sent).ok(), serde_json::to_string(&made).ok());
        assert_eq!(sent.clone().decode::<Args>().ok(), made.clone().decode::<Args>().ok());
        assert_eq!(sent.clone().into_value(), made.into_value());
        let mut validated = sent.clone();
        assert_eq!(validated.with_value(|v| v["n"].clone()), json!(3));
        assert_eq!(validated.text(), sent.text(), "validation keeps the text");
        assert_eq!(validated, sent);
    }

    #[test]
    fn a_change_makes_the_map_the_arguments() {
        let mut args = from_text(r#"{"text":"a"}"#);
        args.insert("text".into(), json!("b"));
        assert_eq!(args.text(), None);
        assert_eq!(args.clone().into_map().get("text"), Some(&json!("b")));
        assert_eq!(args.decode::<Args>().ok(), Some(Args { text: "b".into(), n: None }));
        let mut fresh = ToolArguments::default();
        fresh.insert("text".into(), json!("c"));
        assert_eq!(fresh.decode::<Args>().ok(), Some(Args { text: "c".into(), n: None }));
    }

    /// Whatever the text makes of a failure, the answer is the map's: the same error words
    /// (no line and column), and a repeated key's last value, as a map keeps it.
    #[test]
    fn failures_and_repeats_answer_as_the_map_does() {
        for text in [r#"{"text":1}"#, r#"{"n":2}"#, r#"{"text":"a","n":-1}"#, r#"{"text":"a","n":{"x":[true]}}"#] {
            let sent = from_text(text);
            let made = ToolArguments::from(
                serde_json::from_str::<Value>(text).ok().and_then(|v| v.as_object().cloned()).unwrap_or_default(),
            );
            let (a, b) = (sent.decode::<Args>().expect_err(text), made.decode::<Args>().expect_err(text));
            assert_eq!(a.to_string(), b.to_string(), "{text}");
            assert_eq!(a.path().to_string(), b.path().to_string(), "{text}");
        }
        let repeated = from_text(r#"{"text":"first","text":"last"}"#);
        assert_eq!(repeated.clone().decode::<Args>().ok(), Some(Args { text: "last".into(), n: None }));
        let as_map = repeated.decode::<BTreeMap<String, String>>().ok();
        assert_eq!(as_map.and_then(|m| m.get("text").cloned()), Some("last".into()));
    }

    /// Where a successful decoding reads the text and the map differently, the text is what
    /// the client sent (`decode`'s docs list the cases).
    #[test]
    fn the_text_keeps_what_a_map_rounds() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Wide {
            n: u128,
        }
        let text = r#"{"n":18446744073709551616}"#;
        assert_eq!(from_text(text).decode::<Wide>().ok(), Some(Wide { n: 1 << 64 }));
        let map = ToolArguments::from(serde_json::from_str::<serde_json::Map<String, Value>>(text).expect("JSON"));
        assert!(map.decode::<Wide>().is_err(), "a map holds it as an f64");
    }

    #[test]
    fn null_and_absent_are_the_empty_map() {
        #[derive(Deserialize)]
        struct Params {
            #[serde(default)]
            arguments: ToolArguments,
        }
        for params in [json!({}), json!({"arguments": null}), json!({"arguments": {}})] {
            let p: Params = serde_json::from_value(params.clone()).expect("decodes");
            assert!(p.arguments.is_empty(), "{params}");
        }
        assert!(serde_json::from_value::<Params>(json!({"arguments": [1]})).is_err());
    }
}
