use switchyard::prelude::*;

/// A mode that does not exist.
#[mcp_tool(task_support = "always")]
async fn always() -> String {
    String::new()
}

/// Not a string literal.
#[mcp_tool(task_support = true)]
async fn flag() -> String {
    String::new()
}

fn main() {}
