//! Typed calls: a declarations module (body-less `#[mcp_tool]`/`#[mcp_rpc]`), handlers that
//! implement it with `declared = ...` (returning `Result` where the declaration does not, and
//! taking extractors), and calls through both, including a handler declared nowhere else.
#![deny(warnings)]

use serde::{Deserialize, Serialize};
use switchyard::prelude::*;
use switchyard::testing::TestClient;

mod api {
    use serde::{Deserialize, Serialize};
    use switchyard::prelude::*;

    #[derive(Serialize, Deserialize, schemars::JsonSchema)]
    pub struct Add {
        pub a: i64,
        pub b: i64,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
    pub struct Total {
        pub total: i64,
    }

    /// Adds two numbers.
    #[mcp_tool(name = "math.add")]
    pub async fn add(args: Add) -> Json<Total>;

    /// Says hello.
    #[mcp_tool]
    pub async fn hello() -> String;

    #[mcp_rpc("acme/negate")]
    pub async fn negate(n: Total) -> Result<Total, switchyard::McpError>;
}

/// Adds, refusing overflow.
#[mcp_tool(name = "math.add", declared = api::add)]
async fn add(args: api::Add, _cancel: CancellationToken) -> Result<Json<api::Total>, ToolError> {
    let total = args.a.checked_add(args.b).ok_or_else(|| ToolError::new("overflow"))?;
    Ok(Json(api::Total { total }))
}

/// Says hello.
#[mcp_tool(declared = api::hello)]
async fn hello() -> &'static str {
    "hello"
}

#[mcp_rpc("acme/negate", declared = api::negate)]
async fn negate(n: api::Total, _ctx: RequestContext) -> Result<api::Total, McpError> {
    Ok(api::Total { total: -n.total })
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Word {
    word: String,
}

/// Declared only here: the handler is the declaration.
#[mcp_tool]
async fn shout(w: Word) -> String {
    w.word.to_uppercase()
}

#[tokio::main]
async fn main() {
    let client = TestClient::modern(Server::builder("t", "0").build().expect("build"));
    assert_eq!(api::add::call(&client, api::Add { a: 2, b: 3 }).await.expect("adds"), api::Total { total: 5 });
    assert_eq!(add::call(&client, api::Add { a: 1, b: 1 }).await.expect("adds"), api::Total { total: 2 });
    assert_eq!(api::hello::call(&client, ()).await.expect("hello"), "hello");
    assert_eq!(api::negate::call(&client, api::Total { total: 4 }).await.expect("negates"), api::Total { total: -4 });
    assert_eq!(shout::call(&client, Word { word: "hi".into() }).await.expect("shouts"), "HI");
    assert!(api::add::call(&client, api::Add { a: i64::MAX, b: 1 }).await.is_err());
}
