use super::ToolResultText;
use crate::model::CallToolResult;
use crate::protocol::META_SERVER_INFO;
use serde_json::{Value, json};

/// What the typed path makes of `text`: decoded, the peer's `serverInfo` dropped (an emptied
/// `_meta` with it), encoded.
fn typed(text: &str) -> Option<Value> {
    let mut result: CallToolResult = serde_json::from_str(text).ok()?;
    if let Some(meta) = &mut result.meta {
        meta.remove(META_SERVER_INFO);
        if meta.is_empty() {
            result.meta = None;
        }
    }
    Some(serde_json::to_value(result).expect("encodes"))
}

const STAMP: &str = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}}"#;

#[test]
fn kept_text_reads_as_the_typed_result() {
    let stamped = format!(r#"{{"content":[{{"type":"text","text":"hi"}}],"resultType":"complete",{STAMP}}}"#);
    let cases = [
        r#"{"content":[]}"#.to_owned(),
        r#"{"content":[{"type":"text","text":"hello"}]}"#.to_owned(),
        r#"{"content":[{"type":"text","text":"a\nb \"q\" \u00e9 \ud83d\ude00"}],"isError":false}"#.to_owned(),
        r#" { "isError" : true , "content" : [ { "text" : "boom" , "type" : "text" } ] } "#.to_owned(),
        // Line breaks between tokens: the kept text is one line, as a stdio message must be.
        "{\n\"content\":[{\"type\":\"text\",\"text\":\"line\\nbreak\"}]\r\n}".to_owned(),
        "{\"content\":[\n{\"type\":\"text\",\"text\":\"a\"} ,\r\n {\"type\":\"text\",\"text\":\"b\"}\t]}".to_owned(),
        r#"{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"audio","mimeType":"audio/wav","data":""}]}"#.to_owned(),
        stamped,
        format!(r#"{{{STAMP},"content":[{{"type":"text","text":"x"}}]}}"#),
        // `null` is absent to the typed decode too.
        r#"{"content":[],"isError":null,"resultType":null,"_meta":null}"#.to_owned(),
    ];
    for text in cases {
        let kept = ToolResultText::from_peer_text(&text).unwrap_or_else(|| panic!("kept: {text}"));
        let kept_text = kept.as_text().expect("text");
        assert!(!kept_text.contains(['\n', '\r']), "one line: {kept_text}");
        let written: Value = serde_json::from_str(kept_text).expect("kept text is JSON");
        assert_eq!(Some(&written), typed(&text).as_ref(), "{text}");
        let decoded = serde_json::to_value(kept.into_result().expect("decodes")).expect("encodes");
        assert_eq!(Some(decoded), typed(&text), "{text}");
    }
}

#[test]
fn anything_the_text_would_change_is_decoded() {
    let refused = [
        // Not a result object, or no content array.
        "[]",
        "null",
        r#"{"isError":true}"#,
        r#"{"content":{}}"#,
        r#"{"content":null}"#,
        r#"{"content":[{"type":"text","text":"a"}],"content":[]}"#,
        // Members the typed result drops, or that a null would drop.
        r#"{"content":[],"extra":1}"#,
        r#"{"content":[],"isError":"yes"}"#,
        r#"{"content":[],"structuredContent":{"a":1,"a":2}}"#,
        r#"{"content":[],"structuredContent":null}"#,
        r#"{"content":[],"resultType":"input_required"}"#,
        r#"{"content":[],"_meta":{}}"#,
        r#"{"content":[],"_meta":[1]}"#,
        r#"{"content":[],"_meta":[{}]}"#,
        r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"\ud800"}}}"#,
        r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":1e400}}"#,
        r#"{"content":[],"isError":1}"#,
        r#"{"content":[],"resultType":"compl\u0065te"}"#,
        r#"[[],true]"#,
        r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"trace":"x"}}"#,
        // Blocks: other kinds, other members, wrong types, positional or escaped forms.
        r#"{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}"#,
        r#"{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}"#,
        r#"{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}"#,
        r#"{"content":[{"type":"text","text":"a","_meta":{}}]}"#,
        r#"{"content":[{"type":"text","text":"a","extra":1}]}"#,
        r#"{"content":[{"type":"text","text":"a","data":"x"}]}"#,
        r#"{"content":[{"type":"text","text":null}]}"#,
        r#"{"content":[{"type":"text","text":3}]}"#,
        r#"{"content":[{"type":"text"}]}"#,
        r#"{"content":[{"type":"text","text":"a","text":"b"}]}"#,
        r#"{"content":[{"type":"text","text":"a","type":"text"}]}"#,
        r#"{"content":[{"type":"text","te\u0078t":"a"}]}"#,
        r#"{"content":[{"type":"image","data":"x"}]}"#,
        r#"{"content":[{"type":"image","data":"x","mimeType":"image/png","text":"t"}]}"#,
        r#"{"content":[{"type":"t\u0065xt","text":"a"}]}"#,
        r#"{"content":[["text","a"]]}"#,
        r#"{"content":["a"]}"#,
        r#"{"content":[{"type":"video","text":"a"}]}"#,
        // A string serde will not decode.
        r#"{"content":[{"type":"text","text":"\ud800"}]}"#,
        r#"{"content":[{"type":"text","text":"\udc00 x"}]}"#,
        r#"{"content":[{"type":"text","text":"\ud83d\u0041"}]}"#,
        "not json",
        // Control characters unescaped in a string: no JSON, and a line break in a message.
        "{\"content\":[{\"type\":\"text\",\"text\":\"a\nb\"}]}",
        "{\"content\":[{\"type\":\"text\",\"text\":\"a\tb\"}]}",
        "{\"content\":[{\"type\":\"image\",\"data\":\"a\rb\",\"mimeType\":\"x\"}]}",
        r#"{"content":[]} x"#,
    ];
    for text in refused {
        assert!(ToolResultText::from_peer_text(text).is_none(), "kept: {text}");
    }
}

#[test]
fn a_stamp_nested_past_the_limit_is_decoded() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let text = format!(r#"{{"content":[],"_meta":{{"io.modelcontextprotocol/serverInfo":{deep}}}}}"#);
    assert!(serde_json::from_str::<CallToolResult>(&text).is_err());
    assert!(ToolResultText::from_peer_text(&text).is_none());
    let shallow = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let text = format!(r#"{{"content":[],"_meta":{{"io.modelcontextprotocol/serverInfo":{shallow}}}}}"#);
    assert!(ToolResultText::from_peer_text(&text).is_some());
}

#[test]
fn escapes_serde_decodes_are_kept() {
    for text in [
        r#"{"content":[{"type":"text","text":"\\ud800"}]}"#,
        r#"{"content":[{"type":"text","text":"\\\ud83d\ude00\\u"}]}"#,
        r#"{"content":[{"type":"text","text":"\uD83D\uDE00\/\t"}]}"#,
    ] {
        let kept = ToolResultText::from_peer_text(text).unwrap_or_else(|| panic!("kept: {text}"));
        let written: Value = serde_json::from_str(kept.as_text().expect("text")).expect("JSON");
        assert_eq!(Some(written), typed(text), "{text}");
    }
}

#[test]
fn a_typed_result_stays_typed() {
    let result = CallToolResult::error("no");
    let answer = ToolResultText::from(result.clone());
    assert_eq!(answer.as_text(), None);
    assert_eq!(answer.into_result().expect("typed"), result);
    assert_eq!(typed(&json!(CallToolResult::error("no")).to_string()), Some(json!(result)));
}
