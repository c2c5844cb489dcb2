//! `completion/complete` through the gateway: a mirrored prompt or resource template of an
//! upstream that declares `completions` is completed by the upstream, under the upstream's own
//! prompt name or URI template; one of an upstream without it answers the empty list.

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchyard::prelude::*;
use switchyard::testing::{HttpTestServer, TestClient};
use switchyard::transport::http::HttpConfig;
use switchyard::{CompletionRef, CompletionRequest, ErrorCode, McpError};
use switchyard_gateway::{Gateway, GatewayHandle, Upstream};

/// Reviews some code.
#[mcp_prompt(group = "completing-upstream")]
async fn review() -> Result<String, McpError> {
    Ok("Review this code".to_owned())
}

/// Languages starting with what was typed, then what the handler was shown: the reference
/// name, the argument and the context's `style`.
#[mcp_completion(prompt = "review", group = "completing-upstream")]
async fn languages(req: CompletionRequest) -> Result<Vec<String>, McpError> {
    let CompletionRef::Prompt { name } = &req.reference else {
        return Err(McpError::invalid_params("a prompt completion shown a template"));
    };
    let style = req.context.as_ref().and_then(|c| c["arguments"]["style"].as_str()).unwrap_or("none");
    let shown = format!("{name}/{}/{style}", req.argument.name);
    let mut values: Vec<String> =
        ["rust", "ruby", "go"].iter().filter(|l| l.starts_with(&req.argument.value)).map(|l| l.to_string()).collect();
    values.push(shown);
    Ok(values)
}

/// A repository's readme.
#[mcp_resource(uri = "repo://{owner}/{name}", mime_type = "text/plain", group = "completing-upstream")]
async fn readme(owner: String, name: String) -> Result<String, McpError> {
    Ok(format!("readme of {owner}/{name}"))
}

/// Owners, with the total and `hasMore` of a longer list; `fail` is refused with a code of its own.
#[mcp_completion(resource = "repo://{owner}/{name}", group = "completing-upstream")]
async fn owners(req: CompletionRequest) -> Result<Completion, McpError> {
    if req.argument.value == "fail" {
        return Err(McpError::new(ErrorCode(-32001), "owners are offline").with_data(json!({ "retry": true })));
    }
    let CompletionRef::Resource { uri } = req.reference else {
        return Err(McpError::invalid_params("a template completion shown a prompt"));
    };
    Ok(Completion::new(vec![format!("{}-owner", req.argument.value), uri]).with_total(42).with_has_more(true))
}

/// A prompt of the upstream that completes nothing.
#[mcp_prompt(group = "plain-upstream")]
async fn plain() -> Result<String, McpError> {
    Ok("plain".to_owned())
}

/// A gateway over two upstreams on HTTP: `a` (prefix `a_`, URI prefix `a+`) declares
/// `completions`, `b` (prefix `b_`) does not.
async fn gateway() -> (Server, GatewayHandle, HttpTestServer, HttpTestServer) {
    let serve = |group: &str| Server::builder(group, "1").groups([group]).build().expect("builds");
    let a = HttpTestServer::start(serve("completing-upstream"), HttpConfig::default()).await.expect("binds");
    let b = HttpTestServer::start(serve("plain-upstream"), HttpConfig::default()).await.expect("binds");
    let server = Server::builder("gateway", "1").groups(["none"]).build().expect("builds");
    let handle = Gateway::new()
        .upstream(Upstream::http("a", a.url()).prefix("a_").uri_prefix("a+"))
        .upstream(Upstream::http("b", b.url()).prefix("b_"))
        .attach(&server)
        .await
        .expect("attaches");
    (server, handle, a, b)
}

/// Waits until the gateway serves both prompts and the template.
async fn wait_for_mirror(client: &TestClient) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let prompts = client.request("prompts/list", json!({})).await;
        let templates = client.request("resources/templates/list", json!({})).await;
        let names: Vec<&str> = prompts.result()["prompts"]
            .as_array()
            .map(|p| p.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        let has_template = templates.result()["resourceTemplates"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["uriTemplate"] == "a+repo://{owner}/{name}"));
        if names.contains(&"a_review") && names.contains(&"b_plain") && has_template {
            return;
        }
        assert!(Instant::now() < deadline, "the gateway never mirrored both upstreams: {names:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn complete(reference: Value, argument: &str, value: &str) -> Value {
    json!({ "ref": reference, "argument": { "name": argument, "value": value } })
}

#[tokio::test]
async fn a_mirrored_prompt_completes_through_the_upstream_under_its_own_name() {
    let (server, _gateway, _a, _b) = gateway().await;
    let client = TestClient::modern(server);
    wait_for_mirror(&client).await;
    let caps = client.request("server/discover", json!({})).await;
    assert_eq!(caps.result()["capabilities"]["completions"], json!({}), "{}", caps.result());

    let mut params = complete(json!({ "type": "ref/prompt", "name": "a_review" }), "language", "r");
    params["context"] = json!({ "arguments": { "style": "terse" } });
    let reply = client.request("completion/complete", params).await;
    assert_eq!(
        reply.result()["completion"],
        json!({ "values": ["rust", "ruby", "review/language/terse"], "total": 3, "hasMore": false }),
        "{:?}",
        reply.response
    );

    // The upstream without `completions`: its prompt has no handler, so the empty list.
    let reply = client
        .request("completion/complete", complete(json!({ "type": "ref/prompt", "name": "b_plain" }), "x", ""))
        .await;
    assert_eq!(
        reply.result()["completion"],
        json!({ "values": [], "total": 0, "hasMore": false }),
        "{:?}",
        reply.response
    );

    // The upstream's names are not ours.
    let reply = client
        .request("completion/complete", complete(json!({ "type": "ref/prompt", "name": "review" }), "language", ""))
        .await;
    assert_eq!(reply.error_code(), Some(-32602), "{:?}", reply.response);
}

#[tokio::test]
async fn a_mirrored_template_completes_through_the_upstream_and_its_errors_come_back() {
    let (server, _gateway, _a, _b) = gateway().await;
    let client = TestClient::legacy(server, "2025-11-25").await.expect("initialize");
    wait_for_mirror(&client).await;

    let ours = json!({ "type": "ref/resource", "uri": "a+repo://{owner}/{name}" });
    let reply = client.request("completion/complete", complete(ours.clone(), "owner", "ada")).await;
    assert_eq!(
        reply.result()["completion"],
        json!({ "values": ["ada-owner", "repo://{owner}/{name}"], "total": 42, "hasMore": true }),
        "{:?}",
        reply.response
    );

    let reply = client.request("completion/complete", complete(ours, "owner", "fail")).await;
    assert_eq!(reply.error_code(), Some(-32001), "{:?}", reply.response);
    assert_eq!(reply.error()["message"], "upstream `a`: owners are offline");
    assert_eq!(reply.error()["data"], json!({ "retry": true }));
}
