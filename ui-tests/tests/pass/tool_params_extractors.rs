//! A tool with a params type and extractors in any order, including a custom `#[extract]` one.
#![forbid(unsafe_code)]
#![deny(warnings)]

use switchyard::prelude::*;
use switchyard::{FromRequestContext, McpError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo back.
    text: String,
    /// How often to repeat it.
    times: Option<u32>,
}

struct Counter {
    hits: std::sync::atomic::AtomicU32,
}

/// The caller, as a custom extractor.
struct Caller(String);

impl FromRequestContext for Caller {
    fn from_request_context(ctx: &RequestContext) -> Result<Self, McpError> {
        Ok(Caller(ctx.method().to_owned()))
    }
}

/// Echo the text back.
///
/// Repeats it when asked.
#[mcp_tool(title = "Echo", group = "echo", idempotent, read_only = true, destructive = false, open_world = false)]
async fn echo(
    ctx: RequestContext,
    args: EchoArgs,
    counter: State<Counter>,
    #[extract] caller: Caller,
    _cancel: switchyard::CancellationToken,
    _: Progress,
) -> Result<String, ToolError> {
    counter.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let _ = (ctx.method(), caller.0);
    Ok(args.text.repeat(args.times.unwrap_or(1) as usize))
}

fn main() {
    let server = Server::builder("t", "0").groups(["echo"]).state(Counter { hits: Default::default() }).build().expect("build");
    let table = server.table();
    let tool = table.tool("echo").expect("registered");
    let def = &tool.definition;
    assert_eq!(def["title"], "Echo");
    assert_eq!(def["description"], "Echo the text back.\n\nRepeats it when asked.");
    assert_eq!(def["inputSchema"]["type"], "object");
    assert_eq!(def["inputSchema"]["properties"]["text"]["description"], "The text to echo back.");
    assert_eq!(def["inputSchema"]["required"][0], "text");
    assert_eq!(def["annotations"]["readOnlyHint"], true);
    assert_eq!(def["annotations"]["idempotentHint"], true);
    assert_eq!(def["annotations"]["destructiveHint"], false);
    assert_eq!(def["annotations"]["openWorldHint"], false);
    let site = tool.site.expect("macro registrations have a site");
    assert_eq!(site.function, "echo");
    assert_eq!(site.module_path, module_path!());
    assert!(site.file.ends_with("tool_params_extractors.rs"), "{}", site.file);
    assert_eq!(site.line, 33, "the line of the function name, not of the attribute");
}
