//! The per-request context handed to handlers, and the extractors built from it.

pub(crate) mod connection;
pub(crate) mod extract;
pub(crate) mod input;
pub(crate) mod message_filters;
pub(crate) mod metric;
pub(crate) mod notify;
mod progress_sink;
pub(crate) mod queue;
pub(crate) mod request;
pub(crate) mod state;

pub use connection::Connection;
// At the crate root: `switchyard::RequestContext`, `State`, `Logger`, ... (one public path each).
pub(crate) use extract::FromRequestContext;
pub use extract::StateRequirement;
pub use message_filters::{MessageFilter, MessageFilters};
// Public as `switchyard::server::Metric`: what a server reports.
pub(crate) use metric::Metric;
pub(crate) use notify::{Logger, Progress};
pub use notify::{Notifier, Outbound, OutboundReceiver, OutboundSender, Payload, outbound_channel};
pub use progress_sink::{ProgressFuture, ProgressSink};
pub(crate) use request::REQUEST_SPAN;
pub(crate) use request::RequestContext;
pub use request::SPAN_TARGET;
pub use request::{Origin, RequestParts};
pub(crate) use state::State;
pub use state::StateMap;
