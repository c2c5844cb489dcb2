use switchyard::prelude::*;

mod a {
    use switchyard::prelude::*;

    /// Echo from a.
    #[mcp_tool(name = "echo")]
    pub async fn echo_a() -> String {
        String::new()
    }
}

/// Echo, defaulting its name to the function's.
#[mcp_tool]
async fn echo() -> String {
    String::new()
}

/// A prompt named like a tool is fine: different kind.
#[mcp_prompt(name = "echo")]
async fn echo_prompt() -> String {
    String::new()
}

fn main() {}
