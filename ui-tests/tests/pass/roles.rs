//! `roles = [...]` on every macro that takes it, carried into the registrations.
#![deny(warnings)]

use switchyard::__private::{PromptRegistration, ResourceRegistration, RpcRegistration, ToolRegistration, inventory};
use switchyard::prelude::*;

/// Deletes everything.
#[mcp_tool(roles = ["admin"], destructive, group = "roles")]
async fn wipe() -> &'static str {
    "done"
}

/// Lists things; anyone may.
#[mcp_tool(group = "roles")]
async fn list() -> &'static str {
    ""
}

/// Drafts a release note.
#[mcp_prompt(name = "release-note", roles = ["editor", "admin"], group = "roles")]
async fn release_note() -> String {
    String::new()
}

/// The audit log.
#[mcp_resource(uri = "audit://log", roles = ["auditor"], group = "roles")]
async fn audit_log() -> String {
    String::new()
}

/// One audit entry.
#[mcp_resource(uri = "audit://entries/{id}", roles = ["auditor", "admin",], group = "roles")]
async fn audit_entry(id: u64) -> String {
    id.to_string()
}

#[mcp_rpc("acme/reindex", roles = ["ops"], group = "roles")]
async fn reindex() -> Result<(), McpError> {
    Ok(())
}

fn main() {
    let tools: Vec<_> = inventory::iter::<ToolRegistration>.into_iter().map(|r| (r.name, r.roles)).collect();
    assert!(tools.contains(&("wipe", &["admin"][..])), "{tools:?}");
    assert!(tools.contains(&("list", &[][..])), "{tools:?}");
    let prompts: Vec<_> = inventory::iter::<PromptRegistration>.into_iter().map(|r| r.roles).collect();
    assert_eq!(prompts, [&["editor", "admin"][..]]);
    let mut resources: Vec<_> = inventory::iter::<ResourceRegistration>.into_iter().map(|r| (r.uri, r.roles)).collect();
    resources.sort();
    assert_eq!(resources, [("audit://entries/{id}", &["auditor", "admin"][..]), ("audit://log", &["auditor"][..])]);
    let rpcs: Vec<_> = inventory::iter::<RpcRegistration>.into_iter().map(|r| (r.method, r.roles)).collect();
    assert_eq!(rpcs, [("acme/reindex", &["ops"][..])]);
    Server::builder("t", "0").groups(["roles"]).build().expect("build");
}
