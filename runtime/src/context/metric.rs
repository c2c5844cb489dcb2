//! One reading of a value a server reports for monitoring ([`Server::metrics`](crate::Server::metrics)).
//! Defined here, below the pipeline and the OTLP export, so that every layer that reads or
//! exports metrics can name it.

/// Whether a [`Metric`] only grows (a count since the process started) or goes up and down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetricKind {
    /// A monotonic count since the process started (an OpenTelemetry observable counter,
    /// cumulative temporality).
    Counter,
    /// A current value (an OpenTelemetry observable gauge).
    Gauge,
}

/// One reading of a value a server reports: `name` in OpenTelemetry's dotted style
/// (`switchyard.tasks.running`), `unit` in UCUM as OpenTelemetry writes it (`s`, `{task}`,
/// `1`), and the value now.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// The metric's name; the same name always has the same kind, unit and description.
    pub name: &'static str,
    /// What it counts or measures, one sentence.
    pub description: &'static str,
    /// Its unit (UCUM; `{thing}` for counts of things).
    pub unit: &'static str,
    /// Counter or gauge.
    pub kind: MetricKind,
    /// The value now (a counter's total since the process started).
    pub value: f64,
}

impl Metric {
    /// A counter reading.
    pub fn counter(name: &'static str, description: &'static str, unit: &'static str, value: f64) -> Self {
        Metric { name, description, unit, kind: MetricKind::Counter, value }
    }

    /// A gauge reading.
    pub fn gauge(name: &'static str, description: &'static str, unit: &'static str, value: f64) -> Self {
        Metric { name, description, unit, kind: MetricKind::Gauge, value }
    }
}
