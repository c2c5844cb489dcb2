//! The `otel` feature end to end: a request with a `traceparent` in `_meta` (SEP-414) reaches a
//! real OTLP/HTTP collector (in-process, decoding the protobuf bodies) as one SERVER span that is
//! the child of the caller's span, and as a point of the `mcp.server.operation.duration`
//! histogram.

use axum::body::Bytes;
use axum::extract::State;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind};
use prost::Message;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use tracing_subscriber::layer::SubscriberExt;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// What the collector received: the spans, and the attributes of each duration data point.
#[derive(Clone, Default)]
struct Received {
    spans: Arc<Mutex<Vec<Span>>>,
    durations: Arc<Mutex<Vec<Vec<KeyValue>>>>,
}

async fn traces(State(received): State<Received>, body: Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
    let spans = request.resource_spans.into_iter().flat_map(|r| r.scope_spans).flat_map(|s| s.spans);
    received.spans.lock().expect("spans").extend(spans);
    Vec::new()
}

async fn metrics(State(received): State<Received>, body: Bytes) -> Vec<u8> {
    let request = ExportMetricsServiceRequest::decode(body).expect("an OTLP metrics export");
    for metric in request.resource_metrics.into_iter().flat_map(|r| r.scope_metrics).flat_map(|s| s.metrics) {
        if metric.name == "mcp.server.operation.duration"
            && let Some(metric::Data::Histogram(h)) = metric.data
        {
            received.durations.lock().expect("durations").extend(h.data_points.into_iter().map(|p| p.attributes));
        }
    }
    Vec::new()
}

/// Starts the collector on a thread and runtime of its own: the exporters' flush blocks the
/// test's thread until the collector has answered.
fn collector() -> (String, Received) {
    let received = Received::default();
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(traces))
        .route("/v1/metrics", axum::routing::post(metrics))
        .with_state(received.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
            tx.send(listener.local_addr().expect("an address")).expect("the test waits");
            axum::serve(listener, app).await.expect("serves");
        });
    });
    let addr = rx.recv().expect("the collector's address");
    (format!("http://{addr}"), received)
}

fn string_attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.as_str()),
        _ => None,
    })
}

/// Names its caller's trace.
#[mcp_tool(group = "otel")]
async fn otel_probe(ctx: RequestContext) -> Result<String, ToolError> {
    Ok(ctx.trace_context().map(|t| t.trace_id().to_owned()).unwrap_or_default())
}

#[tokio::test(flavor = "current_thread")]
async fn a_traced_request_is_exported_as_a_server_span_under_the_callers_span() {
    let (endpoint, received) = collector();
    let otel = switchyard::otel::build("otel-test", "1.2.3", Some(&endpoint)).expect("exporters");
    let filter = tracing_subscriber::filter::Targets::new().with_target("switchyard::request", tracing::Level::INFO);
    let subscriber = tracing_subscriber::registry().with(filter).with(otel.layer());
    let _default = tracing::subscriber::set_default(subscriber);
    // Other tests of this binary may have cached "never" for the request span's callsite.
    tracing::callsite::rebuild_interest_cache();

    let server = Server::builder("otel", "1").groups(["otel"]).build().expect("builds");
    let client = TestClient::modern(server);
    let reply = client
        .request(
            "tools/call",
            json!({ "name": "otel_probe", "arguments": {}, "_meta": {
                "traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01"),
                "tracestate": "rojo=00f067aa0ba902b7",
                "baggage": "userId=alice" } }),
        )
        .await;
    assert_eq!(reply.result()["content"][0]["text"], TRACE_ID);
    let failed = client.call_tool("no_such_tool", json!({})).await;
    assert_eq!(failed.error_code(), Some(-32602));

    // The span closes when the pipeline drops the request's future, which may be just after the
    // reply went out; flush until both spans arrived.
    let deadline = Instant::now() + Duration::from_secs(10);
    let spans = loop {
        tokio::task::yield_now().await;
        otel.flush().expect("the collector answers");
        let spans = received.spans.lock().expect("spans").clone();
        if spans.len() >= 2 || Instant::now() > deadline {
            break spans;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    let span = spans.iter().find(|s| s.name == "tools/call otel_probe").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(span.kind, SpanKind::Server as i32);
    assert_eq!(hex(&span.trace_id), TRACE_ID, "the caller's trace");
    assert_eq!(hex(&span.parent_span_id), PARENT_ID, "the caller's span is the parent");
    assert_eq!(span.trace_state, "rojo=00f067aa0ba902b7");
    assert_eq!(string_attr(&span.attributes, "mcp.method.name"), Some("tools/call"));
    assert_eq!(string_attr(&span.attributes, "gen_ai.tool.name"), Some("otel_probe"));
    assert_eq!(string_attr(&span.attributes, "mcp.protocol.version"), Some("2026-07-28"));
    assert_eq!(string_attr(&span.attributes, "error.type"), None);

    let untraced = spans.iter().find(|s| s.name != span.name).expect("the failed call's span");
    assert_ne!(hex(&untraced.trace_id), TRACE_ID, "no context leaks into the next request");
    assert!(untraced.parent_span_id.is_empty(), "a root span: {untraced:?}");
    assert_eq!(string_attr(&untraced.attributes, "error.type"), Some("-32602"));

    let durations = received.durations.lock().expect("durations").clone();
    let points: Vec<[Option<&str>; 4]> = durations
        .iter()
        .map(|a| {
            ["mcp.method.name", "gen_ai.tool.name", "mcp.protocol.version", "error.type"].map(|k| string_attr(a, k))
        })
        .collect();
    assert!(points.contains(&[Some("tools/call"), Some("otel_probe"), Some("2026-07-28"), None]), "{points:?}");
    assert!(points.contains(&[Some("tools/call"), None, Some("2026-07-28"), Some("-32602")]), "{points:?}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
