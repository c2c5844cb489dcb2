use switchyard::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    text: String,
}

// One attribute and one signature with many problems: all are reported in one compile.
#[mcp_tool(name = "bad name", nmae = "x", title = "T", title = "again", read_only = "yes", input_schema = "{")]
fn broken<T>(&self, (a, b): (u32, u32), args: Args, more: Args) -> String {
    args.text
}

fn main() {}
