//! Listen deliveries encoded once per event.
//!
//! Every subscription that receives an event sends the same notification but for its
//! subscription id in `params._meta`. Building that message as a `serde_json::Value` tree,
//! serializing it and dropping it again for every subscriber was about half of the CPU a
//! fan-out cost (callgrind: ~9,000 of ~19,000 instructions per delivery). The first subscriber
//! to handle an event encodes everything up to the id once; every subscriber then writes the
//! prefix, its id and the closing brackets into one string.

use crate::protocol::META_SUBSCRIPTION_ID;
use arc_swap::ArcSwapOption;
use serde_json::{Value, json};
use std::sync::Arc;

/// An event's notification as JSON text, up to the subscription id.
#[derive(Debug)]
struct Encoded {
    /// The method it encodes (with `params`, the cache key: the text depends on nothing else).
    method: String,
    /// The params it encodes, without the subscription id.
    params: Value,
    /// `{"jsonrpc":"2.0","method":M,"params":{P…,"_meta":{"io.modelcontextprotocol/subscriptionId":`
    prefix: String,
}

/// What closes the prefix after the id: `_meta`, `params`, the message.
const SUFFIX: &str = "}}}";

impl Encoded {
    /// `None` when `params` is not an object without `_meta` (the `Value` path then builds the
    /// message, replacing such a `_meta` in place as it always did).
    fn new(method: &str, params: &Value) -> Option<Encoded> {
        let fields = params.as_object().filter(|p| !p.contains_key("_meta"))?;
        // Cannot fail: strings and a `Value` whose map keys are strings always serialize.
        let mut prefix = String::with_capacity(160);
        prefix.push_str(r#"{"jsonrpc":"2.0","method":"#);
        prefix.push_str(&serde_json::to_string(method).ok()?);
        prefix.push_str(r#","params":"#);
        let params_json = serde_json::to_string(params).ok()?;
        // `{...}` without its closing brace, then `_meta` as the last field.
        prefix.push_str(&params_json[..params_json.len() - 1]);
        if !fields.is_empty() {
            prefix.push(',');
        }
        prefix.push_str(r#""_meta":{"#);
        prefix.push_str(&serde_json::to_string(META_SUBSCRIPTION_ID).ok()?);
        prefix.push(':');
        Some(Encoded { method: method.to_owned(), params: params.clone(), prefix })
    }

    fn message(&self, sid_json: &str) -> String {
        let mut text = String::with_capacity(self.prefix.len() + sid_json.len() + SUFFIX.len());
        text.push_str(&self.prefix);
        text.push_str(sid_json);
        text.push_str(SUFFIX);
        text
    }
}

/// The most recent event's encoding, shared by every subscription of a server. Events reach
/// the subscriptions one after the other, so one slot serves nearly every delivery; a
/// subscription that is behind re-encodes (the slot is compared, never trusted).
///
/// The slot is keyed by the notification's method and params, not by the [`Event`](super::Event): those
/// are what the text is made of, whatever the event and grant that produced them. They are
/// compared as text would show them ([`written_alike`]), since `Value`'s `==` holds for
/// objects whose keys are in another order and for `0.0` and `-0.0`.
#[derive(Debug, Default)]
pub(crate) struct EncodedEvents(ArcSwapOption<Encoded>);

impl EncodedEvents {
    /// The notification `{"jsonrpc":"2.0","method":method,"params":params + {"_meta":
    /// {subscriptionId: sid}}}` as compact JSON, where `(method, params)` is what an event is
    /// delivered as and `sid_json` the subscription id's JSON; `None` when `params` is not an
    /// object without `_meta` (see [`Encoded::new`]).
    pub(crate) fn message(&self, method: &str, params: &Value, sid_json: &str) -> Option<String> {
        if let Some(cached) = &*self.0.load()
            && cached.method == method
            && written_alike(&cached.params, params)
        {
            return Some(cached.message(sid_json));
        }
        let fresh = Arc::new(Encoded::new(method, params)?);
        let text = fresh.message(sid_json);
        self.0.store(Some(fresh));
        Some(text)
    }
}

/// True when `a` and `b` serialize to the same text: equal, with object keys in the same
/// order (maps keep insertion order here) and floats of the same sign (`0.0 == -0.0`, but they
/// are written `0.0` and `-0.0`). Integers and floats never compare equal, so `1` and `1.0`
/// are already apart.
fn written_alike(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((ka, va), (kb, vb))| ka == kb && written_alike(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| written_alike(x, y)),
        (Value::Number(x), Value::Number(y)) => x == y && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits),
        _ => a == b,
    }
}

/// `{"io.modelcontextprotocol/subscriptionId": sid}`: the `_meta` that tags the
/// acknowledgement, every event and the result of subscription `sid`.
pub(super) fn subscription_meta(sid: &Value) -> Value {
    json!({ META_SUBSCRIPTION_ID: sid })
}

/// The same notification as a `Value` (for message filters and custom transports), built the
/// way the listen loop always built it: `_meta` set on `params`.
pub(crate) fn message_value(method: &str, mut params: Value, sid: &Value) -> Value {
    if let Some(p) = params.as_object_mut() {
        p.insert("_meta".into(), subscription_meta(sid));
    }
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subscriptions::Event;

    fn both(method: &str, params: Value, sid: Value) -> (Option<String>, Value) {
        let cache = EncodedEvents::default();
        let sid_json = serde_json::to_string(&sid).expect("an id serializes");
        let text = cache.message(method, &params, &sid_json);
        (text, message_value(method, params, &sid))
    }

    #[test]
    fn the_encoded_text_is_the_value_serialized() {
        let cases = [
            (Event::ToolsListChanged, "notifications/tools/list_changed", json!({}), json!(1)),
            (
                Event::ResourceUpdated("file:///a \"b\"".into()),
                "notifications/resources/updated",
                json!({ "uri": "file:///a \"b\"" }),
                json!("sub-\u{e9}"),
            ),
            (
                Event::Extension {
                    key: "taskIds".into(),
                    item: json!("t1"),
                    method: "notifications/tasks".into(),
                    params: json!({ "taskId": "t1", "status": "working", "nested": { "z": 1, "a": [1, 2] } }),
                },
                "notifications/tasks",
                json!({ "taskId": "t1", "status": "working", "nested": { "z": 1, "a": [1, 2] } }),
                json!(-7),
            ),
        ];
        for (event, method, params, sid) in cases {
            let (text, value) = both(method, params, sid);
            let text = text.expect("an object without _meta is encoded");
            assert_eq!(text, serde_json::to_string(&value).expect("serializes"), "{event:?}");
            let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(parsed, value);
        }
    }

    #[test]
    fn params_that_are_not_a_plain_object_take_the_value_path() {
        let with_meta = json!({ "x": 1, "_meta": { "other": true } });
        let (text, value) = both("m", with_meta, json!(3));
        assert!(text.is_none());
        assert_eq!(value["params"]["_meta"], json!({ META_SUBSCRIPTION_ID: 3 }), "replaced, as before");
        assert_eq!(value["params"]["x"], 1);
        let (text, _) = both("m", json!([1]), json!(3));
        assert!(text.is_none());
    }

    /// What the listen loop sent before events were encoded once: `params["_meta"]` set on the
    /// event's params (a `Null` becomes an object), the message built with `json!`.
    fn before(method: &str, mut params: Value, sid: &Value) -> String {
        params["_meta"] = json!({ META_SUBSCRIPTION_ID: sid });
        serde_json::to_string(&json!({ "jsonrpc": "2.0", "method": method, "params": params })).expect("serializes")
    }

    /// Every event shape with every id shape the wire accepts (`RequestId`: an `i64` or a
    /// string) is byte for byte what the `Value` path sent before.
    #[test]
    fn every_event_and_id_shape_encodes_as_before() {
        use crate::jsonrpc::RequestId;
        let ids = [
            RequestId::Number(0),
            RequestId::Number(-1),
            RequestId::Number(i64::MIN),
            RequestId::Number(i64::MAX),
            RequestId::String(String::new()),
            RequestId::String("q\"b\\s/n\nt\tc\u{1}\u{7f}".into()),
            RequestId::String("\u{e9}\u{1F600}\u{2028}\u{2029}</script>".into()),
            RequestId::String("42".into()),
        ];
        let extension = |method: &str, params: Value| Event::Extension {
            key: "k".into(),
            item: json!("i"),
            method: method.into(),
            params,
        };
        let events = [
            Event::ToolsListChanged,
            Event::PromptsListChanged,
            Event::ResourcesListChanged,
            Event::ResourceUpdated(String::new()),
            Event::ResourceUpdated("file:///a b/\"q\"\\\u{e9}\u{1F600}\n".into()),
            extension("notifications/x", json!({})),
            extension("notifications/\"odd\"\u{e9}", json!({ "z": 1, "a": [1.5, -0.0, 1e300, u64::MAX, i64::MIN] })),
            extension("n", json!({ "deep": { "b": { "c": [{ "d": null, "e": true }] } }, "s": "\u{0}\u{1F600}" })),
            extension("n", json!({ "": "empty key", "\"": "quote key", "_meta2": 1 })),
        ];
        let cache = EncodedEvents::default();
        for event in &events {
            // The listen loop's view of the event: what the grant delivers, `Null` made `{}`.
            let (method, params) = match event {
                Event::ToolsListChanged => ("notifications/tools/list_changed".to_owned(), json!({})),
                Event::PromptsListChanged => ("notifications/prompts/list_changed".to_owned(), json!({})),
                Event::ResourcesListChanged => ("notifications/resources/list_changed".to_owned(), json!({})),
                Event::ResourceUpdated(uri) => ("notifications/resources/updated".to_owned(), json!({ "uri": uri })),
                Event::Extension { method, params, .. } => (method.clone(), params.clone()),
            };
            for id in &ids {
                let sid = id.to_value();
                let sid_json = serde_json::to_string(&sid).expect("an id serializes");
                let text = cache.message(&method, &params, &sid_json).expect("an object without _meta");
                assert_eq!(text, before(&method, params.clone(), &sid), "{event:?} {id:?}");
                let value = serde_json::to_string(&message_value(&method, params.clone(), &sid)).expect("serializes");
                assert_eq!(text, value, "{event:?} {id:?}");
            }
        }
    }

    /// `Event`'s `==` ignores the key order of objects and the sign of a zero; both show in
    /// the text, so a cached encoding of one such event must not stand in for the other.
    #[test]
    fn events_equal_as_values_but_written_differently_get_their_own_text() {
        let extension = |params: Value| Event::Extension {
            key: "k".into(),
            item: json!("i"),
            method: "notifications/x".into(),
            params,
        };
        let pairs = [
            (json!({ "a": 1, "b": 2 }), json!({ "b": 2, "a": 1 })),
            (json!({ "x": 0.0 }), json!({ "x": -0.0 })),
            (json!({ "o": { "p": 1, "q": 2 } }), json!({ "o": { "q": 2, "p": 1 } })),
        ];
        for (first, second) in pairs {
            let (a, b) = (extension(first.clone()), extension(second.clone()));
            assert_eq!(a, b, "the premise: these events compare equal");
            let cache = EncodedEvents::default();
            let text_a = cache.message("notifications/x", &first, "1").expect("encoded");
            let text_b = cache.message("notifications/x", &second, "1").expect("encoded");
            assert_eq!(text_a, before("notifications/x", first.clone(), &json!(1)));
            assert_eq!(text_b, before("notifications/x", second.clone(), &json!(1)), "{second}");
        }
    }

    /// Subscribers on several threads handle different events at once, so the slot is
    /// replaced under them all the time; every text must still be its own event's.
    #[test]
    fn racing_subscribers_always_get_their_own_event() {
        // Pairs that compare equal but are written differently, and distinct ones.
        let events: Vec<Value> = (0..6)
            .map(|i| match i % 3 {
                0 => json!({ "n": i / 3, "a": 1, "b": 2 }),
                1 => json!({ "n": i / 3, "b": 2, "a": 1 }),
                _ => json!({ "n": i / 3, "z": -0.0 }),
            })
            .collect();
        let cache = EncodedEvents::default();
        std::thread::scope(|s| {
            for t in 0..4_usize {
                let (cache, events) = (&cache, &events);
                s.spawn(move || {
                    for round in 0..2_000_usize {
                        let params = &events[(round * (t + 1) + t) % events.len()];
                        let sid = json!(format!("t{t}-{round}"));
                        let sid_json = serde_json::to_string(&sid).expect("serializes");
                        let text = cache.message("notifications/x", params, &sid_json).expect("encoded");
                        assert_eq!(text, before("notifications/x", params.clone(), &sid), "thread {t} round {round}");
                    }
                });
            }
        });
    }

    #[test]
    fn the_slot_is_compared_not_trusted() {
        let cache = EncodedEvents::default();
        let first = cache.message("notifications/resources/updated", &json!({ "uri": "a" }), "1");
        let second = cache.message("notifications/resources/updated", &json!({ "uri": "b" }), "1");
        let again = cache.message("notifications/resources/updated", &json!({ "uri": "a" }), "2");
        assert!(first.expect("encoded").contains(r#""uri":"a""#));
        assert!(second.expect("encoded").contains(r#""uri":"b""#));
        let again = again.expect("encoded");
        assert!(again.contains(r#""uri":"a""#) && again.ends_with(":2}}}"), "{again}");
    }
}
