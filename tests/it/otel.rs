//! The `otel` feature end to end: a request with a `traceparent` in `_meta` (SEP-414) reaches a
//! real OTLP/HTTP collector (in-process, decoding the protobuf bodies) as one SERVER span that is
//! the child of the caller's span, and as a point of the `mcp.server.operation.duration`
//! histogram.

use crate::common::otlp::{Received, collector, hex, string_attr};
use crate::common::{HttpServer, client, meta, modern, send};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use serde_json::json;
use std::time::{Duration, Instant};
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use tracing_subscriber::layer::SubscriberExt;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// What a test exporting in process holds: the exporters, what the collector received, and the
/// thread's default subscriber (export, with target `switchyard::request` up to `level`).
struct Exporting {
    otel: switchyard::otel::OtelGuard,
    received: Received,
    _default: tracing::subscriber::DefaultGuard,
}

fn exporting(service: &str, level: tracing::Level) -> Exporting {
    let (endpoint, received) = collector();
    let otel = switchyard::otel::build(service, "1.2.3", Some(&endpoint)).expect("exporters");
    let filter = tracing_subscriber::filter::Targets::new().with_target("switchyard::request", level);
    let subscriber = tracing_subscriber::registry().with(filter).with(otel.layer());
    let _default = tracing::subscriber::set_default(subscriber);
    // Other tests of this binary may have cached "never" for the request span's callsite.
    tracing::callsite::rebuild_interest_cache();
    Exporting { otel, received, _default }
}

/// Names its caller's trace.
#[mcp_tool(group = "otel")]
async fn otel_probe(ctx: RequestContext) -> Result<String, ToolError> {
    Ok(ctx.trace_context().map(|t| t.trace_id().to_owned()).unwrap_or_default())
}

#[tokio::test(flavor = "current_thread")]
async fn a_traced_request_is_exported_as_a_server_span_under_the_callers_span() {
    let Exporting { otel, received, _default } = exporting("otel-test", tracing::Level::INFO);

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
        let spans: Vec<_> = received.spans().into_iter().map(|e| e.span).collect();
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

    let durations = received.durations();
    let points: Vec<[Option<&str>; 4]> = durations
        .iter()
        .map(|a| {
            ["mcp.method.name", "gen_ai.tool.name", "mcp.protocol.version", "error.type"].map(|k| string_attr(a, k))
        })
        .collect();
    assert!(points.contains(&[Some("tools/call"), Some("otel_probe"), Some("2026-07-28"), None]), "{points:?}");
    assert!(points.contains(&[Some("tools/call"), None, Some("2026-07-28"), Some("-32602")]), "{points:?}");
}

/// Finishes at once, always as a task.
#[mcp_tool(task_support = "required", group = "otel_task")]
async fn otel_task_probe() -> Result<String, ToolError> {
    Ok("done".to_owned())
}

/// A task outlives the request that created it; its span is still in the caller's trace, a
/// child of the request's span, and carries the task's status changes as events.
#[tokio::test(flavor = "current_thread")]
async fn a_task_s_work_and_status_changes_stay_in_the_caller_s_trace() {
    let Exporting { otel, received, _default } = exporting("otel-task-test", tracing::Level::INFO);

    // "default" holds the extension's own methods.
    let builder = Server::builder("otel-task", "1").groups(["default", "otel_task"]);
    let server = switchyard_tasks::TasksExtension::new().install(builder).build().expect("builds");
    let client =
        TestClient::modern(server).with_capabilities(json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }));
    let created = client
        .request(
            "tools/call",
            json!({ "name": "otel_task_probe", "arguments": {}, "_meta": {
                "traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01") } }),
        )
        .await;
    assert_eq!(created.result()["resultType"], "task", "{}", created.response);
    let task_id = created.result()["taskId"].as_str().expect("a task id").to_owned();

    let deadline = Instant::now() + Duration::from_secs(10);
    let spans = loop {
        tokio::task::yield_now().await;
        otel.flush().expect("the collector answers");
        let spans: Vec<_> = received.spans().into_iter().map(|e| e.span).collect();
        let done = spans.iter().any(|s| {
            s.name == "mcp.detached"
                && s.events.iter().any(|e| string_attr(&e.attributes, "mcp.task.status") == Some("completed"))
        });
        if done {
            break spans;
        }
        assert!(Instant::now() < deadline, "no completed task span: {spans:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let request = spans.iter().find(|s| s.name == "tools/call otel_task_probe").expect("the request's span");
    let task = spans.iter().find(|s| s.name == "mcp.detached").expect("the task's span");
    assert_eq!(hex(&request.trace_id), TRACE_ID);
    assert_eq!(hex(&request.parent_span_id), PARENT_ID);
    assert_eq!(hex(&task.trace_id), TRACE_ID, "the task stays in the caller's trace");
    assert_eq!(task.parent_span_id, request.span_id, "the task's span is a child of the request's");
    let statuses: Vec<_> = task
        .events
        .iter()
        .filter(|e| string_attr(&e.attributes, "mcp.task.id") == Some(task_id.as_str()))
        .filter_map(|e| string_attr(&e.attributes, "mcp.task.status"))
        .collect();
    assert_eq!(statuses, ["completed"], "{task:#?}");
}

/// A listen stream runs in the span of its `subscriptions/listen` request, so in the caller's
/// trace; with the request target at DEBUG, each delivery is an event of that span.
#[tokio::test(flavor = "current_thread")]
async fn listen_deliveries_are_events_of_the_listen_request_s_span() {
    let Exporting { otel, received, _default } = exporting("otel-listen-test", tracing::Level::DEBUG);

    // A tool, so the server has the `tools` capability whose list changes are listened to.
    let server = Server::builder("otel-listen", "1").groups(["otel"]).build().expect("builds");
    let client = TestClient::modern(server.clone());
    let listen = json!({ "jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": {
        "notifications": { "toolsListChanged": true },
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01") } } });
    client.send_line(&listen.to_string()).await;
    let within = Duration::from_secs(5);
    let acked = client.wait_for_notification(|m| m["method"] == "notifications/subscriptions/acknowledged", within);
    assert!(acked.await.is_some(), "{:?}", client.notifications());
    server.publisher().publish(switchyard::subscriptions::Event::ToolsListChanged);
    let delivered = client.wait_for_notification(|m| m["method"] == "notifications/tools/list_changed", within);
    assert!(delivered.await.is_some(), "{:?}", client.notifications());
    // Shutting down ends the stream, and with it the span.
    server.shutdown();

    let deadline = Instant::now() + Duration::from_secs(10);
    let listen_span = loop {
        tokio::task::yield_now().await;
        otel.flush().expect("the collector answers");
        let spans: Vec<_> = received.spans().into_iter().map(|e| e.span).collect();
        if let Some(span) = spans.into_iter().find(|s| s.name.starts_with("subscriptions/listen")) {
            break span;
        }
        assert!(Instant::now() < deadline, "no listen span: {:#?}", received.spans());
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(hex(&listen_span.trace_id), TRACE_ID, "the listener's trace");
    assert_eq!(hex(&listen_span.parent_span_id), PARENT_ID);
    let deliveries: Vec<_> = listen_span
        .events
        .iter()
        .filter(|e| e.name == "listen delivery")
        .filter_map(|e| string_attr(&e.attributes, "mcp.method.name"))
        .collect();
    assert_eq!(deliveries, ["notifications/tools/list_changed"], "{listen_span:#?}");
}

/// The quickstart as a user runs it: `--http` with `OTEL_EXPORTER_OTLP_ENDPOINT` set, and no
/// telemetry code of its own (`switchyard::cli` with the `otel` feature). A `tools/call` with a
/// `traceparent` in `_meta` arrives at the collector as a server span under the caller's span,
/// from a resource named after the server, with a duration point.
#[tokio::test]
async fn the_quickstart_exports_its_request_spans_to_the_collector_the_environment_names() {
    let (endpoint, received) = collector();
    let server = HttpServer::start_with_env(
        "quickstart",
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            // Export within 50 ms (spans) and 100 ms (the metric), not the default 5 s and 60 s.
            ("OTEL_BSP_SCHEDULE_DELAY", "50"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "100"),
        ],
    );
    let c = client();
    let mut traced = meta(json!({}));
    traced["traceparent"] = json!(format!("00-{TRACE_ID}-{PARENT_ID}-01"));
    let params = json!({ "name": "add", "arguments": { "a": 1, "b": 2 }, "_meta": traced });
    let reply = send(modern(&c, &server.url, json!(1), "tools/call", params)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.last()["result"]["structuredContent"]["sum"], 3.0);

    let deadline = Instant::now() + Duration::from_secs(20);
    let exported = loop {
        if let Some(e) = received.spans().into_iter().find(|e| e.span.name == "tools/call add") {
            break e;
        }
        assert!(Instant::now() < deadline, "no `tools/call add` span arrived: {:#?}", received.spans());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let span = &exported.span;
    assert_eq!(span.kind, SpanKind::Server as i32);
    assert_eq!(hex(&span.trace_id), TRACE_ID, "the caller's trace");
    assert_eq!(hex(&span.parent_span_id), PARENT_ID, "the caller's span is the parent");
    assert_eq!(string_attr(&span.attributes, "gen_ai.tool.name"), Some("add"));
    assert_eq!(string_attr(&exported.resource, "service.name"), Some("switchyard-quickstart"));
    assert!(string_attr(&exported.resource, "service.version").is_some_and(|v| !v.is_empty()));

    loop {
        let points = received.durations();
        if points.iter().any(|a| string_attr(a, "gen_ai.tool.name") == Some("add")) {
            break;
        }
        assert!(Instant::now() < deadline, "no duration point for `add`: {points:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The server's own metrics and the Tasks extension's reach the collector:
/// `switchyard.listen.open` follows a listen subscription opened and closed,
/// `switchyard.server.draining` is 0 while serving, `switchyard.tasks.running` counts a running
/// task and the store's calls are counted.
#[tokio::test]
async fn server_and_task_metrics_are_exported() {
    let (endpoint, received) = collector();
    let server = HttpServer::start_with_env(
        "fixture",
        &["--tasks"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_METRIC_EXPORT_INTERVAL", "100")],
    );
    let until = |name: &'static str, want: f64| {
        let received = received.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(20);
            while received.value(name) != Some(want) {
                assert!(Instant::now() < deadline, "{name} never exported as {want}: {:?}", received.value(name));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    until("switchyard.listen.open", 0.0).await;
    until("switchyard.server.draining", 0.0).await;
    let c = client();
    let listen = modern(
        &c,
        &server.url,
        json!(1),
        "subscriptions/listen",
        json!({ "notifications": { "toolsListChanged": true } }),
    )
    .send()
    .await
    .expect("listen sent");
    assert_eq!(listen.status(), 200);
    until("switchyard.listen.open", 1.0).await;
    drop(listen);
    until("switchyard.listen.open", 0.0).await;

    let mut call = json!({ "name": "slow", "arguments": { "seconds": 60 } });
    call["_meta"] = meta(json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }));
    let created = send(modern(&c, &server.url, json!(2), "tools/call", call)).await;
    assert_eq!(created.last()["result"]["resultType"], "task", "{:?}", created.messages);
    until("switchyard.tasks.running", 1.0).await;
    assert!(received.value("switchyard.tasks.store.calls").is_some_and(|n| n >= 1.0));
    assert_eq!(received.value("switchyard.tasks.store.errors"), Some(0.0));
}
