//! The request pipeline shared by every method, built-in or extension:
//!
//! ```text
//! request ─► global raw filters (every method; see raw JSON; may short-circuit)
//!              └─► method dispatch
//!                    ├─ built-in methods (tools/*, prompts/*, resources/*, completion/*, ...)
//!                    └─ typed methods (#[mcp_rpc] RPCs; tools/call, prompts/get, resources/read):
//!                          decode params (-32602), match the primitive (unknown → -32602)
//!                          └─► alternate-result filters of the method (may answer with another shape)
//!                                └─► typed filters of the method (TypedRequest<P> → Result<R>)
//!                                      └─► handler ─► encode result
//! ```
//!
//! Inside each kind, filters run in ascending `order`, ties broken by the filter's fully
//! qualified name; the first is outermost. Registration order never matters (inventory gives
//! none).

mod alternate;
mod builtin;
mod message;
mod raw;
mod rpc;
mod run;
mod table;
mod typed;

pub use raw::{RawFilterFn, RawFilterRegistration, RawNext, RawRequest, RawResponse};
pub use rpc::{Eras, ErasedValue, RpcHandlerFn, RpcMethod, RpcRegistration, decode_erased, encode_erased, rpc_shim};
pub use typed::{ErasedNext, Next, TypedFilterFn, TypedFilterRegistration, TypedRequest, typed_filter_shim};

pub use alternate::{
    AltNext, Alternate, AlternateFilterFn, AlternateFilterRegistration, ErasedAltNext, ErasedOutcome,
    alternate_filter_shim,
};
pub use builtin::{CallToolParams, GetPromptParams, ReadResourceParams, methods};
pub use message::{MessageFilter, MessageFilters};
pub(crate) use raw::RawChain;
pub(crate) use run::run_method;
pub(crate) use table::{Pipelines, build};
pub(crate) use typed::TypedChain;

inventory::collect!(RawFilterRegistration);
inventory::collect!(TypedFilterRegistration);
inventory::collect!(AlternateFilterRegistration);
inventory::collect!(RpcRegistration);
