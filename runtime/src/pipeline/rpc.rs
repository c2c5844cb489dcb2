use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::registry::{BoxFuture, Site};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::any::{Any, TypeId};
use std::future::Future;

/// A value of a method's params or result type, erased so one registry holds every method.
pub type ErasedValue = Box<dyn Any + Send>;

/// A typed method: its name and its params and result types. `#[mcp_rpc]` implements it for a
/// hidden marker type named after the handler function, which `#[mcp_filter(rpc = name)]`
/// refers to so that filter types are checked against the method at compile time.
pub trait RpcMethod: 'static {
    /// The params type (serde).
    type Params: DeserializeOwned + Send + 'static;
    /// The result type (serde).
    type Result: Serialize + Send + 'static;
    /// The JSON-RPC method name.
    const METHOD: &'static str;
}

/// Which protocol eras a method is served in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eras {
    /// Only 2026-07-28 requests; legacy sessions get `-32601` (e.g. extension methods).
    Modern,
    /// Only legacy sessions.
    Legacy,
    /// Both.
    Both,
}

impl Eras {
    pub(crate) fn serves(self, modern: bool) -> bool {
        match self {
            Eras::Both => true,
            Eras::Modern => modern,
            Eras::Legacy => !modern,
        }
    }
}

/// A typed RPC handler shim: decoded params in, result out (both erased).
pub type RpcHandlerFn = fn(RequestContext, ErasedValue) -> BoxFuture<Result<ErasedValue, McpError>>;

/// One `#[mcp_rpc("vendor/method")]`: a typed extension method.
#[derive(Debug)]
pub struct RpcRegistration {
    /// The method name, e.g. `acme/sum`.
    pub method: &'static str,
    /// Registration group.
    pub group: &'static str,
    /// The params field the HTTP `Mcp-Name` header must mirror (e.g. `taskId`), if any.
    pub routing_name: Option<&'static str>,
    /// The extension that declares the method (`extension = ".."` of `#[mcp_rpc]`), e.g.
    /// `io.modelcontextprotocol/tasks`. The method is served only while the server declares that
    /// extension with [`ServerBuilder::extension_capability`](crate::ServerBuilder::extension_capability),
    /// otherwise it is `-32601`. Only an official extension (`io.modelcontextprotocol/...`) may
    /// declare a method in one of MCP's namespaces (`tasks/get`); `ServerBuilder::build` refuses
    /// any other.
    pub extension: Option<&'static str>,
    /// A `ClientCapabilities` object the request must declare (modern requests; `-32021` with
    /// it as `data.requiredCapabilities` otherwise), e.g. `{"extensions":{"acme/x":{}}}`.
    pub required_capabilities: Option<fn() -> Value>,
    /// The eras it is served in.
    pub eras: Eras,
    /// Decodes `params` (without `_meta`); `-32602` on failure.
    pub decode: fn(Value) -> Result<ErasedValue, McpError>,
    /// Encodes the result.
    pub encode: fn(ErasedValue) -> Result<Value, McpError>,
    /// `TypeId` of the params type.
    pub params_type: fn() -> TypeId,
    /// `TypeId` of the result type.
    pub result_type: fn() -> TypeId,
    /// Roles a caller needs (any one of them); empty: anyone. Enforced by the server's
    /// authorization, see `switchyard::auth`.
    pub roles: &'static [&'static str],
    /// OAuth scopes the caller's token must grant (all of them), beside `roles`; empty: none.
    /// A call without them is refused with `insufficient_scope` (HTTP 403 and a
    /// `WWW-Authenticate` challenge naming them); see `switchyard::auth`.
    pub scopes: &'static [&'static str],
    /// The handler shim.
    pub handler: RpcHandlerFn,
    /// One [`FromRequestContext::required_state`](crate::FromRequestContext::required_state)
    /// per extractor argument of the handler, checked by `build()`.
    pub state: &'static [crate::context::StateRequirement],
    /// Where it was declared.
    pub site: Site,
}

/// Decodes params into `P`, erased; `-32602` naming the serde error. Used by generated code.
pub fn decode_erased<P: DeserializeOwned + Send + 'static>(v: Value) -> Result<ErasedValue, McpError> {
    serde_json::from_value::<P>(v)
        .map(|p| Box::new(p) as ErasedValue)
        .map_err(|e| McpError::invalid_params(format!("invalid params: {e}")))
}

/// Encodes an erased `R` as JSON; `-32603` if it is not an `R` or cannot be serialized.
pub fn encode_erased<R: Serialize + 'static>(v: ErasedValue) -> Result<Value, McpError> {
    let r = v.downcast::<R>().map_err(|_| McpError::internal("RPC result type mismatch"))?;
    serde_json::to_value(&*r).map_err(|e| McpError::internal(format!("RPC result could not be encoded: {e}")))
}

/// Adapts a typed handler to [`RpcHandlerFn`]; called by generated shims.
pub fn rpc_shim<P, R, F, Fut>(
    ctx: RequestContext,
    params: ErasedValue,
    handler: F,
) -> BoxFuture<Result<ErasedValue, McpError>>
where
    P: Send + 'static,
    R: Send + 'static,
    F: FnOnce(RequestContext, P) -> Fut,
    Fut: Future<Output = Result<R, McpError>> + Send + 'static,
{
    match params.downcast::<P>() {
        Ok(p) => {
            let fut = handler(ctx, *p);
            Box::pin(async move { fut.await.map(|r| Box::new(r) as ErasedValue) })
        }
        Err(_) => Box::pin(async { Err(McpError::internal("RPC params type mismatch")) }),
    }
}
