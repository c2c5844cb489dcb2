//! Links in an upstream's results: a `resource_link` or embedded `resource` naming one of the
//! upstream's resources we serve (a mirrored resource, or a match of a mirrored template) is
//! given our URI (`{uri_prefix}{uri}`), so that our client can follow it; links elsewhere stay.

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchyard::prelude::*;
use switchyard::testing::{HttpTestServer, TestClient};
use switchyard::transport::http::HttpConfig;
use switchyard::{CallToolResult, Content, McpError, PromptMessage, ResourceContents};
use switchyard_gateway::{Gateway, GatewayHandle, Upstream};

/// Finds notes: links to the upstream's own resources, and to elsewhere.
#[mcp_tool(group = "linking-upstream")]
async fn find_notes() -> Result<CallToolResult, ToolError> {
    Ok(CallToolResult::success(vec![
        Content::resource_link("notes://index", "the index", Default::default()),
        Content::resource_link("notes://7", "note 7", Default::default()),
        Content::resource_link("https://example.com/notes/7", "the public copy", Default::default()),
        Content::resource_link("other://7", "not served", Default::default()),
        Content::resource(ResourceContents::text("notes://8", Some("text/plain"), "note 8")),
    ]))
}

/// A prompt about one note, with a link to it.
#[mcp_prompt(group = "linking-upstream")]
async fn about_note() -> Result<Vec<PromptMessage>, McpError> {
    Ok(vec![PromptMessage::user(Content::resource_link("notes://7", "note 7", Default::default()))])
}

/// The index of notes.
#[mcp_resource(uri = "notes://index", mime_type = "text/plain", group = "linking-upstream")]
async fn index() -> Result<String, McpError> {
    Ok("2 notes".to_owned())
}

/// A note by id.
#[mcp_resource(uri = "notes://{id}", mime_type = "text/plain", group = "linking-upstream")]
async fn note(id: String) -> Result<String, McpError> {
    Ok(format!("note {id}"))
}

async fn gateway(uri_prefix: &str) -> (Server, GatewayHandle, HttpTestServer) {
    let upstream = Server::builder("linking", "1").groups(["linking-upstream"]).build().expect("builds");
    let up = HttpTestServer::start(upstream, HttpConfig::default()).await.expect("binds");
    let server = Server::builder("gateway", "1").groups(["none"]).build().expect("builds");
    let handle = Gateway::new()
        .upstream(Upstream::http("n", up.url()).prefix("n_").uri_prefix(uri_prefix))
        .attach(&server)
        .await
        .expect("attaches");
    (server, handle, up)
}

/// Waits until the gateway serves the tool, the prompt, the resource and the template.
async fn wait_for_mirror(client: &TestClient, template: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tools = client.request("tools/list", json!({})).await;
        let prompts = client.request("prompts/list", json!({})).await;
        let resources = client.request("resources/list", json!({})).await;
        let templates = client.request("resources/templates/list", json!({})).await;
        let listed = |r: &Value, key: &str, field: &str, want: &str| {
            r[key].as_array().is_some_and(|items| items.iter().any(|i| i[field] == want))
        };
        if listed(tools.result(), "tools", "name", "n_find_notes")
            && listed(prompts.result(), "prompts", "name", "n_about_note")
            && resources.result()["resources"].as_array().is_some_and(|r| !r.is_empty())
            && listed(templates.result(), "resourceTemplates", "uriTemplate", template)
        {
            return;
        }
        assert!(Instant::now() < deadline, "the gateway never mirrored the upstream");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn links_to_the_upstreams_resources_get_our_uri_and_can_be_followed() {
    let (server, _gateway, _up) = gateway("n+").await;
    let client = TestClient::modern(server);
    wait_for_mirror(&client, "n+notes://{id}").await;

    let called = client.call_tool("n_find_notes", json!({})).await;
    let content = &called.result()["content"];
    let uris: Vec<&Value> = (0..4).map(|i| &content[i]["uri"]).collect();
    assert_eq!(
        uris,
        [&json!("n+notes://index"), &json!("n+notes://7"), &json!("https://example.com/notes/7"), &json!("other://7")],
        "{content}"
    );
    assert_eq!(content[4]["resource"]["uri"], "n+notes://8", "embedded contents too: {content}");
    let followed = client.request("resources/read", json!({ "uri": content[1]["uri"] })).await;
    assert_eq!(followed.result()["contents"][0]["text"], "note 7", "{:?}", followed.response);

    let prompt = client.request("prompts/get", json!({ "name": "n_about_note" })).await;
    assert_eq!(prompt.result()["messages"][0]["content"]["uri"], "n+notes://7", "{:?}", prompt.response);
}

#[tokio::test]
async fn without_a_uri_prefix_links_stay_as_written() {
    let (server, _gateway, _up) = gateway("").await;
    let client = TestClient::modern(server);
    wait_for_mirror(&client, "notes://{id}").await;
    let called = client.call_tool("n_find_notes", json!({})).await;
    assert_eq!(called.result()["content"][1]["uri"], "notes://7", "{}", called.result());
}
