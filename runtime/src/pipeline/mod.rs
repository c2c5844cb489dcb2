//! The request pipeline shared by every method, built-in or extension:
//!
//! ```text
//! request ─► global raw filters (every method; see raw JSON; may short-circuit)
//!              └─► method dispatch
//!                    ├─ built-in methods (tools/*, prompts/*, resources/*, completion/*, ...)
//!                    └─ typed RPCs (#[mcp_rpc]): decode params (-32602)
//!                          └─► typed filters of that method (RequestContext + typed params)
//!                                └─► handler ─► encode result
//! ```
//!
//! Inside each kind, filters run in ascending `order`, ties broken by the filter's fully
//! qualified name; the first is outermost. Registration order never matters (inventory gives
//! none).

mod raw;
mod rpc;
mod table;
mod typed;

pub use raw::{RawFilterFn, RawFilterRegistration, RawNext, RawRequest, RawResponse};
pub use rpc::{Eras, ErasedValue, RpcHandlerFn, RpcMethod, RpcRegistration, decode_erased, encode_erased, rpc_shim};
pub use typed::{ErasedNext, Next, TypedFilterFn, TypedFilterRegistration, TypedRequest, typed_filter_shim};

pub(crate) use raw::RawChain;
pub(crate) use table::{RpcEntry, build_rpcs};
pub(crate) use typed::TypedChain;

inventory::collect!(RawFilterRegistration);
inventory::collect!(TypedFilterRegistration);
inventory::collect!(RpcRegistration);
