//! `scopes = [...]` on every macro that takes it, beside `roles`, carried into the
//! registrations and listed by the server.
#![deny(warnings)]

use switchyard::__private::{PromptRegistration, ResourceRegistration, RpcRegistration, ToolRegistration, inventory};
use switchyard::prelude::*;

/// Reads a file.
#[mcp_tool(scopes = ["files:read"], group = "scopes")]
async fn read_file() -> &'static str {
    ""
}

/// Writes a file; editors only, with a token for both.
#[mcp_tool(roles = ["editor"], scopes = ["files:read", "files:write"], group = "scopes")]
async fn write_file() -> &'static str {
    ""
}

/// Summarizes a file.
#[mcp_prompt(scopes = ["files:read"], group = "scopes")]
async fn summarize() -> String {
    String::new()
}

/// A file.
#[mcp_resource(uri = "files://{name}", scopes = ["files:read"], group = "scopes")]
async fn file(name: String) -> String {
    name
}

#[mcp_rpc("acme/compact", scopes = ["admin:all"], group = "scopes")]
async fn compact() -> Result<(), McpError> {
    Ok(())
}

fn main() {
    let mut tools: Vec<_> = inventory::iter::<ToolRegistration>.into_iter().map(|r| (r.name, r.scopes)).collect();
    tools.sort();
    assert_eq!(tools, [("read_file", &["files:read"][..]), ("write_file", &["files:read", "files:write"][..])]);
    let prompts: Vec<_> = inventory::iter::<PromptRegistration>.into_iter().map(|r| r.scopes).collect();
    assert_eq!(prompts, [&["files:read"][..]]);
    let resources: Vec<_> = inventory::iter::<ResourceRegistration>.into_iter().map(|r| r.scopes).collect();
    assert_eq!(resources, [&["files:read"][..]]);
    let rpcs: Vec<_> = inventory::iter::<RpcRegistration>.into_iter().map(|r| (r.method, r.scopes)).collect();
    assert_eq!(rpcs, [("acme/compact", &["admin:all"][..])]);
    let server = Server::builder("t", "0").groups(["scopes"]).build().expect("build");
    assert_eq!(server.declared_scopes(), ["admin:all", "files:read", "files:write"]);
}
