use super::*;
use crate::model::input_schema;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Plain {
    text: String,
    count: u8,
    ratio: f64,
    big: u64,
    small: i16,
    letter: Option<char>,
    pair: Option<(u8, String)>,
    tags: Option<Vec<String>>,
    mode: Option<Mode>,
    nested: Option<Vec<Inner>>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Mode {
    Fast,
    Slow(u16),
    Custom { level: u32 },
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Inner {
    id: i32,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Constrained {
    #[schemars(length(min = 3))]
    name: String,
    #[schemars(range(min = 1, max = 10))]
    level: u32,
    unique: Option<std::collections::HashSet<u32>>,
}

/// Inputs that probe every keyword the derived schemas above use.
fn probes() -> Vec<Value> {
    let base = json!({"text": "t", "count": 1, "ratio": 0.5, "big": 1, "small": -1});
    let with = |k: &str, v: Value| {
        let mut o = base.clone();
        o[k] = v;
        o
    };
    vec![
        base.clone(),
        json!({}),
        json!([]),
        json!("x"),
        with("text", json!(42)),
        with("count", json!(256)),
        with("count", json!(-1)),
        with("count", json!(1.5)),
        with("big", json!(-5)),
        with("small", json!(40000)),
        with("ratio", json!("half")),
        with("letter", json!("ab")),
        with("letter", json!("")),
        with("letter", json!("a")),
        with("pair", json!([1])),
        with("pair", json!([1, "a", 2])),
        with("pair", json!([1, "a"])),
        with("tags", json!(["a", 1])),
        with("mode", json!("Fast")),
        with("mode", json!("Medium")),
        with("mode", json!({"Slow": 70000})),
        with("mode", json!({"Custom": {"level": 3}})),
        with("mode", json!({"Custom": {}})),
        with("nested", json!([{"id": 1}, {"id": 2, "extra": true}])),
        with("nested", json!([{"id": "1"}])),
        with("unknown", json!(true)),
        json!({"name": "abcd", "level": 5}),
        json!({"name": "ab", "level": 5}),
        json!({"name": "abcd", "level": 11}),
        json!({"name": "abcd", "level": 5, "unique": [1, 1]}),
    ]
}

/// The fast path's promise: when a derived schema is not validated, decoding rejects every
/// input the validator would have rejected, so the outcome is the same.
fn decoding_rejects_what_validation_rejects<T: DeserializeOwned + JsonSchema>() {
    let schema = input_schema::<T>();
    let validator = jsonschema::validator_for(&schema).expect("schemars writes valid schemas");
    for input in probes() {
        if !validator.is_valid(&input) {
            let decoded = serde_json::from_value::<T>(input.clone());
            assert!(decoded.is_err(), "{} accepted {input} that its schema rejects", std::any::type_name::<T>());
        }
    }
}

#[test]
fn plain_derived_schemas_skip_validation_without_changing_the_outcome() {
    assert!(serde_checks_all(&input_schema::<Plain>()), "{:#}", input_schema::<Plain>());
    assert!(serde_checks_all(&input_schema::<Inner>()));
    decoding_rejects_what_validation_rejects::<Plain>();
    decoding_rejects_what_validation_rejects::<Inner>();
}

#[test]
fn constraints_serde_does_not_check_are_validated() {
    let schema = input_schema::<Constrained>();
    assert!(!serde_checks_all(&schema), "{schema:#}");
    let schemas = ToolSchemas::compile(&schema, SchemaOrigin::Derived, None).expect("compiles");
    assert!(schemas.validates_arguments());
    let rejected =
        schemas.check_arguments("pick", &mut args(json!({"name": "ab", "level": 11}))).expect_err("rejected");
    let text = rejected.content[0].as_text().expect("text");
    assert_eq!(rejected.is_error, Some(true));
    assert!(text.starts_with("Invalid arguments for tool `pick`: "), "{text}");
    assert!(text.contains("`name`") && text.contains("`level`"), "{text}");
    assert!(schemas.check_arguments("pick", &mut args(json!({"name": "abc", "level": 10}))).is_ok());
}

#[test]
fn written_schemas_are_always_validated() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let schemas = ToolSchemas::compile(&schema, SchemaOrigin::Written, None).expect("compiles");
    assert!(schemas.validates_arguments());
    let rejected = schemas.check_arguments("count", &mut args(json!({}))).expect_err("missing n");
    assert_eq!(rejected.content[0].as_text(), Some("Invalid arguments for tool `count`: \"n\" is a required property"));
}

#[test]
fn an_invalid_written_schema_fails_the_build_with_a_reason() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}});
    let err = ToolSchemas::compile(&schema, SchemaOrigin::Written, None).err().expect("rejected");
    assert!(err.starts_with("the input schema is not valid: "), "{err}");
}

#[test]
fn paths_name_nested_members_as_serde_does() {
    let instance = json!({"items": [{"name": 1}], "a/b": {"c": 2}});
    assert_eq!(pointer_path(&instance, ""), "");
    assert_eq!(pointer_path(&instance, "/items/0/name"), "items[0].name");
    assert_eq!(pointer_path(&instance, "/a~1b/c"), "a/b.c");
}

#[test]
fn many_problems_are_listed_up_to_a_bound() {
    let problems: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    let result = argument_error("t", &problems);
    assert_eq!(result.content[0].as_text(), Some("Invalid arguments for tool `t`: p0; p1; p2; p3; p4; and 3 more"));
}

#[test]
fn non_object_output_schemas_are_wrapped_for_session_clients() {
    let schema = input_schema::<Vec<Inner>>();
    let legacy = legacy_output_schema(&schema).expect("wrapped");
    assert_eq!(legacy["type"], "object");
    assert_eq!(legacy["required"], json!(["result"]));
    assert_eq!(legacy["properties"]["result"]["type"], "array");
    assert!(legacy["$defs"]["Inner"].is_object(), "the $refs still resolve from the root: {legacy:#}");
    assert!(legacy_output_schema(&input_schema::<Inner>()).is_none());

    let value = json!([{"id": 1}]);
    let validator = jsonschema::validator_for(&legacy).expect("valid");
    assert!(validator.is_valid(&json!({"result": value})));

    let schemas = ToolSchemas::compile(&json!({"type": "object"}), SchemaOrigin::Derived, Some(&schema)).expect("ok");
    let mut modern = CallToolResult { structured_content: Some(value.clone()), ..Default::default() };
    schemas.finish_output("list", true, &mut modern).expect("matches");
    assert_eq!(modern.structured_content, Some(value.clone()));
    let mirrored = vec![crate::model::Content::text(value.to_string())];
    let mut session =
        CallToolResult { content: mirrored, structured_content: Some(value.clone()), ..Default::default() };
    schemas.finish_output("list", false, &mut session).expect("matches");
    assert_eq!(session.structured_content, Some(json!({"result": value})));
    assert_eq!(session.content[0].as_text(), Some(json!({"result": value}).to_string().as_str()));
}

#[test]
fn structured_content_that_breaks_the_output_schema_is_an_internal_error_in_debug_builds() {
    let schema = input_schema::<Inner>();
    let schemas = ToolSchemas::compile(&json!({"type": "object"}), SchemaOrigin::Derived, Some(&schema)).expect("ok");
    let mut bad = CallToolResult { structured_content: Some(json!({"id": "one"})), ..Default::default() };
    let outcome = schemas.finish_output("inner", true, &mut bad);
    if cfg!(debug_assertions) {
        let err = outcome.expect_err("checked in debug builds");
        assert_eq!(err.code(), crate::ErrorCode::INTERNAL_ERROR);
        assert!(err.message().contains("`id`"), "{}", err.message());
    }
}

#[test]
fn a_long_offending_value_is_not_echoed_whole() {
    let long = "x".repeat(10_000);
    let text = problem("text", &format!("\"{long}\" is not of type \"integer\""));
    assert!(text.chars().count() < 320, "{}", text.len());
    assert!(text.starts_with("`text`: \"xxx") && text.contains(" … "), "{text}");
    assert!(text.ends_with("xx\" is not of type \"integer\""), "the reason is kept: {text}");
    assert_eq!(problem("", "short"), "short");
}

fn args(v: serde_json::Value) -> crate::jsonrpc::ToolArguments {
    v.as_object().cloned().unwrap_or_default().into()
}
