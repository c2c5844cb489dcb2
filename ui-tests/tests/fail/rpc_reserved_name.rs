use switchyard::prelude::*;

/// Shadowing a protocol method.
#[mcp_rpc("tools/call")]
async fn call() -> Result<(), McpError> {
    Ok(())
}

/// MCP's own methods stay MCP's, whatever extension claims them.
#[mcp_rpc("tools/call", extension = "io.modelcontextprotocol/tasks")]
async fn call_as_extension() -> Result<(), McpError> {
    Ok(())
}

/// Names under `resources/` are for MCP's official extensions.
#[mcp_rpc("resources/watch")]
async fn watch() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("ping")]
async fn ping() -> Result<(), McpError> {
    Ok(())
}

/// `tasks/*` too: only with the official extension that defines it.
#[mcp_rpc("tasks/get")]
async fn get_task() -> Result<(), McpError> {
    Ok(())
}

/// A vendor's extension cannot add methods to an MCP namespace.
#[mcp_rpc("tasks/get", extension = "acme/x")]
async fn get_task_as_vendor() -> Result<(), McpError> {
    Ok(())
}

/// A malformed identifier is neither official nor an identifier.
#[mcp_rpc("tasks/list", extension = "io.modelcontextprotocol")]
async fn list_tasks() -> Result<(), McpError> {
    Ok(())
}

fn main() {}
