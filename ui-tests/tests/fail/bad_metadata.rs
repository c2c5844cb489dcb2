use switchyard::prelude::*;

/// Icons whose sources a client must never load, and malformed fields.
#[mcp_tool(icons = [
    "javascript:alert(1)",
    "file:///etc/passwd",
    icon(src = "https://example.com/a.png", mime_type = "text/html", sizes = ["big"], theme = "blue"),
    icon(mime_type = "image/png"),
    42,
])]
async fn bad_icons() -> String {
    String::new()
}

/// A `_meta` key under the prefix the MCP specification reserves.
#[mcp_tool(meta = r#"{"io.modelcontextprotocol/ui": {}}"#)]
async fn reserved_meta() -> String {
    String::new()
}

/// `meta` that is not a JSON object.
#[mcp_prompt(meta = "[1, 2]")]
async fn list_meta() -> String {
    String::new()
}

/// A malformed `_meta` key.
#[mcp_resource(uri = "notes://a", meta = r#"{"-bad": 1}"#)]
async fn bad_key() -> String {
    String::new()
}

/// A size on a template.
#[mcp_resource(uri = "notes://{id}", size = 10)]
async fn sized_template(id: String) -> String {
    id
}

/// A size that is not a number of bytes.
#[mcp_resource(uri = "notes://b", size = -1)]
async fn negative_size() -> String {
    String::new()
}

fn main() {}
