//! `apps`: an MCP Apps server (the `io.modelcontextprotocol/ui` extension). The tool `roll_dice`
//! is linked to a small interactive view, a dice roller: a host that renders MCP Apps shows it
//! beside the tool's result, and its button rolls again by calling `roll_dice` through the host.
//! Hosts without MCP Apps get the same tool with a plain text result.
//!
//! ```text
//! cargo run --example apps -- --http 127.0.0.1:3000    # Streamable HTTP at /mcp
//! ```
//!
//! The view's source is `view/dice.html` and `view/dice.js`; `view/dist/dice.html` is that page
//! bundled into one self-contained file (`tests/apps/build-view.sh`), committed so that building
//! the server needs no npm.

use rand::Rng;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::process::ExitCode;
use switchyard::prelude::*;
use switchyard_apps::{AppView, Apps, Visibility};

/// The view's URI, which `roll_dice` is linked to.
const DICE_VIEW: &str = "ui://dice/roller";

/// Arguments of `roll_dice`.
#[derive(Deserialize, JsonSchema)]
struct RollArgs {
    /// How many dice to roll, 1 to 10 (default 1).
    count: Option<u32>,
    /// Faces of each die, 2 to 100 (default 6).
    sides: Option<u32>,
}

/// Rolls dice and returns each face and the total.
#[mcp_tool(read_only)]
async fn roll_dice(args: RollArgs) -> Result<CallToolResult, ToolError> {
    let count = args.count.unwrap_or(1);
    let sides = args.sides.unwrap_or(6);
    if !(1..=10).contains(&count) {
        return Err(ToolError::new(format!("count must be 1 to 10, not {count}")));
    }
    if !(2..=100).contains(&sides) {
        return Err(ToolError::new(format!("sides must be 2 to 100, not {sides}")));
    }
    let mut rng = rand::rng();
    let rolls: Vec<u32> = (0..count).map(|_| rng.random_range(1..=sides)).collect();
    let total: u32 = rolls.iter().sum();
    // The text is what a host without MCP Apps (and the model) reads; the view draws the
    // structured content.
    let faces = rolls.iter().map(u32::to_string).collect::<Vec<_>>().join(" + ");
    let text = if count == 1 {
        format!("Rolled a d{sides}: {total}")
    } else {
        format!("Rolled {count}d{sides}: {faces} = {total}")
    };
    Ok(CallToolResult::success(vec![Content::text(text)])
        .with_structured_content(json!({ "rolls": rolls, "total": total, "sides": sides })))
}

#[tokio::main]
async fn main() -> ExitCode {
    let view = AppView::html(DICE_VIEW, "Dice roller", include_str!("view/dist/dice.html"))
        .title("Dice roller")
        .description("Shows the dice of the last roll, with a button to roll again")
        .prefers_border(true);
    let apps = Apps::new().view(view).link_tool("roll_dice", DICE_VIEW, Visibility::ModelAndApp);
    let builder = Server::builder("switchyard-apps", env!("CARGO_PKG_VERSION"))
        .instructions("Call roll_dice to roll dice; hosts with MCP Apps show the roll in a dice view.");
    let server = match apps.install(builder).build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    switchyard::cli::run(server).await
}
