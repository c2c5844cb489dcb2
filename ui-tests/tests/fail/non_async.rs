use switchyard::prelude::*;

/// Not async.
#[mcp_tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
