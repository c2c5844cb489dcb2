use switchyard::prelude::*;

#[mcp_resource(uri = "files://{path")]
async fn unclosed() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{}/x")]
async fn empty_var() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{dir}{name}")]
async fn adjacent() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{id}/{id}")]
async fn repeated() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{+path}")]
async fn reserved_expansion() -> String {
    String::new()
}

#[mcp_completion(resource = "files://{path}", argument = "name")]
async fn complete_unknown_var() -> Vec<String> {
    Vec::new()
}

fn main() {}
