//! A real OTLP/HTTP collector for the tests, in process: it decodes what an exporter POSTs to
//! `/v1/traces` and `/v1/metrics` (protobuf, the `opentelemetry-proto` messages) and keeps it.

use axum::body::Bytes;
use axum::extract::State;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::sync::{Arc, Mutex};

/// An exported span with the attributes of the resource (the service) that sent it.
#[derive(Clone, Debug)]
pub struct Exported {
    pub resource: Vec<KeyValue>,
    pub span: Span,
}

/// What the collector received: the spans, and the attributes of each
/// `mcp.server.operation.duration` data point.
#[derive(Clone, Default)]
pub struct Received {
    pub spans: Arc<Mutex<Vec<Exported>>>,
    pub durations: Arc<Mutex<Vec<Vec<KeyValue>>>>,
    /// The latest value of each gauge and sum, by metric name.
    pub values: Arc<Mutex<std::collections::HashMap<String, f64>>>,
}

impl Received {
    pub fn spans(&self) -> Vec<Exported> {
        self.spans.lock().expect("spans").clone()
    }

    pub fn durations(&self) -> Vec<Vec<KeyValue>> {
        self.durations.lock().expect("durations").clone()
    }

    /// The latest exported value of the gauge or sum `name`.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.values.lock().expect("values").get(name).copied()
    }
}

async fn traces(State(received): State<Received>, body: Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
    let mut spans = received.spans.lock().expect("spans");
    for resource_spans in request.resource_spans {
        let resource = resource_spans.resource.map(|r| r.attributes).unwrap_or_default();
        for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
            spans.push(Exported { resource: resource.clone(), span });
        }
    }
    Vec::new()
}

async fn metrics(State(received): State<Received>, body: Bytes) -> Vec<u8> {
    let request = ExportMetricsServiceRequest::decode(body).expect("an OTLP metrics export");
    for metric in request.resource_metrics.into_iter().flat_map(|r| r.scope_metrics).flat_map(|s| s.metrics) {
        let points = match metric.data {
            Some(metric::Data::Histogram(h)) if metric.name == "mcp.server.operation.duration" => {
                received.durations.lock().expect("durations").extend(h.data_points.into_iter().map(|p| p.attributes));
                continue;
            }
            Some(metric::Data::Gauge(g)) => g.data_points,
            Some(metric::Data::Sum(s)) => s.data_points,
            _ => continue,
        };
        if let Some(value) = points.last().and_then(|p| p.value) {
            let value = match value {
                number_data_point::Value::AsDouble(d) => d,
                number_data_point::Value::AsInt(i) => i as f64,
            };
            received.values.lock().expect("values").insert(metric.name, value);
        }
    }
    Vec::new()
}

/// Starts a collector on a thread and runtime of its own (an exporter's flush blocks its
/// caller's thread until the collector answered) and returns its base URL, as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
pub fn collector() -> (String, Received) {
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

/// The string value of attribute `key`.
pub fn string_attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.as_str()),
        _ => None,
    })
}

/// Lower-case hex of a trace or span id.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
