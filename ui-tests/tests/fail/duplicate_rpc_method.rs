use switchyard::prelude::*;

mod a {
    use switchyard::prelude::*;

    #[mcp_rpc("acme/sum")]
    pub async fn sum() -> Result<u32, McpError> {
        Ok(1)
    }
}

#[mcp_rpc("acme/sum")]
async fn sum_again() -> Result<u32, McpError> {
    Ok(2)
}

/// The same method in another group is fine.
#[mcp_rpc("acme/sum", group = "other")]
async fn sum_other() -> Result<u32, McpError> {
    Ok(3)
}

fn main() {}
