use switchyard::prelude::*;

/// Returns a number, which is not a tool result.
#[mcp_tool]
async fn count() -> u32 {
    1
}

/// The error type is not a tool error.
#[mcp_tool]
async fn parse() -> Result<String, std::num::ParseIntError> {
    Ok(String::new())
}

/// Prompts cannot return nothing.
#[mcp_prompt]
async fn nothing() {}

/// A resource cannot return a number.
#[mcp_resource(uri = "x://count")]
async fn resource_count() -> u32 {
    1
}

#[mcp_completion(prompt = "nothing")]
async fn complete() -> Vec<&'static str> {
    Vec::new()
}

fn main() {}
