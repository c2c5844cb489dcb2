//! A typed RPC without a params argument: any params object decodes, extra keys included.
#![deny(warnings)]

use switchyard::prelude::*;

#[derive(serde::Serialize)]
struct Version {
    version: &'static str,
}

/// The error type only needs to convert into `McpError`.
struct Unavailable;

impl From<Unavailable> for McpError {
    fn from(_: Unavailable) -> Self {
        McpError::internal("unavailable")
    }
}

#[mcp_rpc("acme/version", group = "version")]
async fn version() -> Result<Version, Unavailable> {
    Ok(Version { version: "1.0" })
}

/// Extractors alone are fine too.
#[mcp_rpc("acme/whoami", group = "version")]
async fn whoami(ctx: RequestContext) -> std::result::Result<String, McpError> {
    Ok(ctx.method().to_owned())
}

fn main() {
    let server = Server::builder("t", "0").groups(["version"]).build().expect("build");
    assert!(server.serves_modern_method("acme/version"));
    assert!(server.serves_modern_method("acme/whoami"));
    let _: fn(<version as switchyard::RpcMethod>::Params) = |_: switchyard::__private::NoParams| {};
}
