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
//! - for completions, one argument receiving the `CompletionRequest`;
//! - for RPCs (at most one), a params type implementing `serde::Deserialize`, decoded from the
//!   request's `params`.
//!
//! A params type named like an extractor (your own `State`, `Logger`, `Progress`, ...) is taken
//! for one; mark that argument `#[params]` to say it is the params: `async fn set(#[params] s:
//! State)`.
//!
//! Arguments are plain identifiers (or `_`); handlers cannot be generic, take `self`, or be
//! `const`/`unsafe`/`extern`. Filters have a fixed signature instead (see [`mcp_filter`]): no
//! extractors, since their request carries the context (`req.ctx`), and any argument pattern.
//!
//! # Roles
//! Tools, prompts, resources and RPCs take `roles = ["admin", "ops"]`: only a caller holding
//! at least one of the roles may use them, as decided by the server's authorization (see
//! `switchyard::auth`); without the key anyone may. The array lists string literals, each
//! non-empty and given once; `roles = []` is an error (omit the key instead).
//!
//! # Scopes
//! The same primitives take `scopes = ["files:read"]`: the OAuth scopes the caller's access
//! token must grant, all of them (RFC 6749 §3.3; what a token grants is the server's `Policy`
//! to say, so `files:write` may imply `files:read`). A call without them is refused before any
//! filter runs or a task is created, with HTTP 403 and `WWW-Authenticate: Bearer
//! error="insufficient_scope", scope="…"` so that the client can authorize again for them
//! (401 without a token); lists leave out what the token cannot use, and the server's
//! protected resource metadata lists every declared scope in `scopes_supported`. Each scope is
//! printable ASCII without spaces, `"` or `\`, given once; `scopes = []` is an error.
//!
//! # Duplicates
//! A second tool with the same name, prompt with the same name, resource with the same URI,
//! completion for the same target and argument, RPC with the same method, or subscription field
//! processor for the same key, in the same group of the same crate, fails `cargo check` with an
//! error pointing at both names, which names the problem as well as rustc lets it: "the name
//! `mcp_tool_named_echo_is_declared_twice_in_this_crate_rename_one` is defined multiple times"
//! (a key of other characters than `[A-Za-z0-9_]`, or a group other than the default, adds a
//! hash to keep the name unique). Duplicates across crates are reported by
//! `ServerBuilder::build`.
//!
//! # Hidden types
//! Besides the function, `#[mcp_tool]`, `#[mcp_prompt]` and `#[mcp_resource]` give its name a
//! hidden meaning as a type, with the function's visibility, so that `#[mcp_filter(rpc =
//! some_tool)]` is an error saying which built-in method to filter instead. A module, an import
//! or a type of the same name takes precedence over it and keeps compiling. The one name it gets
//! in the way of is an external crate's: in the module of a handler named like a crate (`async fn
//! regex`), write that crate's paths from the root (`use ::regex::Regex;`). The marker type of
//! [`mcp_rpc`] is declared beside its function instead, so no other type, module or import of
//! the function's name may share its module.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod symbol;
mod uri_template;
// Shared with the runtime: a link to `runtime/src/vocab`.
mod vocab;

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
/// #[mcp_tool(name = "catalogue.search", read_only, open_world = false, roles = ["staff", "admin"])]
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
/// | `roles` | an array of role names, e.g. `["admin", "ops"]`: a caller needs any one of them (see the [crate docs](crate#roles)) | anyone may call it |
/// | `scopes` | an array of OAuth scopes, e.g. `["files:read"]`: the caller's token must grant all of them (see the [crate docs](crate#scopes)) | no scope needed |
/// | `icons` | an array of icon URLs or `icon(src = "...", mime_type = "image/png", sizes = ["48x48"], theme = "dark")` entries (SEP-973): `src` is `https:`/`http:` or `data:image/...`, never `javascript:` or `file:`; checked here; sent to 2025-11-25 and later clients | none |
/// | `meta` | a JSON object as a string, e.g. `r#"{"com.example/rank": 1}"#`: the definition's `_meta`; keys follow the `_meta` naming rules and may not use the reserved `io.modelcontextprotocol/` or `dev.mcp/` prefixes (checked here); sent to 2025-06-18 and later clients | none |
/// | `declared` | the path of the body-less declaration the handler implements, e.g. `api::search` (see [Declarations](#declarations)) | none |
/// | `task_support` | `"optional"` or `"required"`: whether the Tasks extension (crate `switchyard-mcp-tasks`) may or must run the call as a task; `"escalate"`: the tool starts on the request path (it may gather input first) and becomes a task when it calls `switchyard_tasks::escalate`; stored as `TaskSupport` on the tool's registration, never sent | never a task |
/// | `timeout` | the longest one call's body may run: a whole number and `ms`, `s`, `min` or `h`, e.g. `"30s"` (1 ms to 24 h); past it the body is cancelled and the call answers `-32603` naming the limit (`ToolLimits`, docs/filters.md) | none |
/// | `rate_limit` | calls per caller per period: `"10/s"`, `"10/min"`, `"100/h"`, `"1000/day"` or `"100/15min"`; an over-the-limit call is refused before any filter or task runs (docs/filters.md) | none |
/// | `max_concurrency` | at most this many calls of the tool running at once on one instance, e.g. `max_concurrency = 4`; the next is refused at once | none |
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
///
/// # Typed call
/// `search::call(&caller, SearchArgs { .. })` calls the tool through any
/// `switchyard::call::Caller` (the client crate's `Client`, `testing::TestClient`) and returns
/// `Result<Hits, C::Error>`: the output decoded as `switchyard::call::ToolReturn` says
/// (`Json<U>` from `structuredContent`, `String` from the text blocks, ...), an `isError`
/// result as `TypedCallError::ToolFailed`. A tool without params is called with `()`. The
/// params need `serde::Serialize` and the output `serde::Deserialize` where `call` is used
/// (never for serving). A handler's call is usable in the handler's module and the modules
/// inside it (its tests, say), whatever the function's visibility, so that a public handler
/// taking a private type keeps compiling; other crates call through a declaration. A function
/// named like a primitive type (`u16`) or returning `impl Trait` has no typed call.
///
/// # Declarations
/// Without a body, `#[mcp_tool(name = "catalogue.search")] pub async fn search(args:
/// SearchArgs) -> Json<Hits>;` is a declaration, for a crate the server and its clients share:
/// it gives the typed call, with the function's visibility (its params and output types must
/// be as visible), and registers nothing. It takes only `name`, and only the params (no
/// extractors). The server implements it with `declared = path`:
/// `#[mcp_tool(name = "catalogue.search", declared = api::search)]` fails to compile when the
/// handler's name, params type or output (the decoded type, and where in the result it is)
/// differs from the declaration's; the handler may add extractors and wrap its output in
/// `Result<_, ToolError>`, and names its return type (no `impl Trait`).
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
/// of the two is required), `group` (default `"default"`), `roles` (e.g. `roles = ["editor"]`:
/// a caller needs any one of them, see the [crate docs](crate#roles); default: anyone), `scopes`
/// (e.g. `scopes = ["docs:read"]`: the token must grant all of them, see the
/// [crate docs](crate#scopes); default: none), `icons` and `meta` (as on
/// [`mcp_tool`](macro@mcp_tool#keys): icons and `_meta`, checked here).
///
/// # Arguments
/// Extractors and at most one params type, whose top-level fields become the prompt's
/// `arguments` (required unless `Option`; a field's `#[schemars(title = "...")]` becomes the
/// argument's `title`). Clients send prompt arguments as strings, so the
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
/// | `uri` | the URI, or a template: literal text with `{var}` and `{+var}` expressions (see [Templates](#templates)) | required |
/// | `name` | resource name | the function's name |
/// | `title` | display title | none |
/// | `description` | description | the doc comment, if any |
/// | `mime_type` | `type/subtype` of the contents | none |
/// | `size` | the contents' size in bytes (static resources only) | none |
/// | `icons` | an array of icon URLs or `icon(src = "...", mime_type = "image/png", sizes = ["48x48"], theme = "dark")` entries (SEP-973): `src` is `https:`/`http:` or `data:image/...`, never `javascript:` or `file:`; checked here; sent to 2025-11-25 and later clients | none |
/// | `meta` | a JSON object as a string, e.g. `r#"{"com.example/rank": 1}"#`: the definition's `_meta`; keys follow the `_meta` naming rules and may not use the reserved `io.modelcontextprotocol/` or `dev.mcp/` prefixes (checked here); sent to 2025-06-18 and later clients | none |
/// | `group` | registration group | `"default"` |
/// | `roles` | an array of role names, e.g. `["auditor"]`: a caller needs any one of them to read it (see the [crate docs](crate#roles)) | anyone may read it |
/// | `scopes` | an array of OAuth scopes, e.g. `["audit:read"]`: the caller's token must grant all of them (see the [crate docs](crate#scopes)) | no scope needed |
///
/// # Templates
/// A template serves the URIs that expanding it could produce
/// (RFC 6570, <https://www.rfc-editor.org/rfc/rfc6570>), and hands each variable over
/// percent-decoded as UTF-8:
///
/// | expression | matches one or more of | e.g. | the variable is |
/// |---|---|---|---|
/// | `{var}` (simple string expansion, §3.2.2) | unreserved characters `A-Za-z0-9-._~`, percent-encoded triplets, non-ASCII characters; no reserved character (`:/?#[]@!$&'()*+,;=`) | `notes://{name}` on `notes://a%2Fb`; on `notes://caf%C3%A9` or `notes://café`; on `notes://a/b` or `notes://../../etc/passwd` | `a/b`; `café` (both); no match: the resource is not found (`-32602`) |
/// | `{+var}` (reserved expansion, §3.2.3) | the same, and the reserved characters (`/` included) | `files://{+path}` on `files://docs/a%20b.md` | `docs/a b.md` |
///
/// Neither matches an empty value, a character that cannot appear in a URI (space, ``"<>\^`{|}``,
/// controls), a `%` without two hex digits, or a value whose decoding is not UTF-8. Where a
/// `{+var}` could end at several places it takes the most: `repo://{+path}/raw` on
/// `repo://a/b/raw` gives `a/b`. Literal text is matched exactly as written, and may hold only
/// what a URI may (write a space as `%20`). The other RFC 6570 operators (`{#x}`, `{.x}`,
/// `{/x}`, `{;x}`, `{?x}`, `{&x}`), variable lists (`{x,y}`) and modifiers (`{x:3}`, `{x*}`)
/// are compile errors, spanned at the `uri` literal.
///
/// **A variable is the client's input.** Decoded, a `{var}` may still be `.` or `..`, or hold
/// `/`, `\` or NUL (sent as `%2E%2E`, `%2F`, `%5C`, `%00`); a `{+var}` may be any path,
/// `../../etc/passwd` or `/etc/passwd` included. A handler that maps a variable to a file must
/// check it, e.g. with a name that cannot leave its directory, or a path that must stay under
/// a root once resolved (both run in the tests, `runtime/tests/it/uri_templates.rs`):
///
/// ```ignore
/// struct Notes {
///     dir: std::path::PathBuf,
/// }
///
/// /// A note: one file directly in the notes directory.
/// #[mcp_resource(uri = "notes://{name}", mime_type = "text/plain")]
/// async fn note(name: String, notes: State<Notes>, req: ResourceRequest) -> Result<String, McpError> {
///     let plain = !matches!(name.as_str(), "." | "..") && !name.contains(['/', '\\', '\0']);
///     if !plain {
///         return Err(McpError::resource_not_found(&req.uri));
///     }
///     tokio::fs::read_to_string(notes.dir.join(&name)).await.map_err(|_| McpError::resource_not_found(&req.uri))
/// }
///
/// struct Docs {
///     root: std::path::PathBuf, // canonical (`std::fs::canonicalize` at start-up)
/// }
///
/// /// A file anywhere under the docs root.
/// #[mcp_resource(uri = "docs://{+path}", mime_type = "text/plain")]
/// async fn doc(path: String, docs: State<Docs>, req: ResourceRequest) -> Result<String, McpError> {
///     let not_found = || McpError::resource_not_found(&req.uri);
///     // `join` puts an absolute `path` in the root's place; resolving `..` and links first,
///     // then checking the prefix, catches that and every other way out of the root.
///     let full = tokio::fs::canonicalize(docs.root.join(&path)).await.map_err(|_| not_found())?;
///     if !full.starts_with(&docs.root) {
///         return Err(not_found());
///     }
///     tokio::fs::read_to_string(full).await.map_err(|_| not_found())
/// }
/// ```
///
/// # Arguments
/// An argument named like a template variable receives that variable (decoded, as above)
/// parsed with `FromStr` (a failed parse is a `-32602` error); one argument of type
/// `ResourceRequest` receives the request (the URI as sent, and all variables); all other
/// arguments must be extractors.
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

/// Registers an `async fn` as a typed extension RPC: a JSON-RPC method of the server's own,
/// served next to MCP's methods, with typed params and result.
///
/// ```ignore
/// #[derive(serde::Deserialize)]
/// struct SumParams { a: i64, b: i64 }
///
/// #[derive(serde::Serialize)]
/// struct SumResult { sum: i64 }
///
/// #[mcp_rpc("acme/sum")]
/// async fn sum(params: SumParams, db: State<Db>) -> Result<SumResult, McpError> {
///     Ok(SumResult { sum: params.a + params.b })
/// }
///
/// /// An extension method: 2026-07-28 requests only, from clients declaring the extension, to a
/// /// server declaring it.
/// #[mcp_rpc("io.example/ext/run", extension = "io.example/ext", routing_name = "jobId")]
/// async fn run(job: JobRef) -> Result<JobStatus, McpError> {
///     # todo!()
/// }
/// ```
///
/// # Arguments of the attribute
/// The method name comes first, as a string literal: vendor-prefixed (`acme/sum`, with a `/`),
/// without whitespace, not starting with JSON-RPC's reserved `rpc.`, and not a method of MCP
/// itself (`initialize`, `ping`, `server/discover`, `tools/call`, `subscriptions/listen`, ...:
/// never, whatever the `extension`). Names in MCP's namespaces (`tools/`, `prompts/`,
/// `resources/`, `notifications/`, `tasks/`, `skills/`) are the methods of MCP's official
/// extensions, accepted only with `extension = "io.modelcontextprotocol/<name>"`, as the Tasks
/// extension declares `tasks/get` with `extension = "io.modelcontextprotocol/tasks"`. Then
/// these keys:
///
/// | key | value | default |
/// |---|---|---|
/// | `routing_name` | the params field that the HTTP `Mcp-Name` header mirrors, e.g. `"taskId"` (needs a params argument) | none |
/// | `capability` | a top-level client capability the request must declare, e.g. `"sampling"` | none |
/// | `extension` | the extension that declares the method, `"vendor-prefix/name"`: the request must declare it too, and the method is served only while the server declares it (`ServerBuilder::extension_capability`) | none |
/// | `client_declares` | with `extension`, a flag: `client_declares = false` for an extension that defines no client declaration (as the Skills extension, SEP-2640), so requests need not declare it; the method is still served only while the server declares the extension | `true` |
/// | `eras` | `"modern"` (2026-07-28 requests), `"legacy"` (sessions of earlier revisions) or `"both"` | `"both"`, or `"modern"` with `extension` |
/// | `group` | registration group selected by `ServerBuilder::groups` | `"default"` |
/// | `roles` | an array of role names, e.g. `["ops"]`: a caller needs any one of them (see the [crate docs](crate#roles)) | anyone may call it |
/// | `scopes` | an array of OAuth scopes, e.g. `["admin"]`: the caller's token must grant all of them (see the [crate docs](crate#scopes)) | no scope needed |
/// | `declared` | the path of the body-less declaration the handler implements, e.g. `api::sum`: a method name, params type or result type other than the declaration's fails to compile | none |
///
/// `capability` and `extension` together require both (one merged `ClientCapabilities`
/// object). A modern request that lacks them gets `-32021` with the object as
/// `data.requiredCapabilities`; legacy sessions are not checked. A request in an era the method
/// is not served in, or to a server that does not declare the method's extension, gets `-32601`.
///
/// # Arguments of the function
/// Extractors and at most one params type (see the [crate docs](crate)), which implements
/// `serde::Deserialize` (no `JsonSchema` needed) and is decoded from the request's `params`
/// without `_meta`; a failed decode is `-32602`. Without a params argument any params object is
/// accepted.
///
/// # Return type
/// `Result<T, E>`, written out (a `Result<T>` alias hides the types from the macro), with
/// `T: serde::Serialize` sent as the result object and `E: Into<McpError>` sent as the JSON-RPC
/// error. On the modern wire the result gets `resultType` and `_meta` added.
///
/// # Filters
/// The macro also declares a hidden type with the function's name (types and functions live
/// in different namespaces, so the two do not clash, and `use` imports both). It implements
/// `switchyard::RpcMethod` with the method's name and types, and is what
/// `#[mcp_filter(rpc = sum)]` names. It has the function's visibility, so the params and result
/// types of a public handler must be public too.
///
/// Two `#[mcp_rpc]` with one method name in one group of one crate fail to compile, at both
/// names.
///
/// # Typed call and declarations
/// The hidden type also has the typed call: `sum::call(&caller, SumParams { .. })` (`()`
/// without params) sends the method through any `switchyard::call::Caller` and returns
/// `Result<T, C::Error>` with the handler's `T` (a value that is no object is read back from the
/// `{"value": ..}` the 2026-07-28 wire wraps it in). Without a body, `#[mcp_rpc("acme/sum")]
/// pub async fn sum(p: SumParams) -> Result<Sum, McpError>;` is a declaration for a crate the
/// server and its clients share: the hidden type and its call, no registration, no other key,
/// no extractors; the server implements it with `declared = api::sum`.
#[proc_macro_attribute]
pub fn mcp_rpc(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Rpc, attr.into(), item.into()).into()
}

/// Registers an `async fn` as a filter: a step of the request pipeline that sees a request
/// before its method and the response after, and may change either or answer by itself.
///
/// ```ignore
/// /// A raw filter: every request of every method, with undecoded params.
/// #[mcp_filter(order = 10)]
/// async fn audit(req: RawRequest, next: RawNext) -> RawResponse {
///     let method = req.ctx.method().to_owned();
///     let response = next.run(req).await;
///     tracing::info!(%method, ok = response.is_ok());
///     response
/// }
///
/// /// A typed filter on the `#[mcp_rpc]` handler `sum`: its decoded params and typed result.
/// #[mcp_filter(rpc = sum, order = 20)]
/// async fn limit(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
///     if req.params.a.abs() > 1_000 {
///         return Err(McpError::invalid_params("a is too large"));
///     }
///     next.run(req).await
/// }
///
/// /// An alternate-result filter on `prompts/get`: answers with a result of its own shape for
/// /// one prompt, and with the ordinary result for the others.
/// #[mcp_filter(alternate, rpc = switchyard::methods::PromptsGet)]
/// async fn deferred(
///     req: TypedRequest<GetPromptParams>,
///     next: AltNext<GetPromptParams, GetPromptResult>,
/// ) -> Result<Alternate<GetPromptResult>, McpError> {
///     if req.params.name == "report" {
///         return Ok(Alternate::Other(serde_json::json!({"resultType": "deferred", "retryAfter": 30})));
///     }
///     next.run(req).await
/// }
/// ```
///
/// # Keys
/// | key | value | default |
/// |---|---|---|
/// | `rpc` | the path of an `#[mcp_rpc]` handler function (`rpc = sum`, `rpc = crate::rpcs::sum`), or of another type implementing `switchyard::RpcMethod`: the filter becomes a typed filter on that method (a tool, prompt or resource function is an error, which names the built-in method to filter instead) | none: a raw filter |
/// | `alternate` | a flag (`alternate`, or `alternate = true`/`false`), with `rpc`: the filter becomes an alternate-result filter on that method | not set: a typed filter |
/// | `order` | an `i32` literal, negative allowed; lower runs outside higher | `0` |
/// | `group` | registration group selected by `ServerBuilder::groups` (a typed filter's group is usually its RPC's) | `"default"` |
///
/// Methods are named through their handler so that the filter's types are checked against the
/// method's at compile time: `method = "..."` is not accepted. Of MCP's own methods,
/// `tools/call`, `prompts/get` and `resources/read` take typed and alternate-result filters
/// through the marker types `switchyard::methods::{ToolsCall, PromptsGet, ResourcesRead}`
/// (`rpc = switchyard::methods::ToolsCall`); every other method is filtered by raw filters, which
/// see every request (`req.ctx.method()`).
///
/// # Signature
/// Exactly two arguments, the request and the rest of the chain:
/// - raw: `async fn(req: RawRequest, next: RawNext) -> RawResponse`, where `RawResponse` is
///   `Result<serde_json::Value, McpError>`;
/// - typed: `async fn(req: TypedRequest<P>, next: Next<P, R>) -> Result<R, McpError>`, with
///   the params type `P` and result type `R` of the method (`<M as RpcMethod>::Params` and
///   `::Result` of `rpc = M`);
/// - alternate-result: `async fn(req: TypedRequest<P>, next: AltNext<P, R>) ->
///   Result<Alternate<R>, McpError>`, with the same `P` and `R`. It returns either
///   `Alternate::Ordinary(r)`, the method's result (what `next.run(req).await` yields unless an
///   inner alternate filter answered otherwise), or `Alternate::Other(json)`, an alternate
///   result with its own shape, sent as it is: it should carry its own `resultType` (without
///   one it gets `"complete"`). `AltNext` and `Alternate` are exported at the crate root
///   (`use switchyard::{AltNext, Alternate};`).
///
/// A wrong type is a compile error at that type, saying what is expected (for typed and
/// alternate-result filters, the method's types). Call `next.run(req).await` to pass the request
/// on, or return without calling it to answer by yourself: the inner filters and the method then
/// do not run.
///
/// # Order
/// Raw filters wrap alternate-result filters, which wrap typed filters, which wrap the handler:
/// the alternate-result filters of a method wrap all of its typed filters, whatever their
/// `order`. Within each kind, the filter with the lowest `order` is outermost; equal orders are
/// sorted by the filter's fully qualified name (`module_path::function`). With raw filters `r1`
/// (order 1) and `r2` (order 2), alternate-result filters `a1`, `a2` and typed filters `t1`,
/// `t2` on an RPC, a request to it runs
/// `r1 > r2 > a1 > a2 > t1 > t2 > handler > t2 > t1 > a2 > a1 > r2 > r1`, even if `t1` has a
/// lower `order` than `a1`. Declaration order never matters.
#[proc_macro_attribute]
pub fn mcp_filter(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Filter, attr.into(), item.into()).into()
}

/// Registers an `async fn` as the processor of an extension-owned key of the
/// `subscriptions/listen` filter: it receives the value a client requested for the key and
/// returns the value granted, which the acknowledgement carries under the same key.
///
/// ```ignore
/// /// Lets a client follow the tasks it may see.
/// #[subscription_field("taskIds", extension = "io.modelcontextprotocol/tasks", group = "tasks")]
/// async fn grant_task_ids(requested: Vec<String>, ctx: RequestContext) -> Result<Vec<String>, McpError> {
///     # todo!()
/// }
/// ```
///
/// # Arguments of the attribute
/// The filter key comes first, as a non-empty string literal without whitespace. The core keys,
/// which the runtime answers itself, are not accepted: `toolsListChanged`,
/// `promptsListChanged`, `resourcesListChanged` and `resourceSubscriptions`. Then these keys:
///
/// | key | value | default |
/// |---|---|---|
/// | `extension` | the extension that owns the key, `"vendor-prefix/name"` | none: any client may name the key |
/// | `group` | registration group selected by `ServerBuilder::groups` | `"default"` |
///
/// An unknown key, or a key given twice, is an error.
///
/// # Arguments of the function
/// Exactly one argument receiving the requested value, of any type `T: serde::Deserialize`
/// (a value that does not decode is `-32602`, naming the key), and extractors (see the
/// [crate docs](crate)), typically one `RequestContext`.
///
/// # Return type
/// `Result<G, E>`, written out, with `G: serde::Serialize` the value granted and
/// `E: Into<McpError>`. An empty grant (`null`, `[]` or `{}`) leaves the key out of the
/// acknowledgement; an error fails the listen request.
///
/// # When it runs
/// Only for `subscriptions/listen` requests whose filter names its key, and only where the
/// transport can deliver what it grants (never on a JSON-only HTTP transport). When `extension`
/// is set, a request naming the key without declaring that extension in its capabilities gets
/// `-32021` with `data.requiredCapabilities = {"extensions": {EXT: {}}}`, and the processor does
/// not run.
///
/// Two `#[subscription_field]` processors of one key in one group of one crate fail to
/// compile, at both keys.
#[proc_macro_attribute]
pub fn subscription_field(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::SubscriptionField, attr.into(), item.into()).into()
}
