use switchyard::prelude::*;

struct Caller;

/// `#[extract]` on a type that is no extractor.
#[mcp_tool]
async fn who(#[extract] caller: Caller) -> String {
    let Caller = caller;
    String::new()
}

struct Id(u32);

/// A template variable whose type does not implement FromStr.
#[mcp_resource(uri = "items://{id}")]
async fn item(id: Id) -> String {
    id.0.to_string()
}

/// A completion handler taking the wrong request type.
#[mcp_completion(prompt = "who")]
async fn complete(req: String) -> Vec<String> {
    vec![req]
}

fn main() {}
