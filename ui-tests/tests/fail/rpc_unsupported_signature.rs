use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct A {
    a: u32,
}

#[mcp_rpc("acme/generic")]
async fn generic<T: serde::de::DeserializeOwned>(params: T) -> Result<u32, McpError> {
    let _ = params;
    Ok(1)
}

#[mcp_rpc("acme/opaque")]
async fn opaque(params: impl serde::de::DeserializeOwned) -> Result<u32, McpError> {
    let _ = params;
    Ok(1)
}

#[mcp_rpc("acme/two")]
async fn two(first: A, second: A) -> Result<u32, McpError> {
    Ok(first.a + second.a)
}

#[mcp_rpc("acme/sync")]
fn sync(params: A) -> Result<u32, McpError> {
    Ok(params.a)
}

fn main() {}
