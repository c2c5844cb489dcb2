//! A `tools/call` result encoded straight from its `CallToolResult` (no raw filter, an era
//! whose results keep every key) is the same JSON, byte for byte, as the `Value` path that a raw
//! filter keeps it on: stamped alike on 2026-07-28, plain on a legacy session, fitted for an
//! older revision.

use serde_json::{Map, Value, json};
use std::sync::Arc;
use switchyard::CancellationToken;
use switchyard::RequestId;
use switchyard::context::{Notifier, Origin, Payload};
use switchyard::jsonrpc::{Message, ResultObject, parse_message};
use switchyard::prelude::*;
use switchyard::server::{DynamicTool, LegacySession};

/// Tools returning each shape of result the encoder must stamp as the `Value` path does.
fn server(raw_filter: bool) -> Server {
    let mut builder = Server::builder("encoded", "1.2.3").groups(["none"]);
    if raw_filter {
        // Passes every request through unchanged: only the form of the result differs.
        builder = builder.raw_filter(0, |req: RawRequest, next: RawNext| next.run(req));
    }
    let server = builder.build().expect("builds");
    let tools = [
        DynamicTool::new("text", |_ctx, args: Value| async move {
            Ok::<_, ToolError>(format!("hé \"{}\"\n", args["s"].as_str().unwrap_or_default()))
        }),
        DynamicTool::new("structured", |_ctx, _args: Value| async {
            CallToolResult::success(vec![Content::text("{\"a\":1}")])
                .with_structured_content(json!({ "z": [1.5, null], "a": { "b": "c" } }))
        }),
        DynamicTool::new("failed", |_ctx, _args: Value| async { CallToolResult::error("no such thing") }),
        DynamicTool::new("with_meta", |_ctx, _args: Value| async {
            let mut meta = Map::new();
            meta.insert("acme/trace".into(), json!("t-1"));
            CallToolResult::success(vec![]).with_meta(meta)
        }),
        DynamicTool::new("empty", |_ctx, _args: Value| async { CallToolResult::default() }),
        DynamicTool::new("link", |_ctx, _args: Value| async {
            let extra = json!({ "title": "T", "mimeType": "text/plain" });
            Content::resource_link("file:///a", "a", extra.as_object().cloned().unwrap_or_default())
        }),
        // A passed-through field repeating one of the block's own: one key in a `Value`.
        DynamicTool::new("link_twice", |_ctx, _args: Value| async {
            let extra = json!({ "name": "b", "title": "T" });
            Content::resource_link("file:///a", "a", extra.as_object().cloned().unwrap_or_default())
        }),
    ];
    for tool in tools {
        server.add_tool(tool).expect("added");
    }
    server
}

fn request(id: i64, tool: &str, modern: bool) -> switchyard::jsonrpc::Request {
    let mut params = json!({ "name": tool, "arguments": { "s": "x\u{2028}y" } });
    if modern {
        params["_meta"] = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                  "io.modelcontextprotocol/clientCapabilities": {} });
    }
    let line = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params });
    let Ok(Message::Request(req)) = parse_message(line.to_string().as_bytes()) else { panic!("a request") };
    req
}

pub(crate) fn session(server: &Server, version: &str) -> Arc<LegacySession> {
    let params =
        json!({ "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } });
    server.initialize(params.as_object(), String::new(), true).expect("initialized").0
}

pub(crate) async fn call(server: &Server, tool: &str, session: Option<&Arc<LegacySession>>) -> ResultObject {
    let origin = Origin::new(CancellationToken::new(), Notifier::disconnected());
    server.handle_request(request(7, tool, session.is_none()), session, origin).await.expect("answered")
}

/// The line a transport writes for the result.
pub(crate) fn line(result: ResultObject) -> String {
    let mut out = Vec::new();
    Payload::Success(RequestId::Number(7), result).write_json(&mut out);
    String::from_utf8(out).expect("UTF-8")
}

#[tokio::test]
async fn encoded_results_are_the_json_of_the_value_path() {
    let (direct, filtered) = (server(false), server(true));
    let tools = ["text", "structured", "failed", "with_meta", "empty", "link", "link_twice"];
    for version in [None, Some("2025-11-25"), Some("2025-06-18"), Some("2025-03-26")] {
        let sessions = version.map(|v| (session(&direct, v), session(&filtered, v)));
        for tool in tools {
            let (a, b) = match &sessions {
                None => (call(&direct, tool, None).await, call(&filtered, tool, None).await),
                Some((s1, s2)) => (call(&direct, tool, Some(s1)).await, call(&filtered, tool, Some(s2)).await),
            };
            let what = format!("{tool} on {}", version.unwrap_or("2026-07-28"));
            // The raw filter keeps the result a `Value`; without it, the forms expected here.
            assert!(matches!(b, ResultObject::Value(_)), "{what}: {b:?}");
            let encoded =
                !matches!(tool, "with_meta" | "link_twice") && !matches!(version, Some("2025-06-18" | "2025-03-26"));
            assert_eq!(matches!(a, ResultObject::Encoded(_)), encoded, "{what}: {a:?}");
            assert_eq!(a, b, "{what}");
            assert_eq!(line(a.clone()), line(b.clone()), "{what}");
            let value = a.into_value();
            assert_eq!(value, b.into_value(), "{what}");
            if version.is_none() {
                assert_eq!(value["resultType"], "complete", "{what}: {value}");
                assert_eq!(value["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1.2.3", "{what}");
            } else {
                assert!(value.get("resultType").is_none(), "{what}: {value}");
            }
        }
    }
}

/// A result's own `_meta` keeps its keys and gains the server's identity beside them.
#[tokio::test]
async fn a_result_s_own_meta_is_merged_with_the_server_s_identity() {
    let value = call(&server(false), "with_meta", None).await.into_value();
    assert_eq!(value["_meta"]["acme/trace"], "t-1", "{value}");
    assert_eq!(value["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "encoded", "{value}");
}
