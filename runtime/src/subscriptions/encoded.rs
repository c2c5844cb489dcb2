//! Listen deliveries encoded once per event.
//!
//! Every subscription that receives an event sends the same notification but for its
//! subscription id in `params._meta`. Building that message as a `serde_json::Value` tree,
//! serializing it and dropping it again for every subscriber was about half of the CPU a
//! fan-out cost (callgrind: ~9,000 of ~19,000 instructions per delivery). The first subscriber
//! to handle an event encodes everything up to the id once; every subscriber then writes the
//! prefix, its id and the closing brackets into one string.

use super::Event;
use crate::protocol::META_SUBSCRIPTION_ID;
use arc_swap::ArcSwapOption;
use serde_json::{Value, json};
use std::sync::Arc;

/// An event's notification as JSON text, up to the subscription id.
#[derive(Debug)]
struct Encoded {
    /// The event it encodes (the cache key: the notification depends on nothing else).
    event: Event,
    /// `{"jsonrpc":"2.0","method":M,"params":{P…,"_meta":{"io.modelcontextprotocol/subscriptionId":`
    prefix: String,
}

/// What closes the prefix after the id: `_meta`, `params`, the message.
const SUFFIX: &str = "}}}";

impl Encoded {
    /// `None` when `params` is not an object without `_meta` (the `Value` path then builds the
    /// message, replacing such a `_meta` in place as it always did).
    fn new(event: &Event, method: &str, params: &Value) -> Option<Encoded> {
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
        Some(Encoded { event: event.clone(), prefix })
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
#[derive(Debug, Default)]
pub(crate) struct EncodedEvents(ArcSwapOption<Encoded>);

impl EncodedEvents {
    /// The notification `{"jsonrpc":"2.0","method":method,"params":params + {"_meta":
    /// {subscriptionId: sid}}}` for `event` as compact JSON, where `(method, params)` is what
    /// `event` is delivered as and `sid_json` the subscription id's JSON; `None` when `params`
    /// is not an object without `_meta` (see [`Encoded::new`]).
    pub(crate) fn message(&self, event: &Event, method: &str, params: &Value, sid_json: &str) -> Option<String> {
        if let Some(cached) = &*self.0.load()
            && cached.event == *event
        {
            return Some(cached.message(sid_json));
        }
        let fresh = Arc::new(Encoded::new(event, method, params)?);
        let text = fresh.message(sid_json);
        self.0.store(Some(fresh));
        Some(text)
    }
}

/// The same notification as a `Value` (for message filters and custom transports), built the
/// way the listen loop always built it: `_meta` set on `params`.
pub(crate) fn message_value(method: &str, mut params: Value, sid: &Value) -> Value {
    if let Some(p) = params.as_object_mut() {
        p.insert("_meta".into(), json!({ META_SUBSCRIPTION_ID: sid }));
    }
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(event: &Event, method: &str, params: Value, sid: Value) -> (Option<String>, Value) {
        let cache = EncodedEvents::default();
        let sid_json = serde_json::to_string(&sid).expect("an id serializes");
        let text = cache.message(event, method, &params, &sid_json);
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
            let (text, value) = both(&event, method, params, sid);
            let text = text.expect("an object without _meta is encoded");
            assert_eq!(text, serde_json::to_string(&value).expect("serializes"), "{event:?}");
            let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
            assert_eq!(parsed, value);
        }
    }

    #[test]
    fn params_that_are_not_a_plain_object_take_the_value_path() {
        let with_meta = json!({ "x": 1, "_meta": { "other": true } });
        let (text, value) = both(&Event::ToolsListChanged, "m", with_meta, json!(3));
        assert!(text.is_none());
        assert_eq!(value["params"]["_meta"], json!({ META_SUBSCRIPTION_ID: 3 }), "replaced, as before");
        assert_eq!(value["params"]["x"], 1);
        let (text, _) = both(&Event::ToolsListChanged, "m", json!([1]), json!(3));
        assert!(text.is_none());
    }

    #[test]
    fn the_slot_is_compared_not_trusted() {
        let cache = EncodedEvents::default();
        let a = Event::ResourceUpdated("a".into());
        let b = Event::ResourceUpdated("b".into());
        let first = cache.message(&a, "notifications/resources/updated", &json!({ "uri": "a" }), "1");
        let second = cache.message(&b, "notifications/resources/updated", &json!({ "uri": "b" }), "1");
        let again = cache.message(&a, "notifications/resources/updated", &json!({ "uri": "a" }), "2");
        assert!(first.expect("encoded").contains(r#""uri":"a""#));
        assert!(second.expect("encoded").contains(r#""uri":"b""#));
        let again = again.expect("encoded");
        assert!(again.contains(r#""uri":"a""#) && again.ends_with(":2}}}"), "{again}");
    }
}
