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

#[mcp_resource(uri = "files://{id}/{+id}")]
async fn repeated() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{#section}")]
async fn fragment_expansion() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{/path}")]
async fn path_segment_expansion() -> String {
    String::new()
}

#[mcp_resource(uri = "files://x{?query}")]
async fn query_expansion() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{a,b}")]
async fn variable_list() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{name:3}")]
async fn prefix_modifier() -> String {
    String::new()
}

#[mcp_resource(uri = "files://{+path*}")]
async fn explode_modifier() -> String {
    String::new()
}

#[mcp_resource(uri = "files://my files/{name}")]
async fn space_in_literal() -> String {
    String::new()
}

#[mcp_resource(uri = "files://100%/{name}")]
async fn bare_percent_in_literal() -> String {
    String::new()
}

#[mcp_completion(resource = "files://{path}", argument = "name")]
async fn complete_unknown_var() -> Vec<String> {
    Vec::new()
}

#[mcp_completion(resource = "files://{.ext}", argument = "ext")]
async fn complete_label_expansion() -> Vec<String> {
    Vec::new()
}

fn main() {}
