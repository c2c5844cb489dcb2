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

fn main() {}
