//! Attribute macros of Switchyard. Use them through the `switchyard` crate
//! (`use switchyard::prelude::*;`), which re-exports them; generated code names only
//! `::switchyard::__private`, so a server crate needs no other dependency for them.
//!
//! Each macro annotates a free `async fn`, re-emits it unchanged, and registers it with the
//! runtime; `ServerBuilder::build` collects the registrations. Every problem an annotation has is
//! reported in one compile, at the token that causes it.
//!
//! # Handler arguments
//! Each argument of an annotated function is one of:
//! - an **extractor**, built from the request context: an argument whose type is named
//!   `RequestContext`, `State<T>`, `CancellationToken`, `Progress`, `Logger` or `Server`, or any
//!   argument marked `#[extract]` (its type implements `switchyard::FromRequestContext`);
//! - the **params** (tools and prompts, at most one): a type implementing `serde::Deserialize` and
//!   `schemars::JsonSchema`, decoded from the request's `arguments`;
//! - for resources, an argument **named after a URI template variable** (its type implements
//!   `FromStr`), or one `ResourceRequest`;
//! - for completions, one argument receiving the `CompletionRequest`.
//!
//! Arguments are plain identifiers (or `_`); handlers cannot be generic, take `self`, or be
//! `const`/`unsafe`/`extern`.
//!
//! # Duplicates
//! A second tool with the same name, prompt with the same name, resource with the same URI, or
//! completion for the same target and argument, in the same group of the same crate, fails
//! `cargo check` with an error pointing at both names. Duplicates across crates are reported by
//! `ServerBuilder::build`.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod symbol;
mod uri_template;

use expand::Kind;
use proc_macro::TokenStream;

/// Registers an `async fn` as an MCP tool.
///
/// ```ignore
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct SearchArgs {
///     /// What to look for.
///     query: String,
/// }
///
/// /// Searches the catalogue.
/// #[mcp_tool(name = "catalogue.search", read_only, open_world = false)]
/// async fn search(args: SearchArgs, db: State<Db>, cancel: CancellationToken) -> Result<Json<Hits>, ToolError> {
///     # todo!()
/// }
/// ```
///
/// # Keys
/// | key | value | default |
/// |---|---|---|
/// | `name` | 1–128 characters of `[A-Za-z0-9_.-]`, not an MCP method name | the function's name |
/// | `title` | display title | none |
/// | `description` | what the tool does, for the model | the doc comment (one of the two is required) |
/// | `group` | registration group selected by `ServerBuilder::groups` | `"default"` |
/// | `input_schema` | a hand-written JSON Schema (`"type": "object"` at the root), used as is; the params type then needs only `Deserialize` | generated from the params type |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | `true`/`false`, or the bare key for `true`: the `annotations` hints | not sent |
///
/// # Arguments
/// Extractors and at most one params type (see the [crate docs](crate)). Without params the
/// input schema is `{"type":"object","properties":{}}`.
///
/// # Return type
/// `Result<T, E>` or `T`, with `T` one of `String`, `&'static str`, `Content`, `Vec<Content>`,
/// `CallToolResult`, `Json<U>` or `()`, and `E` one of `ToolError` (an `isError` result),
/// `McpError` (a JSON-RPC error), `ToolFailure` or `String`. Returning `Json<U>` (also inside
/// `Result`) declares `U`'s JSON Schema as the tool's output schema.
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Tool, attr.into(), item.into()).into()
}

/// Registers an `async fn` as an MCP prompt.
///
/// ```ignore
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReviewArgs {
///     /// The code to review.
///     code: String,
/// }
///
/// /// Asks for a code review.
/// #[mcp_prompt(name = "review", title = "Code review")]
/// async fn review(args: ReviewArgs) -> Vec<PromptMessage> {
///     vec![PromptMessage::user_text(format!("Review this:\n{}", args.code))]
/// }
/// ```
///
/// # Keys
/// `name` (default: the function's name), `title`, `description` (default: the doc comment; one
/// of the two is required), `group` (default `"default"`).
///
/// # Arguments
/// Extractors and at most one params type, whose top-level fields become the prompt's
/// `arguments` (required unless `Option`). Clients send prompt arguments as strings, so the
/// fields are usually `String` or `Option<String>`.
///
/// # Return type
/// `GetPromptResult`, `Vec<PromptMessage>`, `PromptMessage` or `String` (one user message),
/// optionally inside `Result<_, McpError>`.
#[proc_macro_attribute]
pub fn mcp_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Prompt, attr.into(), item.into()).into()
}

/// Registers an `async fn` as an MCP resource, or as a resource template when `uri` contains
/// `{variables}`.
///
/// ```ignore
/// /// The current configuration.
/// #[mcp_resource(uri = "config://app", mime_type = "application/json")]
/// async fn config(cfg: State<Config>) -> Result<String, McpError> {
///     # todo!()
/// }
///
/// /// One user's profile.
/// #[mcp_resource(uri = "users://{org}/{id}/profile", name = "user-profile")]
/// async fn profile(org: String, id: u64, req: ResourceRequest) -> Result<ResourceContents, McpError> {
///     # todo!()
/// }
/// ```
///
/// # Keys
/// | key | value | default |
/// |---|---|---|
/// | `uri` | the URI, or an RFC 6570 level-1 template (`{var}` between literal text) | required |
/// | `name` | resource name | the function's name |
/// | `title` | display title | none |
/// | `description` | description | the doc comment, if any |
/// | `mime_type` | `type/subtype` of the contents | none |
/// | `group` | registration group | `"default"` |
///
/// # Arguments
/// An argument named like a template variable receives that variable parsed with `FromStr`
/// (a failed parse is a `-32602` error); one argument of type `ResourceRequest` receives the
/// request (URI and all variables); all other arguments must be extractors.
///
/// # Return type
/// `ReadResourceResult`, `ResourceContents`, `Vec<ResourceContents>`, `String` (text with the
/// registered MIME type) or `Vec<u8>` (a base64 blob), optionally inside `Result<_, McpError>`.
#[proc_macro_attribute]
pub fn mcp_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Resource, attr.into(), item.into()).into()
}

/// Registers an `async fn` as the `completion/complete` handler of a prompt's or resource
/// template's arguments.
///
/// ```ignore
/// #[mcp_completion(prompt = "review", argument = "language")]
/// async fn languages(req: CompletionRequest) -> Vec<String> {
///     ["rust", "go", "python"].iter().filter(|l| l.starts_with(&req.argument.value)).map(|l| l.to_string()).collect()
/// }
///
/// #[mcp_completion(resource = "users://{org}/{id}/profile", argument = "org")]
/// async fn orgs(req: CompletionRequest, db: State<Db>) -> Result<Completion, McpError> {
///     # todo!()
/// }
/// ```
///
/// # Keys
/// Exactly one of `prompt = "prompt-name"` or `resource = "uri-template"` (a template with at
/// least one variable); `argument` (the argument or template variable completed; default: every
/// argument without a handler of its own); `group` (default `"default"`).
///
/// # Arguments
/// One argument receiving the `CompletionRequest` (optional), and extractors.
///
/// # Return type
/// `Completion` or `Vec<String>` (at most 100 are sent, with `hasMore`), optionally inside
/// `Result<_, McpError>`.
#[proc_macro_attribute]
pub fn mcp_completion(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Completion, attr.into(), item.into()).into()
}

/// Registers an async function as a typed extension RPC (placeholder until implemented).
#[proc_macro_attribute]
pub fn mcp_rpc(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// Registers an async function as a filter (placeholder until implemented).
#[proc_macro_attribute]
pub fn mcp_filter(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
