//! The `everything` example's whole catalogue (every list, and a result that carries content
//! annotations and `_meta`) read by real clients: the official Python SDK, whose typed models of
//! each revision were generated from that revision's official schema, over a 2026-07-28
//! stateless wire and a 2025-11-25 session; and the official 2026-07-28 schema itself.

use crate::common::{self, HttpServer, peers};

use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;

/// Runs `tests/oauth/catalogue.sh` against `url` over `wire`; what the SDK made of each answer.
fn catalogue(url: &str, wire: &str) -> Value {
    let args = ["--server", url, "--wire", wire, "--tool", "test_metadata"];
    let run = common::run_script(&peers::dir().join("catalogue.sh"), &args, Duration::from_secs(300));
    let (stdout, stderr) = (run.stdout, run.stderr);
    assert!(
        run.status.is_some_and(|s| s.success()),
        "the Python SDK refused an answer or hung ({wire})\nstdout: {stdout}\nstderr: {stderr}"
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("one JSON line ({e}): {stdout}"))
}

fn named<'a>(items: &'a Value, name: &str) -> &'a Value {
    items.as_array().and_then(|a| a.iter().find(|i| i["name"] == name)).unwrap_or_else(|| panic!("{name} in {items}"))
}

#[test]
#[cfg_attr(not(svc_python), ignore = "needs python3 (then tests/oauth/install.sh python)")]
fn the_python_sdk_reads_every_field_in_both_eras() {
    peers::install("python");
    let server = HttpServer::start("everything");
    for (wire, revision) in [("stateless", "2026-07-28"), ("session", "2025-11-25")] {
        let seen = catalogue(&server.url, wire);
        assert_eq!(seen["protocolVersion"], revision);
        let info = &seen["serverInfo"];
        assert_eq!(info["name"], "switchyard-everything");
        assert!(info["title"].as_str().is_some_and(|t| !t.is_empty()), "{wire}: serverInfo title: {info}");
        assert!(info["description"].is_string(), "{wire}: serverInfo description: {info}");
        assert!(info["websiteUrl"].is_string(), "{wire}: serverInfo websiteUrl: {info}");
        assert!(info["icons"][0]["src"].is_string(), "{wire}: serverInfo icons: {info}");

        let tool = named(&seen["tools"], "test_metadata");
        assert!(tool["title"].is_string(), "{wire}: {tool}");
        assert_eq!(tool["_meta"]["dev.switchyard/example"], "metadata", "{wire}: {tool}");
        let icons = tool["icons"].as_array().unwrap_or_else(|| panic!("{wire}: icons on {tool}"));
        assert!(icons.len() >= 2 && icons.iter().all(|i| i["src"].is_string()), "{wire}: {tool}");

        let content = &seen["call"]["content"];
        assert_eq!(content[0]["annotations"]["audience"], json!(["user"]), "{wire}: {content}");
        assert_eq!(content[0]["annotations"]["priority"], 1.0, "{wire}: {content}");
        assert_eq!(content[1]["_meta"]["dev.switchyard/source"], "examples/everything", "{wire}: {content}");
        assert!(!seen["prompts"].as_array().is_none_or(Vec::is_empty), "{wire}: prompts listed");
        assert!(!seen["resources"].as_array().is_none_or(Vec::is_empty), "{wire}: resources listed");
        assert!(!seen["resourceTemplates"].as_array().is_none_or(Vec::is_empty), "{wire}: templates listed");
    }
}

/// A validator for `$defs/{name}` of the official 2026-07-28 schema (vendored beside the
/// runtime's tests, with its provenance there).
fn official(name: &str) -> jsonschema::Validator {
    let mut text = String::new();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../runtime/tests/it/schema/mcp-2026-07-28.schema.json");
    std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text)).expect("the vendored schema reads");
    let mut doc: Value = serde_json::from_str(&text).expect("the schema parses");
    doc["$ref"] = json!(format!("#/$defs/{name}"));
    jsonschema::validator_for(&doc).expect("the schema compiles")
}

#[tokio::test]
async fn every_list_and_result_of_everything_matches_the_official_schema() {
    let server = HttpServer::start("everything");
    let c = common::client();
    let cases = [
        ("tools/list", json!({}), "ListToolsResult"),
        ("prompts/list", json!({}), "ListPromptsResult"),
        ("resources/list", json!({}), "ListResourcesResult"),
        ("resources/templates/list", json!({}), "ListResourceTemplatesResult"),
        ("tools/call", json!({ "name": "test_metadata", "arguments": {} }), "CallToolResult"),
        ("server/discover", json!({}), "DiscoverResult"),
    ];
    for (i, (method, params, def)) in cases.into_iter().enumerate() {
        let mut cursor: Option<Value> = None;
        loop {
            let mut params = params.clone();
            if let Some(c) = &cursor {
                params["cursor"] = c.clone();
            }
            let reply = common::send(common::modern(&c, &server.url, json!(i), method, params)).await;
            let result = &reply.last()["result"];
            assert!(result.is_object(), "{method}: {}", reply.last());
            let errors: Vec<String> =
                official(def).iter_errors(result).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{method} does not match {def}: {errors:#?}\n{result:#}");
            cursor = result.get("nextCursor").filter(|c| c.is_string()).cloned();
            if cursor.is_none() {
                break;
            }
        }
    }
}

/// Every item of `list` (every page) that `everything` answers to a 2026-07-28 request whose
/// client declares `capabilities`.
async fn all_pages(c: &reqwest::Client, url: &str, method: &str, key: &str, capabilities: &Value) -> Vec<Value> {
    let (mut items, mut cursor) = (Vec::new(), None::<Value>);
    loop {
        let mut params = json!({ "_meta": common::meta(capabilities.clone()) });
        if let Some(c) = cursor.take() {
            params["cursor"] = c;
        }
        let reply = common::send(common::modern(c, url, json!(1), method, params)).await;
        let result = &reply.last()["result"];
        items.extend(result[key].as_array().unwrap_or_else(|| panic!("{method}: {}", reply.last())).iter().cloned());
        match result.get("nextCursor").filter(|c| c.is_string()) {
            Some(next) => cursor = Some(next.clone()),
            None => return items,
        }
    }
}

#[tokio::test]
async fn everything_offers_its_app_only_to_clients_that_declare_the_extension() {
    let server = HttpServer::start("everything");
    let c = common::client();
    let renders =
        json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } });
    let plain = json!({});

    let tools = Value::Array(all_pages(&c, &server.url, "tools/list", "tools", &plain).await);
    let view_tool = named(&tools, "test_app_view");
    assert!(view_tool["_meta"].get("ui").is_none(), "no ui link for a client without the extension: {view_tool}");
    assert!(
        !tools.as_array().expect("a list").iter().any(|t| t["name"] == "test_app_refresh"),
        "the app-only tool is hidden"
    );
    let resources = all_pages(&c, &server.url, "resources/list", "resources", &plain).await;
    assert!(!resources.iter().any(|r| r["uri"] == "ui://everything/card"), "no view listed: {resources:?}");

    let tools = Value::Array(all_pages(&c, &server.url, "tools/list", "tools", &renders).await);
    let view_tool = named(&tools, "test_app_view");
    assert_eq!(view_tool["_meta"]["ui"]["resourceUri"], "ui://everything/card", "{view_tool}");
    let refresh = named(&tools, "test_app_refresh");
    assert_eq!(refresh["_meta"]["ui"]["visibility"], json!(["app"]), "{refresh}");
    let resources = Value::Array(all_pages(&c, &server.url, "resources/list", "resources", &renders).await);
    let card = resources
        .as_array()
        .and_then(|r| r.iter().find(|r| r["uri"] == "ui://everything/card"))
        .unwrap_or_else(|| panic!("the view is listed: {resources}"));
    assert_eq!(card["mimeType"], "text/html;profile=mcp-app");

    let params = json!({ "uri": "ui://everything/card", "_meta": common::meta(renders.clone()) });
    let read = common::send(common::modern(&c, &server.url, json!(2), "resources/read", params)).await;
    let contents = &read.last()["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app", "{}", read.last());
    assert!(contents["text"].as_str().is_some_and(|t| t.contains("Switchyard everything")), "{contents}");
    assert_eq!(contents["_meta"]["ui"]["prefersBorder"], true, "{contents}");
    assert_eq!(contents["_meta"]["ui"]["csp"]["resourceDomains"], json!(["https://modelcontextprotocol.io"]));

    let call =
        common::send(common::modern(&c, &server.url, json!(3), "tools/call", json!({ "name": "test_app_view" }))).await;
    let text = &call.last()["result"]["content"][0]["text"];
    assert!(text.as_str().is_some_and(|t| t.contains("MCP Apps card")), "the text stands alone: {}", call.last());
}
