//! A params type named like an extractor is taken for an extractor unless marked `#[params]`;
//! the error says how to fix it.
use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct State {
    name: String,
}

/// Sets the state.
#[mcp_tool]
async fn set_state(state: State) -> String {
    state.name
}

fn main() {}
