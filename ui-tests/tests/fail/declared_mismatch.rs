use switchyard::prelude::*;

mod api {
    use switchyard::prelude::*;

    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    pub struct Add {
        pub a: i64,
    }

    #[mcp_tool]
    pub async fn add(args: Add) -> Json<i64>;

    #[mcp_rpc("acme/negate")]
    pub async fn negate(n: Add) -> Result<i64, switchyard::McpError>;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Mine {
    a: i64,
}

/// Other params.
#[mcp_tool(name = "add_params", declared = api::add)]
async fn add_params(args: Mine) -> Json<i64> {
    Json(args.a)
}

/// Another output type.
#[mcp_tool(name = "add_output", declared = api::add)]
async fn add_output(args: api::Add) -> Json<u8> {
    Json(args.a as u8)
}

#[mcp_rpc("acme/negate2", declared = api::negate)]
async fn negate(n: Mine) -> Result<u64, McpError> {
    Ok(n.a as u64)
}

/// An output the declaration cannot be checked against.
#[mcp_tool(name = "add", group = "opaque", declared = api::add)]
async fn add_opaque(args: api::Add) -> impl switchyard::handler::IntoToolOutcome {
    Json(args.a)
}

/// Not a declaration.
#[mcp_tool(name = "nothing", declared = api::Add)]
async fn nothing() {}

fn main() {}
