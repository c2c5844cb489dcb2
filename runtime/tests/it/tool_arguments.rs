//! A tool's parameters decoded straight from the text of `arguments` answer as when decoded from
//! the map a raw filter (which reads `params` whole) or a typed filter that changes them leaves:
//! the same results for the same arguments, the same `isError` wording for arguments the tool
//! refuses, the last value of a key sent twice. A typed filter reads and changes them as a map.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use switchyard::context::{Notifier, Origin};
use switchyard::jsonrpc::{Message, ResultObject, parse_message};
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;

const PLAIN: &[&str] = &["tool-arguments"];
const CHANGED: &[&str] = &["tool-arguments", "tool-arguments-filter"];

/// Arguments of `describe`.
#[derive(Deserialize, JsonSchema)]
struct DescribeArgs {
    /// A name.
    name: String,
    /// How many times.
    #[serde(default)]
    times: Option<u8>,
    /// Labels.
    #[serde(default)]
    tags: Vec<String>,
}

/// Says what it was given.
#[mcp_tool(group = "tool-arguments")]
async fn describe(args: DescribeArgs) -> Result<String, ToolError> {
    Ok(format!("{} x{} [{}]", args.name, args.times.unwrap_or(1), args.tags.join(",")))
}

/// Reads the arguments as a map, then adds a tag to every call.
#[mcp_filter(rpc = ToolsCall, group = "tool-arguments-filter")]
async fn tag_every_call(
    mut req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    let seen = req.params.arguments.get("name").cloned();
    if seen.is_some() {
        req.params.arguments.insert("tags".into(), json!(["filtered"]));
    }
    next.run(req).await
}

fn server(groups: &[&str], raw_filter: bool) -> Server {
    let mut builder = Server::builder("arguments", "1").groups(groups.iter().copied());
    if raw_filter {
        builder = builder.raw_filter(0, |req: RawRequest, next: RawNext| next.run(req));
    }
    builder.build().expect("builds")
}

/// The answer to a stateless `tools/call` of `describe` whose `arguments` are `arguments`, as
/// written (text, so that whitespace and repeated keys reach the parser).
async fn call(server: &Server, arguments: &str) -> Value {
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"describe","arguments":{arguments},
        "_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let Ok(Message::Request(req)) = parse_message(line.as_bytes()) else { panic!("a request: {line}") };
    let origin = Origin::new(CancellationToken::new(), Notifier::disconnected());
    match server.handle_request(req, None, origin).await {
        Ok(result) => ResultObject::into_value(result),
        Err(e) => json!({ "error": e.to_error_object() }),
    }
}

const CASES: [&str; 9] = [
    r#"{"name":"ada"}"#,
    r#" { "times" : 3 , "name" : "b\u00e9" , "tags" : [ "x" , "y" ] } "#,
    r#"{"name":"first","name":"last"}"#,
    r#"{"name":"ada","extra":{"deep":[1,2,{"x":null}]}}"#,
    r#"{}"#,
    r#"{"name":7}"#,
    r#"{"name":"ada","times":300}"#,
    r#"{"name":"ada","tags":["ok",2]}"#,
    r#"null"#,
];

#[tokio::test]
async fn decoding_the_text_answers_as_decoding_the_map() {
    let (direct, through_raw) = (server(PLAIN, false), server(PLAIN, true));
    for arguments in CASES {
        let text = call(&direct, arguments).await;
        let map = call(&through_raw, arguments).await;
        assert_eq!(text, map, "{arguments}");
    }
    let last = call(&direct, r#"{"name":"first","name":"last"}"#).await;
    assert_eq!(last["content"][0]["text"], "last x1 []");
    let refused = call(&direct, r#"{"name":7}"#).await;
    assert_eq!(refused["isError"], true);
    let said = refused["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("name") && !said.contains("line 1"), "{said}");
    let wrong = call(&direct, "[1]").await;
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
}

#[tokio::test]
async fn a_typed_filter_reads_and_changes_the_arguments_as_a_map() {
    let (direct, through_raw) = (server(CHANGED, false), server(CHANGED, true));
    for arguments in CASES {
        assert_eq!(call(&direct, arguments).await, call(&through_raw, arguments).await, "{arguments}");
    }
    let tagged = call(&direct, r#"{ "name" : "ada", "tags": ["sent"] }"#).await;
    assert_eq!(tagged["content"][0]["text"], "ada x1 [filtered]");
}
