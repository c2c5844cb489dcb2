//! Client input for handlers: elicitation (form and URL mode), sampling and roots through one
//! API, [`RequestContext::input`](crate::RequestContext::input), on every path.
//!
//! - **2026-07-28** (stateless): the call ends with `{"resultType":"input_required",
//!   "inputRequests":{..},"requestState":".."}` and the client retries with `inputResponses`; the
//!   handler runs again and this time `input` returns the answer
//!   ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
//!   Answers of earlier rounds and the handler's own data
//!   ([`RequestContext::set_request_state_data`](crate::RequestContext::set_request_state_data))
//!   travel in `requestState`, authenticated with HMAC-SHA256 and bound to the method, the
//!   primitive, a digest of the arguments, the principal and an expiry. Never a server→client
//!   request on a modern stream
//!   ([servers do not initiate requests](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns)).
//! - **legacy sessions** (2025-11-25 and older): `input` sends `elicitation/create`,
//!   `sampling/createMessage` or `roots/list` to the client as a JSON-RPC request on the
//!   request's stream (stdio, or the POST's SSE stream) and awaits the response.
//! - **tasks**: a task runtime gives the task's context an [`InputChannel`] that moves the task
//!   to `input_required` and awaits `tasks/update`.
//!
//! Only kinds the client declared may be asked: `-32021` with `data.requiredCapabilities`
//! otherwise (URL mode needs `elicitation.url`). See the [input guide](self::guide).

/// The input guide (`docs/input.md`, through the link `runtime/docs/input.md` so that the
/// package has it); its example runs as a doctest on the modern and legacy paths.
#[doc = include_str!("../../docs/input.md")]
pub mod guide {}

mod legacy;
mod modern;
mod state;

pub(crate) use crate::context::input::InputSource;
pub use crate::context::input::{
    CreateMessageResult, ElicitAction, ElicitResult, Elicited, InputAnswers, InputChannel, InputFuture, InputKind,
    InputRequest, InputResponse, InputRound, ListRootsResult, Root, requested_schema,
};
pub use legacy::{ClientOutcome, ClientRequests};

pub(crate) use modern::ModernChannel;
#[cfg(feature = "fuzzing")]
pub(crate) use state::{Binding, Carried};
pub(crate) use state::{MIN_KEY_BYTES, StateCodec};
