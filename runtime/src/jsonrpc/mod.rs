//! JSON-RPC 2.0 envelope: request ids, error objects and message classification.
//!
//! MCP is JSON-RPC 2.0
//! ([messages](https://modelcontextprotocol.io/specification/2026-07-28/basic#messages),
//! [error codes](https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes)). This
//! module knows nothing of MCP methods; it turns bytes into [`Message`]s and results or errors back
//! into response objects.

mod arguments;
pub(crate) mod error;
pub(crate) mod id;
mod message;
mod meta;
mod response;
mod result;
pub(crate) mod small_map;

// At the crate root: `switchyard::McpError`, `ErrorCode`, `RequestId`.
pub use arguments::ToolArguments;
pub(crate) use error::McpError;
pub(crate) use id::RequestId;
pub(crate) use message::TakenOut;
pub use message::{
    MAX_BATCH_LEN, Message, Notification, ParseFailure, Request, error_response, parse_batch, parse_entry,
    parse_message, success_response,
};
#[cfg(test)]
pub(crate) use meta::ENVELOPE_KEYS;
pub use meta::RequestMeta;
pub use response::{SuccessResponse, parse_success};
pub use result::{EncodedResult, ResultObject};
