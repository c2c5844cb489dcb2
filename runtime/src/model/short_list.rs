//! Lists of a result that usually hold one item, decoded without serde's usual first reserve.

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use std::marker::PhantomData;

/// Decodes a JSON array into a `Vec` that starts with room for one item (none for `[]`), for a
/// `#[serde(deserialize_with)]` field such as a result's `content`, `messages` or `contents`.
///
/// serde's own `Vec` starts empty when the format gives no length (JSON does not), so its
/// first push reserves room for four items. A content block is 288 bytes, so that is over a
/// kilobyte, which glibc's allocator serves on its slow path, where most results hold one.
/// What it accepts and the errors it gives are serde's for a `Vec<T>` ("expected a sequence").
pub(crate) fn decode<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Items<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Items<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            // An empty list allocates nothing, as serde's does.
            let Some(first) = seq.next_element()? else { return Ok(Vec::new()) };
            // A length the format claims for the rest is trusted only as far as a short list.
            let mut items = Vec::with_capacity(1 + seq.size_hint().unwrap_or(0).min(15));
            items.push(first);
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Items(PhantomData))
}

#[cfg(test)]
mod tests {
    use crate::model::{CallToolResult, Content, GetPromptResult, PromptMessage, ReadResourceResult, ResourceContents};
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    /// `field` of `R`, decoded from a `Value` and from text, against a plain `Vec<T>`.
    fn same<R, T>(field: &str, items: Value, of: impl Fn(R) -> Vec<T>)
    where
        R: DeserializeOwned,
        T: DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let object = json!({ field: items });
        let plain: Vec<T> = serde_json::from_value(items.clone()).expect("decodes");
        assert_eq!(of(serde_json::from_value(object.clone()).expect("decodes")), plain);
        assert_eq!(of(serde_json::from_str(&object.to_string()).expect("decodes")), plain);
    }

    #[test]
    fn lists_decode_as_a_plain_vec_does() {
        let text = json!({ "type": "text", "text": "a" });
        let link = json!({ "type": "resource_link", "uri": "file:///a", "name": "a", "title": "A" });
        let message = json!({ "role": "user", "content": text });
        let contents = json!({ "uri": "file:///a", "text": "a" });
        for n in [0, 1, 3, 20] {
            same::<CallToolResult, Content>("content", json!(vec![text.clone(); n]), |r| r.content);
            same::<GetPromptResult, PromptMessage>("messages", json!(vec![message.clone(); n]), |r| r.messages);
            same::<ReadResourceResult, ResourceContents>("contents", json!(vec![contents.clone(); n]), |r| r.contents);
        }
        same::<CallToolResult, Content>("content", json!([text, link, text]), |r| r.content);
    }

    #[test]
    fn one_item_takes_room_for_one_and_none_takes_none() {
        let one: CallToolResult = serde_json::from_str(r#"{"content":[{"type":"text","text":"a"}]}"#).expect("decodes");
        assert_eq!(one.content.capacity(), 1, "serde's own Vec reserves room for four");
        let none: CallToolResult = serde_json::from_str(r#"{"content":[]}"#).expect("decodes");
        assert_eq!(none.content.capacity(), 0);
    }

    #[test]
    fn errors_are_serde_s_for_a_vec() {
        let wrong = serde_json::from_value::<CallToolResult>(json!({ "content": { "type": "text" } }));
        let plain = serde_json::from_value::<Vec<Content>>(json!({ "type": "text" }));
        assert_eq!(wrong.expect_err("not a list").to_string(), plain.expect_err("not a list").to_string());
        let bad_item = serde_json::from_str::<CallToolResult>(r#"{"content":[{"type":"text"}]}"#);
        let plain = serde_json::from_str::<Vec<Content>>(r#"[{"type":"text"}]"#);
        let (ours, theirs) = (bad_item.expect_err("no text").to_string(), plain.expect_err("no text").to_string());
        assert!(ours.starts_with(theirs.split(" at line").next().unwrap_or_default()), "{ours} / {theirs}");
        let missing = serde_json::from_value::<GetPromptResult>(json!({}));
        assert!(missing.expect_err("messages are required").to_string().contains("missing field `messages`"));
    }
}
