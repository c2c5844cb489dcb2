//! The generated shims at run time: requests go through the real server and stdio framing
//! (`switchyard::testing`), so decoding, extractors, template variables and conversions are
//! exercised as a client would see them.
//!
//! JSON values are built with the runtime's re-exported `serde_json`, because this crate
//! deliberately does not depend on `serde_json`: the trybuild cases share its dependencies and
//! must prove that generated code needs nothing but `switchyard`.

use switchyard::__private::serde_json::json;
use switchyard::prelude::*;
use switchyard::registry::ResourceRequest;
use switchyard::testing::TestClient;
use switchyard::{CompletionRequest, FromRequestContext};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
    times: Option<usize>,
}

struct Prefix {
    text: &'static str,
}

/// The JSON-RPC method, through a custom extractor.
struct Method(String);

impl FromRequestContext for Method {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(Method(ctx.method().to_owned()))
    }
}

/// Echoes the text with the configured prefix.
#[mcp_tool(group = "roundtrip")]
async fn echo(prefix: State<Prefix>, args: EchoArgs, #[extract] method: Method) -> Result<String, ToolError> {
    if args.text.is_empty() {
        return Err(ToolError::new("nothing to echo"));
    }
    Ok(format!("{}{} via {}", prefix.text, args.text.repeat(args.times.unwrap_or(1)), method.0))
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: i64,
}

#[derive(serde::Deserialize)]
struct Numbers {
    values: Vec<i64>,
}

/// Adds numbers.
#[mcp_tool(
    name = "math.sum",
    group = "roundtrip",
    input_schema = r#"{"type":"object","properties":{"values":{"type":"array","items":{"type":"integer"}}}}"#
)]
async fn sum(numbers: Numbers) -> Json<Sum> {
    Json(Sum { total: numbers.values.iter().sum() })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    name: String,
}

/// Greets someone.
#[mcp_prompt(group = "roundtrip")]
async fn greet(args: GreetArgs) -> String {
    format!("Hello, {}!", args.name)
}

/// An item.
#[mcp_resource(uri = "items://{shelf}/{id}", mime_type = "text/plain", group = "roundtrip")]
async fn item(id: u32, shelf: String, req: ResourceRequest) -> String {
    format!("{shelf}#{id} at {}", req.uri)
}

#[mcp_completion(prompt = "greet", argument = "name", group = "roundtrip")]
async fn names(req: CompletionRequest) -> Vec<String> {
    ["alice", "albert", "bob"].iter().filter(|n| n.starts_with(&req.argument.value)).map(|n| n.to_string()).collect()
}

fn client() -> TestClient {
    let server = Server::builder("roundtrip", "0")
        .groups(["roundtrip"])
        .state(Prefix { text: "> " })
        .build()
        .expect("server builds");
    TestClient::modern(server)
}

#[tokio::test]
async fn tool_decodes_params_and_builds_extractors() {
    let client = client();
    let reply = client.call_tool("echo", json!({"text": "hi", "times": 2})).await;
    assert_eq!(reply.result()["content"][0]["text"], "> hihi via tools/call");
    assert!(reply.result().get("isError").is_none_or(|e| e == false));
}

#[tokio::test]
async fn tool_errors_and_bad_params() {
    let client = client();
    let reply = client.call_tool("echo", json!({"text": ""})).await;
    assert_eq!(reply.result()["isError"], true);
    assert_eq!(reply.result()["content"][0]["text"], "nothing to echo");

    let reply = client.call_tool("echo", json!({"times": 1})).await;
    assert_eq!(reply.error_code(), Some(-32602));
    let message = reply.error()["message"].as_str().unwrap_or_default();
    assert!(message.contains("tool `echo`") && message.contains("text"), "{message}");
}

#[tokio::test]
async fn raw_schema_tool_returns_structured_content() {
    let client = client();
    let reply = client.call_tool("math.sum", json!({"values": [1, 2, 39]})).await;
    assert_eq!(reply.result()["structuredContent"], json!({"total": 42}));
}

#[tokio::test]
async fn prompt_decodes_string_arguments() {
    let client = client();
    let reply = client.request("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(reply.result()["messages"][0]["content"]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn template_variables_are_bound_by_name() {
    let client = client();
    let reply = client.request("resources/read", json!({"uri": "items://top/7"})).await;
    let contents = &reply.result()["contents"][0];
    assert_eq!(contents["text"], "top#7 at items://top/7");
    assert_eq!(contents["mimeType"], "text/plain");

    let reply = client.request("resources/read", json!({"uri": "items://top/seven"})).await;
    assert_eq!(reply.error_code(), Some(-32602), "`seven` is no u32");
}

#[tokio::test]
async fn completion_receives_the_request() {
    let client = client();
    let reply = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "al"}}),
        )
        .await;
    assert_eq!(reply.result()["completion"]["values"], json!(["alice", "albert"]));
}
