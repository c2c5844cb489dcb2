use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct EchoArgs {
    text: String,
}

/// Echo.
#[mcp_tool]
async fn echo(args: EchoArgs) -> String {
    args.text
}

#[derive(serde::Deserialize)]
struct ReviewArgs {
    code: String,
}

/// Review.
#[mcp_prompt]
async fn review(args: ReviewArgs) -> String {
    args.code
}

fn main() {}
