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
fn an_rpc_result_that_is_no_object_is_read_from_value() {
    let wrapped = json!({ "value": "pong", "resultType": "complete", "_meta": {} });
    assert_eq!(decode_rpc_result::<String>(wrapped), Ok("pong".to_owned()));
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Has {
        value: u8,
    }
    assert_eq!(decode_rpc_result::<Has>(json!({ "value": 3, "resultType": "complete" })), Ok(Has { value: 3 }));
    assert!(decode_rpc_result::<u8>(json!({ "other": 1 })).expect_err("no value").contains("invalid type"));
}
