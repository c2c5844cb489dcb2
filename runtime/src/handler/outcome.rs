use crate::jsonrpc::McpError;
use crate::model::{
    CallToolResult, Completion, Content, GetPromptResult, Json, PromptMessage, ReadResourceResult, ResourceContents,
};
use serde::Serialize;

/// A tool failure the model can see: becomes a `tools/call` result with `isError: true` and the
/// message as its text (not a JSON-RPC error), as 2025-11-25 and 2026-07-28 server/tools "Error
/// Handling" ask for failures the model may correct
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling>).
///
/// `?` works on every [`std::error::Error`] (`std::io::Error`, `serde_json::Error`, ...) in a
/// tool returning `Result<_, ToolError>`. The message is the error's text followed by its
/// sources, each after `": "` (as `anyhow` prints `{:#}`). An [`McpError`] met that way (the
/// input-required signal of `ctx.input(..).await?`, a missing client capability `-32021`, or
/// any protocol error), also as the source of another error, stays a protocol error: the
/// client receives it as the JSON-RPC error (or input-required result) it is, not as tool text. A tool built on `anyhow` returns
/// `anyhow::Result<T>` instead (feature `anyhow`, on by default), where `?` takes anything
/// `anyhow` takes; `Result<T, String>` and `Result<T, Box<dyn Error + Send + Sync>>` work too.
///
/// ```
/// use switchyard::ToolError;
/// fn read(path: &str) -> Result<String, ToolError> {
///     let text = std::fs::read_to_string(path)?;
///     let value: serde_json::Value = serde_json::from_str(&text)?;
///     Ok(value.to_string())
/// }
/// let err = read("/no/such/file").unwrap_err();
/// assert!(err.message.starts_with("No such file or directory"), "{err}");
/// ```
///
/// Like `anyhow::Error`, it is not itself a [`std::error::Error`]: that is what lets every
/// error convert into it (and why `String` does not: build one with [`ToolError::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// The text shown to the model.
    pub message: String,
    /// The protocol error this came from, which the client receives instead of `message`.
    protocol: Option<Box<McpError>>,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError { message: message.into(), protocol: None }
    }

    /// The error's text and its sources' texts, joined by `": "`; the first [`McpError`] of the
    /// chain, when there is one, is kept as the protocol error it is.
    fn from_chain(error: &(dyn std::error::Error + 'static)) -> Self {
        let mut message = error.to_string();
        let mut protocol = error.downcast_ref::<McpError>().cloned().map(Box::new);
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            if protocol.is_none() {
                protocol = cause.downcast_ref::<McpError>().cloned().map(Box::new);
            }
            source = cause.source();
        }
        ToolError { message, protocol }
    }

    /// The protocol error this tool error carries, when it was converted from one; the client
    /// receives that error rather than an `isError` result.
    pub fn protocol_error(&self) -> Option<&McpError> {
        self.protocol.as_deref()
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError::from_chain(&e)
    }
}

/// The error side of a tool handler: a tool error (`isError: true` result) or a protocol error
/// (JSON-RPC error).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolFailure {
    /// Becomes `{"content":[{"type":"text","text":msg}],"isError":true}`.
    Tool(ToolError),
    /// Becomes a JSON-RPC error response.
    Protocol(McpError),
}

impl From<ToolError> for ToolFailure {
    fn from(e: ToolError) -> Self {
        match e.protocol {
            Some(p) => ToolFailure::Protocol(*p),
            None => ToolFailure::Tool(e),
        }
    }
}

impl From<McpError> for ToolFailure {
    fn from(e: McpError) -> Self {
        ToolFailure::Protocol(e)
    }
}

impl From<String> for ToolFailure {
    fn from(e: String) -> Self {
        ToolFailure::Tool(ToolError::new(e))
    }
}

impl From<&str> for ToolFailure {
    fn from(e: &str) -> Self {
        ToolFailure::Tool(ToolError::new(e))
    }
}

/// Lets a tool return `Result<T, Box<dyn Error + Send + Sync>>`: the error (and its sources)
/// becomes an `isError: true` result.
impl From<Box<dyn std::error::Error + Send + Sync>> for ToolFailure {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        ToolError::from_chain(e.as_ref()).into()
    }
}

/// Lets a tool return `anyhow::Result<T>`: the error becomes an `isError: true` result.
#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for ToolFailure {
    fn from(e: anyhow::Error) -> Self {
        ToolError::from_chain(e.as_ref()).into()
    }
}

/// What a `#[mcp_tool]` function may return: `Result<T, E>` with `T` one of `String`, `&'static
/// str`, [`Content`], `Vec<Content>`, [`CallToolResult`], [`Json<T>`] or `()`, and `E` one of
/// [`ToolError`], [`McpError`], [`ToolFailure`], `String`, `&str` or `anyhow::Error`; or one of
/// those `T` directly. `E = McpError` is a JSON-RPC error response; every other `E` is an
/// `isError: true` result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid tool return type",
    label = "tools return Result<T, E> or T",
    note = "T: String, &'static str, Content, Vec<Content>, CallToolResult, Json<T: Serialize> or (); E: ToolError, McpError, ToolFailure, String or anyhow::Error",
    note = "to use `?` on any error type, return Result<T, ToolError>"
)]
pub trait IntoToolOutcome {
    /// Converts into the `tools/call` result or a protocol error.
    fn into_tool_outcome(self) -> Result<CallToolResult, McpError>;
}

/// A successful tool value (the `T` of [`IntoToolOutcome`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's success value",
    note = "use String, &'static str, Content, Vec<Content>, CallToolResult, Json<T: Serialize> or ()"
)]
pub trait IntoCallToolResult {
    /// Converts into a `CallToolResult`; a serialization failure is a protocol error (-32603).
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError>;
}

impl IntoCallToolResult for CallToolResult {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(self)
    }
}
impl IntoCallToolResult for String {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![Content::text(self)]))
    }
}
impl IntoCallToolResult for &'static str {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![Content::text(self)]))
    }
}
impl IntoCallToolResult for Content {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(vec![self]))
    }
}
impl IntoCallToolResult for Vec<Content> {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(self))
    }
}
impl IntoCallToolResult for () {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        Ok(CallToolResult::success(Vec::new()))
    }
}
impl<T: Serialize> IntoCallToolResult for Json<T> {
    fn into_call_tool_result(self) -> Result<CallToolResult, McpError> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| McpError::internal(format!("tool output could not be serialized: {e}")))?;
        let text = value.to_string();
        Ok(CallToolResult { content: vec![Content::text(text)], structured_content: Some(value), ..Default::default() })
    }
}

/// The error side `E` of a tool's `Result<T, E>`: [`ToolError`], [`McpError`], [`ToolFailure`],
/// `String`, `&str`, `Box<dyn Error + Send + Sync>` or `anyhow::Error` (feature `anyhow`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error type",
    label = "tools fail with ToolError (an isError result) or McpError (a JSON-RPC error)",
    note = "return Result<T, ToolError>: `?` converts every std::error::Error (`{Self}` included) into ToolError",
    note = "or return anyhow::Result<T>, or Result<T, Box<dyn std::error::Error + Send + Sync>>"
)]
pub trait IntoToolFailure {
    /// Converts into a tool error or a protocol error.
    fn into_tool_failure(self) -> ToolFailure;
}

macro_rules! into_tool_failure {
    ($($t:ty),*) => {$(
        impl IntoToolFailure for $t {
            fn into_tool_failure(self) -> ToolFailure {
                ToolFailure::from(self)
            }
        }
    )*};
}
into_tool_failure!(ToolFailure, ToolError, McpError, String, &str, Box<dyn std::error::Error + Send + Sync>);
#[cfg(feature = "anyhow")]
into_tool_failure!(anyhow::Error);

impl<T: IntoCallToolResult, E: IntoToolFailure> IntoToolOutcome for Result<T, E> {
    fn into_tool_outcome(self) -> Result<CallToolResult, McpError> {
        match self {
            Ok(v) => v.into_call_tool_result(),
            Err(e) => match e.into_tool_failure() {
                ToolFailure::Tool(t) => Ok(CallToolResult::error(t.message)),
                ToolFailure::Protocol(p) => Err(p),
            },
        }
    }
}

macro_rules! direct_tool_outcome {
    ($($t:ty),*) => {$(
        impl IntoToolOutcome for $t {
            fn into_tool_outcome(self) -> Result<CallToolResult, McpError> {
                self.into_call_tool_result()
            }
        }
    )*};
}
direct_tool_outcome!(CallToolResult, String, &'static str, Content, Vec<Content>, ());

impl<T: Serialize> IntoToolOutcome for Json<T> {
    fn into_tool_outcome(self) -> Result<CallToolResult, McpError> {
        self.into_call_tool_result()
    }
}

/// What a `#[mcp_prompt]` function may return: `Result<T, McpError>` or `T`, with `T` one of
/// [`GetPromptResult`], `Vec<PromptMessage>`, [`PromptMessage`] or `String` (one user message).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid prompt return type",
    note = "return GetPromptResult, Vec<PromptMessage>, PromptMessage or String, optionally inside Result<_, McpError>"
)]
pub trait IntoPromptResult {
    /// Converts into the `prompts/get` result.
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(self)
    }
}
impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(GetPromptResult { messages: self, ..Default::default() })
    }
}
impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(GetPromptResult { messages: vec![self], ..Default::default() })
    }
}
impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        PromptMessage::user_text(self).into_prompt_result()
    }
}
impl<T: IntoPromptResult> IntoPromptResult for Result<T, McpError> {
    fn into_prompt_result(self) -> Result<GetPromptResult, McpError> {
        self?.into_prompt_result()
    }
}

/// What a `#[mcp_resource]` function may return: `Result<T, McpError>` or `T`, with `T` one of
/// [`ReadResourceResult`], [`ResourceContents`], `Vec<ResourceContents>`, `String` (text with the
/// registered MIME type) or `Vec<u8>` (a base64 blob).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid resource return type",
    note = "return ReadResourceResult, ResourceContents, Vec<ResourceContents>, String or Vec<u8>, optionally inside Result<_, McpError>"
)]
pub trait IntoReadResult {
    /// Converts into the `resources/read` result for `uri` with the registered MIME type.
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> Result<ReadResourceResult, McpError>;
}

impl IntoReadResult for ReadResourceResult {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, McpError> {
        Ok(self)
    }
}
impl IntoReadResult for ResourceContents {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, McpError> {
        Ok(ReadResourceResult { contents: vec![self], meta: None })
    }
}
impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, McpError> {
        Ok(ReadResourceResult { contents: self, meta: None })
    }
}
impl IntoReadResult for String {
    fn into_read_result(self, uri: &str, mime: Option<&str>) -> Result<ReadResourceResult, McpError> {
        ResourceContents::text(uri, mime, self).into_read_result(uri, mime)
    }
}
impl IntoReadResult for Vec<u8> {
    fn into_read_result(self, uri: &str, mime: Option<&str>) -> Result<ReadResourceResult, McpError> {
        ResourceContents::blob(uri, mime, &self).into_read_result(uri, mime)
    }
}
impl<T: IntoReadResult> IntoReadResult for Result<T, McpError> {
    fn into_read_result(self, uri: &str, mime: Option<&str>) -> Result<ReadResourceResult, McpError> {
        self?.into_read_result(uri, mime)
    }
}

/// What a `#[mcp_completion]` function may return: `Result<T, McpError>` or `T`, with `T` one of
/// [`Completion`] or `Vec<String>` (truncated to 100 values with `hasMore`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid completion return type",
    note = "return Completion or Vec<String>, optionally inside Result<_, McpError>"
)]
pub trait IntoCompletion {
    /// Converts into the `completion` object.
    fn into_completion(self) -> Result<Completion, McpError>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, McpError> {
        Ok(self)
    }
}
impl IntoCompletion for Vec<String> {
    fn into_completion(mut self) -> Result<Completion, McpError> {
        let total = self.len() as u64;
        let has_more = self.len() > 100;
        self.truncate(100);
        Ok(Completion { values: self, total: Some(total), has_more: Some(has_more) })
    }
}
impl<T: IntoCompletion> IntoCompletion for Result<T, McpError> {
    fn into_completion(self) -> Result<Completion, McpError> {
        self?.into_completion()
    }
}
