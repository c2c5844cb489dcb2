//! Export of the request spans and the request-duration metric over OTLP/HTTP (protobuf), with
//! the `otel` feature. The guide is docs/observability.md, "Exporting to OpenTelemetry".
//!
//! Two ways in:
//! - [`init_from_env`] for a server binary: exporters configured from the standard `OTEL_*`
//!   variables and a global `tracing` subscriber (env filter, stderr log lines, export).
//! - [`build`] where the caller assembles its own subscriber from [`OtelGuard::layer`], or
//!   points the exporters at a given endpoint (a test's in-process collector).
//!
//! ```no_run
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Before `switchyard::cli::run`, whose own subscriber then steps aside.
//!     let _otel = switchyard::otel::init_from_env("weather", env!("CARGO_PKG_VERSION"))?;
//!     let server = switchyard::Server::builder("weather", env!("CARGO_PKG_VERSION")).build()?;
//!     switchyard::cli::run(server).await;
//!     Ok(())
//! }
//! ```
//!
//! The exporters send with a blocking HTTP client from the SDK's own threads (the batch span
//! processor and the periodic metric reader), so export neither needs nor blocks the server's
//! tokio runtime, and the final flush on drop works after the runtime is gone.

use crate::protocol::{META_BAGGAGE, META_TRACEPARENT, META_TRACESTATE, TraceContext};
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::resource::{EnvResourceDetector, SdkProvidedResourceDetector, TelemetryResourceDetector};
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::collections::HashMap;
use std::time::Instant;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// The instrumentation scope of the exported spans and metric.
const SCOPE: &str = "switchyard";

use crate::context::{REQUEST_SPAN, SPAN_TARGET as REQUEST_TARGET};

/// The metric of the MCP semantic conventions, and its recommended bucket boundaries (seconds).
const DURATION_METRIC: &str = "mcp.server.operation.duration";
const DURATION_BOUNDARIES: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// Why the exporters or the subscriber could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// An exporter rejected its configuration: an invalid endpoint, protocol or header in the
    /// `OTEL_EXPORTER_OTLP_*` variables, or a given endpoint that is not a URI.
    #[error("OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// `RUST_LOG` is not a valid `tracing_subscriber::EnvFilter` directive list, or not UTF-8.
    #[error("RUST_LOG: {0}")]
    Filter(#[from] tracing_subscriber::filter::FromEnvError),
    /// A global `tracing` subscriber was already installed ([`init_from_env`] installs one).
    #[error("a global tracing subscriber is already set: {0}")]
    Subscriber(#[from] tracing_subscriber::util::TryInitError),
    /// Flushing or shutting down a provider failed (e.g. the collector did not answer).
    #[error("OpenTelemetry SDK: {0}")]
    Sdk(#[from] opentelemetry_sdk::error::OTelSdkError),
}

/// The tracer and meter providers with their OTLP exporters. Dropping it flushes what is
/// buffered and shuts both down (blocking until the exporters answer or time out, by default
/// 10 s each: `OTEL_EXPORTER_OTLP_TIMEOUT`); keep it alive as long as the server runs.
#[must_use = "dropping the guard shuts the exporters down"]
pub struct OtelGuard {
    tracer_provider: SdkTracerProvider,
    meter_provider: SdkMeterProvider,
    duration: Histogram<f64>,
    /// The observable instruments of [`observe`](Self::observe), kept as long as the guard.
    observed: std::sync::Mutex<Vec<Box<dyn std::any::Any + Send + Sync>>>,
}

impl std::fmt::Debug for OtelGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelGuard").finish_non_exhaustive()
    }
}

impl OtelGuard {
    /// The layer that exports: `tracing_opentelemetry`'s span export through this guard's
    /// tracer, plus the `mcp.server.operation.duration` histogram (seconds, attributes
    /// `mcp.method.name`, `mcp.protocol.version`, `gen_ai.tool.name` or `gen_ai.prompt.name`
    /// where matched, and `error.type` on failure) recorded when an `mcp.request` span closes. Install it under a filter that enables target `switchyard::request` at `INFO`,
    /// or no request span is created to export.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        // With activation on, tracing-opentelemetry 0.34 starts the span on its first poll,
        // after which a recorded `otel.name` no longer renames it; the request span only learns
        // its `{method} {target}` name at dispatch. Off, the span starts when it closes or when
        // a child needs its context, by which time the name is known. The cost: inside a
        // handler, `opentelemetry::Context::current()` is not the request's span (ask
        // `tracing_opentelemetry::OpenTelemetrySpanExt::context` on `ctx.span()` instead).
        tracing_opentelemetry::layer()
            .with_tracer(self.tracer_provider.tracer(SCOPE))
            .with_context_activation(false)
            // busy_ns/idle_ns are not in the conventions and cost a clock read per poll.
            .with_tracked_inactivity(false)
            .and_then(DurationLayer { histogram: self.duration.clone() })
    }

    /// Exports the metrics `read` returns through this guard's meter provider, calling it at
    /// every collection: for a server, `move || server.metrics()`
    /// ([`Server::metrics`](crate::Server::metrics): open listens, the drain, the broker link,
    /// dropped hub events, and the extensions' such as the Tasks extension's running tasks,
    /// store errors, lease renewals and sweeps). The instruments are those of the readings
    /// when it is called; the CLI calls it for the server it serves. A second call changes
    /// nothing (one source per guard). docs/observability.md lists the metrics.
    pub fn observe(&self, read: impl Fn() -> Vec<crate::context::Metric> + Send + Sync + 'static) {
        let read = std::sync::Arc::new(read);
        let meter = self.meter_provider.meter(SCOPE);
        let mut kept = self.observed.lock().unwrap_or_else(|e| e.into_inner());
        if !kept.is_empty() {
            return;
        }
        for metric in read() {
            let (name, all) = (metric.name, read.clone());
            // The value of this metric in each collection's reading (absent: nothing observed).
            let observe = move |o: &dyn opentelemetry::metrics::AsyncInstrument<f64>| {
                if let Some(m) = all().into_iter().find(|m| m.name == name) {
                    o.observe(m.value, &[]);
                }
            };
            let (description, unit) = (metric.description, metric.unit);
            let instrument: Box<dyn std::any::Any + Send + Sync> = match metric.kind {
                crate::context::metric::MetricKind::Counter => Box::new(
                    meter
                        .f64_observable_counter(name)
                        .with_description(description)
                        .with_unit(unit)
                        .with_callback(observe)
                        .build(),
                ),
                _ => Box::new(
                    meter
                        .f64_observable_gauge(name)
                        .with_description(description)
                        .with_unit(unit)
                        .with_callback(observe)
                        .build(),
                ),
            };
            kept.push(instrument);
        }
    }

    /// Exports every finished span and the metric's current value now, blocking the calling
    /// thread until the collector answered (a collector served by the same tokio runtime needs
    /// another thread to answer on: call this from `spawn_blocking` there).
    ///
    /// # Errors
    /// [`OtelError::Sdk`] when an export failed or timed out.
    pub fn flush(&self) -> Result<(), OtelError> {
        self.tracer_provider.force_flush()?;
        self.meter_provider.force_flush()?;
        Ok(())
    }
}

impl Drop for OtelGuard {
    fn drop(&mut self) {
        // Drop cannot fail; the SDK already logs a failed export as a `tracing` warning
        // (its `internal-logs` feature), and a process that is exiting has no better place.
        let _ = self.tracer_provider.shutdown();
        let _ = self.meter_provider.shutdown();
    }
}

/// Sets up OTLP/HTTP export configured from the environment and installs the global `tracing`
/// subscriber: an `EnvFilter` from `RUST_LOG` (default `warn`) that always enables target
/// `switchyard::request` at `INFO` (the request spans), log lines on stderr, and
/// [`OtelGuard::layer`].
///
/// Read by the OpenTelemetry SDK and exporter (see
/// <https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/> and
/// <https://opentelemetry.io/docs/specs/otel/protocol/exporter/>):
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`, `/v1/traces` and
/// `/v1/metrics` appended), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
/// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as given), `OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_RESOURCE_ATTRIBUTES`, and `OTEL_SERVICE_NAME`, which
/// overrides `service_name`. Only plain `http://` endpoints: no TLS client is built in.
///
/// # Errors
/// [`OtelError::Exporter`] for an invalid `OTEL_EXPORTER_OTLP_*` value, [`OtelError::Filter`]
/// for an invalid `RUST_LOG`, [`OtelError::Subscriber`] when a global subscriber is already set.
pub fn init_from_env(service_name: &str, service_version: &str) -> Result<OtelGuard, OtelError> {
    let guard = build(service_name, service_version, None)?;
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing_subscriber::filter::LevelFilter::WARN.into())
        .from_env()?
        .add_directive(
            format!("{REQUEST_TARGET}=info").parse().map_err(tracing_subscriber::filter::FromEnvError::from)?,
        );
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_writer(std::io::stderr),
        )
        .with(guard.layer())
        .try_init()?;
    Ok(guard)
}

/// Whether the environment asks for OTLP export: one of `OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set (and
/// not empty), or `OTEL_TRACES_EXPORTER` is `otlp`; and `OTEL_SDK_DISABLED` is not `true`
/// ([SDK configuration](https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/)).
/// [`cli`](crate::cli) exports exactly then, so a binary built with the feature sends nothing,
/// and warns about no unreachable collector, until an operator names one.
pub fn export_requested() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let is = |name: &str, value: &str| std::env::var(name).is_ok_and(|v| v.trim().eq_ignore_ascii_case(value));
    if is("OTEL_SDK_DISABLED", "true") {
        return false;
    }
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]
        .into_iter()
        .any(set)
        || is("OTEL_TRACES_EXPORTER", "otlp")
}

/// The providers and exporters alone, for a caller that builds its own subscriber from
/// [`OtelGuard::layer`]. `endpoint` is a collector's OTLP/HTTP base URL (as in
/// `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to `{endpoint}/v1/traces`, the metric to
/// `{endpoint}/v1/metrics`) and wins over the environment; `None` reads the environment as
/// [`init_from_env`] does. The resource is built the same way in both cases.
///
/// # Errors
/// [`OtelError::Exporter`] for an invalid endpoint or `OTEL_EXPORTER_OTLP_*` value.
pub fn build(service_name: &str, service_version: &str, endpoint: Option<&str>) -> Result<OtelGuard, OtelError> {
    let resource = resource(service_name, service_version);
    let signal = |path: &str| endpoint.map(|e| format!("{}{path}", e.trim_end_matches('/')));

    let mut spans = SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(url) = signal("/v1/traces") {
        spans = spans.with_endpoint(url);
    }
    let tracer_provider =
        SdkTracerProvider::builder().with_batch_exporter(spans.build()?).with_resource(resource.clone()).build();

    let mut metrics = MetricExporter::builder().with_http().with_protocol(Protocol::HttpBinary);
    if let Some(url) = signal("/v1/metrics") {
        metrics = metrics.with_endpoint(url);
    }
    let meter_provider =
        SdkMeterProvider::builder().with_periodic_exporter(metrics.build()?).with_resource(resource).build();
    let duration = meter_provider
        .meter(SCOPE)
        .f64_histogram(DURATION_METRIC)
        .with_unit("s")
        .with_description("Duration of the MCP request as observed on the receiver")
        .with_boundaries(DURATION_BOUNDARIES.to_vec())
        .build();
    Ok(OtelGuard { tracer_provider, meter_provider, duration, observed: Default::default() })
}

/// The given name and version under the environment's attributes, so `OTEL_RESOURCE_ATTRIBUTES`
/// and then `OTEL_SERVICE_NAME` override them. Not `Resource::builder().with_service_name(..)`:
/// that would put the application's name over `OTEL_SERVICE_NAME`, which the SDK
/// specification ranks first.
fn resource(service_name: &str, service_version: &str) -> Resource {
    let mut builder = Resource::builder_empty()
        .with_attributes([
            KeyValue::new("service.name", service_name.to_owned()),
            KeyValue::new("service.version", service_version.to_owned()),
        ])
        .with_detectors(&[Box::new(TelemetryResourceDetector), Box::new(EnvResourceDetector::new())]);
    if std::env::var_os("OTEL_SERVICE_NAME").is_some_and(|v| !v.is_empty()) {
        builder = builder.with_detector(Box::new(SdkProvidedResourceDetector));
    }
    builder.build()
}

/// Makes the caller's trace context (SEP-414 `_meta` or the W3C headers) the remote parent of
/// `span` in the exported trace: its trace id, parent span id, flags and `tracestate`, and its
/// `baggage` in the OpenTelemetry context. A no-op for a disabled span or when no
/// `tracing_opentelemetry` layer is installed.
pub fn set_remote_parent(span: &tracing::Span, trace: &TraceContext) {
    if span.is_disabled() {
        return;
    }
    // The SDK's propagators parse what `TraceContext` already validated, so the W3C grammar
    // lives in one place per layer rather than being rebuilt here.
    let mut carrier = HashMap::with_capacity(3);
    carrier.insert(META_TRACEPARENT.to_owned(), trace.traceparent().to_owned());
    if let Some(state) = trace.tracestate() {
        carrier.insert(META_TRACESTATE.to_owned(), state.to_owned());
    }
    if let Some(baggage) = trace.baggage() {
        carrier.insert(META_BAGGAGE.to_owned(), baggage.to_owned());
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    let parent = BaggagePropagator::new().extract_with_context(&parent, &carrier);
    // Fails only once the span was entered; the pipeline calls this right after creating it.
    let _ = span.set_parent(parent);
}

/// Times each `mcp.request` span from creation to close and records the duration metric.
struct DurationLayer {
    histogram: Histogram<f64>,
}

/// The span fields that become attributes of the metric. `mcp.resource.uri` and the request
/// id stay out: one time series per URI or id is unbounded cardinality.
const DURATION_ATTRIBUTES: [&str; 5] =
    ["mcp.method.name", "mcp.protocol.version", "gen_ai.tool.name", "gen_ai.prompt.name", "error.type"];

/// What the duration layer keeps in a request span's extensions.
struct Timing {
    start: Instant,
    attributes: Vec<KeyValue>,
}

impl Visit for Timing {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if let Some(key) = DURATION_ATTRIBUTES.iter().find(|k| **k == field.name()) {
            self.attributes.push(KeyValue::new(*key, value.to_owned()));
        }
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for DurationLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let meta = attrs.metadata();
        if meta.name() != REQUEST_SPAN || meta.target() != REQUEST_TARGET {
            return;
        }
        let mut timing = Timing { start: Instant::now(), attributes: Vec::with_capacity(4) };
        attrs.record(&mut timing);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(timing);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(timing) = span.extensions_mut().get_mut::<Timing>()
        {
            values.record(timing);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(timing) = ctx.span(&id).and_then(|span| span.extensions_mut().remove::<Timing>()) else {
            return;
        };
        self.histogram.record(timing.start.elapsed().as_secs_f64(), &timing.attributes);
    }
}
