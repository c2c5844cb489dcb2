use switchyard::prelude::*;

/// Empty list.
#[mcp_tool(scopes = [])]
async fn nothing() -> &'static str {
    ""
}

/// A single string instead of an array.
#[mcp_tool(scopes = "files:read")]
async fn single() -> &'static str {
    ""
}

/// Two scopes in one string, a quote, a duplicate, an empty one, a non-ASCII one.
#[mcp_prompt(scopes = ["files:read files:write", "a\"b", "x", "x", "", "fichiers:lire·tout"])]
async fn messy() -> String {
    String::new()
}

const SCOPES: &[&str] = &["files:read"];

#[mcp_rpc("acme/reindex", scopes = SCOPES)]
async fn reindex() -> Result<(), McpError> {
    let _ = SCOPES;
    Ok(())
}

#[mcp_resource(uri = "audit://log", scopes = ["audit", 7])]
async fn audit_log() -> String {
    String::new()
}

fn main() {}
