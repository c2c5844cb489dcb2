//! The request span and the trace context (SEP-414) as a tracing subscriber and a handler see
//! them: one `mcp.request` span per request with the OpenTelemetry MCP attributes, and the
//! caller's `traceparent` from `params._meta`.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// Fields of one span, as text.
type Fields = BTreeMap<String, String>;

/// Records the fields of every `mcp.request` span when it closes.
#[derive(Clone, Default)]
struct Recorder {
    closed: Arc<Mutex<Vec<Fields>>>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "mcp.request" {
            return;
        }
        let mut fields = Fields::new();
        attrs.record(&mut Collect(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(&mut Collect(fields));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(fields) = span.extensions_mut().remove::<Fields>()
        {
            self.closed.lock().expect("records").push(fields);
        }
    }
}

/// Returns the caller's trace id as the handler sees it.
#[mcp_tool(group = "observability")]
async fn trace_id(ctx: RequestContext) -> Result<String, ToolError> {
    Ok(ctx.trace_context().map(|t| t.trace_id().to_owned()).unwrap_or_else(|| "none".to_owned()))
}

fn server() -> Server {
    Server::builder("obs", "1").groups(["observability"]).build().expect("builds")
}

/// One `mcp.request` span per request, with the method, version, request id, the matched tool
/// and `{method} {target}` as its name; a failed request records its JSON-RPC code as
/// `error.type`. The handler sees the `traceparent` of `params._meta` (SEP-414).
#[tokio::test(flavor = "current_thread")]
async fn each_request_has_a_span_with_the_mcp_attributes_and_the_callers_trace_context() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(recorder.clone()));
    // Other tests of this binary run at the same time without a subscriber; one of them may have
    // cached "never" for the request span's callsite before this thread's subscriber existed.
    tracing::callsite::rebuild_interest_cache();
    let client = TestClient::modern(server());
    let reply = client
        .request("tools/call", json!({ "name": "trace_id", "arguments": {}, "_meta": { "traceparent": TRACEPARENT } }))
        .await;
    assert_eq!(reply.result()["content"][0]["text"], "4bf92f3577b34da6a3ce929d0e0e4736");
    let untraced = client.call_tool("trace_id", json!({})).await;
    assert_eq!(untraced.result()["content"][0]["text"], "none", "nothing leaks from the previous request");
    let failed = client.call_tool("no_such_tool", json!({})).await;
    assert_eq!(failed.error_code(), Some(-32602));
    let bad_parent = client
        .request("tools/call", json!({ "name": "trace_id", "arguments": {}, "_meta": { "traceparent": "00-zz" } }))
        .await;
    assert_eq!(bad_parent.result()["content"][0]["text"], "none", "a malformed traceparent is dropped, not an error");

    let closed = recorder.closed.lock().expect("records").clone();
    let calls: Vec<&Fields> =
        closed.iter().filter(|f| f.get("mcp.method.name").map(String::as_str) == Some("tools/call")).collect();
    assert_eq!(calls.len(), 4, "{closed:?}");
    let first = calls[0];
    assert_eq!(first.get("otel.name").map(String::as_str), Some("tools/call trace_id"), "{first:?}");
    assert_eq!(first.get("gen_ai.tool.name").map(String::as_str), Some("trace_id"));
    assert_eq!(first.get("mcp.protocol.version").map(String::as_str), Some("2026-07-28"));
    assert_eq!(first.get("otel.kind").map(String::as_str), Some("server"));
    assert!(first.contains_key("jsonrpc.request.id"), "{first:?}");
    assert!(!first.contains_key("error.type"), "{first:?}");
    let failed = calls.iter().find(|f| f.contains_key("error.type")).expect("the failed call's span");
    assert_eq!(failed.get("error.type").map(String::as_str), Some("-32602"), "{failed:?}");
}

/// Without a subscriber the span is disabled and nothing is recorded, and requests are served
/// the same way.
#[tokio::test(flavor = "current_thread")]
async fn without_a_subscriber_requests_are_served_the_same() {
    let client = TestClient::modern(server());
    let reply = client
        .request("tools/call", json!({ "name": "trace_id", "arguments": {}, "_meta": { "traceparent": TRACEPARENT } }))
        .await;
    assert_eq!(reply.result()["content"][0]["text"], Value::from("4bf92f3577b34da6a3ce929d0e0e4736"));
}

/// Over Streamable HTTP the W3C `traceparent` header stands in where `params._meta` has none,
/// and `_meta`'s wins where both are sent.
#[tokio::test]
async fn the_traceparent_header_is_used_where_meta_has_none() {
    use switchyard::testing::HttpTestServer;
    use switchyard::transport::http::HttpConfig;
    let http = HttpTestServer::start(server(), HttpConfig::default()).await.expect("a loopback port");
    let call = |meta: Value, header: Option<&'static str>| {
        let mut meta = meta;
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "trace_id", "arguments": {}, "_meta": meta } });
        let mut req = reqwest::Client::new()
            .post(http.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "trace_id")
            .body(body.to_string());
        if let Some(h) = header {
            req = req.header("traceparent", h);
        }
        async move {
            let reply: Value = req.send().await.expect("sent").json().await.expect("a JSON answer");
            reply["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
        }
    };
    let other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    assert_eq!(call(json!({}), Some(TRACEPARENT)).await, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(call(json!({ "traceparent": other }), Some(TRACEPARENT)).await, "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(call(json!({}), Some("garbage")).await, "none", "a malformed header is dropped");
    assert_eq!(call(json!({}), None).await, "none");
}
