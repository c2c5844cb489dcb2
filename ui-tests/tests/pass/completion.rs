//! Completion handlers for a prompt argument and for a resource template variable.
#![deny(warnings)]

use switchyard::prelude::*;
use switchyard::registry::CompletionKey;
use switchyard::{CompletionRequest, McpError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ReviewArgs {
    language: String,
}

/// Asks for a review.
#[mcp_prompt]
async fn review(args: ReviewArgs) -> String {
    args.language
}

#[mcp_completion(prompt = "review", argument = "language")]
async fn languages(req: CompletionRequest) -> Vec<String> {
    ["rust", "go"].iter().filter(|l| l.starts_with(&req.argument.value)).map(|l| l.to_string()).collect()
}

/// A file.
#[mcp_resource(uri = "files://{path}")]
async fn file(path: String) -> String {
    path
}

#[mcp_completion(resource = "files://{path}", group = "default")]
async fn paths(_ctx: RequestContext) -> Result<Completion, McpError> {
    Ok(Completion::default())
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    assert!(table.completion(CompletionKey::Prompt("review".to_owned()), "language").is_some());
    assert!(table.completion(CompletionKey::Prompt("review".to_owned()), "other").is_none());
    assert!(table.completion(CompletionKey::Resource("files://{path}".to_owned()), "path").is_some());
}
