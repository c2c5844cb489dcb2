//! The per-request context handed to handlers, and the extractors built from it.

mod extract;
mod input;
mod notify;
pub(crate) mod queue;
mod request;
mod state;

pub use extract::{FromRequestContext, RequiredState, StateRequirement};
pub use notify::{Logger, Notifier, Outbound, Progress};
pub(crate) use notify::{Payload, Queued};
pub use request::{RequestContext, RequestParts};
pub use state::{State, StateMap};
