use switchyard::prelude::*;

/// A resource needs a URI.
#[mcp_resource(name = "config")]
async fn config() -> String {
    String::new()
}

#[mcp_completion(argument = "language")]
async fn languages() -> Vec<String> {
    Vec::new()
}

#[mcp_completion(prompt = "review", resource = "files://{path}")]
async fn both() -> Vec<String> {
    Vec::new()
}

fn main() {}
