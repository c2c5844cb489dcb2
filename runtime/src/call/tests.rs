use super::*;
use serde_json::json;

#[test]
fn params_must_be_objects_and_unit_is_empty() {
    assert_eq!(encode_object(&()), Ok(json!({})));
    assert_eq!(encode_object(&json!({ "a": 1 })), Ok(json!({ "a": 1 })));
    assert!(encode_object(&5).expect_err("5 is no object").contains("expected a JSON object"));
    assert!(encode_object(&vec![1]).is_err());
}

#[test]
fn every_shape_reads_its_part() {
    let result = CallToolResult {
        content: vec![Content::text("a"), Content::text("b")],
        structured_content: Some(json!({ "k": 1 })),
        ..Default::default()
    };
    assert_eq!(output_value(result.clone(), OutputShape::Structured), Ok(json!({ "k": 1 })));
    assert_eq!(output_value(result.clone(), OutputShape::Text), Ok(json!("a\nb")));
    assert_eq!(output_value(result.clone(), OutputShape::Unit), Ok(Value::Null));
    assert_eq!(output_value(result.clone(), OutputShape::FirstContent), Ok(json!({ "type": "text", "text": "a" })));
    assert_eq!(output_value(result.clone(), OutputShape::Contents).map(|v| v.as_array().map(Vec::len)), Ok(Some(2)));
    assert_eq!(output_value(result, OutputShape::Whole).map(|v| v["structuredContent"].clone()), Ok(json!({ "k": 1 })));
    assert!(output_value(CallToolResult::default(), OutputShape::FirstContent).is_err());
    assert!(output_value(CallToolResult::default(), OutputShape::Structured).is_err());
}

#[test]
fn an_rpc_result_loses_the_modern_stamps_and_its_value_wrapper() {
    let stamped = |v: Value| {
        let mut v = v;
        if !v.is_object() {
            v = json!({ "value": v });
        }
        v["resultType"] = json!("complete");
        v["_meta"] = json!({ "io.modelcontextprotocol/serverInfo": {} });
        v
    };
    assert_eq!(decode_rpc_result::<String>(stamped(json!("pong"))), Ok("pong".to_owned()));
    assert_eq!(decode_rpc_result::<Value>(stamped(json!(5))), Ok(json!(5)));
    assert_eq!(decode_rpc_result::<Value>(stamped(json!({ "a": 1 }))), Ok(json!({ "a": 1 })));
    let map: std::collections::HashMap<String, u32> = decode_rpc_result(stamped(json!({ "a": 1 }))).expect("a map");
    assert_eq!(map.get("a"), Some(&1));
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: u8,
    }
    assert_eq!(decode_rpc_result::<Strict>(stamped(json!({ "a": 1 }))), Ok(Strict { a: 1 }));
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Has {
        value: u8,
    }
    assert_eq!(decode_rpc_result::<Has>(stamped(json!({ "value": 3 }))), Ok(Has { value: 3 }));
    // A session's result is the handler's value as is.
    assert_eq!(decode_rpc_result::<Value>(json!(["a"])), Ok(json!(["a"])));
    assert_eq!(decode_rpc_result::<Value>(json!({ "value": 5 })), Ok(json!({ "value": 5 })));
    assert!(decode_rpc_result::<u8>(json!({ "other": 1 })).expect_err("no value").contains("invalid type"));
}

#[test]
fn a_session_s_wrapped_structured_output_is_unwrapped() {
    assert_eq!(decode_unwrapping::<Vec<u32>>(json!({ "result": [1, 2] }), "result"), Ok(vec![1, 2]));
    assert_eq!(decode_unwrapping::<Value>(json!({ "result": [1] }), "result"), Ok(json!([1])));
    assert_eq!(decode_unwrapping::<Option<u32>>(json!({ "result": null }), "result"), Ok(None));
    // An object output of that one key is itself.
    assert_eq!(
        decode_unwrapping::<Value>(json!({ "result": { "a": 1 } }), "result"),
        Ok(json!({ "result": { "a": 1 } }))
    );
}
