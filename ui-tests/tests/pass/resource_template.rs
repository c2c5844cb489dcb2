//! Resource templates: arguments named after template variables (`{var}` or `{+var}`) are
//! parsed with `FromStr` from the decoded value; `ResourceRequest` and extractors may sit beside
//! them.
#![deny(warnings)]

use switchyard::prelude::*;
use switchyard::ResourceRequest;

/// One user's profile.
#[mcp_resource(uri = "users://{org}/{id}/profile", name = "user-profile", mime_type = "text/plain")]
async fn profile(id: u64, req: ResourceRequest, org: String, _logger: Logger) -> Result<ResourceContents, McpError> {
    Ok(ResourceContents::text(req.uri, Some("text/plain"), format!("{org}/{id}")))
}

/// A file of a repository, by path.
#[mcp_resource(uri = "repo://{+path}/raw", name = "raw-file", mime_type = "text/plain")]
async fn raw_file(path: String) -> String {
    path
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    let (entry, vars) = table.resolve_resource("users://acme/42/profile").expect("matches the template");
    assert!(entry.template.is_some());
    assert_eq!(entry.definition["uriTemplate"], "users://{org}/{id}/profile");
    assert_eq!(vars["org"], "acme");
    assert_eq!(vars["id"], "42");
    let (entry, vars) = table.resolve_resource("repo://src/caf%C3%A9.rs/raw").expect("matches the template");
    assert_eq!(entry.definition["uriTemplate"], "repo://{+path}/raw");
    assert_eq!(vars["path"], "src/café.rs");
    assert!(table.resolve_resource("users://acme/a/b/profile").is_none(), "`{{id}}` matches no `/`");
}
