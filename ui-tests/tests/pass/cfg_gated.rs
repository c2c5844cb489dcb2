//! A `#[cfg]` below the macro attribute gates the registration together with the function.
#![deny(warnings)]

use switchyard::prelude::*;

/// Compiled out: neither the function nor its registration exists.
#[mcp_tool]
#[cfg(any())]
async fn gone() -> String {
    missing_function()
}

/// Compiled in.
#[mcp_tool]
#[cfg(all())]
async fn kept() -> String {
    String::new()
}

fn main() {
    let server = Server::builder("t", "0").build().expect("build");
    assert!(server.table().tool("gone").is_none());
    assert!(server.table().tool("kept").is_some());
}
