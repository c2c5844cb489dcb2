//! The client-input API in-process: the `InputChannel` seam a task runtime plugs into, and
//! filters seeing the input-required outcome pass through them on the 2026-07-28 wire.

use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex, OnceLock};
use switchyard::input::{InputChannel, InputFuture, InputRound};
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use tokio::sync::Notify;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// A name.
    name: String,
}

/// Asks for a name; the same code on every path.
#[mcp_tool(group = "task_like")]
async fn seam_greet(ctx: RequestContext) -> Result<String, McpError> {
    match ctx.elicit::<Name>("who", "Name?").await? {
        Elicited::Accept(n) => Ok(format!("Hello, {}!", n.name)),
        _ => Err(McpError::invalid_params("declined")),
    }
}

/// What a task runtime's channel does: record the round as pending input, then wait for the
/// answers to arrive (here from the test, there from `tasks/update`).
#[derive(Debug, Default)]
struct TaskLikeChannel {
    pending: Mutex<Option<Value>>,
    answers: Mutex<Option<Map<String, Value>>>,
    asked: Notify,
    answered: Notify,
}

impl InputChannel for TaskLikeChannel {
    fn ask<'a>(&'a self, _ctx: &'a RequestContext, round: &'a InputRound) -> InputFuture<'a> {
        Box::pin(async move {
            *self.pending.lock().expect("lock") = Some(round.to_input_requests());
            self.asked.notify_one();
            loop {
                let notified = self.answered.notified();
                if let Some(a) = self.answers.lock().expect("lock").take() {
                    return Ok(a);
                }
                notified.await;
            }
        })
    }
}

fn channel() -> &'static Arc<TaskLikeChannel> {
    static C: OnceLock<Arc<TaskLikeChannel>> = OnceLock::new();
    C.get_or_init(Arc::default)
}

/// Stands in for the task runtime's detach step: gives the context the task's channel.
#[mcp_filter(group = "task_like", order = 1)]
async fn install_channel(req: RawRequest, next: RawNext) -> RawResponse {
    if req.ctx.method() == "tools/call" {
        req.ctx.set_input_channel(channel().clone());
    }
    next.run(req).await
}

#[tokio::test]
async fn a_context_given_another_channel_awaits_its_answers_instead_of_ending_the_call() {
    let server = Server::builder("t", "0").groups(["task_like"]).build().expect("builds");
    let client = TestClient::modern(server).with_capabilities(json!({ "elicitation": {} }));
    let call = tokio::spawn(async move { client.call_tool("seam_greet", json!({})).await });
    tokio::time::timeout(std::time::Duration::from_secs(10), channel().asked.notified()).await.expect("asked");
    let pending = channel().pending.lock().expect("lock").clone().expect("a round");
    assert_eq!(pending["who"]["method"], "elicitation/create");
    let mut answers = Map::new();
    answers.insert("who".into(), json!({ "action": "accept", "content": { "name": "Tess" } }));
    *channel().answers.lock().expect("lock") = Some(answers);
    channel().answered.notify_one();
    let reply = call.await.expect("joined");
    assert_eq!(reply.result()["resultType"], "complete");
    assert_eq!(reply.result()["content"][0]["text"], "Hello, Tess!");
}

/// Counts the input-required outcomes of `tools/call` passing through it on the way out.
#[mcp_filter(group = "outcome", order = 1)]
async fn observe(req: RawRequest, next: RawNext) -> RawResponse {
    let is_call = req.ctx.method() == "tools/call";
    let out = next.run(req).await;
    if let Err(e) = &out
        && is_call
        && e.as_input_required().is_some()
    {
        SEEN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    out
}

static SEEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Asks for roots, then for a name: two rounds.
#[mcp_tool(group = "outcome")]
async fn two_rounds(ctx: RequestContext) -> Result<String, McpError> {
    let roots = ctx.input("roots", InputRequest::list_roots()).await?.into_roots()?;
    let name = match ctx.elicit::<Name>("name", "Name?").await? {
        Elicited::Accept(n) => n.name,
        _ => "nobody".to_owned(),
    };
    Ok(format!("{name} has {} roots", roots.roots.len()))
}

/// `tools/list` cannot ask for input.
#[mcp_rpc("test/ask", group = "outcome")]
async fn ask_elsewhere(ctx: RequestContext) -> Result<Value, McpError> {
    ctx.input("k", InputRequest::list_roots()).await?;
    Ok(json!({}))
}

#[tokio::test]
async fn the_outcome_passes_raw_filters_and_each_round_gets_a_new_state() {
    let server = Server::builder("t", "0").groups(["outcome"]).build().expect("builds");
    let client = TestClient::modern(server.clone()).with_capabilities(json!({ "roots": {}, "elicitation": {} }));
    let r1 = client.call_tool("two_rounds", json!({})).await;
    let r1 = r1.result();
    assert_eq!(r1["resultType"], "input_required");
    assert_eq!(r1["inputRequests"]["roots"]["method"], "roots/list");
    assert_eq!(SEEN.load(std::sync::atomic::Ordering::SeqCst), 1, "the raw filter saw the outcome");
    let state1 = r1["requestState"].clone();
    let retry = |responses: Value, state: Value| json!({ "name": "two_rounds", "arguments": {}, "inputResponses": responses, "requestState": state });
    let r2 = client
        .request("tools/call", retry(json!({ "roots": { "roots": [{ "uri": "file:///a" }] } }), state1.clone()))
        .await;
    let r2 = r2.result();
    assert_eq!(r2["resultType"], "input_required");
    assert!(r2["inputRequests"].get("roots").is_none(), "answered keys are not asked again: {r2}");
    assert_ne!(r2["requestState"], state1);
    // Round 3 sends only the newest answer: the roots answer comes from the state.
    let r3 = client
        .request(
            "tools/call",
            retry(json!({ "name": { "action": "accept", "content": { "name": "Ida" } } }), r2["requestState"].clone()),
        )
        .await;
    assert_eq!(r3.result()["content"][0]["text"], "Ida has 1 roots");

    let other = client.request("test/ask", json!({})).await;
    assert_eq!(other.error_code(), Some(-32603), "{:?}", other.response);
    assert!(other.response["error"].get("data").is_none(), "the marker does not leak: {:?}", other.response);
}

/// A resource that depends on the client's roots.
#[mcp_resource(uri = "test://roots-count", name = "Roots count", mime_type = "text/plain", group = "outcome")]
async fn roots_count(ctx: RequestContext) -> Result<String, McpError> {
    let roots = ctx.input("roots", InputRequest::list_roots()).await?.into_roots()?;
    Ok(format!("{} roots", roots.roots.len()))
}

#[tokio::test]
async fn resources_read_asks_for_input_and_its_answered_result_is_never_reused() {
    let cache = switchyard::server::CacheConfig::default().read_ttl(std::time::Duration::from_secs(30));
    let server = Server::builder("t", "0").groups(["outcome"]).cache(cache).build().expect("builds");
    let client = TestClient::modern(server).with_capabilities(json!({ "roots": {} }));
    let r1 = client.request("resources/read", json!({ "uri": "test://roots-count" })).await;
    let r1 = r1.result();
    assert_eq!(r1["resultType"], "input_required");
    assert!(r1.get("ttlMs").is_none() && r1.get("cacheScope").is_none(), "{r1}");
    let retry = json!({ "uri": "test://roots-count", "requestState": r1["requestState"],
        "inputResponses": { "roots": { "roots": [] } } });
    let r2 = client.request("resources/read", retry).await;
    let r2 = r2.result();
    assert_eq!(r2["contents"][0]["text"], "0 roots");
    assert_eq!(r2["ttlMs"], 0, "{r2}");
    assert_eq!(r2["cacheScope"], "private");
}

/// Sends the user to a URL.
#[mcp_tool(group = "kinds")]
async fn open_url(ctx: RequestContext) -> Result<String, McpError> {
    let answer = ctx.input("login", InputRequest::elicit_url("Log in", "https://example.com/login")).await?;
    Ok(format!("{:?}", answer.into_elicit()?.action))
}

/// Asks the model and lists roots in one round.
#[mcp_tool(group = "kinds")]
async fn sample_and_roots(ctx: RequestContext) -> Result<String, McpError> {
    let round = InputRound::new()
        .ask("q", InputRequest::sample_text("Capital of France?", 20))
        .ask("r", InputRequest::list_roots());
    let mut a = ctx.input_round(round).await?;
    let text = a.take("q")?.into_sampling()?.text().unwrap_or_default().to_owned();
    let roots = a.take("r")?.into_roots()?.roots.len();
    Ok(format!("{text} / {roots}"))
}

fn client_answers(method: &str, _params: &Value) -> Value {
    match method {
        "sampling/createMessage" => json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" },
            "model": "m", "stopReason": "endTurn" }),
        "roots/list" => json!({ "roots": [{ "uri": "file:///r", "name": "R" }] }),
        _ => json!({ "action": "accept" }),
    }
}

#[tokio::test]
async fn url_mode_needs_elicitation_url_and_then_works() {
    let server = Server::builder("t", "0").groups(["kinds"]).build().expect("builds");
    let form_only = TestClient::modern(server.clone()).with_capabilities(json!({ "elicitation": {} }));
    let r = form_only.call_tool("open_url", json!({})).await;
    assert_eq!(r.error_code(), Some(-32021));
    assert_eq!(r.error()["data"]["requiredCapabilities"], json!({ "elicitation": { "url": {} } }));
    let url =
        TestClient::modern(server).with_capabilities(json!({ "elicitation": { "url": {} } })).answering(client_answers);
    assert_eq!(url.call_tool("open_url", json!({})).await.result()["content"][0]["text"], "Accept");
}

#[tokio::test]
async fn one_round_of_sampling_and_roots_on_both_wires() {
    let server = Server::builder("t", "0").groups(["kinds"]).build().expect("builds");
    let modern = TestClient::modern(server.clone())
        .with_capabilities(json!({ "sampling": {}, "roots": {} }))
        .answering(client_answers);
    let r = modern.call_tool("sample_and_roots", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "Paris / 1");
    let legacy = TestClient::legacy(server, "2025-11-25").await.expect("initialize").answering(client_answers);
    let r = legacy.call_tool("sample_and_roots", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "Paris / 1");
}

/// Asks under the same key twice: a programming error.
#[mcp_tool(group = "kinds")]
async fn same_key_twice(ctx: RequestContext) -> Result<String, McpError> {
    ctx.input("k", InputRequest::list_roots()).await?;
    ctx.input("k", InputRequest::list_roots()).await?;
    Ok("unreachable".to_owned())
}

#[tokio::test]
async fn a_key_asked_twice_in_one_request_is_an_internal_error() {
    let server = Server::builder("t", "0").groups(["kinds"]).build().expect("builds");
    let legacy = TestClient::legacy(server, "2025-11-25").await.expect("initialize").answering(client_answers);
    let r = legacy.call_tool("same_key_twice", json!({})).await;
    assert_eq!(r.error_code(), Some(-32603));
    assert!(r.error()["message"].as_str().unwrap_or_default().contains("`k`"), "{:?}", r.response);
}

/// Takes the context's channel through the public accessor and asks through it directly, as
/// a filter or a task runtime holding the channel would.
#[mcp_tool(group = "kinds")]
async fn ask_through_the_accessor(ctx: RequestContext) -> Result<String, McpError> {
    let channel = ctx.input_channel().ok_or_else(|| McpError::internal("no input channel"))?;
    let again = ctx.input_channel().ok_or_else(|| McpError::internal("no input channel"))?;
    let same = Arc::ptr_eq(&channel, &again);
    ctx.set_request_state_data(json!({ "step": 1 }))?;
    let data = ctx.request_state_data();
    let answers = channel.ask(&ctx, &InputRound::new().ask("r", InputRequest::list_roots())).await?;
    let roots = answers.get("r").and_then(|r| r["roots"].as_array()).map_or(0, Vec::len);
    Ok(format!("same channel: {same}, data: {data:?}, roots: {roots}"))
}

/// A legacy request's channel is made when first asked for, from the request's own notifier:
/// taken through `input_channel()`, it is one channel for the request, and a request sent
/// through it reaches the client and comes back answered.
#[tokio::test]
async fn a_legacy_requests_channel_is_made_on_first_use_and_reaches_the_client() {
    let server = Server::builder("t", "0").groups(["kinds"]).build().expect("builds");
    let legacy = TestClient::legacy(server, "2025-11-25").await.expect("initialize").answering(client_answers);
    let r = legacy.call_tool("ask_through_the_accessor", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "same channel: true, data: None, roots: 1", "{:?}", r.response);
}
