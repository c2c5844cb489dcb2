use switchyard::prelude::*;

/// Every metadata key the schema has, declared in the attributes.
#[mcp_tool(
    title = "Roll dice",
    icons = ["https://example.com/dice.png", icon(src = "data:image/svg+xml;base64,PHN2Zy8+", mime_type = "image/svg+xml", sizes = ["any"], theme = "dark")],
    meta = r#"{"com.example/rank": 1, "ui": {"resourceUri": "ui://dice/view.html"}}"#
)]
async fn roll() -> String {
    String::new()
}

/// A prompt with an icon.
#[mcp_prompt(icons = ["https://example.com/p.png"], meta = r#"{"com.example/kind": "review"}"#)]
async fn review() -> String {
    String::new()
}

/// A sized resource with an icon.
#[mcp_resource(uri = "notes://today", size = 1024, icons = ["https://example.com/n.png"], meta = r#"{"x": true}"#)]
async fn today() -> String {
    String::new()
}

fn main() {}
