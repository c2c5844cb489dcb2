//! A hand-written input schema replaces the generated one, so the params type needs only
//! `Deserialize` (no `JsonSchema`); the schema text is served unchanged, key order included.
#![deny(warnings)]

use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct Query {
    q: String,
}

/// Searches.
#[mcp_tool(input_schema = r#"{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"]}"#)]
async fn search(query: Query) -> Result<String, ToolError> {
    Ok(query.q)
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    let schema = &table.tool("search").expect("registered").definition["inputSchema"];
    assert_eq!(schema.to_string(), r#"{"type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"]}"#);
}
