use switchyard::prelude::*;

#[derive(schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// Echo.
#[mcp_tool]
async fn echo(args: EchoArgs) -> String {
    args.text
}

fn main() {}
