//! The runtime driven in-process: registration by the macros, the dispatch table, both eras
//! through the in-process test client, run-time tool changes and start-up errors.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use switchyard::{BuildError, CompletionRequest};

/// Arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
    /// Optional punctuation.
    punctuation: Option<String>,
}

/// Greets someone.
#[mcp_tool(group = "main")]
async fn greet(args: GreetArgs) -> Result<String, ToolError> {
    Ok(format!("Hello, {}{}", args.name, args.punctuation.as_deref().unwrap_or("!")))
}

/// Fails as a tool.
#[mcp_tool(group = "main")]
async fn tool_fails() -> Result<String, ToolError> {
    Err(ToolError::new("it broke"))
}

/// Fails as a protocol error.
#[mcp_tool(group = "main")]
async fn protocol_fails() -> Result<String, McpError> {
    Err(McpError::internal("deliberate"))
}

/// Returns `size` bytes of text.
#[derive(Deserialize, JsonSchema)]
struct SizeArgs {
    /// Number of bytes.
    size: usize,
}

/// Returns a long text.
#[mcp_tool(group = "main")]
async fn big(args: SizeArgs) -> Result<String, ToolError> {
    Ok("x".repeat(args.size))
}

/// Reads shared state.
#[mcp_tool(group = "main")]
async fn counter(state: State<std::sync::atomic::AtomicU64>) -> Result<String, ToolError> {
    let n = state.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok(n.to_string())
}

/// Prompt arguments.
#[derive(Deserialize, JsonSchema)]
struct TopicArgs {
    /// The topic.
    topic: String,
    /// The tone.
    tone: Option<String>,
}

/// Writes about a topic.
#[mcp_prompt(group = "main")]
async fn essay(args: TopicArgs) -> Result<String, McpError> {
    Ok(format!("Write about {} ({})", args.topic, args.tone.as_deref().unwrap_or("neutral")))
}

/// Completes topics.
#[mcp_completion(prompt = "essay", argument = "topic", group = "main")]
async fn complete_topic(req: CompletionRequest) -> Result<Vec<String>, McpError> {
    Ok(["rust", "ruby", "racket"]
        .iter()
        .filter(|t| t.starts_with(&req.argument.value))
        .map(|s| s.to_string())
        .collect())
}

/// An item by id.
#[mcp_resource(uri = "items://{id}/detail", name = "item", mime_type = "text/plain", group = "main")]
async fn item(id: u32) -> Result<String, McpError> {
    Ok(format!("item {id}"))
}

/// Another group: the same tool name as in `main`.
#[mcp_tool(name = "greet", group = "other")]
async fn greet_other() -> Result<String, ToolError> {
    Ok("hi from other".to_owned())
}

fn main_server() -> Server {
    Server::builder("test", "1.0.0")
        .groups(["main"])
        .state(std::sync::atomic::AtomicU64::new(0))
        .build()
        .expect("the main group builds")
}

#[tokio::test]
async fn tools_list_is_sorted_with_generated_schemas() {
    let client = TestClient::modern(main_server());
    let r = client.request("tools/list", json!({})).await;
    let tools = r.result()["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["big", "counter", "greet", "protocol_fails", "tool_fails"]);
    let greet = &tools[2];
    assert_eq!(greet["description"], "Greets someone.");
    let schema = &greet["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["name"]), "Option fields are not required: {schema}");
    assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
}

#[tokio::test]
async fn tool_errors_and_protocol_errors_differ() {
    let client = TestClient::modern(main_server());
    let r = client.call_tool("tool_fails", json!({})).await;
    assert_eq!(r.result()["isError"], true);
    assert_eq!(r.result()["content"][0]["text"], "it broke");
    let r = client.call_tool("protocol_fails", json!({})).await;
    assert_eq!(r.error_code(), Some(-32603));
    // Arguments the tool rejects are a tool execution error the model can correct.
    let r = client.call_tool("greet", json!({ "name": 5 })).await;
    assert_eq!(r.result()["isError"], true);
    assert_eq!(
        r.result()["content"][0]["text"],
        "Invalid arguments for tool `greet`: `name`: invalid type: integer `5`, expected a string"
    );
    let r = client.call_tool("greet", json!({ "name": "Ada" })).await;
    assert_eq!(r.result()["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn state_is_shared_between_requests() {
    let client = TestClient::modern(main_server());
    client.call_tool("counter", json!({})).await;
    let r = client.call_tool("counter", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "1");
}

#[tokio::test]
async fn prompts_check_required_arguments_and_complete() {
    let client = TestClient::modern(main_server());
    let r = client.request("prompts/list", json!({})).await;
    assert_eq!(
        r.result()["prompts"][0]["arguments"],
        json!([{ "name": "topic", "description": "The topic.", "required": true },
               { "name": "tone", "description": "The tone.", "required": false }])
    );
    let r = client.request("prompts/get", json!({ "name": "essay", "arguments": {} })).await;
    assert_eq!(r.error_code(), Some(-32602));
    let r = client.request("prompts/get", json!({ "name": "essay", "arguments": { "topic": "owls" } })).await;
    assert_eq!(r.result()["messages"][0]["content"]["text"], "Write about owls (neutral)");
    let r = client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "essay" }, "argument": { "name": "topic", "value": "r" } }),
        )
        .await;
    assert_eq!(r.result()["completion"]["values"], json!(["rust", "ruby", "racket"]));
}

#[tokio::test]
async fn templates_bind_typed_variables() {
    let client = TestClient::modern(main_server());
    let r = client.request("resources/read", json!({ "uri": "items://7/detail" })).await;
    assert_eq!(r.result()["contents"][0]["text"], "item 7");
    assert_eq!(r.result()["cacheScope"], "private");
    let r = client.request("resources/read", json!({ "uri": "items://seven/detail" })).await;
    assert_eq!(r.error_code(), Some(-32602));
    let r = client.request("resources/templates/list", json!({})).await;
    assert_eq!(r.result()["resourceTemplates"][0]["uriTemplate"], "items://{id}/detail");
}

#[tokio::test]
async fn groups_select_registrations_and_collisions_fail_the_build() {
    let other = Server::builder("o", "1").groups(["other"]).build().expect("other builds");
    let r = TestClient::modern(other).call_tool("greet", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "hi from other");
    let err = Server::builder("both", "1")
        .groups(["main", "other"])
        .state(std::sync::atomic::AtomicU64::new(0))
        .build()
        .expect_err("greet twice");
    match &err {
        BuildError::Duplicate { kind, name, first, second } => {
            assert_eq!((*kind, name.as_str()), ("tool", "greet"));
            assert!(first.contains("server.rs") && second.contains("server.rs"), "{err}");
            assert_ne!(first, second);
        }
        other => panic!("expected a duplicate error, got {other}"),
    }
}

#[tokio::test]
async fn tools_change_at_run_time() {
    let server = main_server();
    let client = TestClient::modern(server.clone());
    server
        .add_tool(
            switchyard::server::DynamicTool::new("shout", |_ctx, args: Value| async move {
                Ok::<_, ToolError>(args["text"].as_str().unwrap_or_default().to_uppercase())
            })
            .description("Upper-cases text"),
        )
        .expect("valid tool");
    let r = client.call_tool("shout", json!({ "text": "hey" })).await;
    assert_eq!(r.result()["content"][0]["text"], "HEY");
    assert!(server.set_tool_enabled("greet", false));
    let r = client.call_tool("greet", json!({ "name": "x" })).await;
    assert_eq!(r.error_code(), Some(-32602));
    let r = client.request("tools/list", json!({})).await;
    assert!(!r.result()["tools"].as_array().expect("tools").iter().any(|t| t["name"] == "greet"));
    assert!(server.set_tool_enabled("greet", true));
    assert!(server.remove_tool("shout"));
    assert!(!server.remove_tool("shout"));
    assert!(server.add_tool(switchyard::server::DynamicTool::new("bad name", |_c, _a| async { "x" })).is_err());
}

fn note(uri: &str, text: &'static str) -> switchyard::server::DynamicResource {
    switchyard::server::DynamicResource::new(uri, "note", move |_ctx, req| async move {
        Ok(switchyard::ReadResourceResult::new(vec![switchyard::ResourceContents::text(
            req.uri,
            Some("text/plain"),
            text,
        )]))
    })
    .mime_type("text/plain")
}

#[tokio::test]
async fn resources_change_at_run_time() {
    let server = Server::builder("test", "1.0.0")
        .groups(["main"])
        .state(std::sync::atomic::AtomicU64::new(0))
        .resource(note("notes://a", "first"))
        .build()
        .expect("builds");
    let client = TestClient::modern(server.clone());
    let r = client.request("resources/read", json!({ "uri": "notes://a" })).await;
    assert_eq!(r.result()["contents"][0]["text"], "first");
    // A new resource changes the listing; a new reader behind the same listed object does not.
    assert_eq!(server.add_resources([note("notes://b", "second")]), Ok(true));
    assert_eq!(server.add_resources([note("notes://a", "first, again")]), Ok(false));
    let r = client.request("resources/read", json!({ "uri": "notes://a" })).await;
    assert_eq!(r.result()["contents"][0]["text"], "first, again", "the reader was replaced");
    assert_eq!(server.add_resources([note("notes://a", "x").description("now described")]), Ok(true));
    let r = client.request("resources/list", json!({})).await;
    let listed: Vec<&Value> = r.result()["resources"].as_array().expect("resources").iter().collect();
    let a = listed.iter().find(|r| r["uri"] == "notes://a").expect("listed");
    assert_eq!((a["name"].as_str(), a["description"].as_str()), (Some("note"), Some("now described")));
    assert!(listed.iter().any(|r| r["uri"] == "notes://b"));
    assert_eq!(server.remove_resources(["notes://b", "notes://none"]), 1);
    assert_eq!(server.remove_resources(["notes://b"]), 0);
    let r = client.request("resources/read", json!({ "uri": "notes://b" })).await;
    assert_eq!(r.error_code(), Some(-32602));
}

#[tokio::test]
async fn legacy_sessions_work_in_process() {
    let client = TestClient::legacy(main_server(), "2025-11-25").await.expect("initialize");
    let r = client.raw_request("ping", json!({})).await;
    assert_eq!(r.result(), &json!({}));
    let r = client.raw_request("tools/call", json!({ "name": "greet", "arguments": { "name": "Bo" } })).await;
    assert_eq!(r.result()["content"][0]["text"], "Hello, Bo!");
    assert!(r.result().get("resultType").is_none());
    let r = client.raw_request("initialize", json!({ "protocolVersion": "2025-11-25", "capabilities": {} })).await;
    assert_eq!(r.error_code(), Some(-32600));
}

#[tokio::test]
async fn two_hundred_concurrent_large_responses_arrive_as_whole_lines() {
    let client = std::sync::Arc::new(TestClient::modern(main_server()));
    let mut tasks = Vec::new();
    for i in 0..200usize {
        let c = client.clone();
        tasks.push(tokio::spawn(async move {
            let size = 65 * 1024 + i;
            let r = c.call_tool("big", json!({ "size": size })).await;
            let text = r.result()["content"][0]["text"].as_str().map(str::len);
            assert_eq!(text, Some(size));
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
}

#[tokio::test]
async fn pagination_uses_opaque_cursors() {
    let server = Server::builder("p", "1")
        .groups(["main"])
        .state(std::sync::atomic::AtomicU64::new(0))
        .page_size(2)
        .build()
        .expect("builds");
    let client = TestClient::modern(server);
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let r = client.request("tools/list", params).await;
        names.extend(r.result()["tools"].as_array().expect("tools").iter().map(|t| t["name"].clone()));
        match r.result().get("nextCursor") {
            Some(c) => cursor = Some(c.clone()),
            None => break,
        }
    }
    assert_eq!(names.len(), 5);
    let r = client.request("tools/list", json!({ "cursor": "garbage" })).await;
    assert_eq!(r.error_code(), Some(-32602));
}

/// A database handle only the `needs_state` group's handlers take.
struct Db;

/// Looks something up.
#[mcp_tool(group = "needs_state")]
async fn lookup(_db: State<Db>) -> Result<String, ToolError> {
    Ok("found".to_owned())
}

/// Counts rows.
#[mcp_rpc("acme/row_count", group = "needs_state")]
async fn row_count(_db: State<Db>, _ctx: RequestContext) -> Result<Value, McpError> {
    Ok(json!({ "rows": 0 }))
}

/// A handler taking `State<T>` that the builder never got fails `build()`, naming the handler,
/// where it is and the type, instead of answering `-32603` at its first call; every such
/// handler is reported at once.
#[tokio::test]
async fn state_that_was_never_provided_fails_the_build_with_every_problem() {
    let err = Server::builder("s", "1").groups(["needs_state"]).build().expect_err("no Db");
    let problems = err.problems();
    assert_eq!(problems.len(), 2, "{err}");
    let text = err.to_string();
    assert!(text.starts_with("2 problems:"), "{text}");
    // The full type name: its module path depends on the test binary's layout.
    let needs = format!("State<{}>", std::any::type_name::<Db>());
    for (kind, name) in [("tool", "lookup"), ("method", "acme/row_count")] {
        let found = problems.iter().any(|p| match p {
            BuildError::Invalid { kind: k, name: n, site, reason } => {
                *k == kind && n == name && site.contains("server.rs") && reason.contains(&needs)
            }
            _ => false,
        });
        assert!(found, "{kind} {name} in {text}");
    }
    let server = Server::builder("s", "1").groups(["needs_state"]).state(Db).build().expect("Db provided");
    let r = TestClient::modern(server).call_tool("lookup", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "found");
}

/// Previous requestState keys are checked like the current one, and need one to seal with.
#[tokio::test]
async fn previous_request_state_keys_are_checked_at_build() {
    let err = Server::builder("s", "1")
        .groups(["none"])
        .request_state_key([1u8; 32])
        .request_state_previous_key([2u8; 8])
        .build()
        .expect_err("a short previous key");
    assert!(err.to_string().contains("the previous requestState key has 8 bytes"), "{err}");
    assert!(err.to_string().contains("server.rs"), "names where: {err}");
    let err = Server::builder("s", "1").groups(["none"]).request_state_previous_key([2u8; 32]).build().expect_err("");
    assert!(err.to_string().contains("needs a current one"), "{err}");
    Server::builder("s", "1")
        .groups(["none"])
        .request_state_key([1u8; 32])
        .request_state_previous_key([2u8; 32])
        .build()
        .expect("a rotation");
}
