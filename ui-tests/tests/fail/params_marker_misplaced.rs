//! `#[params]` with `#[extract]` on one argument, and on a resource handler, are errors.
use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    name: String,
}

/// Both markers.
#[mcp_tool]
async fn both(#[params] #[extract] args: Args) -> String {
    args.name
}

/// A resource has no params.
#[mcp_resource(uri = "test://x", name = "x")]
async fn resource(#[params] args: Args) -> String {
    args.name
}

fn main() {}
