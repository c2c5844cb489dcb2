//! A tool's error type must say how it reaches the client: `ToolError` (an `isError` result,
//! where `?` takes any error), `McpError` (a JSON-RPC error), `ToolFailure`, `String` or
//! `anyhow::Error`. A bare `std::io::Error` is refused with that advice.

use switchyard::prelude::*;

/// Reads a file.
#[mcp_tool]
async fn read() -> Result<String, std::io::Error> {
    std::fs::read_to_string("/etc/hostname")
}

fn main() {}
