//! A params type named like an extractor (`State`) is the params when marked `#[params]`.
#![deny(warnings)]

use switchyard::prelude::*;

/// The state to set.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct State {
    /// The new state's name.
    name: String,
}

/// Sets the state.
#[mcp_tool]
async fn set_state(#[params] state: State, ctx: RequestContext) -> String {
    format!("{} set by request {}", state.name, ctx.request_id())
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    let table = server.table();
    let tool = table.tool("set_state").expect("registered");
    assert_eq!(tool.definition["inputSchema"]["properties"]["name"]["type"], "string");
}
