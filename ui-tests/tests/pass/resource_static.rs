//! Static resources: the name defaults to the function's, the description to the doc comment
//! (optional for resources).
#![deny(warnings)]

use switchyard::prelude::*;

/// The current configuration.
#[mcp_resource(uri = "config://app", mime_type = "application/json", title = "App config")]
async fn config() -> Result<String, McpError> {
    Ok("{}".to_owned())
}

#[mcp_resource(uri = "file:///logo.png", name = "logo", mime_type = "image/png")]
async fn logo_bytes(_ctx: RequestContext) -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    let listed: Vec<String> = table.resources().map(|r| r.definition["name"].to_string()).collect();
    assert_eq!(listed, ["\"config\"", "\"logo\""]);
    let (config, vars) = table.resolve_resource("config://app").expect("registered");
    assert!(vars.is_empty());
    assert_eq!(config.definition["mimeType"], "application/json");
    assert_eq!(config.definition["description"], "The current configuration.");
    assert!(config.template.is_none());
}
