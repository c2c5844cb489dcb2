//! Client-input fixtures: the input-required (MRTR) tools and prompt of the 2026-07-28 wire
//! (conformance README §3.4) and the legacy server→client request tools (§2.1). Each is written
//! once with `ctx.input`, and runs on both wires.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use switchyard::input::{ElicitAction, InputResponse};
use switchyard::prelude::*;

/// The form of `test_input_required_result_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NameForm {
    /// Your name.
    pub name: String,
}

/// The second form of `test_input_required_result_multi_round`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ColorForm {
    /// Your favourite colour.
    pub color: String,
}

/// The form of `test_input_required_result_request_state`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct OkForm {
    /// Confirm to continue.
    pub ok: bool,
}

/// The form of `test_input_required_result_prompt`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextForm {
    /// Context to add to the prompt.
    pub context: String,
}

fn accepted<T>(e: Elicited<T>) -> Result<T, McpError> {
    match e {
        Elicited::Accept(v) => Ok(v),
        Elicited::Decline => Err(McpError::invalid_params("the user declined the elicitation")),
        Elicited::Cancel => Err(McpError::invalid_params("the user cancelled the elicitation")),
    }
}

/// Asks for the user's name (key `user_name`), then greets them.
#[mcp_tool]
async fn test_input_required_result_elicitation(ctx: RequestContext) -> Result<String, McpError> {
    let form = accepted(ctx.elicit::<NameForm>("user_name", "What is your name?").await?)?;
    Ok(format!("Hello, {}!", form.name))
}

/// Asks the client's model a question (key `capital_question`) and returns its answer.
#[mcp_tool]
async fn test_input_required_result_sampling(ctx: RequestContext) -> Result<String, McpError> {
    let request = InputRequest::sample_text("What is the capital of France?", 100);
    let answer = ctx.input("capital_question", request).await?.into_sampling()?;
    Ok(format!("The model answered: {}", answer.text().unwrap_or("(no text)")))
}

/// Lists the client's roots (key `client_roots`).
#[mcp_tool]
async fn test_input_required_result_list_roots(ctx: RequestContext) -> Result<String, McpError> {
    let roots = ctx.input("client_roots", InputRequest::list_roots()).await?.into_roots()?;
    let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("The client has {} root(s): {}", uris.len(), uris.join(", ")))
}

/// Keeps its own data in `requestState` across the round trip and checks it came back intact.
#[mcp_tool]
async fn test_input_required_result_request_state(ctx: RequestContext) -> Result<String, McpError> {
    let carried = ctx.request_state_data();
    if carried.is_none() {
        ctx.set_request_state_data(json!({ "issuedFor": "test_input_required_result_request_state" }))?;
    }
    let form = accepted(ctx.elicit::<OkForm>("confirm", "Continue?").await?)?;
    match carried {
        Some(d) if d["issuedFor"] == "test_input_required_result_request_state" && form.ok => {
            Ok("state-ok: the request state came back verified".to_owned())
        }
        Some(_) => Err(McpError::invalid_params("the request state did not carry this tool's data")),
        None => Err(McpError::invalid_params("the retry carried no request state")),
    }
}

/// Asks for a name, a sampled greeting and the roots in one round.
#[mcp_tool]
async fn test_input_required_result_multiple_inputs(ctx: RequestContext) -> Result<String, McpError> {
    let round = InputRound::new()
        .ask("user_name", InputRequest::elicit_form_for::<NameForm>("What is your name?"))
        .ask("greeting", InputRequest::sample_text("Write a one-line greeting.", 50))
        .ask("client_roots", InputRequest::list_roots());
    let mut answers = ctx.input_round(round).await?;
    let name = answers.take("user_name")?.into_elicit()?.parse::<NameForm>()?.map(|f| f.name);
    let greeting = answers.take("greeting")?.into_sampling()?;
    let roots = answers.take("client_roots")?.into_roots()?;
    Ok(format!(
        "name: {}; greeting: {}; roots: {}",
        name.as_deref().unwrap_or("(declined)"),
        greeting.text().unwrap_or("(no text)"),
        roots.roots.len()
    ))
}

/// Two rounds: a name (`step1`), then a colour (`step2`).
#[mcp_tool]
async fn test_input_required_result_multi_round(ctx: RequestContext) -> Result<String, McpError> {
    let name = accepted(ctx.elicit::<NameForm>("step1", "What is your name?").await?)?.name;
    let color = accepted(ctx.elicit::<ColorForm>("step2", &format!("{name}, what is your favourite colour?")).await?)?;
    Ok(format!("{name} likes {}", color.color))
}

/// Asks for a name with a `requestState`; a tampered state is rejected before this runs again.
#[mcp_tool]
async fn test_input_required_result_tampered_state(ctx: RequestContext) -> Result<String, McpError> {
    let form = accepted(ctx.elicit::<NameForm>("user_name", "What is your name?").await?)?;
    Ok(format!("Hello, {}! The request state verified.", form.name))
}

/// Asks only for the kinds of input the client declared on this request.
#[mcp_tool]
async fn test_input_required_result_capabilities(ctx: RequestContext) -> Result<String, McpError> {
    let wanted = [
        ("user_name", InputRequest::elicit_form_for::<NameForm>("What is your name?")),
        ("capital_question", InputRequest::sample_text("What is the capital of France?", 100)),
        ("client_roots", InputRequest::list_roots()),
    ];
    let mut round = InputRound::new();
    for (key, request) in wanted {
        if ctx.can_ask(&request) {
            round = round.ask(key, request);
        }
    }
    if round.is_empty() {
        // Nothing to ask: say what would have been needed.
        ctx.input("user_name", InputRequest::elicit_form_for::<NameForm>("What is your name?")).await?;
    }
    let answers = ctx.input_round(round).await?;
    let kinds: Vec<&str> = answers.raw().keys().map(String::as_str).collect();
    Ok(format!("answered: {}", kinds.join(", ")))
}

/// A prompt that asks for context (key `user_context`) before rendering.
#[mcp_prompt]
async fn test_input_required_result_prompt(ctx: RequestContext) -> Result<Vec<PromptMessage>, McpError> {
    let form = accepted(ctx.elicit::<ContextForm>("user_context", "What context should the prompt use?").await?)?;
    Ok(vec![PromptMessage::user_text(format!("Answer with this context in mind: {}", form.context))])
}

/// Arguments of `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SamplingArgs {
    /// The prompt to send to the client's model.
    pub prompt: String,
}

/// Asks the client's model (`sampling/createMessage`) and returns its answer.
#[mcp_tool]
async fn test_sampling(ctx: RequestContext, args: SamplingArgs) -> Result<String, McpError> {
    let answer = ctx.input("sample", InputRequest::sample_text(args.prompt, 100)).await?.into_sampling()?;
    Ok(format!("LLM response: {}", answer.text().unwrap_or("(no text)")))
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ElicitationArgs {
    /// The message shown to the user.
    pub message: String,
}

/// The form of `test_elicitation` (only its schema is used: the answer is reported as sent).
#[derive(Debug, JsonSchema)]
#[allow(dead_code)]
pub struct ResponseForm {
    /// The user's response.
    pub response: String,
}

/// Asks the user (`elicitation/create`) and reports what they did.
#[mcp_tool]
async fn test_elicitation(ctx: RequestContext, args: ElicitationArgs) -> Result<String, McpError> {
    let request = InputRequest::elicit_form_for::<ResponseForm>(args.message);
    let answer = ctx.input("response", request).await?.into_elicit()?;
    let content = answer.content.map(serde_json::Value::Object).unwrap_or_default();
    Ok(format!("User response: action={}, content={content}", action_name(answer.action)))
}

fn action_name(a: ElicitAction) -> &'static str {
    match a {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    }
}

async fn elicit_schema(ctx: &RequestContext, message: &str, schema: serde_json::Value) -> Result<String, McpError> {
    let answer = ctx.input("form", InputRequest::elicit_form(message, schema)).await?;
    let InputResponse::Elicit(answer) = answer else { return Err(McpError::internal("not an elicitation answer")) };
    let content = answer.content.map(serde_json::Value::Object).unwrap_or_default();
    Ok(format!("Elicitation completed: action={}, content={content}", action_name(answer.action)))
}

/// Elicits a form whose fields carry defaults (SEP-1034).
#[mcp_tool]
async fn test_elicitation_sep1034_defaults(ctx: RequestContext) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": { "type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                "default": "active" },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        }
    });
    elicit_schema(&ctx, "Please review and update the form fields with defaults", schema).await
}

/// Elicits a form with every enum style (SEP-1330).
#[mcp_tool]
async fn test_elicitation_sep1330_enums(ctx: RequestContext) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"] },
            "titledSingle": { "type": "string", "description": "Pick one", "oneOf": [
                { "const": "value1", "title": "First Option" },
                { "const": "value2", "title": "Second Option" },
                { "const": "value3", "title": "Third Option" }
            ] },
            "legacyEnum": { "type": "string", "description": "Pick one", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"] },
            "untitledMulti": { "type": "array", "description": "Pick some",
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
            "titledMulti": { "type": "array", "description": "Pick some", "items": { "anyOf": [
                { "const": "value1", "title": "First Choice" },
                { "const": "value2", "title": "Second Choice" },
                { "const": "value3", "title": "Third Choice" }
            ] } }
        }
    });
    elicit_schema(&ctx, "Please choose from the enum fields", schema).await
}
