//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): a tool linked to a view, and a tool only
//! the view calls. Clients that declare the extension see the links (`_meta.ui`), the view in
//! `resources/list` and the app-only tool; every other client sees `test_app_view` as a plain
//! tool whose text stands on its own.

use serde_json::json;
use switchyard::prelude::*;
use switchyard_apps::{AppView, Apps, Csp, Visibility};

/// The view both tools are linked to.
pub const CARD_VIEW: &str = "ui://everything/card";

/// A self-contained page: it needs no script from elsewhere, so its CSP lists no origin but
/// the one its icon comes from.
const CARD_HTML: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Switchyard everything</title></head>
<body>
  <img src="https://modelcontextprotocol.io/favicon.ico" alt="" width="16" height="16">
  <h1>Switchyard everything</h1>
  <p>An MCP Apps view served by <code>examples/everything</code>.</p>
</body>
</html>
"#;

/// Shows a card about this server; hosts that render MCP Apps show it in the card view, others
/// read the same words as text.
#[mcp_tool(title = "App view", read_only)]
async fn test_app_view() -> CallToolResult {
    CallToolResult::success(vec![Content::text("Switchyard everything: an MCP Apps card.")])
        .with_structured_content(json!({ "server": "switchyard-everything", "view": CARD_VIEW }))
}

/// Refreshes the card: called by the view through its host, hidden from the model.
#[mcp_tool(read_only)]
async fn test_app_refresh() -> CallToolResult {
    CallToolResult::success(vec![Content::text("Card refreshed.")])
        .with_structured_content(json!({ "refreshed": true }))
}

/// The view and the two links, for [`Apps::install`].
pub fn apps() -> Apps {
    let card = AppView::html(CARD_VIEW, "Everything card", CARD_HTML)
        .title("Switchyard everything")
        .description("A card about this server, beside test_app_view's result")
        .csp(Csp::new().resource_domains(["https://modelcontextprotocol.io"]))
        .prefers_border(true);
    Apps::new().view(card).link_tool("test_app_view", CARD_VIEW, Visibility::ModelAndApp).link_tool(
        "test_app_refresh",
        CARD_VIEW,
        Visibility::AppOnly,
    )
}
