use switchyard::prelude::*;

#[mcp_tool]
async fn echo() -> String {
    String::new()
}

#[mcp_prompt(name = "review")]
async fn review() -> String {
    String::new()
}

/// Blank descriptions do not count.
#[mcp_tool(description = "  ")]
async fn blank() -> String {
    String::new()
}

fn main() {}
