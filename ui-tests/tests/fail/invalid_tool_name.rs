use switchyard::prelude::*;

/// Spaces are not allowed.
#[mcp_tool(name = "get weather")]
async fn weather() -> String {
    String::new()
}

/// Empty.
#[mcp_tool(name = "")]
async fn empty() -> String {
    String::new()
}

/// The function name is the default, and it is not ASCII.
#[mcp_tool]
async fn grüßen() -> String {
    String::new()
}

/// A name key without a value.
#[mcp_tool(name)]
async fn unnamed() -> String {
    String::new()
}

fn main() {}
