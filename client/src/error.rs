//! What a call can fail with: four kinds a caller can match on.

use std::time::Duration;
use switchyard::McpError;

/// Why a request got no result.
///
/// | variant | meaning | retry? |
/// |---|---|---|
/// | [`Rpc`](Self::Rpc) | the server answered with a JSON-RPC error object (`-32601` unknown method, `-32602` bad params, ...) | no, not unchanged |
/// | [`Transport`](Self::Transport) | the bytes could not be sent or read (the child exited, a pipe broke) | on a new connection |
/// | [`Http`](Self::Http) | an HTTP status without a JSON-RPC error for the request (404, 401, 502, ...) | depends on the status |
/// | [`Auth`](Self::Auth) | signing in to a protected server failed (feature `oauth`) | after fixing the configuration, or when the user tries again |
/// | [`Protocol`](Self::Protocol) | the server answered, but not as MCP allows (a result of the wrong shape, a failed handshake) | no |
/// | [`Encode`](Self::Encode) | the caller's arguments could not be encoded; nothing was sent | no |
/// | [`Timeout`](Self::Timeout) | no answer within the request's timeout (queueing included); a request that went out was cancelled (`notifications/cancelled`, never for `initialize`) | maybe |
/// | [`Cancelled`](Self::Cancelled) | the caller's cancellation token fired first | no |
/// | [`Closed`](Self::Closed) | the connection ended before the answer came | on a new connection |
///
/// A tool that ran and failed is no error here: its `CallToolResult` has `isError: true`
/// ([tools](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered `method` with this JSON-RPC error
    /// ([error codes](https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes)).
    #[error("the server answered {method} with error {}: {}", error.code().0, error.message())]
    Rpc {
        /// The method of the request.
        method: String,
        /// The error object: code, message, data (boxed: it is the largest variant by far).
        error: Box<McpError>,
    },
    /// Writing or reading the connection failed.
    #[error("transport: {message}")]
    Transport {
        /// What failed.
        message: String,
        /// The underlying error (a `std::io::Error`, a `reqwest::Error`), when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// The HTTP server answered with `status` and no JSON-RPC error for the request (a 404 of
    /// a wrong URL or an expired session, a 401 without credentials, a proxy's 502).
    #[error("HTTP {status}: {message}")]
    Http {
        /// The status code.
        status: u16,
        /// The start of the body, or the status's reason.
        message: String,
    },
    /// The server broke the protocol: a result that does not decode as the method's result, a
    /// handshake answered with something else, a version it cannot speak.
    #[error("the server broke the protocol: {0}")]
    Protocol(String),
    /// Signing in to the server failed (feature `oauth`): its metadata names another resource
    /// or issuer, no client id could be had, the user gave up, the authorization server's
    /// redirect or token answer was refused. The request that needed the token is not sent.
    #[error("sign-in failed: {message}")]
    Auth {
        /// What failed.
        message: String,
        /// The underlying error (a `reqwest::Error`, the `oauth2` crate's), when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// The caller's values could not be turned into the request (tool arguments that are not
    /// a JSON object, a `Serialize` impl that failed); nothing was sent.
    #[error("the request could not be encoded: {0}")]
    Encode(String),
    /// No answer to `method` within `timeout`, queueing included (a server that stops reading
    /// cannot hold a caller longer); if the request had gone out it was cancelled
    /// (`notifications/cancelled`), except `initialize`.
    #[error("no answer to {method} within {timeout:?}")]
    Timeout {
        /// The method of the request.
        method: String,
        /// The timeout that ran out.
        timeout: Duration,
    },
    /// The caller cancelled `method` with its
    /// [`RequestOptions::cancel_with`](crate::RequestOptions::cancel_with) token; the server
    /// was sent `notifications/cancelled`.
    #[error("{method} was cancelled")]
    Cancelled {
        /// The method of the request.
        method: String,
    },
    /// The connection ended (the server closed its output, the child exited, or
    /// [`Client::close`](crate::Client::close) was called) before the answer came.
    #[error("the connection is closed")]
    Closed,
    /// A typed call (`greet::call(&client, args)`) reached a tool that ran and failed: its
    /// result has `isError: true`
    /// ([tools](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling)).
    /// [`Client::call_tool`](crate::Client::call_tool) returns such results as `Ok` instead.
    #[error("tool `{name}` failed: {}", text_blocks(result))]
    ToolFailed {
        /// The tool's name.
        name: String,
        /// The result, whose content says what went wrong (boxed: it is large beside the
        /// other kinds).
        result: Box<switchyard::CallToolResult>,
    },
}

/// The text blocks of a tool result, joined by newlines: what a failed tool said.
fn text_blocks(result: &switchyard::CallToolResult) -> String {
    result.content.iter().filter_map(switchyard::Content::as_text).collect::<Vec<_>>().join("\n")
}

/// The typed layer's failures as kinds of their own: params that are no JSON object are
/// [`Encode`](ClientError::Encode), an `isError` result is
/// [`ToolFailed`](ClientError::ToolFailed), a result of another shape than declared is
/// [`Protocol`](ClientError::Protocol).
impl From<switchyard::call::TypedCallError> for ClientError {
    fn from(error: switchyard::call::TypedCallError) -> Self {
        use switchyard::call::TypedCallError as E;
        match error {
            E::ToolFailed { name, result } => ClientError::ToolFailed { name, result },
            e @ E::Encode { .. } => ClientError::Encode(e.to_string()),
            e => ClientError::Protocol(e.to_string()),
        }
    }
}

impl ClientError {
    /// The JSON-RPC error, when the server answered with one.
    pub fn as_rpc(&self) -> Option<&McpError> {
        match self {
            ClientError::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    pub(crate) fn transport(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ClientError::Transport { message: message.into(), source: Some(Box::new(source)) }
    }
}
