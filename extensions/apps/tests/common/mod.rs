//! The tools and views the tests serve: one linked for model and app, one app-only, one
//! model-only, one unlinked, and one whose own `meta` declares UI keys.

#![allow(dead_code)] // each test binary uses a part

use switchyard::{ServerBuilder, ToolError, mcp_tool};
use switchyard_apps::{AppView, Apps, Csp, Permissions, Visibility};

pub const GROUP: &str = "apps";
pub const VIEW: &str = "ui://dice/roller";
pub const HTML: &str = "<!doctype html><html><body><button>Roll</button></body></html>";

/// Rolls a die (linked to the view for model and app).
#[mcp_tool(group = "apps")]
async fn roll() -> Result<String, ToolError> {
    Ok("You rolled a 4".into())
}

/// Re-rolls from the view only.
#[mcp_tool(group = "apps")]
async fn reroll() -> Result<String, ToolError> {
    Ok("You rolled a 2".into())
}

/// Explains the rules (model only, result shown in the view).
#[mcp_tool(group = "apps")]
async fn rules() -> Result<String, ToolError> {
    Ok("Highest roll wins".into())
}

/// Has nothing to do with views.
#[mcp_tool(group = "apps")]
async fn plain() -> Result<String, ToolError> {
    Ok("plain".into())
}

/// Declares its own UI keys beside another `_meta` key.
#[mcp_tool(group = "apps", meta = r#"{"ui": {"visibility": ["app"]}, "com.example/rank": 1}"#)]
async fn own_meta() -> Result<String, ToolError> {
    Ok("own".into())
}

pub fn view() -> AppView {
    AppView::html(VIEW, "Dice roller", HTML)
        .title("Dice")
        .description("Rolls dice on a button press")
        .csp(Csp::new().connect_domains(["https://api.example.com"]).resource_domains(["https://*.cdn.example.com"]))
        .permissions(Permissions::new().clipboard_write())
        .prefers_border(true)
}

pub fn apps() -> Apps {
    Apps::new()
        .view(view())
        .link_tool("roll", VIEW, Visibility::ModelAndApp)
        .link_tool("reroll", VIEW, Visibility::AppOnly)
        .link_tool("rules", VIEW, Visibility::ModelOnly)
}

pub fn builder() -> ServerBuilder {
    switchyard::Server::builder("dice", "1.0.0").groups([GROUP])
}
