use switchyard::prelude::*;

mod api {
    use switchyard::prelude::*;

    #[mcp_tool(name = "math.add")]
    pub async fn add() -> Json<i64>;

    #[mcp_tool]
    pub async fn label() -> String;
}

/// Served under its function's name, not the declared `math.add`.
#[mcp_tool(declared = api::add)]
async fn add() -> Json<i64> {
    Json(1)
}

/// The same output type, but as structured output instead of text.
#[mcp_tool(declared = api::label)]
async fn label() -> Json<String> {
    Json("a".into())
}

fn main() {}
