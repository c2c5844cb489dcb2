//! Prompt and completion fixtures (conformance README §2.3, §2.4).

use super::tools::PNG_1X1;
use schemars::JsonSchema;
use serde::Deserialize;
use switchyard::prelude::*;

/// A simple prompt without arguments.
#[mcp_prompt]
async fn test_simple_prompt() -> Result<String, McpError> {
    Ok("This is a simple prompt for testing.".to_owned())
}

/// Arguments of `test_prompt_with_arguments`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TwoArgs {
    /// First test argument.
    pub arg1: String,
    /// Second test argument.
    pub arg2: String,
}

/// A prompt with two required arguments.
#[mcp_prompt]
async fn test_prompt_with_arguments(args: TwoArgs) -> Result<String, McpError> {
    Ok(format!("Prompt with arguments: arg1='{}', arg2='{}'", args.arg1, args.arg2))
}

/// Arguments of `test_prompt_with_embedded_resource`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceArg {
    /// URI of the resource to embed.
    pub resource_uri: String,
}

/// A prompt that embeds a resource.
#[mcp_prompt]
async fn test_prompt_with_embedded_resource(args: ResourceArg) -> Result<Vec<PromptMessage>, McpError> {
    Ok(vec![
        PromptMessage::user(Content::resource(ResourceContents::text(
            args.resource_uri,
            Some("text/plain"),
            "Embedded resource content for testing.",
        ))),
        PromptMessage::user_text("Please process the embedded resource above."),
    ])
}

/// A prompt that includes an image.
#[mcp_prompt]
async fn test_prompt_with_image() -> Result<Vec<PromptMessage>, McpError> {
    Ok(vec![
        PromptMessage::user(Content::image(PNG_1X1, "image/png")),
        PromptMessage::user_text("Please analyze the image above."),
    ])
}

/// Completes `arg1` of `test_prompt_with_arguments` from a fixed word list.
#[mcp_completion(prompt = "test_prompt_with_arguments")]
async fn complete_prompt_args(req: switchyard::CompletionRequest) -> Result<Vec<String>, McpError> {
    let words = ["paris", "park", "party", "test", "testing", "tester"];
    Ok(words.iter().filter(|w| w.starts_with(&req.argument.value)).map(|w| w.to_string()).collect())
}
