use switchyard::prelude::*;

/// Echo.
#[mcp_tool(nmae = "echo", readonly)]
async fn echo() -> String {
    String::new()
}

#[mcp_resource(uri = "config://app", mime = "text/plain", colour = "blue")]
async fn config() -> String {
    String::new()
}

#[mcp_rpc("acme/sum", routing = "id", extensions = "io.example/ext")]
async fn sum() -> Result<u32, McpError> {
    Ok(1)
}

#[mcp_filter(ordr = 1, methods = "acme/sum")]
async fn audit(req: RawRequest, next: RawNext) -> RawResponse {
    next.run(req).await
}

fn main() {}
