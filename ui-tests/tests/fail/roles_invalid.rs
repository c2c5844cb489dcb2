use switchyard::prelude::*;

/// Empty list.
#[mcp_tool(roles = [])]
async fn nobody() -> &'static str {
    ""
}

/// A single string instead of an array.
#[mcp_tool(roles = "admin")]
async fn single() -> &'static str {
    ""
}

/// Duplicates and empty names.
#[mcp_prompt(roles = ["editor", "", "editor", " admin", "editor"])]
async fn messy() -> String {
    String::new()
}

#[mcp_resource(uri = "audit://log", roles = ["auditor", 7, AUDITOR], roles = ["admin"])]
async fn audit_log() -> String {
    String::new()
}

const ADMINS: &[&str] = &["admin"];

#[mcp_rpc("acme/reindex", roles = ADMINS)]
async fn reindex() -> Result<(), McpError> {
    let _ = ADMINS;
    Ok(())
}

#[mcp_rpc("acme/compact", role = ["ops"])]
async fn compact() -> Result<(), McpError> {
    Ok(())
}

#[mcp_completion(prompt = "release-note", roles = ["editor"])]
async fn complete() -> Vec<String> {
    Vec::new()
}

fn main() {}
