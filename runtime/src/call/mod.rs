//! Typed calls: what `#[mcp_tool]` and `#[mcp_rpc]` generate for the calling side, and the
//! [`Caller`] seam a client implements to carry them.
//!
//! For a tool `async fn greet(args: GreetArgs) -> Json<Greeting>`, `greet::call(&client,
//! GreetArgs { .. })` sends `tools/call` with `{"name":"greet","arguments":{..}}` and returns
//! `Result<Greeting, C::Error>`, decoded from `structuredContent`; for an RPC
//! `#[mcp_rpc("acme/sum")] async fn sum(p: SumParams) -> Result<Sum, McpError>`,
//! `sum::call(&client, SumParams { .. })` sends `acme/sum` and decodes its `result` as `Sum`.
//! A handler without params is called with `()`. Since the call is generated from the same
//! signature as the handler, a changed name, params type or output type is a compile error at
//! every call site.
//!
//! The serde bounds the calling side needs (`Serialize` on the params, `Deserialize` on the
//! output) are checked where `call` is used, never at the handler, so a server whose types
//! derive only what serving needs keeps compiling.
//!
//! Implementations of [`Caller`]: `switchyard_client::Client` (crate `switchyard-mcp-client`)
//! and, in-process, [`TestClient`](crate::testing::TestClient) (feature `testing`).

use crate::model::{CallToolResult, Content, Json};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;

/// A connection that typed calls go through: sends one `tools/call` or one request and returns
/// what the server answered, undecoded.
///
/// Errors: whatever the connection fails with (`Self::Error`); the typed layer adds its own
/// failures through `From<TypedCallError>`.
pub trait Caller: Sync {
    /// What a call fails with: the connection's errors and [`TypedCallError`].
    type Error: From<TypedCallError> + Send;

    /// Sends `tools/call` with `{"name": name, "arguments": arguments}` (`arguments` is a JSON
    /// object) and returns its result as the server sent it, `isError: true` included.
    fn call_tool_value<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, Self::Error>> + Send + 'a;

    /// Sends the request `method` with `params` (a JSON object) and returns its `result`.
    fn request_value<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> impl Future<Output = Result<Value, Self::Error>> + Send + 'a;
}

/// What a typed call can fail with besides its connection.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TypedCallError {
    /// The params did not serialize into a JSON object (a `Serialize` impl failed, or the type
    /// is no struct or map); nothing was sent.
    #[error("the params of {what} could not be encoded: {message}")]
    Encode {
        /// `tool `name`` or `method `name``.
        what: String,
        /// serde's message.
        message: String,
    },
    /// The tool ran and failed: the server answered with `isError: true`
    /// ([tools](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling)).
    #[error("tool `{name}` failed: {}", text_of(result))]
    ToolFailed {
        /// The tool's name.
        name: String,
        /// The result, whose content says what went wrong (boxed: it is large beside the
        /// other kinds).
        result: Box<CallToolResult>,
    },
    /// The server's answer did not decode as the declared output type: the server declares
    /// the tool or method with another shape than this build of the caller.
    #[error("the result of {what} does not decode as declared: {message}")]
    Decode {
        /// `tool `name`` or `method `name``.
        what: String,
        /// serde's message, or what part of the result was missing.
        message: String,
    },
}

/// The text blocks of `result`, joined by newlines.
fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n")
}

/// Implemented by every type a typed call can send as params: the serde bound, with a message
/// that says where it comes from (serving needs only `Deserialize`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent by a typed call",
    label = "a typed call serializes its params",
    note = "add #[derive(serde::Serialize)] to the type: serving it needs only Deserialize, calling it needs Serialize too"
)]
pub trait CallParams: Serialize {}
impl<T: Serialize> CallParams for T {}

/// Implemented by every type a typed call can return: the serde bound, with a message that says
/// where it comes from (serving needs only `Serialize`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be decoded by a typed call",
    label = "a typed call deserializes the result",
    note = "add #[derive(serde::Deserialize)] to the type: serving it needs only Serialize, calling it needs Deserialize too"
)]
pub trait CallOutput: DeserializeOwned + Send {}
impl<T: DeserializeOwned + Send> CallOutput for T {}

/// What `#[mcp_tool]` declares about a tool for the calling side: its name, its params type
/// (`()` without params) and the handler's return type. Implemented by generated code; the
/// type is `greet` in `greet::call`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is no tool declaration",
    label = "`declared = ...` names a body-less `#[mcp_tool]` function (or another `#[mcp_tool]` function)"
)]
pub trait ToolDeclaration {
    /// The tool's name, as in `tools/list`.
    const NAME: &'static str;
    /// The params type, sent as `arguments`.
    type Params;
    /// The handler's return type (`Json<T>`, `Result<String, ToolError>`, ...), which says how
    /// the result decodes (see [`ToolReturn`]).
    type Return;
}

/// How a tool's result decodes on the calling side, given the handler's return type.
///
/// | return type | typed output | decoded from |
/// |---|---|---|
/// | `Json<T>` | `T` | `structuredContent` (a session's `{"result": t}` for a `t` that is no object), else the first text block parsed as JSON |
/// | `String`, `&'static str` | `String` | the text blocks, joined by newlines |
/// | `()` | `()` | nothing |
/// | `Content` | `Content` | the first content block |
/// | `Vec<Content>` | `Vec<Content>` | `content` |
/// | `CallToolResult` | `CallToolResult` | the whole result |
/// | `Result<T, E>` | `T`'s | as `T` (an `isError` result is [`TypedCallError::ToolFailed`]) |
#[diagnostic::on_unimplemented(
    message = "a typed call cannot decode what `{Self}` returns",
    note = "typed calls decode Json<T>, String, &'static str, (), Content, Vec<Content> and CallToolResult, optionally inside Result<_, E>"
)]
pub trait ToolReturn {
    /// What the typed call returns.
    type Output;
    /// Where in the result the output is.
    const SHAPE: OutputShape;
}

/// Where a typed call finds its output in a `CallToolResult` (see [`ToolReturn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputShape {
    /// `structuredContent`, else the first text block parsed as JSON.
    Structured,
    /// The text blocks, joined by newlines.
    Text,
    /// Nothing: the output is `()`.
    Unit,
    /// The first content block.
    FirstContent,
    /// `content`.
    Contents,
    /// The whole result.
    Whole,
}

impl<T> ToolReturn for Json<T> {
    type Output = T;
    const SHAPE: OutputShape = OutputShape::Structured;
}

macro_rules! tool_return {
    ($($t:ty => $out:ty, $shape:ident;)*) => {$(
        impl ToolReturn for $t {
            type Output = $out;
            const SHAPE: OutputShape = OutputShape::$shape;
        }
    )*};
}
tool_return! {
    String => String, Text;
    &'static str => String, Text;
    () => (), Unit;
    Content => Content, FirstContent;
    Vec<Content> => Vec<Content>, Contents;
    CallToolResult => CallToolResult, Whole;
}

impl<T: ToolReturn, E> ToolReturn for Result<T, E> {
    type Output = T::Output;
    const SHAPE: OutputShape = T::SHAPE;
}

/// The typed output of tool `K`.
pub type ToolOutput<K> = <<K as ToolDeclaration>::Return as ToolReturn>::Output;

/// Calls tool `K` with `params` through `caller` and decodes its result (see [`ToolReturn`]).
///
/// Errors: the caller's; [`TypedCallError::Encode`] when `params` is no JSON object (`()` is
/// sent as `{}`), [`TypedCallError::ToolFailed`] for an `isError: true` result,
/// [`TypedCallError::Decode`] when the result does not decode as declared.
pub fn call_tool<'c, K, C>(
    caller: &'c C,
    params: K::Params,
) -> impl Future<Output = Result<ToolOutput<K>, C::Error>> + Send + 'c
where
    K: ToolDeclaration,
    K::Params: CallParams,
    K::Return: ToolReturn,
    ToolOutput<K>: CallOutput,
    C: Caller,
{
    let what = || format!("tool `{}`", K::NAME);
    let arguments = encode_object(&params).map_err(|message| TypedCallError::Encode { what: what(), message });
    async move {
        let result = caller.call_tool_value(K::NAME, arguments?).await?;
        Ok(decode_tool_result::<K>(result)?)
    }
}

/// Tool `K`'s typed output from a `CallToolResult` it produced (the result of a task that ran
/// it, say), as [`call_tool`] decodes it.
///
/// Errors: [`TypedCallError::ToolFailed`] for an `isError: true` result,
/// [`TypedCallError::Decode`] when the result does not decode as declared.
pub fn decode_tool_result<K>(result: CallToolResult) -> Result<ToolOutput<K>, TypedCallError>
where
    K: ToolDeclaration,
    K::Return: ToolReturn,
    ToolOutput<K>: CallOutput,
{
    let what = || format!("tool `{}`", K::NAME);
    if result.is_error == Some(true) {
        return Err(TypedCallError::ToolFailed { name: K::NAME.to_owned(), result: Box::new(result) });
    }
    let shape = <K::Return as ToolReturn>::SHAPE;
    let value = output_value(result, shape).map_err(|message| TypedCallError::Decode { what: what(), message })?;
    let decoded = match shape {
        // Session revisions carry a structured output that is no object as `{"result": v}`.
        OutputShape::Structured => decode_unwrapping(value, "result"),
        _ => serde_json::from_value(value).map_err(|e| e.to_string()),
    };
    decoded.map_err(|message| TypedCallError::Decode { what: what(), message })
}

/// `value` as `T`, where a server may have wrapped a `T` that is no JSON object as
/// `{key: t}` (every MCP result, and a session's `structuredContent`, is an object). An object
/// of that one key holding no object is read as the wrapped value first, else as itself; any
/// other value as itself.
fn decode_unwrapping<T: DeserializeOwned>(value: Value, key: &str) -> Result<T, String> {
    let wrapped = match &value {
        Value::Object(object) if object.len() == 1 => object.get(key).filter(|inner| !inner.is_object()),
        _ => None,
    };
    if let Some(Ok(t)) = wrapped.map(T::deserialize) {
        return Ok(t);
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// Sends the request `method` with `params` through `caller` and decodes its `result` as `R`:
/// the typed call of an `#[mcp_rpc]` handler returning `Result<R, E>`.
///
/// Errors: the caller's; [`TypedCallError::Encode`] when `params` is no JSON object (`()` is
/// sent as `{}`), [`TypedCallError::Decode`] when the result does not decode as `R`.
pub fn call_rpc<'c, P, R, C>(
    caller: &'c C,
    method: &'static str,
    params: P,
) -> impl Future<Output = Result<R, C::Error>> + Send + 'c
where
    P: CallParams,
    R: CallOutput,
    C: Caller,
{
    let what = move || format!("method `{method}`");
    let params = encode_object(&params).map_err(|message| TypedCallError::Encode { what: what(), message });
    async move {
        let result = caller.request_value(method, params?).await?;
        decode_rpc_result(result).map_err(|message| TypedCallError::Decode { what: what(), message }.into())
    }
}

/// `result` as `R`: the handler's value, without what the 2026-07-28 wire adds to every result
/// (`resultType`, `_meta`, `ttlMs`, `cacheScope`; a result that carries `resultType` is taken
/// for such), and unwrapped from `{"value": ..}` when it is no object (see
/// [`decode_unwrapping`]).
fn decode_rpc_result<R: DeserializeOwned>(mut result: Value) -> Result<R, String> {
    let Some(object) = result.as_object_mut().filter(|o| o.contains_key("resultType")) else {
        // A session's result is the handler's value as is.
        return serde_json::from_value(result).map_err(|e| e.to_string());
    };
    for key in ["resultType", "_meta", "ttlMs", "cacheScope"] {
        object.remove(key);
    }
    decode_unwrapping(result, "value")
}

/// `params` as a JSON object; `()` (and anything serializing to `null`) is `{}`.
fn encode_object<P: Serialize>(params: &P) -> Result<Value, String> {
    match serde_json::to_value(params).map_err(|e| e.to_string())? {
        Value::Null => Ok(Value::Object(serde_json::Map::new())),
        object @ Value::Object(_) => Ok(object),
        other => Err(format!("expected a JSON object, got {other}")),
    }
}

/// The part of `result` that `shape` names, as JSON.
fn output_value(result: CallToolResult, shape: OutputShape) -> Result<Value, String> {
    match shape {
        OutputShape::Structured => match result.structured_content {
            Some(value) => Ok(value),
            None => {
                let text =
                    result.content.iter().find_map(Content::as_text).ok_or("no structuredContent and no text block")?;
                serde_json::from_str(text)
                    .map_err(|e| format!("no structuredContent, and the text block is no JSON: {e}"))
            }
        },
        OutputShape::Text => Ok(Value::String(text_of(&result))),
        OutputShape::Unit => Ok(Value::Null),
        OutputShape::FirstContent => to_json(result.content.first().ok_or("no content block")?),
        OutputShape::Contents => to_json(&result.content),
        OutputShape::Whole => to_json(&result),
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
