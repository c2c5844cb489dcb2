//! # Switchyard
//!
//! Build Model Context Protocol (MCP) servers by annotating ordinary `async fn`s.
//!
//! ```no_run
//! use switchyard::prelude::*;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct EchoArgs {
//!     /// The text to echo back.
//!     text: String,
//! }
//!
//! /// Echo the text back.
//! #[mcp_tool]
//! async fn echo(args: EchoArgs) -> Result<String, ToolError> { Ok(args.text) }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder("echo-server", "0.1.0").build()?;
//!     switchyard::transport::stdio::serve(server).await?;
//!     Ok(())
//! }
//! ```
//!
//! The macros register each function with [`inventory`]; [`ServerBuilder::build`] collects the
//! registrations into one dispatch table and fails with a clear [`BuildError`] on collisions. The
//! same server answers MCP 2026-07-28 (stateless, per-request `_meta`) and the legacy
//! session-based revisions 2025-11-25, 2025-06-18 and 2025-03-26, over stdio and Streamable HTTP.

pub mod cli;
pub mod context;
pub mod handler;
pub mod jsonrpc;
pub mod model;
pub mod pipeline;
pub mod protocol;
pub mod registry;
pub mod server;
pub mod testing;

pub mod transport;

pub use context::{FromRequestContext, Logger, Progress, RequestContext, State};
pub use handler::{ToolError, ToolFailure};
pub use jsonrpc::{ErrorCode, McpError, RequestId};
pub use model::{
    CallToolResult, Completion, CompletionArgument, CompletionRef, CompletionRequest, Content, GetPromptResult, Json,
    PromptMessage, ReadResourceResult, ResourceContents, Role,
};
pub use pipeline::{Next, RawNext, RawRequest, RawResponse, RpcMethod, TypedRequest};
pub use protocol::LogLevel;
pub use registry::{BuildError, ResourceRequest};
pub use server::{Server, ServerBuilder};
pub use switchyard_macros::{mcp_completion, mcp_filter, mcp_prompt, mcp_resource, mcp_rpc, mcp_tool};
pub use tokio_util::sync::CancellationToken;

/// The README's examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The names most servers need: `use switchyard::prelude::*;`.
pub mod prelude {
    pub use crate::{
        CallToolResult, CancellationToken, Completion, Content, GetPromptResult, Json, Logger, McpError, Next,
        Progress, PromptMessage, RawNext, RawRequest, RawResponse, ReadResourceResult, RequestContext,
        ResourceContents, ResourceRequest, Server, State, ToolError, TypedRequest, mcp_completion, mcp_filter,
        mcp_prompt, mcp_resource, mcp_rpc, mcp_tool,
    };
}

/// Paths used by macro-generated code. Not public API: names here may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::context::{FromRequestContext, RequestContext};
    pub use crate::handler::{
        IntoCompletion, IntoPromptResult, IntoReadResult, IntoToolOutcome, decode_arguments, empty_object_schema,
        input_schema, output_schema, prompt_arguments, raw_schema, template_var,
    };
    pub use crate::jsonrpc::McpError;
    pub use crate::model::{
        CallToolResult, Completion, CompletionRequest, GetPromptResult, PromptArgument, ReadResourceResult,
    };
    pub use crate::pipeline::{
        Eras, ErasedNext, ErasedValue, Next, RawFilterRegistration, RawNext, RawRequest, RawResponse, RpcMethod,
        RpcRegistration, TypedFilterRegistration, TypedRequest, decode_erased, encode_erased, rpc_shim,
        typed_filter_shim,
    };
    pub use crate::registry::{
        BoxFuture, CompletionRegistration, CompletionTarget, PromptRegistration, ResourceRegistration, ResourceRequest,
        Site, ToolRegistration,
    };
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::any::TypeId;
    pub use std::boxed::Box;
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{self, Err, Ok};
    pub use std::string::String;
    pub use std::vec::Vec;

    /// Implemented by every type usable as tool, prompt or RPC params. Generated code asserts it on
    /// the params argument so the error lands on the user's type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be used as params",
        label = "params types must implement serde::Deserialize and schemars::JsonSchema",
        note = "add #[derive(serde::Deserialize, schemars::JsonSchema)] to the type"
    )]
    pub trait Params: serde::de::DeserializeOwned + schemars::JsonSchema {}
    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> Params for T {}

    /// Compile-time assertion helper used by generated code.
    pub const fn assert_params<T: Params>() {}
    /// Compile-time assertion helper used by generated code.
    pub const fn assert_extractor<T: FromRequestContext>() {}
    /// Compile-time assertion helper used by generated code: params of a tool whose input schema
    /// is hand-written need no `JsonSchema`.
    pub const fn assert_deserialize<T: serde::de::DeserializeOwned>() {}
    /// Compile-time assertion helper used by generated code.
    pub const fn assert_tool_return<T: IntoToolOutcome>() {}
    /// Compile-time assertion helper used by generated code.
    pub const fn assert_prompt_return<T: IntoPromptResult>() {}
    /// Compile-time assertion helper used by generated code.
    pub const fn assert_resource_return<T: IntoReadResult>() {}
    /// Compile-time assertion helper used by generated code.
    pub const fn assert_completion_return<T: IntoCompletion>() {}

    /// Implemented by every type usable as `T` in a tool's `Json<T>` output. Generated code
    /// asserts it so the error lands on the user's type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` has no JSON Schema for the tool's output schema",
        label = "a tool returning Json<T> declares T's schema as its outputSchema",
        note = "add #[derive(schemars::JsonSchema)] to the type"
    )]
    pub trait OutputSchema: schemars::JsonSchema {}
    impl<T: schemars::JsonSchema> OutputSchema for T {}

    /// Compile-time assertion helper used by generated code.
    pub const fn assert_output_schema<T: OutputSchema>() {}

    /// Implemented by every type a resource template variable can be bound to. Generated code
    /// asserts it on the argument so the error lands on the user's type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot hold a URI template variable",
        label = "template variables are parsed with `FromStr`",
        note = "use String or a number type, or implement std::str::FromStr for the type"
    )]
    pub trait TemplateVar: std::str::FromStr {}
    impl<T: std::str::FromStr> TemplateVar for T {}

    /// Compile-time assertion helper used by generated code.
    pub const fn assert_template_var<T: TemplateVar>() {}
}
