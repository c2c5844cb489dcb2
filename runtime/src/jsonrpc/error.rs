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
///
/// Its parts are read through [`code`](Self::code), [`message`](Self::message) and
/// [`data`](Self::data). Two values of it are control signals rather than failures, and travel
/// outside `data` so that no filter can forge, corrupt or leak them by editing it:
/// [`input_required`](Self::input_required) and [`alternate_result`](Self::alternate_result).
#[derive(Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})", code = self.code.0)]
pub struct McpError {
    code: ErrorCode,
    message: String,
    data: Option<Value>,
    signal: Option<Box<Signal>>,
}

/// A control signal an error value carries through the filter chain: a result, answered as
/// such by the layer that knows its kind, and as the plain `-32603` it also is anywhere else.
#[derive(Debug, Clone, PartialEq)]
struct Signal {
    kind: SignalKind,
    result: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignalKind {
    /// A complete `InputRequiredResult`, answered by the 2026-07-28 dispatcher.
    InputRequired,
    /// An alternate result object, answered by the alternate chain of the method.
    AlternateResult,
}

/// Names a control signal's kind but not its result, which may hold a `requestState` or a
/// task id: `{:?}` of an error is what logs print.
impl std::fmt::Debug for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("McpError");
        s.field("code", &self.code).field("message", &self.message).field("data", &self.data);
        if let Some(signal) = &self.signal {
            s.field("signal", &signal.kind);
        }
        s.finish()
    }
}

impl McpError {
    /// An error with the given code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        McpError { code, message: message.into(), data: None, signal: None }
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message, sent as `error.message`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The structured detail sent as `error.data`, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// Replaces the message, keeping the code, the data and any control signal.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
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

    /// The distinguished outcome "this request needs client input": carries a complete
    /// `InputRequiredResult` (`{"resultType":"input_required","inputRequests"?:{..},
    /// "requestState"?:".."}`) through the filter chain as an error, so that `?` in a handler ends
    /// the request. The 2026-07-28 dispatcher answers `tools/call`, `prompts/get` and
    /// `resources/read` with the result itself
    /// ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr));
    /// anywhere else it is sent as what it also is, a `-32603` naming the problem, without the
    /// result. Filters recognise it with [`as_input_required`](Self::as_input_required) and pass
    /// it on unchanged; rebuilding the error drops the signal.
    pub fn input_required(result: Value) -> Self {
        McpError::internal(
            "this request needs client input, which only tools/call, prompts/get and resources/read can ask for \
             on the 2026-07-28 wire",
        )
        .with_signal(SignalKind::InputRequired, result)
    }

    /// The `InputRequiredResult` this error carries, if it is the input-required outcome.
    pub fn as_input_required(&self) -> Option<&Value> {
        self.signal(SignalKind::InputRequired)
    }

    /// Splits the input-required outcome from other errors: `Ok(result)` for the outcome.
    pub(crate) fn into_input_required(self) -> Result<Value, McpError> {
        self.into_signal(SignalKind::InputRequired)
    }

    /// Ends the request from inside a handler or a typed filter with an alternate result
    /// object (`{"resultType":"task",..}`, say) instead of the method's own result type. The
    /// method's alternate chain receives it as `Ok(Alternate::Other(result))`
    /// ([`Alternate`](crate::pipeline::Alternate)): alternate filters see an ordinary success,
    /// and the client receives `result` as the JSON-RPC result. Typed filters between the
    /// handler and the alternate chain see it as this error and should pass it on unchanged
    /// ([`as_alternate_result`](Self::as_alternate_result) recognises it); rebuilding the error
    /// drops the signal and leaves the `-32603` it also is.
    ///
    /// The result should carry its own `resultType`; one without gets `"complete"`. This is the
    /// seam the Tasks extension's `escalate` uses to answer a `tools/call` with a
    /// `CreateTaskResult` ([Tasks](https://github.com/modelcontextprotocol/ext-tasks)).
    pub fn alternate_result(result: Value) -> Self {
        McpError::internal(
            "the handler ended with an alternate result, but no alternate chain was there to answer with it",
        )
        .with_signal(SignalKind::AlternateResult, result)
    }

    /// The alternate result this error carries, if it is one (see
    /// [`alternate_result`](Self::alternate_result)).
    pub fn as_alternate_result(&self) -> Option<&Value> {
        self.signal(SignalKind::AlternateResult)
    }

    /// Splits an alternate result from other errors: `Ok(result)` for the signal.
    pub(crate) fn into_alternate_result(self) -> Result<Value, McpError> {
        self.into_signal(SignalKind::AlternateResult)
    }

    fn with_signal(mut self, kind: SignalKind, result: Value) -> Self {
        self.signal = Some(Box::new(Signal { kind, result }));
        self
    }

    fn signal(&self, kind: SignalKind) -> Option<&Value> {
        self.signal.as_deref().filter(|s| s.kind == kind).map(|s| &s.result)
    }

    /// `Ok` with the result of a signal of `kind`; the error unchanged otherwise.
    fn into_signal(mut self, kind: SignalKind) -> Result<Value, McpError> {
        match self.signal.take() {
            Some(s) if s.kind == kind => Ok(s.result),
            other => {
                self.signal = other;
                Err(self)
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_signal_never_reaches_the_wire() {
        let asked = json!({ "resultType": "input_required", "requestState": "secret" });
        let e = McpError::input_required(asked.clone());
        assert_eq!(e.as_input_required(), Some(&asked));
        assert_eq!(e.code(), ErrorCode::INTERNAL_ERROR);
        assert_eq!(e.to_error_object().get("data"), None, "the result stays out of error.data");
        assert!(!e.to_error_object().to_string().contains("secret"));
        assert!(!format!("{e:?}").contains("secret") && format!("{e:?}").contains("InputRequired"), "{e:?}");
        // Data a filter attaches travels beside the signal, not over it.
        let edited = e.clone().with_data(json!({ "note": 1 })).with_message("changed");
        assert_eq!(edited.as_input_required(), Some(&asked));
        assert_eq!(edited.into_input_required(), Ok(asked));
    }

    #[test]
    fn no_data_can_forge_a_signal_and_each_signal_keeps_its_kind() {
        let forged = McpError::internal("x").with_data(json!({ "dev.switchyard/inputRequired": {} }));
        assert_eq!(forged.as_input_required(), None);
        assert_eq!(forged.as_alternate_result(), None);
        let alternate = McpError::alternate_result(json!({ "resultType": "task" }));
        assert_eq!(alternate.as_input_required(), None);
        let kept = alternate.clone().into_input_required().expect_err("not input required");
        assert_eq!(kept, alternate);
        assert_eq!(kept.into_alternate_result(), Ok(json!({ "resultType": "task" })));
    }
}
