use switchyard::prelude::*;

/// Shadowing a protocol method.
#[mcp_tool(name = "tools/call")]
async fn call() -> String {
    String::new()
}

/// The default name is reserved too.
#[mcp_tool]
async fn ping() -> String {
    String::new()
}

/// A name in one of MCP's namespaces.
#[mcp_tool(name = "tasks/get")]
async fn get_task() -> String {
    String::new()
}

fn main() {}
