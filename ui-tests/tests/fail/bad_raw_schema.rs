use switchyard::prelude::*;

#[derive(serde::Deserialize)]
struct Query {
    q: String,
}

/// Not JSON.
#[mcp_tool(input_schema = r#"{"type": "object", "properties": }"#)]
async fn broken(query: Query) -> String {
    query.q
}

/// Not an object schema.
#[mcp_tool(input_schema = r#"{"type": "string"}"#)]
async fn string_root(query: Query) -> String {
    query.q
}

/// Read-only and destructive contradict each other.
#[mcp_tool(read_only, destructive)]
async fn contradictory() -> String {
    String::new()
}

fn main() {}
