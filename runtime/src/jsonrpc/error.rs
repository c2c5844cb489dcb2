use serde_json::{Value, json};

/// JSON-RPC and MCP error codes a server emits
/// ([error codes](https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes)).
///
/// The numeric values are fixed by JSON-RPC 2.0 (`-32700`..`-32603`) and by MCP 2026-07-28
/// (`-32020`..`-32022`). Codes in `-32000..=-32019` are never emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// `-32700`: the body is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: valid JSON but not a JSON-RPC request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: unknown or removed method, or a method behind a capability the server lacks.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: invalid params (bad arguments, unknown tool/prompt, resource not found, bad `_meta`).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: internal error; the message never leaks internals.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32020` HeaderMismatch: an HTTP header is missing, malformed or disagrees with the body.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `-32021` MissingRequiredClientCapability: `data.requiredCapabilities` names what is missing.
    pub const MISSING_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `-32022` UnsupportedProtocolVersion: `data = {supported: [..], requested}`.
    pub const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(-32022);
}

/// A protocol error: becomes a JSON-RPC error response `{code, message, data?}`.
///
/// Handlers return it for structural problems (unknown tool, malformed params, a missing client
/// capability). A tool that ran and failed, or whose arguments it cannot take, returns a
/// [`ToolError`](crate::ToolError) instead, which becomes a result with `isError: true`
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling>).
///
/// It carries no HTTP status: the "(HTTP 400)" notes on the constructors describe what the
/// Streamable HTTP transport answers, which it decides from the code (and, for a denial from
/// [`auth::forbidden`](crate::auth::forbidden), `data.reason`) where it sends the error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})", code = self.code.0)]
pub struct McpError {
    /// The JSON-RPC error code.
    pub code: ErrorCode,
    /// A message a user can act on.
    pub message: String,
    /// Optional structured detail, sent as `error.data`.
    pub data: Option<Value>,
}

impl McpError {
    /// An error with the given code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        McpError { code, message: message.into(), data: None }
    }

    /// Attaches `error.data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700` parse error.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, message)
    }

    /// `-32600` invalid request.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// `-32601` method not found, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, format!("method not found: {method}"))
    }

    /// `-32602` invalid params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// `-32603` internal error. The message is sent to the client: keep internals out of it.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// `-32020` header mismatch (HTTP 400).
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::HEADER_MISMATCH, message)
    }

    /// `-32021` missing client capability; `required` is a `ClientCapabilities` object such as
    /// `{"sampling": {}}`, sent as `data.requiredCapabilities` (HTTP 400).
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        Self::new(ErrorCode::MISSING_CLIENT_CAPABILITY, message).with_data(json!({ "requiredCapabilities": required }))
    }

    /// `-32022` unsupported protocol version (HTTP 400), with `data = {supported, requested}`.
    pub fn unsupported_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_VERSION,
            format!("unsupported protocol version {requested:?}; supported: {}", supported.join(", ")),
        )
        .with_data(json!({ "supported": supported, "requested": requested }))
    }

    /// `-32602` resource not found, with `data.uri` (SEP-2164).
    pub fn resource_not_found(uri: &str) -> Self {
        Self::invalid_params(format!("resource not found: {uri}")).with_data(json!({ "uri": uri }))
    }

    /// The JSON-RPC error object `{code, message, data?}`.
    pub fn to_error_object(&self) -> Value {
        let mut obj = json!({ "code": self.code.0, "message": self.message });
        if let Some(data) = &self.data {
            obj["data"] = data.clone();
        }
        obj
    }
}
