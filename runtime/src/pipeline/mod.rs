//! The request pipeline: every request of every transport, built-in method or extension, takes
//! this one path. `serve.rs` reads top to bottom in the order below; each stage names its file.
//!
//! ```text
//! Server::handle_request (server)        stdio's entry; HTTP enters at serve_modern/serve_legacy
//!  └─ era and target        serve.rs     legacy session, unnegotiated ping, or 2026-07-28
//!                                        (`_meta` -32602, version -32022); method → built-in
//!                                        or RPC (-32601; an extension's RPC only while the
//!                                        server declares the extension)
//!     └─ requestState check serve.rs     an input-required retry is verified (-32602) before
//!                           + input/     anything runs; then the request's context is made
//!        └─ raw filters     raw.rs       every method; raw JSON; may short-circuit
//!           └─ dispatch     serve.rs
//!              ├─ built-in  handlers/    tools/call, prompts/get, resources/read: decode,
//!              │                         match the primitive (-32602), authorize, then the
//!              │                         typed stages; lists, listen, ping, ... answer here
//!              └─ RPC       serve.rs     capability gate (-32021), authorization (forbidden),
//!                                        `_meta` stripped, params decoded (-32602)
//!                 └─ typed stages  run.rs
//!                    └─ alternate filters  alternate.rs  may answer with another shape
//!                       └─ typed filters   typed.rs      TypedRequest<P> → Result<R>
//!                          └─ handler ─► encode
//!        ◄─ result stamping encode.rs    2026-07-28: resultType, cache hints, serverInfo;
//!                                        input-required errors become results
//! ```
//!
//! Inside each kind, filters run in ascending `order`, ties broken by the filter's fully
//! qualified name; the first is outermost. Registration order never matters (inventory gives
//! none). Message filters ([`MessageFilter`]) sit outside the pipeline, in the transports, where
//! whole JSON-RPC messages cross.

pub(crate) mod alternate;
mod builtin;
pub(crate) mod encode;
mod engine;
mod handlers;
mod legacy_meta;
pub(crate) mod lifecycle;
pub(crate) mod method;
pub(crate) mod raw;
pub(crate) mod rpc;
mod run;
pub(crate) mod serve;
mod session;
mod table;
pub(crate) mod tool_limits;
pub(crate) mod typed;

// What generated code names (registrations, shims, erased types) is reachable only through
// `switchyard::__private`; these are the names a filter or RPC author writes.
pub use raw::{RawFilter, RawNext, RawRequest, RawResponse};
pub use rpc::RpcMethod;
pub use typed::{Next, TypedRequest};

pub(crate) use raw::RawFilterRegistration;
pub(crate) use rpc::{ErasedValue, RpcRegistration, decode_erased, encode_erased, rpc_shim};
pub(crate) use typed::TypedFilterRegistration;

pub use crate::context::{MessageFilter, MessageFilters};
pub(crate) use alternate::AlternateFilterRegistration;
pub use alternate::{AltNext, Alternate};
pub use builtin::{CallToolParams, GetPromptParams, ReadResourceParams, methods};
pub use engine::CacheConfig;
pub(crate) use engine::{Engine, ToolsCallReplacement};
pub(crate) use raw::RawChain;
pub(crate) use run::run_method;
pub use session::LegacySession;
pub(crate) use table::{Pipelines, build};
pub(crate) use typed::TypedChain;

inventory::collect!(RawFilterRegistration);
inventory::collect!(TypedFilterRegistration);
inventory::collect!(AlternateFilterRegistration);
inventory::collect!(RpcRegistration);
crate::registry::registrations!(
    RawFilterRegistration,
    TypedFilterRegistration,
    AlternateFilterRegistration,
    RpcRegistration
);
