//! A 2025 session upstream asks for input during a call (an `elicitation/create` request of its
//! own, on the call's response stream): the gateway relays the question to the client of that
//! call, of either era, and the answer back.

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchyard::input::InputRequest;
use switchyard::prelude::*;
use switchyard::testing::{HttpTestServer, TestClient};
use switchyard::transport::http::HttpConfig;
use switchyard::{McpError, ToolFailure};
use switchyard_client::{ClientBuilder, ElicitationModes};
use switchyard_gateway::{Gateway, GatewayHandle, Upstream};

/// Asks who is calling and greets them.
#[mcp_tool(group = "session-upstream")]
async fn greet(ctx: RequestContext) -> Result<String, ToolFailure> {
    let form = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
    let answer = ctx.input("who", InputRequest::elicit_form("Who is asking?", form)).await?.into_elicit()?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(Value::as_str).unwrap_or("nobody");
    Ok(format!("Hello, {name}!"))
}

/// Ada, whatever the form.
fn ada(_method: &str, _params: &Value) -> Value {
    json!({ "action": "accept", "content": { "name": "Ada" } })
}

/// Our server on HTTP as a session-only upstream, and a gateway (not yet served) in front of it.
async fn gateway() -> (Server, GatewayHandle, HttpTestServer) {
    gateway_with(|upstream| upstream).await
}

/// [`gateway`] with its upstream configured further by `configure`.
async fn gateway_with(configure: impl FnOnce(Upstream) -> Upstream) -> (Server, GatewayHandle, HttpTestServer) {
    let upstream = Server::builder("session-upstream", "1").groups(["session-upstream"]).build().expect("builds");
    let upstream = HttpTestServer::start(upstream, HttpConfig::default()).await.expect("binds");
    let client = ClientBuilder::new("gateway", "1")
        .protocol_versions(["2025-11-25"])
        .on_elicitation(ElicitationModes::Form, |_| async { Err(McpError::invalid_request("not during a call")) });
    let server = Server::builder("gateway", "1").groups(["none"]).build().expect("builds");
    let handle = Gateway::new()
        .upstream(configure(Upstream::http("up", upstream.url()).client(client)))
        .attach(&server)
        .await
        .expect("attaches");
    (server, handle, upstream)
}

async fn wait_for_greet(client: &TestClient) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tools = client.request("tools/list", json!({})).await;
        if tools.result()["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "greet")) {
            return;
        }
        assert!(Instant::now() < deadline, "the gateway never served greet: {:?}", tools.response);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_session_client_answers_a_session_upstreams_question() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::legacy(server, "2025-11-25").await.expect("initialize").answering(ada);
    wait_for_greet(&client).await;
    let reply = client.call_tool("greet", json!({})).await;
    assert_eq!(reply.result()["content"][0]["text"], "Hello, Ada!", "{:?}", reply.response);
}

#[tokio::test]
async fn a_modern_client_answers_a_session_upstreams_question_in_a_round() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::modern(server).with_capabilities(json!({ "elicitation": {} })).answering(ada);
    wait_for_greet(&client).await;
    let reply = client.call_tool("greet", json!({})).await;
    assert_eq!(reply.result()["content"][0]["text"], "Hello, Ada!", "{:?}", reply.response);
}

#[tokio::test]
async fn a_client_that_cannot_answer_gets_an_answer_all_the_same() {
    let (server, _gateway, _upstream) = gateway().await;
    let client = TestClient::modern(server);
    wait_for_greet(&client).await;
    let reply = client.call_tool("greet", json!({})).await;
    let answered = format!("{:?}", reply.response);
    assert!(
        reply.response.get("error").is_some() || reply.result()["isError"] == true,
        "an error, not Hello: {answered}"
    );
    assert!(answered.contains("elicitation"), "names what was missing: {answered}");
}

/// Set when a `patient` call's question was answered with an error rather than an answer.
static GAVE_UP: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Asks, and says so when the question ends without an answer.
#[mcp_tool(group = "session-upstream")]
async fn patient(ctx: RequestContext) -> Result<String, ToolFailure> {
    let form = json!({ "type": "object", "properties": { "name": { "type": "string" } } });
    match ctx.input("who", InputRequest::elicit_form("Who is asking?", form)).await {
        Ok(_) => Ok("answered".to_owned()),
        Err(e) => {
            GAVE_UP.notify_one();
            Err(e.into())
        }
    }
}

/// A call that ends (here, the upstream call's timeout) ends the question it asked: the
/// upstream gets an error answer at once instead of the gateway waiting on its client forever,
/// holding one of the connection's slots for questions.
#[tokio::test]
async fn a_question_ends_with_its_call() {
    let (server, _gateway, _upstream) = gateway_with(|u| u.call_timeout(Duration::from_millis(500))).await;
    // A session client that never answers the gateway's questions.
    let silent = TestClient::legacy(server, "2025-11-25").await.expect("initialize");
    wait_for_greet(&silent).await;
    let reply = silent.call_tool("patient", json!({})).await;
    assert_eq!(reply.result()["isError"], true, "the upstream call timed out: {:?}", reply.response);
    tokio::time::timeout(Duration::from_secs(10), GAVE_UP.notified())
        .await
        .expect("the upstream's question was answered with an error once the call ended");
}
