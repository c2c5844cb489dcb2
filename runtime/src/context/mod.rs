//! The per-request context handed to handlers, and the extractors built from it.

pub(crate) mod connection;
mod extract;
pub(crate) mod input;
mod message_filters;
mod metric;
mod notify;
mod progress_sink;
pub(crate) mod queue;
mod request;
mod state;

pub use connection::Connection;
pub use extract::{FromRequestContext, RequiredState, StateRequirement};
pub use message_filters::{MessageFilter, MessageFilters};
pub use metric::{Metric, MetricKind};
pub use notify::{Logger, Notifier, Outbound, OutboundReceiver, OutboundSender, Payload, Progress, outbound_channel};
pub use progress_sink::{ProgressFuture, ProgressSink};
pub(crate) use request::REQUEST_SPAN;
pub use request::SPAN_TARGET;
pub use request::{Origin, RequestContext, RequestParts};
pub use state::{State, StateMap};
