use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Word {
    pub word: String,
}

/// Served keys and an extractor on a declaration.
#[mcp_tool(name = "shout", title = "Shout", read_only, roles = ["admin"])]
pub async fn shout(w: Word, log: Logger) -> String;

#[mcp_rpc("acme/x", group = "g", declared = other)]
pub async fn x(w: Word) -> Result<String, McpError>;

/// Named like a primitive type: no type of that name can carry the call.
#[mcp_tool]
pub async fn u16() -> String;

/// Prompts are not declared.
#[mcp_prompt]
pub async fn review() -> String;

fn main() {}
