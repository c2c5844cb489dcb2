//! A success response read without building its result: what a client receives for nearly
//! every request it sends, decoded later straight from the text into the type it expects.

use super::message::Version;
use super::meta::check_json;
use serde::Deserialize;
use serde::de::{Error as _, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// A JSON-RPC 2.0 success response with an integer id: `{"jsonrpc":"2.0","id":7,"result":…}`
/// ([JSON-RPC 2.0 §5](https://www.jsonrpc.org/specification#response_object)), its `result`
/// kept as the JSON text it was sent as. Made by [`parse_success`].
#[derive(Debug)]
#[non_exhaustive]
pub struct SuccessResponse {
    /// The id of the request answered (`-2^63` to `2^63-1`).
    pub id: i64,
    /// The `result` member's value as sent, whitespace inside it included (not around it).
    pub result: Box<RawValue>,
}

/// Reads `bytes` as one success response whose id is an integer, without parsing `result` into
/// a [`serde_json::Value`]: the caller decodes its own type from [`SuccessResponse::result`].
///
/// `Some` only for an object with exactly the members `jsonrpc` (`"2.0"`), `id` (an integer
/// that fits `i64`) and `result` (any JSON value), in any order, each once, where the text
/// holds nothing a `Value` parse of the whole message refuses (a lone surrogate escape, a
/// number out of range, nesting past serde_json's limit). So it accepts only what
/// [`parse_message`](super::parse_message) reads as [`Message::Response`](super::Message)
/// with `Ok(result)` and the same id, and whatever it returns `None` for (an error response,
/// a request, a notification, a string id, a repeated member, a batch, anything malformed)
/// goes to `parse_message`, which alone says what is wrong with it. Never panics.
pub fn parse_success(bytes: &[u8]) -> Option<SuccessResponse> {
    let text = std::str::from_utf8(bytes).ok()?;
    let plain: PlainSuccess = serde_json::from_str(text).ok()?;
    // The result sits inside the message's object.
    check_json(plain.result.get(), 1).ok()?;
    Some(SuccessResponse { id: plain.id, result: plain.result.to_owned() })
}

/// The borrowed shape [`parse_success`] reads; any other member, or a repeated one, fails it.
struct PlainSuccess<'a> {
    id: i64,
    result: &'a RawValue,
}

impl<'de: 'a, 'a> Deserialize<'de> for PlainSuccess<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PlainSuccessVisitor)
    }
}

struct PlainSuccessVisitor;

impl<'de> Visitor<'de> for PlainSuccessVisitor {
    type Value = PlainSuccess<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC success response")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PlainSuccess<'de>, A::Error> {
        let (mut version, mut id, mut result) = (false, None, None);
        // The errors below only send the message to the general path: no text is built.
        let refused = || A::Error::custom("");
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc if !version => {
                    if !map.next_value::<Version>()?.0 {
                        return Err(refused());
                    }
                    version = true;
                }
                Member::Id if id.is_none() => id = Some(map.next_value::<i64>()?),
                Member::Result if result.is_none() => result = Some(map.next_value::<&'de RawValue>()?),
                _ => return Err(refused()),
            }
        }
        match (version, id, result) {
            (true, Some(id), Some(result)) => Ok(PlainSuccess { id, result }),
            _ => Err(refused()),
        }
    }
}

/// A member of a success response, read without copying its name; any other name fails.
enum Member {
    Jsonrpc,
    Id,
    Result,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("jsonrpc, id or result")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Member, E> {
                match name {
                    "jsonrpc" => Ok(Member::Jsonrpc),
                    "id" => Ok(Member::Id),
                    "result" => Ok(Member::Result),
                    _ => Err(E::custom("")),
                }
            }
        }
        d.deserialize_str(MemberVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestId;
    use crate::jsonrpc::{Message, parse_message};
    use serde_json::Value;

    /// What the general path makes of `text`, as `parse_success` would give it.
    fn general(text: &str) -> Option<(i64, Value)> {
        match parse_message(text.as_bytes()) {
            Ok(Message::Response { id: RequestId::Number(id), outcome: Ok(result) }) => Some((id, result)),
            _ => None,
        }
    }

    /// Compares the two paths on `text`: the fast one accepts nothing the general one does
    /// not read the same way.
    fn agrees(text: &str) -> bool {
        let fast = parse_success(text.as_bytes());
        if let Some(fast) = &fast {
            let parsed: Value = serde_json::from_str(fast.result.get()).expect("checked text parses");
            assert_eq!(Some((fast.id, parsed)), general(text), "{text}");
        }
        fast.is_some()
    }

    #[test]
    fn reads_a_plain_success_in_any_member_order() {
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"result":{"a":[1,2.5,null,true]},"id":-3,"jsonrpc":"2.0"}"#,
            r#" { "id" : 9223372036854775807 , "jsonrpc" : "2.0" , "result" : [ ] } "#,
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":"caf\u00e9 \ud83d\ude00"}"#,
            // Escapes in the version and keys read as they spell.
            r#"{"jsonrpc":"2\u002e0","i\u0064":1,"result":{}}"#,
        ] {
            assert!(agrees(text), "{text}");
        }
        let kept = parse_success(br#"{"jsonrpc":"2.0","id":2,"result": { "k" : 1 } }"#).expect("plain");
        assert_eq!(kept.result.get(), r#"{ "k" : 1 }"#);
    }

    #[test]
    fn leaves_everything_else_to_the_general_path() {
        for text in [
            // Not a plain success: the general path answers these (or refuses them).
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"#,
            // Text a `Value` parse of the message refuses.
            r#"{"jsonrpc":"2.0","id":1,"result":{"s":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"n":1e999}}"#,
            "",
            "\u{feff}{}",
        ] {
            assert!(!agrees(text), "{text}");
        }
        assert!(parse_success(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}").is_none());
    }

    #[test]
    fn nesting_limit_is_the_general_paths() {
        let nested = |depth: usize| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}1{}}}"#, "[".repeat(depth), "]".repeat(depth))
        };
        let deepest = (1..200).take_while(|&d| general(&nested(d)).is_some()).last().expect("some depth parses");
        assert!(agrees(&nested(deepest)));
        assert!(!agrees(&nested(deepest + 1)));
        assert!(general(&nested(deepest + 1)).is_none());
    }

    #[test]
    fn generated_responses_agree() {
        // Results built from a small grammar, sent with varied member order and spacing.
        let pieces = [
            "1",
            "-0",
            "2.5e3",
            "1e400",
            r#""a\"b""#,
            r#""\ud83d\ude00""#,
            r#""\udc00""#,
            "null",
            "true",
            "[]",
            "{}",
            r#"{"k":[1,{"x":"y"}]}"#,
            "[[[[1]]]]",
            "12345678901234567890123",
        ];
        let mut seed = 0x9e37_79b9_u32;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as usize % n
        };
        for _ in 0..2000 {
            let mut result = String::from("[");
            for i in 0..next(4) {
                if i > 0 {
                    result.push(',');
                }
                result.push_str(pieces[next(pieces.len())]);
            }
            result.push(']');
            let members =
                [r#""jsonrpc":"2.0""#.to_owned(), format!(r#""id":{}"#, next(1000)), format!(r#""result":{result}"#)];
            let order = [[0, 1, 2], [2, 1, 0], [1, 2, 0]][next(3)];
            let space = [" ", ""][next(2)];
            let text = format!("{{{}}}", order.map(|i| members[i].as_str()).join(&format!(",{space}")));
            let fast = agrees(&text);
            assert_eq!(fast, general(&text).is_some(), "{text}");
        }
    }
}
