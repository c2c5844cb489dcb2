//! A `tools/call` with no typed or alternate filter on the method runs its tool without the
//! pipeline's erased params and answers (`handlers::tools::call`): every outcome must be what
//! the filtered path gives, where a pass-through typed filter sits in between. Results,
//! `isError` results, failed argument checks, tool errors, alternate results, input requests,
//! unknown tools; on 2026-07-28 and a legacy session.

use crate::encoded_results::{line, session};
use serde_json::{Value, json};
use std::sync::Arc;
use switchyard::CancellationToken;
use switchyard::context::{Notifier, Origin};
use switchyard::jsonrpc::{Message, ResultObject, parse_message};
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::server::{DynamicTool, LegacySession};

/// Passes every call on unchanged: its presence alone puts calls on the filtered path.
#[mcp_filter(rpc = ToolsCall, group = "unfiltered_calls")]
async fn unfiltered_calls_pass_through(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    next.run(req).await
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// A name.
    name: String,
}

fn server(filtered: bool) -> Server {
    let group = if filtered { "unfiltered_calls" } else { "none" };
    let server = Server::builder("unfiltered", "1.0.0").groups([group]).build().expect("builds");
    let tools = [
        DynamicTool::new("text", |_ctx, args: Value| async move {
            Ok::<_, ToolError>(format!("got {}", args["s"].as_str().unwrap_or_default()))
        }),
        DynamicTool::new("structured", |_ctx, _args: Value| async {
            CallToolResult::success(vec![Content::text("{\"a\":1}")]).with_structured_content(json!({ "a": 1 }))
        }),
        DynamicTool::new("failed", |_ctx, _args: Value| async { CallToolResult::error("no such thing") }),
        DynamicTool::new("erroring", |_ctx, _args: Value| async { Err::<String, _>(ToolError::new("boom")) }),
        DynamicTool::new("refusing", |_ctx, _args: Value| async {
            Err::<String, _>(McpError::invalid_params("the tool refuses"))
        }),
        DynamicTool::new("alternate", |_ctx, _args: Value| async {
            Err::<String, _>(McpError::alternate_result(json!({ "content": [], "acme/other": true })))
        }),
        DynamicTool::new("asking", |ctx: RequestContext, _args: Value| async move {
            match ctx.elicit::<Name>("who", "Name?").await? {
                Elicited::Accept(n) => Ok(format!("Hello, {}!", n.name)),
                _ => Err(McpError::invalid_params("declined")),
            }
        }),
        DynamicTool::new("checked", |_ctx, _args: Value| async { Ok::<_, ToolError>("ran".to_owned()) }).input_schema(
            json!({ "type": "object", "properties": { "word": { "type": "string" } }, "required": ["word"] }),
        ),
    ];
    for tool in tools {
        server.add_tool(tool).expect("a new tool");
    }
    server
}

/// `tools/call tool` with `arguments`, on 2026-07-28 (capable of elicitation) without a session.
fn request(tool: &str, arguments: &Value, modern: bool) -> switchyard::jsonrpc::Request {
    let mut params = json!({ "name": tool, "arguments": arguments });
    if modern {
        params["_meta"] = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                  "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} } });
    }
    let line = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params });
    let Ok(Message::Request(req)) = parse_message(line.to_string().as_bytes()) else { panic!("a request") };
    req
}

/// The answer as a client reads it: the result's line, or the error object.
async fn answer(server: &Server, tool: &str, arguments: &Value, session: Option<&Arc<LegacySession>>) -> String {
    let origin = Origin::new(CancellationToken::new(), Notifier::disconnected());
    let outcome: Result<ResultObject, McpError> =
        server.handle_request(request(tool, arguments, session.is_none()), session, origin).await;
    match outcome {
        Ok(result) => line(result),
        Err(e) => format!("error {}", e.to_error_object()),
    }
}

#[tokio::test]
async fn unfiltered_calls_answer_as_filtered_ones() {
    let (direct, filtered) = (server(false), server(true));
    let calls = [
        ("text", json!({ "s": "x\u{2028}y" })),
        ("structured", json!({})),
        ("failed", json!({})),
        ("erroring", json!({})),
        ("refusing", json!({})),
        ("alternate", json!({})),
        ("asking", json!({})),
        ("checked", json!({ "word": 1 })),
        ("checked", json!({ "word": "w" })),
        ("missing", json!({})),
    ];
    for version in [None, Some("2025-11-25")] {
        let sessions = version.map(|v| (session(&direct, v), session(&filtered, v)));
        for (tool, arguments) in &calls {
            let (a, b) = match &sessions {
                None => (answer(&direct, tool, arguments, None).await, answer(&filtered, tool, arguments, None).await),
                Some((s1, s2)) => (
                    answer(&direct, tool, arguments, Some(s1)).await,
                    answer(&filtered, tool, arguments, Some(s2)).await,
                ),
            };
            assert_eq!(a, b, "{tool} {arguments} on {}", version.unwrap_or("2026-07-28"));
        }
    }
    // The outcomes differ from one another: the comparison above is not of one answer.
    let empty = json!({});
    let modern = |tool| answer(&direct, tool, &empty, None);
    assert!(modern("text").await.contains(r#""text":"got ""#));
    assert!(modern("failed").await.contains(r#""isError":true"#));
    assert!(modern("alternate").await.contains("acme/other"));
    assert!(modern("asking").await.contains(r#""resultType":"input_required""#), "{}", modern("asking").await);
    assert!(modern("checked").await.contains(r#""isError":true"#));
    assert!(modern("missing").await.starts_with("error "));
}
