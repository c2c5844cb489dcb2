use switchyard::prelude::*;

#[mcp_resource(uri = "config://app")]
async fn config() -> String {
    String::new()
}

#[mcp_resource(uri = "config://app", name = "config-again")]
async fn config_again() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{path}")]
async fn file(path: String) -> String {
    path
}

#[mcp_resource(uri = "files://{path}", name = "other")]
async fn other_file(path: String) -> String {
    path
}

fn main() {}
