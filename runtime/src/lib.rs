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
//!
//! Handlers ask the client for input (elicitation, sampling, roots) with
//! [`RequestContext::input`] on every path: see the [input guide](input::guide).
//!
//! ## Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `stdio` | yes | [`transport::stdio`] |
//! | `http` | yes | `transport::http` (Streamable HTTP on axum and hyper) and `auth::BearerAuth` |
//! | `auth-jwt` | yes | `auth::JwtVerifier` (jsonwebtoken) |
//! | `oauth` | yes | `auth::JwksVerifier` (issuer discovery and key sets over HTTPS with reqwest and rustls) and the CLI's `--auth-*` flags; implies `auth-jwt` and `http` |
//! | `cli` | yes | `cli`: the command line of server binaries (clap, tracing-subscriber); implies `stdio` |
//! | `testing` | no | `testing`: an in-process client (and, with `http`, a loopback server); implies `stdio`. For tests: `[dev-dependencies] switchyard-mcp = { ..., features = ["testing"] }` |
//! | `anyhow` | yes | `anyhow::Error` and `anyhow::Result<T>` in tools |
//! | `rate-limit` | yes | `filters::RateLimit` (governor) |
//! | `result-cache` | yes | `filters::ResultCache` (moka) |
//! | `otel` | no | `otel`: OTLP export of the request spans and the duration metric; `cli` exports when `OTEL_EXPORTER_OTLP_ENDPOINT` is set |
//! | `nats` | no | `subscriptions::nats::NatsHub`, a delivery hub shared by several instances |
//!
//! A stdio-only server needs neither axum, hyper nor jsonwebtoken:
//! `switchyard-mcp = { path = "../switchyard/runtime", default-features = false, features = ["cli"] }`.

pub mod auth;
pub mod call;
#[cfg(feature = "cli")]
pub mod cli;
pub mod context;
pub mod filters;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod handler;
pub mod input;
pub mod jsonrpc;
mod model;
#[cfg(feature = "otel")]
pub mod otel;
mod pipeline;
pub mod protocol;
pub mod registry;
pub mod server;
pub mod subscriptions;
#[cfg(feature = "testing")]
pub mod testing;

pub mod transport;
#[cfg(feature = "http")]
mod unread_body;
mod vocab;

// The everyday names live here, at the crate root, and nowhere else: each public item has one
// public path (`.ci/public-paths.py` checks it), and the modules keep what fewer servers need.
pub use context::extract::{FromRequestContext, RequiredState};
pub use context::notify::{Logger, Progress};
pub use context::request::RequestContext;
pub use context::state::State;
pub use handler::outcome::{ToolError, ToolFailure};
pub use jsonrpc::error::{ErrorCode, McpError};
pub use jsonrpc::id::RequestId;
pub use model::{
    Annotations, CallToolResult, Completion, CompletionArgument, CompletionRef, CompletionRequest, Content,
    EmbeddedResource, GetPromptResult, Icon, Json, PromptArgument, PromptMessage, ReadResourceResult, ResourceContents,
    Role, ToolAnnotations, ToolResultText, input_schema,
};
pub use pipeline::{
    AltNext, Alternate, CallToolParams, GetPromptParams, Next, RawFilter, RawNext, RawRequest, RawResponse,
    ReadResourceParams, RpcMethod, TypedRequest, methods,
};
pub use protocol::level::LogLevel;
pub use registry::items::ResourceRequest;
pub use registry::mount::Mount;
pub use registry::table::BuildError;
pub use registry::transform::ToolTransform;
pub use server::builder::ServerBuilder;
pub use server::handle::Server;
pub use switchyard_macros::{
    mcp_completion, mcp_filter, mcp_prompt, mcp_resource, mcp_rpc, mcp_tool, subscription_field,
};
pub use tokio_util::sync::CancellationToken;

// The README and guides are reached through links inside the package directory (`README.md`,
// `docs/*.md` point into the workspace), which `cargo package` copies as files: the published
// crate has them too.

/// The README's examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The observability guide's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/observability.md")]
pub struct ObservabilityGuideDoctests;

/// The metadata guide's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/metadata.md")]
pub struct MetadataGuideDoctests;

/// The composition guide's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/composition.md")]
pub struct CompositionGuideDoctests;

/// The subscriptions guide's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/subscriptions.md")]
pub struct SubscriptionsGuideDoctests;

/// A [`ServerBuilder`] named, versioned and described after the calling crate's `Cargo.toml`:
/// `name`, `version`, `description` and `homepage` (else `repository`) become the
/// `serverInfo` fields `name`, `version`, `description` and `websiteUrl`
/// ([`Implementation`](https://modelcontextprotocol.io/specification/2025-11-25/schema#implementation)).
/// Empty fields are left out; the builder's own setters still apply after it.
///
/// ```
/// let server = switchyard::server_builder!().title("Dice").groups(["none"]).build()?;
/// assert_eq!(server.server_info()["name"], env!("CARGO_PKG_NAME"));
/// # Ok::<(), switchyard::BuildError>(())
/// ```
#[macro_export]
macro_rules! server_builder {
    () => {
        $crate::Server::builder(::core::env!("CARGO_PKG_NAME"), ::core::env!("CARGO_PKG_VERSION")).cargo_package(
            ::core::env!("CARGO_PKG_DESCRIPTION"),
            ::core::env!("CARGO_PKG_HOMEPAGE"),
            ::core::env!("CARGO_PKG_REPOSITORY"),
        )
    };
}

/// The names most servers need: `use switchyard::prelude::*;`.
pub mod prelude {
    pub use crate::input::{Elicited, InputRequest, InputRound};
    pub use crate::jsonrpc::ToolArguments;
    pub use crate::{
        AltNext, Alternate, CallToolParams, CallToolResult, CancellationToken, Completion, Content, GetPromptParams,
        GetPromptResult, Json, Logger, McpError, Next, Progress, PromptMessage, RawNext, RawRequest, RawResponse,
        ReadResourceParams, ReadResourceResult, RequestContext, ResourceContents, ResourceRequest, Server, State,
        ToolError, ToolFailure, TypedRequest, mcp_completion, mcp_filter, mcp_prompt, mcp_resource, mcp_rpc, mcp_tool,
        subscription_field,
    };
}

/// Paths used by macro-generated code. Not public API: names here may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::McpError;
    pub use crate::ResourceRequest;
    pub use crate::call::{CallOutput, CallParams, Caller, ToolDeclaration, ToolReturn, call_rpc};
    pub use crate::handler::schema::{
        decode_arguments, decode_tool_arguments, empty_object_schema, input_schema, output_schema, prompt_arguments,
        raw_schema, template_var,
    };
    pub use crate::handler::{IntoCompletion, IntoPromptResult, IntoReadResult, IntoToolOutcome};
    pub use crate::jsonrpc::ToolArguments;
    pub use crate::model::{
        CallToolResult, Completion, CompletionRequest, GetPromptResult, PromptArgument, ReadResourceResult,
    };
    pub use crate::pipeline::alternate::{
        AlternateFilterFn, AlternateFilterRegistration, ErasedAltNext, ErasedOutcome, alternate_filter_shim,
    };
    pub use crate::pipeline::raw::{RawFilterFn, RawFilterRegistration};
    pub use crate::pipeline::rpc::{
        Eras, ErasedValue, RpcHandlerFn, RpcRegistration, decode_erased, encode_erased, rpc_shim,
    };
    pub use crate::pipeline::typed::{ErasedNext, TypedFilterFn, TypedFilterRegistration, typed_filter_shim};
    pub use crate::pipeline::{AltNext, Alternate, Next, RawNext, RawRequest, RawResponse, RpcMethod, TypedRequest};
    pub use crate::registry::items::{
        CompletionHandler, CompletionRegistration, CompletionTarget, PromptHandler, PromptRegistration,
        ResourceHandler, ResourceRegistration, SchemaOrigin, Site, ToolHandler, ToolRegistration,
    };
    pub use crate::registry::{BoxFuture, TaskSupport, ToolLimits};
    pub use crate::subscriptions::field::{GrantFn, SubscriptionFieldRegistration, grant_shim};
    pub use crate::{FromRequestContext, RequestContext};
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::any::TypeId;
    pub use std::boxed::Box;
    pub use std::future::Future;
    use std::marker::PhantomData;
    pub use std::marker::Send;
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
    /// Compile-time assertion helper used by generated code, which also lists it (as a function
    /// pointer) among a registration's state requirements: one helper for both uses, so a type
    /// that is no extractor is reported once.
    pub fn assert_extractor<T: FromRequestContext>() -> Option<crate::RequiredState> {
        T::required_state()
    }
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

    /// The params type of an `#[mcp_rpc]` handler without a params argument: any JSON object
    /// (unknown keys are ignored), so `{}` and absent params both decode.
    #[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
    pub struct NoParams {}

    /// [`RpcMethod`] as generated filter code sees it: every typed method (the marker type
    /// `#[mcp_rpc]` declares, or a built-in one). Filter code names the method of `rpc = path`
    /// only through this trait, as a qualified self type (`<path as TypedMethod>::..`, never a
    /// bare path that could be taken for a constant), so a path that is no method is one error
    /// with this message.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a typed method",
        label = "`rpc = ...` names an `async fn` annotated with `#[mcp_rpc]`"
    )]
    pub trait TypedMethod {
        /// `Self`.
        type Marker;
        /// [`RpcMethod::Params`].
        type Params: Send + 'static;
        /// [`RpcMethod::Result`].
        type Result: Send + 'static;
        /// [`RpcMethod::METHOD`].
        const METHOD: &'static str;
    }
    impl<T: RpcMethod> TypedMethod for T {
        type Marker = T;
        type Params = T::Params;
        type Result = T::Result;
        const METHOD: &'static str = T::METHOD;
    }

    /// The type-namespace meaning `#[mcp_tool]`, `#[mcp_prompt]` and `#[mcp_resource]` give their
    /// function's name: a hidden alias of `ToolFunction<NoMethod>` (`PromptFunction`,
    /// `ResourceFunction`). Without it, `#[mcp_filter(rpc = a_tool)]` is rustc's "expected type,
    /// found function"; with it, the path is a type that is no typed method, and the error is
    /// the one `on_unimplemented` message of the kind's bound trait (`ToolCallsAreToolsCall`, ...),
    /// which says how calls of that kind are filtered.
    ///
    /// These types implement [`RpcMethod`] only when `K` implements the kind's bound trait,
    /// which [`NoMethod`] never does, so the bound fails for every alias (`K` is generic because
    /// a bound that fails without one is rejected at the impl). The associated items are
    /// projections through `K`: rustc cannot normalise them once the bound fails, so the
    /// filter's other uses of the method's types add no errors of their own.
    #[derive(Debug)]
    pub struct ToolFunction<K>(PhantomData<K>);
    /// Generated by `declared = path`: fails the build when the handler's name is not the
    /// declaration's.
    pub const fn assert_declared_name(declared: &str, served: &str) {
        assert!(
            same_str(declared, served),
            "the tool's name is not its declaration's: give the handler the declared `name`"
        );
    }

    /// Generated by `#[mcp_rpc(.., declared = path)]`: fails the build when the handler's method
    /// is not the declaration's.
    pub const fn assert_declared_method(declared: &str, served: &str) {
        assert!(
            same_str(declared, served),
            "the method is not its declaration's: give the handler the declared method name"
        );
    }

    const fn same_str(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        let mut same = a.len() == b.len();
        let mut i = 0;
        while same && i < a.len() {
            same = a[i] == b[i];
            i += 1;
        }
        same
    }

    /// Generated by `declared = path`: fails the build when the handler's output is elsewhere
    /// in the result than the declaration's (`String` text against `Json<String>` structured
    /// output, say).
    pub const fn assert_same_shape(declared: crate::call::OutputShape, served: crate::call::OutputShape) {
        assert!(
            declared as u8 == served as u8,
            "the tool's return type puts its output elsewhere in the result than its declaration's \
             (Json<T> is structuredContent, String the text blocks): return what the declaration returns"
        );
    }

    /// The typed call of a tool: `greet::call(&client, params)` (see [`crate::call`]).
    impl<K: crate::call::ToolDeclaration> ToolFunction<K> {
        /// Calls the tool through `caller` with `params` (`()` for a tool without params) and
        /// decodes its result as the handler's output type (see
        /// [`ToolReturn`](crate::call::ToolReturn)).
        ///
        /// Errors: the caller's, and [`TypedCallError`](crate::call::TypedCallError):
        /// `ToolFailed` for an `isError: true` result, `Decode` for a result of another shape,
        /// `Encode` for params that are no JSON object.
        pub fn call<'c, C: crate::call::Caller>(
            caller: &'c C,
            params: K::Params,
        ) -> impl std::future::Future<Output = Result<crate::call::ToolOutput<K>, C::Error>> + Send + 'c
        where
            K::Params: crate::call::CallParams,
            K::Return: crate::call::ToolReturn,
            crate::call::ToolOutput<K>: crate::call::CallOutput,
        {
            crate::call::call_tool::<K, C>(caller, params)
        }
    }

    /// Never implemented: the bound of [`PromptFunction::call`], whose message says what to
    /// use instead.
    #[diagnostic::on_unimplemented(
        message = "prompts have no typed call",
        label = "only `#[mcp_tool]` and `#[mcp_rpc]` functions have one",
        note = "get the prompt with the client's `get_prompt(name, arguments)`"
    )]
    pub trait PromptsHaveNoTypedCall {}

    /// Never implemented: the bound of [`ResourceFunction::call`], whose message says what to
    /// use instead.
    #[diagnostic::on_unimplemented(
        message = "resources have no typed call",
        label = "only `#[mcp_tool]` and `#[mcp_rpc]` functions have one",
        note = "read the resource with the client's `read_resource(uri)`"
    )]
    pub trait ResourcesHaveNoTypedCall {}

    #[diagnostic::do_not_recommend]
    impl PromptsHaveNoTypedCall for Unnamed {}
    #[diagnostic::do_not_recommend]
    impl ResourcesHaveNoTypedCall for Unnamed {}

    impl<K> PromptFunction<K> {
        /// Never callable (see [`PromptsHaveNoTypedCall`]): here so that `review::call` says
        /// why, not that `PromptFunction` is no closure.
        pub fn call<C, P>(_caller: &C, _params: P)
        where
            K: PromptsHaveNoTypedCall,
        {
        }
    }

    impl<K> ResourceFunction<K> {
        /// Never callable (see [`ResourcesHaveNoTypedCall`]).
        pub fn call<C, P>(_caller: &C, _params: P)
        where
            K: ResourcesHaveNoTypedCall,
        {
        }
    }

    /// `declared = api::greet` names the declaration through this impl.
    impl<K: crate::call::ToolDeclaration> crate::call::ToolDeclaration for ToolFunction<K> {
        const NAME: &'static str = K::NAME;
        type Params = K::Params;
        type Return = K::Return;
    }

    /// See [`ToolFunction`].
    #[derive(Debug)]
    pub struct PromptFunction<K>(PhantomData<K>);
    /// See [`ToolFunction`].
    #[derive(Debug)]
    pub struct ResourceFunction<K>(PhantomData<K>);

    /// The `K` of the aliases the macros declare (see [`ToolFunction`]): implements none of the
    /// bound traits.
    #[derive(Debug)]
    pub enum NoMethod {}

    /// Implements the bound traits, only so that rustc does not tell the user to implement them
    /// (a trait without implementations gets "consider adding one"); `do_not_recommend` keeps
    /// these impls out of the diagnostics as well. Never used otherwise.
    #[derive(Debug)]
    #[allow(dead_code)]
    enum Unnamed {}

    /// The bound trait `$bound` of `$function`'s [`RpcMethod`] impl (see [`ToolFunction`]),
    /// with its `on_unimplemented` message given as `$attr`.
    macro_rules! bound_of {
        ($(#[$attr:meta])* $bound:ident for $function:ident) => {
            $(#[$attr])*
            pub trait $bound {
                /// Never normalised.
                type Params: serde::de::DeserializeOwned + Send + 'static;
                /// Never normalised.
                type Result: serde::Serialize + Send + 'static;
                /// Never evaluated.
                const METHOD: &'static str;
            }
            #[diagnostic::do_not_recommend]
            impl $bound for Unnamed {
                type Params = ();
                type Result = ();
                const METHOD: &'static str = "";
            }
            impl<K: $bound + 'static> RpcMethod for $function<K> {
                type Params = K::Params;
                type Result = K::Result;
                const METHOD: &'static str = K::METHOD;
            }
        };
    }

    bound_of! {
        /// The bound of [`ToolFunction`]'s [`RpcMethod`] impl; see there.
        #[diagnostic::on_unimplemented(
            message = "`rpc = ...` names a `#[mcp_tool]` function, not a typed method",
            label = "tool calls are the `tools/call` method: filter them with `#[mcp_filter(rpc = switchyard::methods::ToolsCall)]`",
            note = "a filter on `ToolsCall` sees the calls of every tool, as `TypedRequest<CallToolParams>`; `req.params.name` is the name of the tool called: act on this tool's calls and pass the others on to `next` unchanged"
        )]
        ToolCallsAreToolsCall for ToolFunction
    }

    bound_of! {
        /// The bound of [`PromptFunction`]'s [`RpcMethod`] impl; see [`ToolFunction`].
        #[diagnostic::on_unimplemented(
            message = "`rpc = ...` names a `#[mcp_prompt]` function, not a typed method",
            label = "getting a prompt is the `prompts/get` method: filter it with `#[mcp_filter(rpc = switchyard::methods::PromptsGet)]`",
            note = "a filter on `PromptsGet` sees the requests for every prompt, as `TypedRequest<GetPromptParams>`; `req.params.name` is the name of the prompt asked for: act on this prompt's requests and pass the others on to `next` unchanged"
        )]
        PromptGetsArePromptsGet for PromptFunction
    }

    bound_of! {
        /// The bound of [`ResourceFunction`]'s [`RpcMethod`] impl; see [`ToolFunction`].
        #[diagnostic::on_unimplemented(
            message = "`rpc = ...` names a `#[mcp_resource]` function, not a typed method",
            label = "reading a resource is the `resources/read` method: filter it with `#[mcp_filter(rpc = switchyard::methods::ResourcesRead)]`",
            note = "a filter on `ResourcesRead` sees the reads of every resource, as `TypedRequest<ReadResourceParams>`; `req.params.uri` is the URI read: act on the reads of this resource's URI (or of the URIs its template matches) and pass the others on to `next` unchanged"
        )]
        ResourceReadsAreResourcesRead for ResourceFunction
    }

    /// Implemented by every type usable as RPC params. Where serde is required, generated code
    /// names the params type `P` as `<P as RpcParams>::Checked` (which is `P`), spanned at the
    /// user's type, so a type lacking `Deserialize` is one error there however often it is used.
    pub trait RpcParams {
        /// `Self`.
        type Checked: serde::de::DeserializeOwned + Send + 'static;
    }
    impl<T: serde::de::DeserializeOwned + Send + 'static> RpcParams for T {
        type Checked = T;
    }

    /// Implemented by every type usable as an RPC result; see [`RpcParams`].
    pub trait RpcResult {
        /// `Self`.
        type Checked: serde::Serialize + Send + 'static;
    }
    impl<T: serde::Serialize + Send + 'static> RpcResult for T {
        type Checked = T;
    }

    /// Implemented by every error type an RPC handler may return; converts it into the
    /// JSON-RPC error. (rustc reports a missing conversion as the missing `From<E> for McpError`
    /// impl, which already says what to write.)
    pub trait RpcError: Into<McpError> {
        /// The JSON-RPC error.
        fn into_mcp_error(self) -> McpError;
    }
    impl<E: Into<McpError>> RpcError for E {
        fn into_mcp_error(self) -> McpError {
            self.into()
        }
    }

    /// The first argument of a raw filter. Generated code converts through it so that a wrong
    /// type is one error at the user's type.
    #[diagnostic::on_unimplemented(
        message = "a raw filter takes `RawRequest` first, not `{Self}`",
        label = "expected `RawRequest`",
        note = "raw filters are `async fn(req: RawRequest, next: RawNext) -> RawResponse`; a filter on the typed params of one RPC is `#[mcp_filter(rpc = handler)]`"
    )]
    pub trait RawFilterRequest: Sized {
        /// Identity.
        fn from_raw(req: RawRequest) -> Self;
    }
    impl RawFilterRequest for RawRequest {
        fn from_raw(req: RawRequest) -> Self {
            req
        }
    }

    /// The second argument of a raw filter.
    #[diagnostic::on_unimplemented(
        message = "a raw filter's `next` is `RawNext`, not `{Self}`",
        label = "expected `RawNext`",
        note = "raw filters are `async fn(req: RawRequest, next: RawNext) -> RawResponse`; a filter on the typed params of one RPC is `#[mcp_filter(rpc = handler)]`"
    )]
    pub trait RawFilterNext: Sized {
        /// Identity.
        fn from_raw(next: RawNext) -> Self;
    }
    impl RawFilterNext for RawNext {
        fn from_raw(next: RawNext) -> Self {
            next
        }
    }

    /// The return type of a raw filter.
    #[diagnostic::on_unimplemented(
        message = "a raw filter returns `RawResponse`, not `{Self}`",
        label = "expected `RawResponse`, i.e. `Result<serde_json::Value, McpError>`",
        note = "raw filters are `async fn(req: RawRequest, next: RawNext) -> RawResponse`"
    )]
    pub trait RawFilterReturn {
        /// Identity.
        fn into_raw(self) -> RawResponse;
    }
    impl RawFilterReturn for RawResponse {
        fn into_raw(self) -> RawResponse {
            self
        }
    }

    /// The first argument of a typed filter on the RPC whose marker type is `M`, whose params
    /// are `P`.
    #[diagnostic::on_unimplemented(
        message = "this filter's request type does not match `{M}`",
        label = "`{M}` takes `{P}`: write `TypedRequest<{P}>`",
        note = "a typed filter is `async fn(req: TypedRequest<P>, next: Next<P, R>) -> Result<R, McpError>` with the params `P` and result `R` of its RPC"
    )]
    pub trait TypedFilterRequest<M, P>: Sized {
        /// Identity.
        fn from_typed(req: TypedRequest<P>) -> Self;
    }
    impl<M, P> TypedFilterRequest<M, P> for TypedRequest<P> {
        fn from_typed(req: TypedRequest<P>) -> Self {
            req
        }
    }

    /// The second argument of a typed filter on the RPC `M` (params `P`, result `R`).
    #[diagnostic::on_unimplemented(
        message = "this filter's `next` does not match `{M}`",
        label = "`{M}` takes `{P}` and returns `{R}`: write `Next<{P}, {R}>`",
        note = "a typed filter is `async fn(req: TypedRequest<P>, next: Next<P, R>) -> Result<R, McpError>` with the params `P` and result `R` of its RPC"
    )]
    pub trait TypedFilterNext<M, P, R>: Sized {
        /// Identity.
        fn from_typed(next: Next<P, R>) -> Self;
    }
    impl<M, P, R> TypedFilterNext<M, P, R> for Next<P, R> {
        fn from_typed(next: Next<P, R>) -> Self {
            next
        }
    }

    /// The return type of a typed filter on the RPC `M` (result `R`).
    #[diagnostic::on_unimplemented(
        message = "this filter's return type does not match `{M}`",
        label = "`{M}` returns `{R}`: write `Result<{R}, McpError>`",
        note = "a typed filter is `async fn(req: TypedRequest<P>, next: Next<P, R>) -> Result<R, McpError>` with the params `P` and result `R` of its RPC"
    )]
    pub trait TypedFilterReturn<M, R> {
        /// Identity.
        fn into_typed(self) -> Result<R, McpError>;
    }
    impl<M, R> TypedFilterReturn<M, R> for Result<R, McpError> {
        fn into_typed(self) -> Result<R, McpError> {
            self
        }
    }

    /// The first argument of an alternate-result filter on the method whose marker type is `M`,
    /// whose params are `P`.
    #[diagnostic::on_unimplemented(
        message = "this alternate-result filter's request type does not match `{M}`",
        label = "`{M}` takes `{P}`: write `TypedRequest<{P}>`",
        note = "an alternate-result filter is `async fn(req: TypedRequest<P>, next: AltNext<P, R>) -> Result<Alternate<R>, McpError>` with the params `P` and result `R` of its method"
    )]
    pub trait AltFilterRequest<M, P>: Sized {
        /// Identity.
        fn from_alt(req: TypedRequest<P>) -> Self;
    }
    impl<M, P> AltFilterRequest<M, P> for TypedRequest<P> {
        fn from_alt(req: TypedRequest<P>) -> Self {
            req
        }
    }

    /// The second argument of an alternate-result filter on the method `M` (params `P`, result
    /// `R`).
    #[diagnostic::on_unimplemented(
        message = "this alternate-result filter's `next` does not match `{M}`",
        label = "`{M}` takes `{P}` and returns `{R}`: write `AltNext<{P}, {R}>`",
        note = "an alternate-result filter is `async fn(req: TypedRequest<P>, next: AltNext<P, R>) -> Result<Alternate<R>, McpError>` with the params `P` and result `R` of its method; `Next<P, R>` is the `next` of typed filters without `alternate`"
    )]
    pub trait AltFilterNext<M, P, R>: Sized {
        /// Identity.
        fn from_alt(next: AltNext<P, R>) -> Self;
    }
    impl<M, P, R> AltFilterNext<M, P, R> for AltNext<P, R> {
        fn from_alt(next: AltNext<P, R>) -> Self {
            next
        }
    }

    /// The return type of an alternate-result filter on the method `M` (result `R`).
    #[diagnostic::on_unimplemented(
        message = "this alternate-result filter's return type does not match `{M}`",
        label = "`{M}` returns `{R}`: write `Result<Alternate<{R}>, McpError>`",
        note = "an alternate-result filter is `async fn(req: TypedRequest<P>, next: AltNext<P, R>) -> Result<Alternate<R>, McpError>` with the params `P` and result `R` of its method: `Alternate::Ordinary(r)` is the method's result, `Alternate::Other(json)` an alternate one"
    )]
    pub trait AltFilterReturn<M, R> {
        /// Identity.
        fn into_alternate(self) -> Result<Alternate<R>, McpError>;
    }
    impl<M, R> AltFilterReturn<M, R> for Result<Alternate<R>, McpError> {
        fn into_alternate(self) -> Result<Alternate<R>, McpError> {
            self
        }
    }
}
