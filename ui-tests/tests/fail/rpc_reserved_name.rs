use switchyard::prelude::*;

/// Shadowing a protocol method.
#[mcp_rpc("tools/call")]
async fn call() -> Result<(), McpError> {
    Ok(())
}

/// Everything under `resources/` is MCP's.
#[mcp_rpc("resources/watch")]
async fn watch() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("ping")]
async fn ping() -> Result<(), McpError> {
    Ok(())
}

/// `tasks/*` belongs to the Tasks extension.
#[mcp_rpc("tasks/get")]
async fn get_task() -> Result<(), McpError> {
    Ok(())
}

fn main() {}
