//! What clients that render views see, and what the others see, on both protocol eras.

mod common;

use common::{HTML, VIEW, apps, builder};
use serde_json::{Value, json};
use switchyard::testing::TestClient;
use switchyard_apps::{EXTENSION, MIME_TYPE};

fn ui_capabilities() -> Value {
    json!({ "extensions": { EXTENSION: { "mimeTypes": [MIME_TYPE] } } })
}

fn by_key<'a>(list: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|item| item[key] == value)
}

fn expected_view_ui() -> Value {
    json!({
        "csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://*.cdn.example.com"],
        },
        "permissions": { "clipboardWrite": {} },
        "prefersBorder": true,
    })
}

/// Checks the answers a client that renders views gets.
async fn sees_apps(client: &TestClient) {
    let tools = client.request("tools/list", json!({})).await;
    let tools = &tools.result()["tools"];
    let ui = |name: &str| by_key(tools, "name", name).unwrap_or_else(|| panic!("{name} listed")).clone();
    assert_eq!(ui("roll")["_meta"]["ui"], json!({ "resourceUri": VIEW, "visibility": ["model", "app"] }));
    assert_eq!(ui("reroll")["_meta"]["ui"], json!({ "resourceUri": VIEW, "visibility": ["app"] }));
    assert_eq!(ui("rules")["_meta"]["ui"], json!({ "resourceUri": VIEW, "visibility": ["model"] }));
    assert!(ui("plain").get("_meta").is_none(), "an unlinked tool gains nothing");
    assert_eq!(ui("own_meta")["_meta"], json!({ "ui": { "visibility": ["app"] }, "com.example/rank": 1 }));

    let resources = client.request("resources/list", json!({})).await;
    let view = by_key(&resources.result()["resources"], "uri", VIEW).expect("the view is listed");
    assert_eq!(view["mimeType"], MIME_TYPE);
    assert_eq!(view["name"], "Dice roller");
    assert_eq!(view["title"], "Dice");
    assert_eq!(view["_meta"]["ui"], expected_view_ui());

    let read = client.request("resources/read", json!({ "uri": VIEW })).await;
    let contents = &read.result()["contents"];
    assert_eq!(contents.as_array().map(Vec::len), Some(1));
    assert_eq!(contents[0]["uri"], VIEW);
    assert_eq!(contents[0]["mimeType"], MIME_TYPE);
    assert_eq!(contents[0]["text"], HTML);
    assert_eq!(contents[0]["_meta"]["ui"], expected_view_ui());
}

/// Checks the answers a client that renders no views gets.
async fn sees_plain_tools(client: &TestClient) {
    let tools = client.request("tools/list", json!({})).await;
    let tools = &tools.result()["tools"];
    let roll = by_key(tools, "name", "roll").expect("a linked tool stays listed");
    assert!(roll.get("_meta").is_none(), "no _meta.ui for a client without the extension: {roll}");
    assert!(by_key(tools, "name", "rules").is_some_and(|t| t.get("_meta").is_none()));
    assert!(by_key(tools, "name", "reroll").is_none(), "app-only tools are hidden");
    assert!(by_key(tools, "name", "own_meta").is_none(), "a tool's own app-only visibility hides it too");
    assert!(by_key(tools, "name", "plain").is_some());

    let resources = client.request("resources/list", json!({})).await;
    assert!(by_key(&resources.result()["resources"], "uri", VIEW).is_none(), "views are not listed");

    // A view read by URI anyway is still HTML, without the UI metadata.
    let read = client.request("resources/read", json!({ "uri": VIEW })).await;
    assert_eq!(read.result()["contents"][0]["text"], HTML);
    assert!(read.result()["contents"][0].get("_meta").is_none());

    // The tool itself works the same.
    let call = client.call_tool("roll", json!({})).await;
    assert_eq!(call.result()["content"][0]["text"], "You rolled a 4");
}

#[tokio::test]
async fn modern_client_that_renders_views_sees_them() {
    let server = apps().install(builder()).build().expect("builds");
    let client = TestClient::modern(server).with_capabilities(ui_capabilities());
    let discover = client.request("server/discover", json!({})).await;
    assert_eq!(discover.result()["capabilities"]["extensions"][EXTENSION], json!({ "mimeTypes": [MIME_TYPE] }));
    sees_apps(&client).await;
    // An app-only tool is callable: the view calls it through the host.
    let call = client.call_tool("reroll", json!({})).await;
    assert_eq!(call.result()["content"][0]["text"], "You rolled a 2");
}

#[tokio::test]
async fn modern_client_without_the_extension_sees_plain_tools() {
    let server = apps().install(builder()).build().expect("builds");
    sees_plain_tools(&TestClient::modern(server.clone())).await;
    // Declaring the extension without our MIME type is not rendering views.
    let other = json!({ "extensions": { EXTENSION: { "mimeTypes": ["text/uri-list"] } } });
    sees_plain_tools(&TestClient::modern(server.clone()).with_capabilities(other)).await;
    let no_types = json!({ "extensions": { EXTENSION: {} } });
    sees_plain_tools(&TestClient::modern(server).with_capabilities(no_types)).await;
}

#[tokio::test]
async fn one_server_answers_each_client_by_its_own_declaration() {
    let server = apps().install(builder()).build().expect("builds");
    let with = TestClient::modern(server.clone()).with_capabilities(ui_capabilities());
    let without = TestClient::modern(server);
    sees_apps(&with).await;
    sees_plain_tools(&without).await;
    sees_apps(&with).await;
}

#[tokio::test]
async fn legacy_session_negotiates_in_initialize() {
    let server = apps().install(builder()).build().expect("builds");
    let client = TestClient::legacy_with_capabilities(server.clone(), "2025-11-25", ui_capabilities())
        .await
        .expect("initialized");
    sees_apps(&client).await;
    let plain = TestClient::legacy(server, "2025-06-18").await.expect("initialized");
    sees_plain_tools(&plain).await;
}

#[tokio::test]
async fn pagination_counts_only_what_a_client_is_shown() {
    let server = apps().install(builder().page_size(2)).build().expect("builds");
    let client = TestClient::modern(server);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let page = client.request("tools/list", params).await;
        let tools = page.result()["tools"].as_array().cloned().unwrap_or_default();
        assert!(tools.len() <= 2);
        names.extend(tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)));
        match page.result()["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(names, ["plain", "roll", "rules"]);
}
