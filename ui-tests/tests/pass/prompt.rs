//! Prompts with and without params; params fields become the prompt's arguments.
#![deny(warnings)]

use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
    /// The language, if known.
    language: Option<String>,
}

/// Asks for a code review.
#[mcp_prompt(name = "review", title = "Code review")]
async fn review(args: ReviewArgs, _ctx: RequestContext) -> Vec<PromptMessage> {
    vec![PromptMessage::user_text(format!("Review this {}:\n{}", args.language.unwrap_or_default(), args.code))]
}

/// Says hello.
#[mcp_prompt]
async fn greet() -> Result<String, McpError> {
    Ok("Hello!".to_owned())
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    let review = table.prompt("review").expect("registered");
    assert_eq!(review.definition["title"], "Code review");
    assert_eq!(review.definition["description"], "Asks for a code review.");
    let args: Vec<(&str, bool)> = review.arguments.iter().map(|a| (a.name.as_str(), a.required)).collect();
    assert_eq!(args, [("code", true), ("language", false)]);
    assert_eq!(review.arguments[0].description.as_deref(), Some("The code to review."));
    assert!(table.prompt("greet").expect("registered").arguments.is_empty());
}
