use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::model::{
    CallToolResult, Completion, CompletionRequest, GetPromptResult, PromptArgument, ReadResourceResult,
};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: the shape of every generated handler shim.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Where a registration was written, for start-up errors that name both sides of a collision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// `module_path!()` of the annotated function.
    pub module_path: &'static str,
    /// `file!()` of the annotated function.
    pub file: &'static str,
    /// Line of the function's name.
    pub line: u32,
    /// The Rust function name.
    pub function: &'static str,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{} ({}:{})", self.module_path, self.function, self.file, self.line)
    }
}

/// A tool handler shim: receives the request context and the raw `arguments` object (`{}` when
/// the client sent none) and returns the call result or a protocol error.
pub type ToolHandler = fn(RequestContext, Value) -> BoxFuture<Result<CallToolResult, McpError>>;

/// One `#[mcp_tool]` registration (schema `Tool`, plus dispatch data).
#[derive(Debug)]
pub struct ToolRegistration {
    /// Tool name, 1–128 characters of `[A-Za-z0-9_.-]` (checked by the macro).
    pub name: &'static str,
    /// Optional display title.
    pub title: Option<&'static str>,
    /// Description (the doc comment unless given explicitly).
    pub description: Option<&'static str>,
    /// Registration group; `"default"` unless set. See [`ServerBuilder::groups`](crate::ServerBuilder::groups).
    pub group: &'static str,
    /// The JSON Schema of `arguments` (`type: "object"` at the root).
    pub input_schema: fn() -> Value,
    /// The JSON Schema of `structuredContent`, when the tool returns [`Json<T>`](crate::Json).
    pub output_schema: Option<fn() -> Value>,
    /// `annotations` object (`readOnlyHint`, ...), when any were given.
    pub annotations: Option<fn() -> Value>,
    /// Roles a caller needs (any one of them); empty: anyone. Enforced by the server's
    /// authorization, see `switchyard::auth`.
    pub roles: &'static [&'static str],
    /// Whether the tool may run as a task of the Tasks extension (not on the wire).
    pub task_support: super::TaskSupport,
    /// The handler shim.
    pub handler: ToolHandler,
    /// Where it was declared.
    pub site: Site,
}

/// A prompt handler shim: receives the context and the `arguments` map (strings).
pub type PromptHandler = fn(RequestContext, Map<String, Value>) -> BoxFuture<Result<GetPromptResult, McpError>>;

/// One `#[mcp_prompt]` registration (schema `Prompt`).
#[derive(Debug)]
pub struct PromptRegistration {
    /// Prompt name.
    pub name: &'static str,
    /// Optional display title.
    pub title: Option<&'static str>,
    /// Description.
    pub description: Option<&'static str>,
    /// Registration group.
    pub group: &'static str,
    /// The arguments list, derived from the params type's schema.
    pub arguments: fn() -> Vec<PromptArgument>,
    /// Roles a caller needs (any one of them); empty: anyone. Enforced by the server's
    /// authorization, see `switchyard::auth`.
    pub roles: &'static [&'static str],
    /// The handler shim.
    pub handler: PromptHandler,
    /// Where it was declared.
    pub site: Site,
}

/// What a resource handler is asked to read.
#[derive(Debug, Clone)]
pub struct ResourceRequest {
    /// The URI requested.
    pub uri: String,
    /// Template variables bound from the URI (empty for a static resource).
    pub variables: Map<String, Value>,
}

/// A resource handler shim.
pub type ResourceHandler = fn(RequestContext, ResourceRequest) -> BoxFuture<Result<ReadResourceResult, McpError>>;

/// One `#[mcp_resource]` registration: a static resource or a URI template (RFC 6570 level 1,
/// `{var}` segments).
#[derive(Debug)]
pub struct ResourceRegistration {
    /// The URI, or the URI template when it contains `{`.
    pub uri: &'static str,
    /// True when `uri` is a template (listed by `resources/templates/list`).
    pub is_template: bool,
    /// Resource name.
    pub name: &'static str,
    /// Optional display title.
    pub title: Option<&'static str>,
    /// Description.
    pub description: Option<&'static str>,
    /// MIME type of the contents, if known.
    pub mime_type: Option<&'static str>,
    /// Registration group.
    pub group: &'static str,
    /// Roles a caller needs (any one of them); empty: anyone. Enforced by the server's
    /// authorization, see `switchyard::auth`.
    pub roles: &'static [&'static str],
    /// The handler shim.
    pub handler: ResourceHandler,
    /// Where it was declared.
    pub site: Site,
}

/// What a completion handler completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionTarget {
    /// Arguments of the named prompt.
    Prompt(&'static str),
    /// Variables of the resource template with this URI template.
    ResourceTemplate(&'static str),
}

/// A completion handler shim.
pub type CompletionHandler = fn(RequestContext, CompletionRequest) -> BoxFuture<Result<Completion, McpError>>;

/// One `#[mcp_completion]` registration.
#[derive(Debug)]
pub struct CompletionRegistration {
    /// The prompt or resource template it completes.
    pub target: CompletionTarget,
    /// The argument it completes; `None` means every argument of the target.
    pub argument: Option<&'static str>,
    /// Registration group.
    pub group: &'static str,
    /// The handler shim.
    pub handler: CompletionHandler,
    /// Where it was declared.
    pub site: Site,
}

inventory::collect!(ToolRegistration);
inventory::collect!(PromptRegistration);
inventory::collect!(ResourceRegistration);
inventory::collect!(CompletionRegistration);
