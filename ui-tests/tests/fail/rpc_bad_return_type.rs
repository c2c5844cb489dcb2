use switchyard::prelude::*;

#[mcp_rpc("acme/count")]
async fn count() -> u32 {
    1
}

#[mcp_rpc("acme/nothing")]
async fn nothing() {}

type Result<T> = std::result::Result<T, McpError>;

#[mcp_rpc("acme/alias")]
async fn alias() -> Result<u32> {
    Ok(1)
}

#[mcp_rpc("acme/parse")]
async fn parse() -> std::result::Result<u32, std::num::ParseIntError> {
    "1".parse()
}

struct NotSerialize;

#[mcp_rpc("acme/opaque")]
async fn opaque() -> std::result::Result<NotSerialize, McpError> {
    Ok(NotSerialize)
}

struct NotDeserialize;

#[mcp_rpc("acme/raw")]
async fn raw(params: NotDeserialize) -> std::result::Result<u32, McpError> {
    let NotDeserialize = params;
    Ok(1)
}

fn main() {}
