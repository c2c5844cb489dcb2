//! The server: its builder, the handle that transports serve, run-time definitions.
//!
//! Serving a request is the pipeline's work (docs/architecture.md); a [`Server`] is a cheap
//! handle to the pipeline's engine with the operations an application needs.

pub(crate) mod builder;
mod connection;
mod dynamic;
pub(crate) mod handle;
mod lifecycle;
mod metrics;
mod state_check;

pub use crate::pipeline::{CacheConfig, LegacySession};
pub(crate) use builder::ServerBuilder;
pub use dynamic::{DynamicPrompt, DynamicResource, DynamicResourceTemplate, DynamicTool};
pub use lifecycle::{Drain, Readiness, ShutdownHold};
pub use metrics::{Metric, MetricKind};
// At the crate root: `switchyard::Server`, `ServerBuilder`.
pub(crate) use handle::Server;
