//! The values a server reports for monitoring, read when an exporter asks: the server's own
//! (open listen subscriptions, the drain, the broker link) and those of its extensions (the
//! Tasks extension's running tasks, store errors, lease renewals, sweeps). Exported over OTLP
//! by [`OtelGuard::observe`](crate::otel) with the `otel` feature; docs/observability.md lists
//! every metric.

use super::Server;
pub use crate::context::metric::{Metric, MetricKind};
use std::sync::Arc;

/// A source of readings an extension adds with
/// [`ServerBuilder::metrics_source`](crate::ServerBuilder::metrics_source).
pub(crate) type MetricsSource = Arc<dyn Fn() -> Vec<Metric> + Send + Sync>;

impl Server {
    /// Every metric's value now: the server's own, then each source's in the order they were
    /// added. Cheap (counters and sizes read from memory, no I/O); an exporter calls it at
    /// each collection.
    ///
    /// The server's own: `switchyard.listen.open` (gauge, `{subscription}`),
    /// `switchyard.server.draining` (gauge, 1 once a drain or shutdown began) and, with a hub
    /// that spans instances, `switchyard.hub.connected` (gauge, 1 while the broker link is up)
    /// and `switchyard.hub.dropped_events` (counter, `{event}`), then the hub's own
    /// ([`DeliveryHub::metrics`](crate::subscriptions::DeliveryHub::metrics); the NATS hub's
    /// round trip, stalls and link losses).
    pub fn metrics(&self) -> Vec<Metric> {
        let engine = self.engine();
        let mut all = vec![
            Metric::gauge(
                "switchyard.listen.open",
                "Built-in subscriptions/listen subscriptions open now",
                "{subscription}",
                engine.open_subscriptions.count() as f64,
            ),
            Metric::gauge(
                "switchyard.server.draining",
                "1 once a drain or shutdown began, else 0",
                "1",
                if self.is_draining() { 1.0 } else { 0.0 },
            ),
        ];
        if engine.hub.spans_instances() {
            all.push(Metric::gauge(
                "switchyard.hub.connected",
                "1 while the delivery hub's broker link is up, else 0",
                "1",
                if engine.hub.health().is_ok() { 1.0 } else { 0.0 },
            ));
            all.push(Metric::counter(
                "switchyard.hub.dropped_events",
                "Events the delivery hub dropped instead of publishing (outbox full, broker refused)",
                "{event}",
                engine.hub.dropped_events() as f64,
            ));
            all.extend(engine.hub.metrics());
        }
        for source in &engine.lifecycle.metrics {
            all.extend(source());
        }
        all
    }
}
