//! `quickstart`: a small MCP server: two tools, a prompt and a resource.
//!
//! ```text
//! cargo run --example quickstart -- --stdio                  # for a desktop client
//! cargo run --example quickstart -- --http 127.0.0.1:3000    # Streamable HTTP at /mcp
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use switchyard::prelude::*;

/// Arguments of `add`.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

/// The structured result of `add`.
#[derive(Serialize, JsonSchema)]
struct Sum {
    /// a + b
    sum: f64,
}

/// Adds two numbers.
#[mcp_tool(read_only)]
async fn add(args: AddArgs) -> Result<Json<Sum>, ToolError> {
    let sum = args.a + args.b;
    if !sum.is_finite() {
        return Err(ToolError::new("the sum is not a finite number"));
    }
    Ok(Json(Sum { sum }))
}

/// Arguments of `greet`.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
    /// Greeting to use (default "Hello").
    greeting: Option<String>,
}

/// Greets someone, logging what it does.
#[mcp_tool]
async fn greet(args: GreetArgs, log: Logger) -> Result<String, ToolError> {
    log.info(format!("greeting {}", args.name)).await;
    Ok(format!("{}, {}!", args.greeting.as_deref().unwrap_or("Hello"), args.name))
}

/// Arguments of `review`.
#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
}

/// Asks the model to review a piece of code.
#[mcp_prompt]
async fn review(args: ReviewArgs) -> Result<String, McpError> {
    Ok(format!("Please review this code and point out bugs:\n\n{}", args.code))
}

/// The server's own README, as a resource.
#[mcp_resource(uri = "quickstart://readme", name = "readme", mime_type = "text/markdown")]
async fn readme() -> Result<String, McpError> {
    Ok("# quickstart\n\nTools: `add`, `greet`. Prompt: `review`.\n".to_owned())
}

#[tokio::main]
async fn main() -> ExitCode {
    let server = match Server::builder("switchyard-quickstart", env!("CARGO_PKG_VERSION")).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    switchyard::cli::run(server).await
}
