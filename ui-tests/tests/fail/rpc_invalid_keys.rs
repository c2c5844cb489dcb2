use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct Job {
    id: String,
}

#[mcp_rpc]
async fn unnamed() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc(name = "acme/named")]
async fn named() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("")]
async fn empty() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("sum", group = "")]
async fn unprefixed() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("acme/get job", routing_name = "")]
async fn spaced(job: Job) -> Result<(), McpError> {
    let _ = job.id;
    Ok(())
}

#[mcp_rpc("rpc.acme/x", routing_name = "jobId")]
async fn json_rpc_reserved() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("acme/ext", extension = "ext", capability = "extensions", eras = "legacy")]
async fn bad_extension() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc("acme/eras", eras = "moden", capability = "sampling.tools")]
async fn bad_eras() -> Result<(), McpError> {
    Ok(())
}

#[mcp_rpc(group = "g", "acme/late")]
async fn late() -> Result<(), McpError> {
    Ok(())
}

fn main() {}
