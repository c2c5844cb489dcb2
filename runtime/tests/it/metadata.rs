//! Metadata the schema lets a server say (`icons`, `_meta`, `annotations`, `size`, titles,
//! `serverInfo` fields): declared by the macros and at run time, checked at `build()`, validated
//! against the official 2026-07-28 schema, and fitted to each session revision.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use switchyard::prelude::*;
use switchyard::registry::ListedKind;
use switchyard::server::DynamicResource;
use switchyard::testing::TestClient;
use switchyard::{Annotations, BuildError, Icon, Role};

/// Arguments of `review`.
#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    #[schemars(title = "Code")]
    code: String,
}

/// Rolls dice.
#[mcp_tool(
    group = "metadata",
    title = "Roll dice",
    read_only,
    icons = [
        "https://example.com/dice.png",
        icon(src = "data:image/svg+xml;base64,PHN2Zy8+", mime_type = "image/svg+xml", sizes = ["any"], theme = "dark")
    ],
    meta = r#"{"com.example/rank": 1}"#
)]
async fn roll() -> CallToolResult {
    let mut meta = Map::new();
    meta.insert("com.example/seed".into(), json!(7));
    CallToolResult::success(vec![
        Content::text("4").with_annotations(
            Annotations::new().audience([Role::User]).priority(0.5).last_modified("2026-12-04T00:00:00Z"),
        ),
        Content::image(&[1, 2, 3], "image/png").with_meta(meta),
    ])
}

/// Reviews code.
#[mcp_prompt(group = "metadata", title = "Review", icons = ["https://example.com/review.png"], meta = r#"{"com.example/kind": "review"}"#)]
async fn review(args: ReviewArgs) -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::user(
        Content::text(args.code).with_annotations(Annotations::new().priority(1.0)),
    )])
}

/// Today's notes.
#[mcp_resource(group = "metadata", uri = "notes://today", title = "Today", mime_type = "text/plain", size = 8,
    icons = ["https://example.com/notes.png"], meta = r#"{"com.example/shelf": "a"}"#)]
async fn today() -> ReadResourceResult {
    let mut meta = Map::new();
    meta.insert("com.example/etag".into(), json!("x1"));
    ReadResourceResult::new(vec![
        ResourceContents::text("notes://today", Some("text/plain"), "buy milk").with_meta(meta),
    ])
}

/// A day's notes.
#[mcp_resource(group = "metadata", uri = "notes://day/{day}", icons = ["https://example.com/day.png"])]
async fn day(day: String) -> String {
    day
}

fn server() -> Server {
    Server::builder("meta", "1.0.0")
        .title("Metadata")
        .description("Every field the schema has")
        .website_url("https://example.com/meta")
        .icon(Icon::new("https://example.com/server.png").sizes(["48x48"]))
        .groups(["metadata"])
        .resource(
            DynamicResource::new("notes://pinned", "pinned", |_ctx, req| async move {
                Ok(ReadResourceResult::new(vec![ResourceContents::text(req.uri, None, "pinned")]))
            })
            .size(6)
            .annotations(Annotations::new().audience([Role::Assistant]).last_modified("2026-12-01T00:00:00Z"))
            .icon(Icon::new("https://example.com/pin.png"))
            .meta(Map::from_iter([("com.example/pinned".to_owned(), json!(true))])),
        )
        .build()
        .expect("builds")
}

/// A validator for `$defs/{name}` of the official 2026-07-28 schema.
fn official(name: &str) -> jsonschema::Validator {
    let text = include_str!("schema/mcp-2026-07-28.schema.json");
    let mut doc: Value = serde_json::from_str(text).expect("the schema parses");
    doc["$ref"] = json!(format!("#/$defs/{name}"));
    jsonschema::validator_for(&doc).expect("the schema compiles")
}

fn assert_valid(name: &str, value: &Value) {
    let validator = official(name);
    let errors: Vec<String> = validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{name} does not match the official schema: {errors:#?}\n{value:#}");
}

#[tokio::test]
async fn every_list_and_result_matches_the_official_schema() {
    let client = TestClient::modern(server());
    let cases = [
        ("tools/list", json!({}), "ListToolsResult"),
        ("prompts/list", json!({}), "ListPromptsResult"),
        ("resources/list", json!({}), "ListResourcesResult"),
        ("resources/templates/list", json!({}), "ListResourceTemplatesResult"),
        ("tools/call", json!({"name": "roll"}), "CallToolResult"),
        ("prompts/get", json!({"name": "review", "arguments": {"code": "x"}}), "GetPromptResult"),
        ("resources/read", json!({"uri": "notes://today"}), "ReadResourceResult"),
        ("server/discover", json!({}), "DiscoverResult"),
    ];
    for (method, params, def) in cases {
        let reply = client.request(method, params).await;
        assert_valid(def, reply.result());
    }
    let tools = client.request("tools/list", json!({})).await;
    let roll = &tools.result()["tools"][0];
    assert_eq!(roll["icons"][1]["theme"], "dark");
    assert_eq!(roll["_meta"]["com.example/rank"], 1);
    assert_eq!(roll["annotations"]["readOnlyHint"], true);
    let prompts = client.request("prompts/list", json!({})).await;
    assert_eq!(prompts.result()["prompts"][0]["arguments"][0]["title"], "Code");
    let resources = client.request("resources/list", json!({})).await;
    let pinned = &resources.result()["resources"][0];
    assert_eq!((pinned["size"].clone(), pinned["_meta"]["com.example/pinned"].clone()), (json!(6), json!(true)));
    assert_eq!(resources.result()["resources"][1]["size"], 8);
    let call = client.call_tool("roll", json!({})).await;
    assert_eq!(call.result()["content"][0]["annotations"]["audience"], json!(["user"]));
    assert_eq!(call.result()["content"][1]["_meta"]["com.example/seed"], 7);
    let listed = client.request("tools/list", json!({})).await;
    let info = &listed.result()["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["description"], "Every field the schema has");
    assert_eq!(info["icons"][0]["sizes"], json!(["48x48"]));
}

/// The keys of element `i` of `list` in `result`.
fn keys(result: &Value, list: &str, i: usize) -> Vec<String> {
    let mut keys: Vec<String> = result[list][i].as_object().expect("an object").keys().cloned().collect();
    keys.sort();
    keys
}

#[tokio::test]
async fn older_sessions_see_only_the_keys_their_schema_has() {
    let s = |v: &[&str]| v.iter().map(|k| k.to_string()).collect::<Vec<_>>();
    for (version, tool, resource) in [
        (
            "2025-11-25",
            s(&["_meta", "annotations", "description", "icons", "inputSchema", "name", "title"]),
            s(&["_meta", "description", "icons", "mimeType", "name", "size", "title", "uri"]),
        ),
        (
            "2025-06-18",
            s(&["_meta", "annotations", "description", "inputSchema", "name", "title"]),
            s(&["_meta", "description", "mimeType", "name", "size", "title", "uri"]),
        ),
        (
            "2025-03-26",
            s(&["annotations", "description", "inputSchema", "name"]),
            s(&["description", "mimeType", "name", "size", "uri"]),
        ),
    ] {
        let client = TestClient::legacy(server(), version).await.expect("initialize");
        let tools = client.request("tools/list", json!({})).await;
        assert_eq!(keys(tools.result(), "tools", 0), tool, "{version}");
        let resources = client.request("resources/list", json!({})).await;
        assert_eq!(keys(resources.result(), "resources", 1), resource, "{version}");
        let pinned = &resources.result()["resources"][0]["annotations"];
        assert_eq!(pinned.get("lastModified").is_some(), version != "2025-03-26", "{version}");
        let call = client.call_tool("roll", json!({})).await;
        let blocks = &call.result()["content"];
        assert_eq!(blocks[1].get("_meta").is_some(), version != "2025-03-26", "{version}");
        assert_eq!(blocks[0]["annotations"].get("lastModified").is_some(), version != "2025-03-26", "{version}");
        let prompts = client.request("prompts/list", json!({})).await;
        assert_eq!(prompts.result()["prompts"][0]["arguments"][0].get("title").is_some(), version != "2025-03-26");
        let read = client.request("resources/read", json!({"uri": "notes://today"})).await;
        assert_eq!(read.result()["contents"][0].get("_meta").is_some(), version != "2025-03-26", "{version}");
    }
    let server = server();
    for (version, info) in [
        ("2025-11-25", vec!["description", "icons", "name", "title", "version", "websiteUrl"]),
        ("2025-06-18", vec!["name", "title", "version"]),
        ("2025-03-26", vec!["name", "version"]),
    ] {
        let params = json!({"protocolVersion": version, "capabilities": {}});
        let (_, result) = server.initialize(params.as_object(), String::new(), true).expect("initialize");
        let mut got: Vec<&str> = result["serverInfo"].as_object().expect("object").keys().map(String::as_str).collect();
        got.sort();
        assert_eq!(got, info, "{version}");
    }
}

#[test]
fn run_time_definitions_are_checked_like_the_macros_check_theirs() {
    let read = |_ctx, _req| async { Ok(ReadResourceResult::new(Vec::new())) };
    let bad_icon = DynamicResource::new("notes://x", "x", read).icon(Icon::new("javascript:alert(1)"));
    let err = Server::builder("m", "1").groups(["none"]).resource(bad_icon).build().expect_err("refused");
    let text = err.to_string();
    assert!(text.contains("notes://x") && text.contains("javascript:"), "{text}");

    let reserved = DynamicResource::new("notes://y", "y", read)
        .meta(Map::from_iter([("io.modelcontextprotocol/ui".to_owned(), json!({}))]));
    let server = Server::builder("m", "1").groups(["none"]).build().expect("builds");
    let err = server.add_resources([reserved]).expect_err("refused");
    assert_eq!(err.code(), switchyard::ErrorCode(-32602));
    assert!(err.message().contains("notes://y") && err.message().contains("reserves"), "{}", err.message());
    assert!(server.table().resource("notes://y").is_none(), "nothing is added");

    let err = Server::builder("m", "1")
        .groups(["none"])
        .website_url("javascript:alert(1)")
        .icon(Icon::new("https://a.example/i.png").mime_type("text/html"))
        .build()
        .expect_err("refused");
    assert!(matches!(&err, BuildError::Invalid { kind: "server", .. }), "{err}");
    assert!(err.to_string().contains("websiteUrl"), "{err}");
    let err = Server::builder("m", "1")
        .groups(["none"])
        .icon(Icon::new("https://a.example/i.png").mime_type("text/html"))
        .build()
        .expect_err("refused");
    assert!(err.to_string().contains("text/html"), "{err}");
    let err = Server::builder("m", "1").groups(["none"]).title(" ").build().expect_err("a blank title is refused");
    assert!(matches!(&err, BuildError::Invalid { kind: "server", .. }) && err.to_string().contains("`title`"), "{err}");
}

#[test]
fn server_builder_reads_the_package() {
    let server = switchyard::server_builder!().groups(["none"]).build().expect("builds");
    let info = server.server_info();
    assert_eq!(info["name"], env!("CARGO_PKG_NAME"));
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["description"], env!("CARGO_PKG_DESCRIPTION").trim());
    assert_eq!(info["websiteUrl"], env!("CARGO_PKG_HOMEPAGE"), "homepage before repository");
}

#[test]
fn a_homepage_that_is_no_web_url_gives_way_to_the_repository() {
    let website = |homepage: &str, repository: &str| {
        let builder = Server::builder("pkg", "1").groups(["none"]).cargo_package("", homepage, repository);
        builder.build().map(|s| s.server_info()["websiteUrl"].clone()).map_err(|e| e.to_string())
    };
    let repo = "https://github.com/example/pkg";
    assert_eq!(website("example.com", repo), Ok(json!(repo)));
    assert_eq!(website("", repo), Ok(json!(repo)));
    assert_eq!(website("https://pkg.example.com", repo), Ok(json!("https://pkg.example.com")));
    let neither = website("example.com", "git@github.com:example/pkg.git").expect_err("named, not dropped");
    assert!(neither.contains("example.com"), "{neither}");
}

#[tokio::test]
async fn a_listing_filter_shapes_each_clients_lists() {
    const EXT: &str = "com.example/badges";
    let server = Server::builder("meta", "1")
        .groups(["metadata"])
        .listing_filter(|ctx: &RequestContext, kind: ListedKind, def: &mut Map<String, Value>| {
            let declared =
                ctx.client_capabilities().pointer(&format!("/extensions/{}", EXT.replace('/', "~1"))).is_some();
            match kind {
                ListedKind::Tool if declared => {
                    def.insert("_meta".into(), json!({"com.example/badge": "gold"}));
                    true
                }
                ListedKind::ResourceTemplate => declared,
                _ => true,
            }
        })
        .build()
        .expect("builds");
    let plain = TestClient::modern(server.clone());
    let tools = plain.request("tools/list", json!({})).await;
    assert_eq!(tools.result()["tools"][0]["_meta"], json!({"com.example/rank": 1}));
    let templates = plain.request("resources/templates/list", json!({})).await;
    assert_eq!(templates.result()["resourceTemplates"], json!([]));

    let declaring = TestClient::modern(server.clone()).with_capabilities(json!({"extensions": {EXT: {}}}));
    let tools = declaring.request("tools/list", json!({})).await;
    assert_eq!(tools.result()["tools"][0]["_meta"], json!({"com.example/badge": "gold"}));
    let templates = declaring.request("resources/templates/list", json!({})).await;
    assert_eq!(templates.result()["resourceTemplates"][0]["uriTemplate"], "notes://day/{day}");
    // A filter's keys are fitted to the session too: 2025-03-26 has no `_meta`.
    let old = TestClient::legacy(server, "2025-03-26").await.expect("initialize");
    assert!(old.request("tools/list", json!({})).await.result()["tools"][0].get("_meta").is_none());
}

#[test]
fn a_build_check_fails_the_build_beside_other_problems() {
    let err = Server::builder("m", "1")
        .groups(["metadata"])
        .build_check(|table| match table.resource("notes://missing") {
            Some(_) => Ok(()),
            None => Err(BuildError::Invalid {
                kind: "extension",
                name: "roll".to_owned(),
                site: String::new(),
                reason: "links notes://missing, which is not served".to_owned(),
            }),
        })
        .website_url("nope")
        .build()
        .expect_err("refused");
    let text = err.to_string();
    assert!(text.contains("notes://missing") && text.contains("metadata.rs") && text.contains("websiteUrl"), "{text}");
}

#[tokio::test]
async fn removing_the_last_definition_keeps_the_declared_list_served() {
    let server = server();
    let session = TestClient::legacy(server.clone(), "2025-06-18").await.expect("initialize");
    let modern = TestClient::modern(server.clone());
    assert!(server.remove_tool("roll"), "a macro tool is removed like a run-time one");
    assert!(server.remove_prompt("review"));
    assert_eq!(server.remove_resources(["notes://today", "notes://pinned"]), 2);
    assert!(server.remove_resource_template("notes://day/{day}"));
    for client in [&session, &modern] {
        for (method, list) in [("tools/list", "tools"), ("prompts/list", "prompts"), ("resources/list", "resources")] {
            let reply = client.request(method, json!({})).await;
            assert_eq!(reply.result()[list], json!([]), "{method} still answers after list_changed");
        }
        let called = client.call_tool("roll", json!({})).await;
        assert_eq!(called.error_code(), Some(-32602), "{:?}", called.response);
    }
    let later = TestClient::legacy(server.clone(), "2025-06-18").await.expect("initialize");
    let listed = later.request("tools/list", json!({})).await;
    assert_eq!(listed.result()["tools"], json!([]), "later sessions are told the same capabilities");
    assert!(!server.set_tool_enabled("roll", true), "nothing left to enable");
    assert!(!server.remove_tool("roll"));
}
