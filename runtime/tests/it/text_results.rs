//! A tool's text entry point ([`DynamicTool::text_call`]): taken only where nothing needs the
//! result typed, and written as the typed result would be, byte for byte. Calls are made as in
//! `encoded_results.rs` (arguments the tools here ignore).

use crate::encoded_results::{call, line, session};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchyard::jsonrpc::ResultObject;
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::registry::ToolLimits;
use switchyard::server::DynamicTool;
use switchyard::{ToolResultText, ToolTransform};

/// Passes every call on unchanged: its presence alone must put calls on the typed path.
#[mcp_filter(rpc = ToolsCall, group = "text_results")]
async fn text_results_typed_filter(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    next.run(req).await
}

/// Passes every call on unchanged, as an alternate filter: one too reads the result typed.
#[mcp_filter(alternate, rpc = ToolsCall, group = "text_results_alternate")]
async fn text_results_alternate_filter(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    next.run(req).await
}

/// What a relaying tool's peer answered, as the text it sent: blocks in serde's key order, so
/// that the typed path writes the same bytes.
const ANSWERS: [(&str, &str); 4] = [
    ("plain", r#"{"content":[{"type":"text","text":"hé \"x\"\n"}]}"#),
    (
        "stamped",
        r#"{"resultType":"complete","content":[{"type":"text","text":"a"}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"9"}}}"#,
    ),
    ("empty", r#"{"content":[]}"#),
    (
        "media",
        r#"{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"audio","data":"","mimeType":"audio/wav"}],"isError":false}"#,
    ),
];

/// Which entry point ran, per server.
#[derive(Default, Clone)]
struct Ran {
    typed: Arc<AtomicUsize>,
    text: Arc<AtomicUsize>,
}

impl Ran {
    fn take(&self) -> (usize, usize) {
        (self.typed.swap(0, Ordering::SeqCst), self.text.swap(0, Ordering::SeqCst))
    }
}

/// The peer's answer as the typed path has it: decoded, its `serverInfo` dropped.
fn typed(answer: &str) -> CallToolResult {
    let mut result: CallToolResult = serde_json::from_str(answer).expect("decodes");
    result.meta = None;
    result
}

/// A tool answering `answer` from both entry points; `typed_text` makes the text entry point
/// answer the typed result instead.
fn relaying(name: &str, answer: &'static str, typed_text: bool, ran: &Ran) -> DynamicTool {
    let (typed_ran, text_ran) = (ran.typed.clone(), ran.text.clone());
    DynamicTool::new(name, move |_ctx, _args: Value| {
        typed_ran.fetch_add(1, Ordering::SeqCst);
        async move { typed(answer) }
    })
    .text_call(move |_ctx, _args| {
        text_ran.fetch_add(1, Ordering::SeqCst);
        async move {
            Ok(match typed_text {
                true => ToolResultText::from(typed(answer)),
                false => ToolResultText::from_peer_text(answer).expect("kept as text"),
            })
        }
    })
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Setup {
    Plain,
    RawFilter,
    TypedFilter,
    AlternateFilter,
}

fn server(setup: Setup, ran: &Ran) -> Server {
    let groups: &[&str] = match setup {
        Setup::TypedFilter => &["text_results"],
        Setup::AlternateFilter => &["text_results_alternate"],
        Setup::Plain | Setup::RawFilter => &["none"],
    };
    let mut builder = Server::builder("relay", "1.0.0").groups(groups.iter().copied());
    if setup == Setup::RawFilter {
        builder = builder.raw_filter(0, |req: RawRequest, next: RawNext| next.run(req));
    }
    builder = builder
        .transform_tool("pinned", ToolTransform::new().pin_argument("n", json!(1)).for_run_time_tool())
        .transform_tool("renamed", ToolTransform::new().rename("renamed_now").for_run_time_tool());
    let server = builder.build().expect("builds");
    for (name, answer) in ANSWERS {
        server.add_tool(relaying(name, answer, false, ran)).expect("added");
    }
    server.add_tool(relaying("typed_answer", ANSWERS[1].1, true, ran)).expect("added");
    let limited = relaying("limited", ANSWERS[0].1, false, ran).limits(ToolLimits::NONE.max_concurrency(4));
    server.add_tool(limited).expect("added");
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } } });
    server.add_tool(relaying("pinned", ANSWERS[0].1, false, ran).input_schema(schema)).expect("added");
    server.add_tool(relaying("renamed", ANSWERS[0].1, false, ran)).expect("added");
    server
}

#[tokio::test]
async fn text_is_taken_only_where_nothing_needs_the_result_typed() {
    let tools = ["plain", "stamped", "empty", "media", "typed_answer", "limited", "pinned", "renamed_now"];
    for setup in [Setup::Plain, Setup::RawFilter, Setup::TypedFilter, Setup::AlternateFilter] {
        let ran = Ran::default();
        let (server, reference_ran) = (server(setup, &ran), Ran::default());
        // The reference: the same answers from a server whose calls all stay typed.
        let reference = self::server(Setup::RawFilter, &reference_ran);
        for version in [None, Some("2025-11-25"), Some("2025-06-18"), Some("2025-03-26")] {
            let sessions = version.map(|v| (session(&server, v), session(&reference, v)));
            for tool in tools {
                let (a, b) = match &sessions {
                    None => (call(&server, tool, None).await, call(&reference, tool, None).await),
                    Some((s1, s2)) => (call(&server, tool, Some(s1)).await, call(&reference, tool, Some(s2)).await),
                };
                let what = format!("{tool} on {} with {setup:?}", version.unwrap_or("2026-07-28"));
                let wire_takes_text = matches!(version, None | Some("2025-11-25"));
                let text_expected = setup == Setup::Plain && wire_takes_text && !matches!(tool, "limited" | "pinned");
                assert_eq!(ran.take(), if text_expected { (0, 1) } else { (1, 0) }, "{what}");
                assert_eq!(reference_ran.take(), (1, 0), "{what}");
                let encoded = setup != Setup::RawFilter && wire_takes_text;
                assert_eq!(matches!(a, ResultObject::Encoded(_)), encoded, "{what}: {a:?}");
                assert_eq!(line(a.clone()), line(b.clone()), "{what}");
                assert_eq!(a.into_value(), b.into_value(), "{what}");
            }
        }
    }
}

/// Kept text in another key order and spacing reads as the typed result does.
#[tokio::test]
async fn kept_text_in_any_form_reads_as_the_typed_result() {
    let answer = r#" { "isError" : true , "content" : [ { "text" : "a\u00e9\/" , "type" : "text" } ] } "#;
    let ran = Ran::default();
    let server = server(Setup::Plain, &ran);
    server.add_tool(relaying("spaced", answer, false, &ran)).expect("added");
    let value = call(&server, "spaced", None).await.into_value();
    assert_eq!(ran.take(), (0, 1));
    assert_eq!(value["content"], json!([{ "type": "text", "text": "aé/" }]), "{value}");
    assert_eq!(value["isError"], true, "{value}");
    assert_eq!(value["resultType"], "complete", "{value}");
    assert_eq!(value["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "relay", "{value}");
    assert_eq!(value.as_object().map(|o| o.len()), Some(4), "{value}");
}
