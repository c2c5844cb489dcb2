//! Composition: a registration group mounted under a prefix (names, URIs, completions and
//! resource updates rewritten, handlers seeing their own), collisions caught at `build()`, and
//! tool transforms (rename, hide, describe, pin and rename arguments) on macro, mounted and
//! run-time tools, including one added after the server started.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::server::DynamicTool;
use switchyard::testing::TestClient;
use switchyard::{
    BuildError, CallToolResult, CompletionRef, CompletionRequest, Content, Mount, PromptMessage, ReadResourceResult,
    ResourceContents, ToolTransform,
};

// The "billing" crate: declared without knowing it will be mounted.

/// Charge arguments.
#[derive(Deserialize, JsonSchema)]
struct ChargeArgs {
    /// Amount in cents.
    cents: u64,
}

/// Charges an amount.
#[mcp_tool(group = "mount_billing")]
async fn charge(args: ChargeArgs, ctx: RequestContext) -> Result<String, ToolError> {
    Ok(format!("charged {} (matched {})", args.cents, ctx.matched_primitive().unwrap_or_default()))
}

/// Summary arguments.
#[derive(Deserialize, JsonSchema)]
struct SummaryArgs {
    /// The period.
    period: String,
}

/// Summarises a period.
#[mcp_prompt(group = "mount_billing")]
async fn summary(args: SummaryArgs) -> Result<String, McpError> {
    Ok(format!("Summarise {}", args.period))
}

/// Completes periods, answering the reference it was shown.
#[mcp_completion(prompt = "summary", argument = "period", group = "mount_billing")]
async fn complete_period(req: CompletionRequest) -> Result<Vec<String>, McpError> {
    let CompletionRef::Prompt { name } = req.reference else { return Ok(vec!["not a prompt".to_owned()]) };
    Ok(vec![format!("{name}:{}", req.argument.value)])
}

/// The latest invoice.
#[mcp_resource(uri = "invoice://latest", mime_type = "text/plain", group = "mount_billing")]
async fn latest(req: ResourceRequest) -> Result<String, McpError> {
    Ok(format!("latest, read as {}", req.uri))
}

/// An invoice by id.
#[mcp_resource(uri = "invoice://{id}", mime_type = "text/plain", group = "mount_billing")]
async fn invoice(id: String, req: ResourceRequest) -> Result<String, McpError> {
    Ok(format!("invoice {id}, read as {}", req.uri))
}

/// Completes invoice ids, answering the template it was shown.
#[mcp_completion(resource = "invoice://{id}", group = "mount_billing")]
async fn complete_id(req: CompletionRequest) -> Result<Vec<String>, McpError> {
    let CompletionRef::Resource { uri } = req.reference else { return Ok(vec!["not a template".to_owned()]) };
    Ok(vec![format!("{uri}:{}", req.argument.value)])
}

// The "archive" crate: results that link to its own resources, and elsewhere.

/// Links to archived documents.
#[mcp_tool(group = "mount_links")]
async fn find_documents() -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![
        Content::resource_link("doc://7", "document 7", Default::default()),
        Content::resource_link("doc://index", "the index", Default::default()),
        Content::resource_link("https://example.com/doc/7", "the public copy", Default::default()),
        Content::resource_link("other://7", "not the archive's", Default::default()),
        Content::resource(ResourceContents::text("doc://8", Some("text/plain"), "document 8")),
    ]))
}

/// A prompt about one document, with a link to it.
#[mcp_prompt(group = "mount_links")]
async fn about_document() -> Result<Vec<PromptMessage>, McpError> {
    Ok(vec![
        PromptMessage::user_text("Summarise this document."),
        PromptMessage::user(Content::resource_link("doc://7", "document 7", Default::default())),
    ])
}

/// The index, whose contents include a document the template serves.
#[mcp_resource(uri = "doc://index", mime_type = "text/plain", group = "mount_links")]
async fn document_index() -> Result<ReadResourceResult, McpError> {
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text("doc://index", Some("text/plain"), "2 documents"),
        ResourceContents::text("doc://7", Some("text/plain"), "document 7"),
    ]))
}

/// A document by id.
#[mcp_resource(uri = "doc://{id}", mime_type = "text/plain", group = "mount_links")]
async fn document(id: String) -> Result<String, McpError> {
    Ok(format!("document {id}"))
}

// The application's own group: the same names and URIs as billing's, unmounted.

/// The application's own charge.
#[mcp_tool(name = "charge", group = "mount_main")]
async fn own_charge() -> Result<String, ToolError> {
    Ok("own charge".to_owned())
}

/// The application's own latest invoice.
#[mcp_resource(uri = "invoice://latest", mime_type = "text/plain", group = "mount_main")]
async fn own_latest() -> Result<String, McpError> {
    Ok("own latest".to_owned())
}

/// Forecast arguments.
#[derive(Deserialize, JsonSchema)]
struct ForecastArgs {
    /// The city.
    q: String,
    /// `metric` or `imperial`.
    units: String,
    /// Days ahead.
    days: Option<u32>,
}

/// Forecasts the weather.
#[mcp_tool(group = "mount_main")]
async fn forecast(args: ForecastArgs) -> Result<String, ToolError> {
    Ok(format!("{} in {} for {} days", args.q, args.units, args.days.unwrap_or(1)))
}

/// An internal tool nobody should see.
#[mcp_tool(group = "mount_main")]
async fn debug_dump() -> Result<String, ToolError> {
    Ok("dump".to_owned())
}

/// A group whose tool already has the public name of billing's `charge`.
#[mcp_tool(name = "billing_charge", group = "mount_clash")]
async fn clashing_charge() -> Result<String, ToolError> {
    Ok("clash".to_owned())
}

fn mounted() -> Server {
    Server::builder("composition", "1")
        .groups(["mount_billing", "mount_main"])
        .mount("mount_billing", Mount::prefix("billing"))
        .build()
        .expect("builds")
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    let mut all: Vec<String> = list[key]
        .as_array()
        .map(|items| items.iter().filter_map(|i| i[field].as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    all.sort();
    all
}

#[tokio::test]
async fn a_mounted_group_is_listed_called_and_read_under_its_prefix() {
    let client = TestClient::modern(mounted());
    let tools = client.request("tools/list", json!({})).await;
    assert_eq!(names(tools.result(), "tools", "name"), ["billing_charge", "charge", "debug_dump", "forecast"]);
    let prompts = client.request("prompts/list", json!({})).await;
    assert_eq!(names(prompts.result(), "prompts", "name"), ["billing_summary"]);
    let resources = client.request("resources/list", json!({})).await;
    assert_eq!(names(resources.result(), "resources", "uri"), ["billing+invoice://latest", "invoice://latest"]);
    let templates = client.request("resources/templates/list", json!({})).await;
    assert_eq!(names(templates.result(), "resourceTemplates", "uriTemplate"), ["billing+invoice://{id}"]);

    let called = client.call_tool("billing_charge", json!({"cents": 5})).await;
    assert_eq!(called.result()["content"][0]["text"], "charged 5 (matched billing_charge)");
    let own = client.call_tool("charge", json!({})).await;
    assert_eq!(own.result()["content"][0]["text"], "own charge");
    let prompt =
        client.request("prompts/get", json!({"name": "billing_summary", "arguments": {"period": "May"}})).await;
    assert_eq!(prompt.result()["messages"][0]["content"]["text"], "Summarise May");
    assert_eq!(client.request("prompts/get", json!({"name": "summary"})).await.error_code(), Some(-32602));

    // The handler reads its own URI; the contents carry the public one.
    let read = client.request("resources/read", json!({"uri": "billing+invoice://latest"})).await;
    assert_eq!(read.result()["contents"][0]["uri"], "billing+invoice://latest");
    assert_eq!(read.result()["contents"][0]["text"], "latest, read as invoice://latest");
    let read = client.request("resources/read", json!({"uri": "invoice://latest"})).await;
    assert_eq!(read.result()["contents"][0]["text"], "own latest");
    let read = client.request("resources/read", json!({"uri": "billing+invoice://7"})).await;
    assert_eq!(read.result()["contents"][0]["uri"], "billing+invoice://7");
    assert_eq!(read.result()["contents"][0]["text"], "invoice 7, read as invoice://7");
    let unserved = client.request("resources/read", json!({"uri": "invoice://7"})).await;
    assert_eq!(unserved.error_code(), Some(-32602), "the declared template is not served unprefixed");
}

#[tokio::test]
async fn completions_of_a_mounted_group_use_public_refs_and_show_the_declared_ones() {
    let client = TestClient::modern(mounted());
    let prompt = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "billing_summary"}, "argument": {"name": "period", "value": "Ma"}}),
        )
        .await;
    assert_eq!(prompt.result()["completion"]["values"], json!(["summary:Ma"]));
    let template = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "billing+invoice://{id}"}, "argument": {"name": "id", "value": "4"}}),
        )
        .await;
    assert_eq!(template.result()["completion"]["values"], json!(["invoice://{id}:4"]));
    let declared = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "summary"}, "argument": {"name": "period", "value": ""}}),
        )
        .await;
    assert_eq!(declared.error_code(), Some(-32602), "the declared name is not served");
}

#[tokio::test]
async fn a_mounted_publisher_announces_public_uris_and_list_changes_pass() {
    let server = mounted();
    assert!(server.mounted_publisher("mount_main").is_none(), "not mounted");
    let client = TestClient::legacy(server.clone(), "2025-11-25").await.expect("initialize");
    let subscribed = client.request("resources/subscribe", json!({"uri": "billing+invoice://7"})).await;
    assert_eq!(subscribed.result(), &json!({}));
    let publisher = server.mounted_publisher("mount_billing").expect("mounted");
    publisher.resource_updated("invoice://7");
    let updated = client
        .wait_for_notification(|m| m["method"] == "notifications/resources/updated", Duration::from_secs(5))
        .await
        .expect("the update arrives");
    assert_eq!(updated["params"]["uri"], "billing+invoice://7");
    publisher.tools_list_changed();
    let changed = client
        .wait_for_notification(|m| m["method"] == "notifications/tools/list_changed", Duration::from_secs(5))
        .await;
    assert!(changed.is_some(), "list_changed passes unchanged");
}

fn problems(err: &BuildError) -> Vec<String> {
    err.problems().iter().map(ToString::to_string).collect()
}

#[test]
fn a_mounted_name_that_collides_fails_the_build_naming_both_declarations() {
    let err = Server::builder("composition", "1")
        .groups(["mount_billing", "mount_clash"])
        .mount("mount_billing", Mount::prefix("billing"))
        .build()
        .expect_err("two tools are served as billing_charge");
    let dup = err
        .problems()
        .iter()
        .find_map(|p| match p {
            BuildError::Duplicate { kind: "tool", name, first, second } if name == "billing_charge" => {
                Some(format!("{first} | {second}"))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no duplicate: {err}"));
    assert!(dup.contains("clashing_charge (") && dup.contains("composition.rs:"), "{dup}");
    assert!(dup.contains("::charge (") && dup.contains("(mounted group `mount_billing`)"), "{dup}");
}

#[test]
fn bad_mounts_fail_the_build() {
    for (mount, group, says) in [
        (Mount::prefix("9lives"), "mount_billing", "not an RFC 3986 scheme"),
        (Mount::new().name_prefix("bill ing"), "mount_billing", "contains ' '"),
        (Mount::prefix("billing"), "mount_nobody", "no tool, prompt, resource or completion of group"),
    ] {
        let err = Server::builder("composition", "1")
            .groups(["mount_billing", "mount_nobody"])
            .mount(group, mount)
            .build()
            .expect_err("refused");
        let named =
            |p: &String| p.contains(says) && p.contains("ServerBuilder::mount (") && p.contains("composition.rs:");
        assert!(problems(&err).iter().any(named), "{says}: {err}");
    }
}

#[test]
fn a_prefix_that_only_renames_keeps_uris() {
    let server = Server::builder("composition", "1")
        .groups(["mount_billing"])
        .mount("mount_billing", Mount::new().name_prefix("bill.").keep_uris())
        .build()
        .expect("builds");
    let table = server.table();
    assert!(table.tool("bill.charge").is_some() && table.prompt("bill.summary").is_some());
    assert!(table.resource("invoice://latest").is_some());
}

fn transformed(transforms: Vec<(&str, ToolTransform)>) -> Result<Server, BuildError> {
    let mut builder = Server::builder("composition", "1")
        .groups(["mount_billing", "mount_main"])
        .mount("mount_billing", Mount::prefix("billing"));
    for (name, t) in transforms {
        builder = builder.transform_tool(name, t);
    }
    builder.build()
}

fn listed<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"].as_array().and_then(|t| t.iter().find(|t| t["name"] == name)).unwrap_or(&Value::Null)
}

#[tokio::test]
async fn transforms_rename_hide_describe_pin_and_rename_arguments() {
    let server = transformed(vec![
        (
            "forecast",
            ToolTransform::new()
                .rename("weather")
                .title("Weather")
                .describe("Metric forecast")
                .pin_argument("units", json!("metric"))
                .rename_argument("q", "city"),
        ),
        ("debug_dump", ToolTransform::new().hide()),
        ("billing_charge", ToolTransform::new().rename("pay")),
    ])
    .expect("builds");
    let client = TestClient::modern(server);
    let tools = client.request("tools/list", json!({})).await;
    assert_eq!(names(tools.result(), "tools", "name"), ["charge", "pay", "weather"]);
    let weather = listed(tools.result(), "weather");
    assert_eq!((&weather["title"], &weather["description"]), (&json!("Weather"), &json!("Metric forecast")));
    let schema = &weather["inputSchema"];
    let props: Vec<&String> = schema["properties"].as_object().map(|p| p.keys().collect()).unwrap_or_default();
    assert_eq!(props, ["city", "days"], "{schema}");
    assert_eq!(schema["required"], json!(["city"]));
    jsonschema::validator_for(schema).expect("the advertised schema compiles");

    let called = client.call_tool("weather", json!({"city": "Oslo", "days": 3})).await;
    assert_eq!(called.result()["content"][0]["text"], "Oslo in metric for 3 days");
    assert_eq!(client.call_tool("forecast", json!({"city": "Oslo"})).await.error_code(), Some(-32602));
    assert_eq!(client.call_tool("debug_dump", json!({})).await.error_code(), Some(-32602), "hidden");
    let paid = client.call_tool("pay", json!({"cents": 2})).await;
    assert_eq!(paid.result()["content"][0]["text"], "charged 2 (matched pay)");

    // A pinned argument sent anyway, or a renamed one under its old name: isError naming it.
    let pinned = client.call_tool("weather", json!({"city": "Oslo", "units": "imperial"})).await;
    assert_eq!(pinned.result()["isError"], true, "{pinned:?}");
    let text = pinned.result()["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("`units`") && text.contains("fixed by the server"), "{text}");
    let old = client.call_tool("weather", json!({"city": "Oslo", "q": "Bergen"})).await;
    assert_eq!(old.result()["isError"], true);
    assert!(old.result()["content"][0]["text"].as_str().unwrap_or_default().contains("`q`"), "{old:?}");
    let missing = client.call_tool("weather", json!({"days": 1})).await;
    assert_eq!(missing.result()["isError"], true, "the public schema is enforced: city is required");
}

#[test]
fn transforms_naming_unknown_tools_or_arguments_fail_the_build() {
    for (name, t, says) in [
        ("nowhere", ToolTransform::new().rename("x"), "no tool of this name is served"),
        ("forecast", ToolTransform::new().pin_argument("colour", json!(1)), "cannot pin `colour`"),
        ("forecast", ToolTransform::new().rename_argument("city", "town"), "cannot rename `city`"),
        ("forecast", ToolTransform::new().rename_argument("q", "units"), "that name is taken"),
        ("forecast", ToolTransform::new().pin_argument("units", json!(3)), "pinned value of `units`"),
        ("forecast", ToolTransform::new().rename("tools/call"), "method of MCP itself"),
        ("forecast", ToolTransform::new().describe(" "), "must not be empty"),
    ] {
        let err = transformed(vec![(name, t)]).expect_err(says);
        let all = problems(&err);
        assert!(
            all.iter().any(|p| p.contains(says) && p.contains(&format!("`{name}`")) && p.contains("composition.rs:")),
            "{says}: {err}"
        );
    }
    let err = transformed(vec![("forecast", ToolTransform::new().rename("charge"))]).expect_err("collides");
    let dup = err.problems().iter().any(|p| {
        matches!(p, BuildError::Duplicate { name, first, second, .. }
            if name == "charge" && format!("{first}{second}").contains("own_charge") && format!("{first}{second}").contains("transformed at"))
    });
    assert!(dup, "{err}");
}

fn search() -> DynamicTool {
    DynamicTool::new("search", |_ctx, args: Value| async move { format!("{args}") })
        .description("Searches upstream")
        .input_schema(json!({
            "type": "object",
            "properties": {"q": {"type": "string"}, "region": {"type": "string", "enum": ["eu", "us"]}},
            "required": ["q", "region"],
            "additionalProperties": false
        }))
}

#[tokio::test]
async fn a_run_time_tool_added_later_is_transformed_as_it_enters() {
    let server = transformed(vec![(
        "search",
        ToolTransform::new()
            .for_run_time_tool()
            .rename("web_search")
            .pin_argument("region", json!("eu"))
            .rename_argument("q", "query"),
    )])
    .expect("a transform for a run-time tool does not need it at build()");
    let client = TestClient::modern(server.clone());
    server.add_tool(search()).expect("the transform fits");
    let tools = client.request("tools/list", json!({})).await;
    let tool = listed(tools.result(), "web_search");
    assert_eq!(tool["inputSchema"]["properties"], json!({"query": {"type": "string"}}), "{tool}");
    assert_eq!(tool["inputSchema"]["required"], json!(["query"]));
    assert_eq!(listed(tools.result(), "search"), &Value::Null);
    let called = client.call_tool("web_search", json!({"query": "rust"})).await;
    let echoed: Value =
        serde_json::from_str(called.result()["content"][0]["text"].as_str().unwrap_or_default()).expect("json");
    assert_eq!(echoed, json!({"q": "rust", "region": "eu"}));
    // additionalProperties: false refuses the pinned argument as the schema words it.
    let pinned = client.call_tool("web_search", json!({"query": "rust", "region": "us"})).await;
    assert_eq!(pinned.result()["isError"], true, "{pinned:?}");

    // Removal by either name; a tool lacking the renamed argument is refused, nothing changes.
    assert!(server.remove_tool("search"));
    assert!(server.table().tool("web_search").is_none());
    let bare = DynamicTool::new("search", |_ctx, _args| async { "bare" });
    let err = server.add_tool(bare).expect_err("no `region` to pin");
    assert_eq!(err.code(), switchyard::ErrorCode(-32602));
    assert!(err.message().contains("cannot pin `region`"), "{}", err.message());
    assert!(server.table().tool("search").is_none() && server.table().tool("web_search").is_none());
}

#[tokio::test]
async fn a_hidden_run_time_tool_is_never_served() {
    let server = transformed(vec![("search", ToolTransform::new().for_run_time_tool().hide())]).expect("builds");
    server.add_tool(search()).expect("accepted, then hidden");
    assert!(server.table().tool("search").is_none());
    let client = TestClient::modern(server);
    assert_eq!(client.call_tool("search", json!({"q": "x", "region": "eu"})).await.error_code(), Some(-32602));
}

/// A mounted group's links to its own resources (in tool results, prompt messages and read
/// contents) carry the public URIs a client can read; links elsewhere are left as written.
#[tokio::test]
async fn links_to_a_mounted_groups_resources_carry_public_uris() {
    let server =
        Server::builder("links", "1").groups(["mount_links"]).mount("mount_links", Mount::prefix("archive")).build();
    let client = TestClient::modern(server.expect("builds"));
    let called = client.call_tool("archive_find_documents", json!({})).await;
    let content = &called.result()["content"];
    let uris: Vec<&Value> = (0..4).map(|i| &content[i]["uri"]).collect();
    assert_eq!(
        uris,
        [
            &json!("archive+doc://7"),
            &json!("archive+doc://index"),
            &json!("https://example.com/doc/7"),
            &json!("other://7")
        ]
    );
    assert_eq!(content[4]["resource"]["uri"], "archive+doc://8", "embedded contents too");
    let followed = client.request("resources/read", json!({"uri": content[0]["uri"]})).await;
    assert_eq!(followed.result()["contents"][0]["text"], "document 7", "the link can be followed");

    let prompt = client.request("prompts/get", json!({"name": "archive_about_document"})).await;
    assert_eq!(prompt.result()["messages"][1]["content"]["uri"], "archive+doc://7");

    let index = client.request("resources/read", json!({"uri": "archive+doc://index"})).await;
    let contents = &index.result()["contents"];
    assert_eq!((&contents[0]["uri"], &contents[1]["uri"]), (&json!("archive+doc://index"), &json!("archive+doc://7")));
}
