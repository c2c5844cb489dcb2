//! `rpc = ...` naming a tool, prompt or resource function: tools, prompts and resources have no
//! method of their own; the error says which built-in method to filter instead.
use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// Echoes the text.
#[mcp_tool]
async fn echo(args: EchoArgs) -> String {
    args.text
}

/// Written as if the tool were a method with its own params and result.
#[mcp_filter(rpc = echo)]
async fn on_echo(req: TypedRequest<EchoArgs>, next: Next<EchoArgs, String>) -> Result<String, McpError> {
    next.run(req).await
}

mod prompts {
    use switchyard::prelude::*;

    /// Greets.
    #[mcp_prompt]
    pub(crate) async fn greet() -> String {
        "Hello".to_owned()
    }
}

/// Written with the types of `prompts/get`, through a path to the prompt.
#[mcp_filter(rpc = prompts::greet, order = 1)]
async fn on_greet(
    req: TypedRequest<GetPromptParams>,
    next: Next<GetPromptParams, GetPromptResult>,
) -> Result<GetPromptResult, McpError> {
    next.run(req).await
}

/// The configuration.
#[mcp_resource(uri = "config://app")]
async fn config() -> String {
    String::new()
}

/// An alternate-result filter.
#[mcp_filter(alternate, rpc = config)]
async fn on_config(
    req: TypedRequest<ReadResourceParams>,
    next: switchyard::AltNext<ReadResourceParams, ReadResourceResult>,
) -> Result<switchyard::Alternate<ReadResourceResult>, McpError> {
    next.run(req).await
}

fn main() {}
