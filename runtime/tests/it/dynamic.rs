//! Run-time parity: everything a macro declares for a tool, prompt, resource template can be
//! given to the builder or added, replaced and removed while the server runs, checked by the
//! macro's rules, fitted to each session's revision, and announced with `list_changed`.

use serde_json::{Map, Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::server::{DynamicPrompt, DynamicResource, DynamicResourceTemplate, DynamicTool};
use switchyard::testing::TestClient;
use switchyard::{Annotations, BuildError, CompletionRef, ErrorCode, Icon, PromptArgument, ToolAnnotations};

fn meta(key: &str, value: Value) -> Map<String, Value> {
    Map::from_iter([(key.to_owned(), value)])
}

/// A tool with every key the macro can declare, and an output schema it keeps to.
fn lookup() -> DynamicTool {
    DynamicTool::new("lookup", |_ctx, args: Value| async move {
        let count = args["word"].as_str().map_or(0, str::len);
        CallToolResult::success(vec![Content::text(count.to_string())])
            .with_structured_content(json!({ "count": count }))
    })
    .title("Look up")
    .description("Counts a word's letters")
    .input_schema(json!({"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}))
    .output_schema(json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}))
    .annotations(ToolAnnotations::new().title("Lookup").read_only_hint(true).open_world_hint(false))
    .icon(Icon::new("https://example.com/lookup.png").sizes(["48x48"]))
    .meta(meta("com.example/rank", json!(2)))
}

fn greet() -> DynamicPrompt {
    DynamicPrompt::new("greet", |_ctx, args| async move {
        let name = args.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        PromptMessage::user_text(format!("Say hello to {name}"))
    })
    .title("Greeting")
    .description("Greets someone")
    .argument(PromptArgument::new("name", true).with_title("Name").with_description("Who to greet"))
    .icon(Icon::new("https://example.com/greet.png"))
    .meta(meta("com.example/kind", json!("greeting")))
}

fn day() -> DynamicResourceTemplate {
    DynamicResourceTemplate::new("notes://day/{day}", "day", |_ctx, req| async move {
        format!("notes of {}", req.variables["day"].as_str().unwrap_or_default())
    })
    .title("A day's notes")
    .description("The notes of one day")
    .mime_type("text/plain")
    .annotations(Annotations::new().priority(0.5).last_modified("2026-12-01T00:00:00Z"))
    .icon(Icon::new("https://example.com/day.png"))
    .meta(meta("com.example/shelf", json!("b")))
}

/// A server serving only what the builder was given: one prompt and one template from the
/// start (so a session is told the `prompts` and `resources` capabilities), the tool added later.
fn server() -> Server {
    let echo = DynamicPrompt::new("echo", |_ctx, _args| async { "echo".to_owned() }).description("Echoes");
    let week = DynamicResourceTemplate::new("notes://week/{week}", "week", |_ctx, req| async move { req.uri });
    Server::builder("dynamic", "1")
        .groups(["dynamic"])
        .tool(DynamicTool::new("ping-tool", |_ctx, _args| async { "pong" }).description("Pongs"))
        .prompt(echo)
        .resource_template(week)
        .build()
        .expect("builds")
}

/// A validator for `$defs/{name}` of the official 2026-07-28 schema.
fn assert_official(name: &str, value: &Value) {
    let mut doc: Value =
        serde_json::from_str(include_str!("schema/mcp-2026-07-28.schema.json")).expect("the schema parses");
    doc["$ref"] = json!(format!("#/$defs/{name}"));
    let validator = jsonschema::validator_for(&doc).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{name} does not match the official schema: {errors:#?}\n{value:#}");
}

fn find<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array().and_then(|items| items.iter().find(|i| i[key] == value)).unwrap_or(&Value::Null)
}

fn sorted_keys(item: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = item.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// Waits until `client` has received `n` notifications named `method`.
async fn await_notifications(client: &TestClient, method: &str, n: usize) {
    for _ in 0..300 {
        if client.notifications().iter().filter(|m| m["method"] == method).count() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("fewer than {n} {method} arrived: {:#?}", client.notifications());
}

#[tokio::test]
async fn a_run_time_tool_declares_what_a_macro_tool_can() {
    let server = server();
    let client = TestClient::modern(server.clone());
    server.add_tool(lookup()).expect("a valid tool");
    let listed = client.request("tools/list", json!({})).await;
    assert_official("ListToolsResult", listed.result());
    let tool = find(&listed.result()["tools"], "name", "lookup");
    assert_eq!(tool["title"], "Look up");
    assert_eq!(tool["annotations"], json!({"title": "Lookup", "readOnlyHint": true, "openWorldHint": false}));
    assert_eq!(tool["outputSchema"]["required"], json!(["count"]));
    assert_eq!(tool["icons"], json!([{"src": "https://example.com/lookup.png", "sizes": ["48x48"]}]));
    assert_eq!(tool["_meta"], json!({"com.example/rank": 2}));
    let called = client.call_tool("lookup", json!({"word": "abc"})).await;
    assert_official("CallToolResult", called.result());
    assert_eq!(called.result()["structuredContent"], json!({"count": 3}));
    let refused = client.call_tool("lookup", json!({"word": 7})).await;
    assert!(refused.error_code() == Some(-32602) || refused.result()["isError"] == true, "the input schema holds");

    // Adding under the same name replaces, keys and all.
    server.add_tool(DynamicTool::new("lookup", |_ctx, _args| async { "v2" }).description("Second")).expect("valid");
    let listed = client.request("tools/list", json!({})).await;
    let tool = find(&listed.result()["tools"], "name", "lookup");
    assert_eq!(sorted_keys(tool), ["description", "inputSchema", "name"], "{tool}");
    assert_eq!(client.call_tool("lookup", json!({})).await.result()["content"][0]["text"], "v2");
}

#[tokio::test]
async fn older_sessions_see_only_the_run_time_keys_their_schema_has() {
    let server = server();
    server.add_tool(lookup()).expect("a valid tool");
    server.add_prompt(greet()).expect("a valid prompt");
    server.add_resource_template(day()).expect("a valid template");
    for (version, tool, prompt, template) in [
        (
            "2025-11-25",
            vec!["_meta", "annotations", "description", "icons", "inputSchema", "name", "outputSchema", "title"],
            vec!["_meta", "arguments", "description", "icons", "name", "title"],
            vec!["_meta", "annotations", "description", "icons", "mimeType", "name", "title", "uriTemplate"],
        ),
        (
            "2025-06-18",
            vec!["_meta", "annotations", "description", "inputSchema", "name", "outputSchema", "title"],
            vec!["_meta", "arguments", "description", "name", "title"],
            vec!["_meta", "annotations", "description", "mimeType", "name", "title", "uriTemplate"],
        ),
        (
            "2025-03-26",
            vec!["annotations", "description", "inputSchema", "name"],
            vec!["arguments", "description", "name"],
            vec!["annotations", "description", "mimeType", "name", "uriTemplate"],
        ),
    ] {
        let client = TestClient::legacy(server.clone(), version).await.expect("initialize");
        let tools = client.request("tools/list", json!({})).await;
        assert_eq!(sorted_keys(find(&tools.result()["tools"], "name", "lookup")), tool, "{version}");
        let prompts = client.request("prompts/list", json!({})).await;
        let listed = find(&prompts.result()["prompts"], "name", "greet");
        assert_eq!(sorted_keys(listed), prompt, "{version}");
        assert_eq!(listed["arguments"][0].get("title").is_some(), version != "2025-03-26", "{version}");
        let templates = client.request("resources/templates/list", json!({})).await;
        let listed = find(&templates.result()["resourceTemplates"], "uriTemplate", "notes://day/{day}");
        assert_eq!(sorted_keys(listed), template, "{version}");
        assert_eq!(listed["annotations"].get("lastModified").is_some(), version != "2025-03-26", "{version}");
    }
}

fn refused(result: Result<(), McpError>) -> String {
    let err = result.expect_err("refused");
    assert_eq!(err.code(), switchyard::ErrorCode(-32602), "{}", err.message());
    err.message().to_owned()
}

#[test]
fn run_time_definitions_break_the_macro_rules_with_32602_naming_them() {
    let server = server();
    let tool = |name: &str| DynamicTool::new(name, |_ctx, _args| async { "x".to_owned() });
    let cases: Vec<(DynamicTool, &str)> = vec![
        (tool("iconic").icon(Icon::new("javascript:alert(1)")), "javascript:"),
        (tool("reserved").meta(meta("modelcontextprotocol.io/x", json!(1))), "reserves"),
        (tool("listy").output_schema(json!({"type": "array"})), "output schema"),
        (tool("tools/call"), "method of MCP itself"),
        (tool("two words"), "contains ' '"),
        (tool("torn").annotations(ToolAnnotations::new().read_only_hint(true).destructive_hint(true)), "read-only"),
        (tool("blank").title(" "), "`title` must not be empty"),
        (tool("flat").input_schema(json!({"type": "string"})), "input schema"),
    ];
    for (tool, says) in cases {
        let name = tool.name().to_owned();
        let message = refused(server.add_tool(tool));
        assert!(message.contains(&format!("{name:?}")) && message.contains(says), "{name}: {message}");
        assert!(server.table().tool(&name).is_none(), "{name} is not added");
    }

    let prompt = |name: &str| DynamicPrompt::new(name, |_ctx, _args| async { "x".to_owned() });
    let cases: Vec<(DynamicPrompt, &str)> = vec![
        (prompt("iconic").icon(Icon::new("javascript:alert(1)")), "javascript:"),
        (prompt("reserved").meta(meta("io.modelcontextprotocol/x", json!(1))), "reserves"),
        (prompt("twice").argument(PromptArgument::new("a", true)).argument(PromptArgument::new("a", false)), "twice"),
        (prompt(""), "`name` must not be empty"),
    ];
    for (prompt, says) in cases {
        let name = prompt.name().to_owned();
        let message = refused(server.add_prompt(prompt));
        assert!(message.contains(&format!("prompt {name:?}")) && message.contains(says), "{name}: {message}");
        assert!(server.table().prompt(&name).is_none(), "{name} is not added");
    }

    let template = |uri: &str| DynamicResourceTemplate::new(uri, "t", |_ctx, req| async move { req.uri });
    let cases: Vec<(DynamicResourceTemplate, &str)> = vec![
        (template("t://{a}/i").icon(Icon::new("javascript:alert(1)")), "javascript:"),
        (template("t://{a}/m").meta(meta("modelcontextprotocol.io/x", json!(1))), "reserves"),
        (template("t://{a,b}"), "URI template"),
        (template("t://fixed"), "no variable"),
        (template("t://{a}/mime").mime_type("plain"), "type/subtype"),
    ];
    for (template, says) in cases {
        let key = template.uri_template().to_owned();
        let message = refused(server.add_resource_template(template));
        assert!(message.contains(&format!("template {key:?}")) && message.contains(says), "{key}: {message}");
        assert!(server.table().template(&key).is_none(), "{key} is not added");
    }

    let err = Server::builder("m", "1")
        .groups(["none"])
        .tool(tool("bad").icon(Icon::new("javascript:alert(1)")))
        .prompt(prompt("p").meta(meta("dev.mcp/x", json!(1))))
        .resource_template(template("t://{"))
        .build()
        .expect_err("refused");
    let kinds: Vec<(&str, &str)> = err
        .problems()
        .iter()
        .filter_map(|p| match p {
            BuildError::Invalid { kind, name, .. } => Some((*kind, name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, [("tool", "bad"), ("prompt", "p"), ("resource", "t://{")], "{err}");
}

#[tokio::test]
async fn a_run_time_prompt_is_listed_got_and_removed_with_list_changed() {
    const CHANGED: &str = "notifications/prompts/list_changed";
    let server = server();
    let client = TestClient::legacy(server.clone(), "2025-11-25").await.expect("initialize");
    server.add_prompt(greet()).expect("a valid prompt");
    await_notifications(&client, CHANGED, 1).await;
    let listed = client.request("prompts/list", json!({})).await;
    let modern = TestClient::modern(server.clone()).request("prompts/list", json!({})).await;
    assert_official("ListPromptsResult", modern.result());
    let prompt = find(&listed.result()["prompts"], "name", "greet");
    assert_eq!(prompt["title"], "Greeting");
    assert_eq!(
        prompt["arguments"],
        json!([{"name": "name", "title": "Name", "description": "Who to greet", "required": true}])
    );
    assert_eq!(prompt["_meta"], json!({"com.example/kind": "greeting"}));
    let got = client.request("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(got.result()["messages"][0]["content"]["text"], "Say hello to Ada");
    let missing = client.request("prompts/get", json!({"name": "greet", "arguments": {}})).await;
    assert_eq!(missing.error_code(), Some(-32602), "a required argument is checked");

    assert!(server.remove_prompt("greet"));
    await_notifications(&client, CHANGED, 2).await;
    let gone = client.request("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(gone.error_code(), Some(-32602));
    assert!(gone.error()["message"].as_str().unwrap_or_default().contains("unknown prompt"), "{}", gone.error());
    assert!(!server.remove_prompt("greet"), "nothing left to remove");
    // A prompt the builder was given is removed the same way.
    assert!(server.remove_prompt("echo"));
    await_notifications(&client, CHANGED, 3).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let count = client.notifications().iter().filter(|m| m["method"] == CHANGED).count();
    assert_eq!(count, 3, "a removal that removed nothing announced nothing");
}

#[tokio::test]
async fn a_run_time_template_is_read_through_a_matching_uri_and_removed() {
    const CHANGED: &str = "notifications/resources/list_changed";
    let server = server();
    let client = TestClient::legacy(server.clone(), "2025-11-25").await.expect("initialize");
    server.add_resource_template(day()).expect("a valid template");
    await_notifications(&client, CHANGED, 1).await;
    let listed = client.request("resources/templates/list", json!({})).await;
    let modern = TestClient::modern(server.clone()).request("resources/templates/list", json!({})).await;
    assert_official("ListResourceTemplatesResult", modern.result());
    let template = find(&listed.result()["resourceTemplates"], "uriTemplate", "notes://day/{day}");
    assert_eq!(
        (template["title"].clone(), template["mimeType"].clone()),
        (json!("A day's notes"), json!("text/plain"))
    );
    let read = client.request("resources/read", json!({"uri": "notes://day/monday"})).await;
    assert_eq!(
        read.result()["contents"][0],
        json!({"uri": "notes://day/monday", "mimeType": "text/plain", "text": "notes of monday"})
    );
    let week = client.request("resources/read", json!({"uri": "notes://week/7"})).await;
    assert_eq!(week.result()["contents"][0]["text"], "notes://week/7", "the builder's template serves");

    assert!(server.remove_resource_template("notes://day/{day}"));
    await_notifications(&client, CHANGED, 2).await;
    let gone = client.request("resources/read", json!({"uri": "notes://day/monday"})).await;
    assert_eq!(gone.error_code(), Some(-32602));
    assert!(!server.remove_resource_template("notes://day/{day}"));
    let listed = client.request("resources/templates/list", json!({})).await;
    assert_eq!(listed.result()["resourceTemplates"].as_array().map(Vec::len), Some(1), "{}", listed.result());
}

#[test]
fn listed_annotations_and_uris_are_checked_when_added() {
    let server = server();
    let template = |uri: &str| DynamicResourceTemplate::new(uri, "t", |_ctx, req| async move { req.uri });
    let mut nan = Annotations::new();
    nan.priority = Some(f64::NAN);
    let mut high = Annotations::new();
    high.priority = Some(2.0);
    let cases: Vec<(DynamicResourceTemplate, &str)> = vec![
        (template("t://{a}/nan").annotations(nan.clone()), "priority"),
        (template("t://{a}/high").annotations(high), "priority"),
        (template("t://{a}/when").annotations(Annotations::new().last_modified("yesterday")), "lastModified"),
    ];
    for (template, says) in cases {
        let key = template.uri_template().to_owned();
        let message = refused(server.add_resource_template(template));
        assert!(message.contains(&format!("template {key:?}")) && message.contains(says), "{key}: {message}");
        assert!(server.table().template(&key).is_none(), "{key} is not added");
    }
    let read = |_ctx, req: ResourceRequest| async move {
        Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, None, "x")]))
    };
    let err = server.add_resources([DynamicResource::new("r://nan", "r", read).annotations(nan)]).expect_err("refused");
    assert!(err.message().contains("r://nan") && err.message().contains("priority"), "{}", err.message());
    let err = server.add_resources([DynamicResource::new(" ", "r", read)]).expect_err("refused");
    assert!(err.message().contains("`uri` must not be empty"), "{}", err.message());
    assert!(server.table().resource(" ").is_none());

    // `com.example.mcp/` is no reserved prefix (its second label is `example`).
    let tool = DynamicTool::new("mine", |_ctx, _args| async { "x" }).meta(meta("com.example.mcp/rank", json!(1)));
    server.add_tool(tool).expect("not reserved");
}

#[tokio::test]
async fn a_resource_link_keeps_its_icons_from_sessions_whose_schema_has_none() {
    let server = server();
    server
        .add_tool(DynamicTool::new("link", |_ctx, _args| async {
            let extra = Map::from_iter([
                ("title".to_owned(), json!("Today")),
                ("icons".to_owned(), json!([{"src": "https://example.com/n.png"}])),
            ]);
            CallToolResult::success(vec![Content::resource_link("notes://today", "today", extra)])
        }))
        .expect("valid");
    for (version, keys) in [
        ("2025-11-25", vec!["icons", "name", "title", "type", "uri"]),
        ("2025-06-18", vec!["name", "title", "type", "uri"]),
        ("2025-03-26", vec!["text", "type"]),
    ] {
        let client = TestClient::legacy(server.clone(), version).await.expect("initialize");
        let called = client.call_tool("link", json!({})).await;
        assert_eq!(sorted_keys(&called.result()["content"][0]), keys, "{version}");
    }
    // 2025-03-26 has no `resource_link` content: the link is read as text.
    let oldest = TestClient::legacy(server.clone(), "2025-03-26").await.expect("initialize");
    let called = oldest.call_tool("link", json!({})).await;
    assert_eq!(called.result()["content"][0], json!({"type": "text", "text": "Today: notes://today"}));
}

#[tokio::test]
async fn concurrent_changes_while_listing_neither_panic_nor_lose_the_last_state() {
    const CHANGED: &str = "notifications/tools/list_changed";
    let server = server();
    let client = TestClient::modern(server.clone());
    let session = TestClient::legacy(server.clone(), "2025-11-25").await.expect("initialize");
    let mut tasks = Vec::new();
    for i in 0..16 {
        let server = server.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..20 {
                let name = format!("t{i}");
                server.add_tool(DynamicTool::new(name.clone(), |_ctx, _args| async { "x" })).expect("valid");
                if round % 2 == 1 {
                    assert!(server.remove_tool(&name), "{name} was just added");
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    for _ in 0..20 {
        let listed = client.request("tools/list", json!({})).await;
        assert!(listed.result()["tools"].is_array());
    }
    for task in tasks {
        task.await.expect("no panic");
    }
    let listed = client.request("tools/list", json!({})).await;
    let names: Vec<&str> =
        listed.result()["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names.len(), 1, "every t{{i}} ends removed: {names:?}");
    // Every add and every removal is announced: 16 tasks × (20 adds + 10 removals).
    await_notifications(&session, CHANGED, 480).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(session.notifications().iter().filter(|m| m["method"] == CHANGED).count(), 480);
}

/// `completion/complete` params for `reference`, `argument` = `value`.
fn complete(reference: Value, argument: &str, value: &str) -> Value {
    json!({ "ref": reference, "argument": { "name": argument, "value": value } })
}

fn prompt_ref(name: &str) -> Value {
    json!({ "type": "ref/prompt", "name": name })
}

fn template_ref(uri: &str) -> Value {
    json!({ "type": "ref/resource", "uri": uri })
}

#[tokio::test]
async fn run_time_prompts_and_templates_complete_through_their_own_handlers() {
    let server = server();
    let client = TestClient::modern(server.clone());
    let caps = client.request("server/discover", json!({})).await;
    assert!(caps.result()["capabilities"].get("completions").is_none(), "nothing completes yet: {}", caps.result());

    let names = greet().complete(|_ctx, req| async move {
        // The reference and context as the client sent them, so the test can see both.
        let seen = req.context.as_ref().and_then(|c| c["arguments"]["tone"].as_str()).unwrap_or("none").to_owned();
        let CompletionRef::Prompt { name } = req.reference else {
            return Err(McpError::invalid_params("a prompt handler was given a template reference"));
        };
        let mut values: Vec<String> = ["ada", "alan", "grace"]
            .iter()
            .filter(|n| n.starts_with(&req.argument.value))
            .map(|n| n.to_string())
            .collect();
        values.push(format!("{name}/{}/{seen}", req.argument.name));
        Ok(values)
    });
    server.add_prompt(names).expect("a valid prompt");
    let days = day().complete(|_ctx, req| async move {
        let CompletionRef::Resource { uri } = req.reference else {
            return Completion::new(vec!["wrong reference".to_owned()]);
        };
        Completion::new(vec![format!("{}day", req.argument.value), uri]).with_total(7).with_has_more(true)
    });
    server.add_resource_template(days).expect("a valid template");

    // Added after the server was built, the handlers are declared to the next client.
    let caps = client.request("server/discover", json!({})).await;
    assert_eq!(caps.result()["capabilities"]["completions"], json!({}), "{}", caps.result());

    let mut params = complete(prompt_ref("greet"), "name", "a");
    params["context"] = json!({ "arguments": { "tone": "warm" } });
    let r = client.request("completion/complete", params).await;
    assert_eq!(
        r.result()["completion"],
        json!({ "values": ["ada", "alan", "greet/name/warm"], "total": 3, "hasMore": false }),
        "{:?}",
        r.response
    );
    let r = client.request("completion/complete", complete(template_ref("notes://day/{day}"), "day", "mon")).await;
    assert_eq!(
        r.result()["completion"],
        json!({ "values": ["monday", "notes://day/{day}"], "total": 7, "hasMore": true }),
        "{:?}",
        r.response
    );

    // A prompt and a template without a handler still answer the empty list.
    let r = client.request("completion/complete", complete(prompt_ref("echo"), "x", "")).await;
    assert_eq!(r.result()["completion"], json!({ "values": [], "total": 0, "hasMore": false }));
    let r = client.request("completion/complete", complete(template_ref("notes://week/{week}"), "week", "")).await;
    assert_eq!(r.result()["completion"], json!({ "values": [], "total": 0, "hasMore": false }));

    // Unknown references are -32602, whatever run-time handlers exist.
    let r = client.request("completion/complete", complete(prompt_ref("nobody"), "name", "a")).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
    let r = client.request("completion/complete", complete(template_ref("notes://day/{other}"), "day", "")).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);

    // Removing both: the references are unknown again, and the capability already told stays.
    assert!(server.remove_prompt("greet"));
    assert!(server.remove_resource_template("notes://day/{day}"));
    let r = client.request("completion/complete", complete(prompt_ref("greet"), "name", "a")).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
    let r = client.request("completion/complete", complete(template_ref("notes://day/{day}"), "day", "")).await;
    assert_eq!(r.error_code(), Some(-32602), "{:?}", r.response);
    let caps = client.request("server/discover", json!({})).await;
    assert_eq!(caps.result()["capabilities"]["completions"], json!({}), "{}", caps.result());
}

/// Runs of the `secret` prompt's completion handler.
static SECRET_COMPLETED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[tokio::test]
async fn a_run_time_completion_is_cut_to_100_values_authorized_and_its_errors_are_answered() {
    let many = DynamicPrompt::new("many", |_ctx, _args| async { "many".to_owned() })
        .argument(PromptArgument::new("n", false))
        .complete(|_ctx, req| async move {
            if req.argument.value == "fail" {
                return Err(McpError::new(ErrorCode(-32001), "no completions today"));
            }
            Ok(Completion::new((0..250).map(|i| i.to_string()).collect()))
        });
    let wide = DynamicResourceTemplate::new("wide://{a}/{b}", "wide", |_ctx, req| async move { req.uri })
        .complete(|_ctx, _req| async move { (0..150).map(|i| format!("v{i}")).collect::<Vec<String>>() });
    // Only callers holding `admin` may complete it: the handler must never run for this client.
    let secret = DynamicPrompt::new("secret", |_ctx, _args| async { "secret".to_owned() }).roles(&["admin"]).complete(
        |_ctx, _req| async move {
            SECRET_COMPLETED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            vec!["leaked".to_owned()]
        },
    );
    let server =
        Server::builder("dynamic", "1").groups(["dynamic"]).prompt(many).prompt(secret).resource_template(wide).build();
    let server = server.expect("builds");
    // Given to the builder, the handlers are declared to a session from its `initialize`.
    let legacy = TestClient::legacy(server.clone(), "2025-11-25").await.expect("initialize");
    let client = TestClient::modern(server);

    let r = client.request("completion/complete", complete(prompt_ref("many"), "n", "")).await;
    let completion = &r.result()["completion"];
    let expected: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    assert_eq!(completion["values"], json!(expected), "{:?}", r.response);
    assert_eq!((completion["total"].clone(), completion["hasMore"].clone()), (json!(250), json!(true)));
    let r = legacy.request("completion/complete", complete(template_ref("wide://{a}/{b}"), "b", "")).await;
    let completion = &r.result()["completion"];
    assert_eq!(completion["values"].as_array().map(Vec::len), Some(100), "{:?}", r.response);
    assert_eq!(completion["values"][99], "v99");
    assert_eq!((completion["total"].clone(), completion["hasMore"].clone()), (json!(150), json!(true)));

    let r = client.request("completion/complete", complete(prompt_ref("secret"), "n", "")).await;
    assert_eq!(r.error_code(), Some(-32600), "{:?}", r.response);
    assert_eq!(r.error()["data"]["reason"], "forbidden");
    assert_eq!(SECRET_COMPLETED.load(std::sync::atomic::Ordering::SeqCst), 0, "the handler ran for a forbidden caller");

    let r = client.request("completion/complete", complete(prompt_ref("many"), "n", "fail")).await;
    assert_eq!(r.error_code(), Some(-32001), "{:?}", r.response);
    assert_eq!(r.error()["message"], "no completions today");
}
