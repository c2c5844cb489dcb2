//! A tool without arguments: the input schema is an empty object schema; `()` is a valid return.
#![deny(warnings)]

use switchyard::prelude::*;

/// Does nothing, successfully.
#[mcp_tool]
async fn noop() {}

#[mcp_tool(name = "server.time", description = "The server's clock")]
async fn now() -> &'static str {
    "12:00"
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    let noop = table.tool("noop").expect("registered");
    assert_eq!(noop.definition["inputSchema"]["type"], "object");
    assert_eq!(noop.definition["description"], "Does nothing, successfully.");
    assert!(noop.definition.get("annotations").is_none());
    assert!(noop.definition.get("outputSchema").is_none());
    assert_eq!(table.tool("server.time").expect("registered").definition["description"], "The server's clock");
}
