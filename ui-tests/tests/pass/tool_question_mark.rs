//! `?` works in a tool on any error type: every `std::error::Error` converts into `ToolError`
//! (an `isError: true` result), and a tool may return `anyhow::Result<T>` or
//! `Result<T, Box<dyn Error + Send + Sync>>`.
#![deny(warnings)]

use switchyard::prelude::*;
use switchyard::testing::TestClient;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Path {
    path: String,
}

/// Reads a number from a file.
#[mcp_tool]
async fn read_number(args: Path) -> Result<String, ToolError> {
    let text = std::fs::read_to_string(&args.path)?;
    let n: u32 = text.trim().parse()?;
    Ok(n.to_string())
}

/// A protocol error met with `?` in a `ToolError` tool stays a protocol error.
#[mcp_tool]
async fn relay() -> Result<String, ToolError> {
    Err(McpError::invalid_params("upstream said no"))?
}

/// `anyhow` with context.
#[mcp_tool]
async fn with_anyhow(args: Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let text = std::fs::read_to_string(&args.path).with_context(|| format!("reading {}", args.path))?;
    Ok(text)
}

/// A boxed error.
#[mcp_tool]
async fn boxed() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let n: u8 = "300".parse()?;
    Ok(n.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let client = TestClient::modern(Server::builder("t", "0").build().expect("build"));
    let text = |r: &switchyard::testing::TestReply| {
        assert_eq!(r.result()["isError"], true, "{:?}", r);
        r.result()["content"][0]["text"].as_str().expect("text").to_owned()
    };
    let missing = switchyard::__private::serde_json::json!({ "path": "/no/such/file" });
    let r = client.call_tool("read_number", missing.clone()).await;
    assert_eq!(text(&r), "No such file or directory (os error 2)");
    let r = client.call_tool("relay", switchyard::__private::serde_json::json!({})).await;
    assert_eq!(r.error_code(), Some(-32602), "{r:?}");
    let r = client.call_tool("with_anyhow", missing).await;
    assert_eq!(text(&r), "reading /no/such/file: No such file or directory (os error 2)");
    let r = client.call_tool("boxed", switchyard::__private::serde_json::json!({})).await;
    assert_eq!(text(&r), "number too large to fit in target type");
}
