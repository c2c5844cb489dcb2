//! One name may be registered once per group: a binary can host several servers.
#![deny(warnings)]

use switchyard::prelude::*;

mod alpha {
    use switchyard::prelude::*;

    /// Alpha's status.
    #[mcp_tool(group = "alpha")]
    pub async fn status() -> &'static str {
        "alpha"
    }
}

/// Beta's status.
#[mcp_tool(name = "status", group = "beta")]
async fn beta_status() -> &'static str {
    "beta"
}

fn main() {
    for group in ["alpha", "beta"] {
        let server = Server::builder("t", "0").groups([group]).build().expect("build");
        assert!(server.table().tool("status").is_some());
    }
    assert!(Server::builder("t", "0").build().is_err(), "both groups at once collide at build()");
}
