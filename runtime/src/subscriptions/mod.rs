//! Server-to-client notifications outside any request: the [`Publisher`], the [`DeliveryHub`]
//! between publishing and delivery, and `subscriptions/listen`
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).
//!
//! Publishing never blocks and works from any task or thread, inside or outside a request.
//! Every open listen subscription (on any connection of the server) receives the events its
//! granted filter matches, each tagged with `_meta["io.modelcontextprotocol/subscriptionId"]`.

mod encoded;
mod event;
pub(crate) mod field;
mod hub;
mod interest;
mod limits;
pub(crate) mod listen;
#[cfg(feature = "nats")]
pub mod nats;
mod open;
mod publisher;
pub(crate) mod replacement;

pub(crate) use encoded::EncodedEvents;
pub use event::Event;
pub(crate) use field::SubscriptionFieldRegistration;
pub(crate) use field::collect_fields;
pub use hub::{DeliveryHub, EventStream, InProcessHub, Lagged};
pub(crate) use interest::{InterestHold, ResourceInterest};
pub use limits::ListenLimits;
pub(crate) use limits::{ListenSlots, Refused};
pub(crate) use listen::ListenHost;
pub(crate) use open::OpenSubscriptions;
pub use publisher::Publisher;
pub use replacement::{ListenEnd, ListenStream};
