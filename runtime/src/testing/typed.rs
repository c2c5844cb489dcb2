//! [`TestClient`] as a [`Caller`]: typed calls (`greet::call(&client, args)`) against an
//! in-process server.

use super::TestClient;
use crate::call::{Caller, TypedCallError};
use crate::model::CallToolResult;
use serde_json::Value;

/// Why a typed call through a [`TestClient`] failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TestCallError {
    /// The server answered with a JSON-RPC error; `error` is the error object
    /// (`{"code": -32602, "message": "..", "data"?: ..}`).
    #[error("the server answered with error {error}")]
    Rpc {
        /// The `error` member of the response.
        error: Value,
    },
    /// The typed layer's own failure: params that are no JSON object, an `isError` result, a
    /// result of another shape.
    #[error(transparent)]
    Typed(#[from] TypedCallError),
}

impl TestCallError {
    /// The JSON-RPC error code, for [`Rpc`](Self::Rpc).
    pub fn code(&self) -> Option<i64> {
        match self {
            TestCallError::Rpc { error } => error.get("code").and_then(Value::as_i64),
            TestCallError::Typed(_) => None,
        }
    }
}

impl Caller for TestClient {
    type Error = TestCallError;

    async fn call_tool_value(&self, name: &str, arguments: Value) -> Result<CallToolResult, TestCallError> {
        let params = serde_json::json!({ "name": name, "arguments": arguments });
        let result = self.request_value("tools/call", params).await?;
        serde_json::from_value(result)
            .map_err(|e| TypedCallError::Decode { what: format!("tool `{name}`"), message: e.to_string() }.into())
    }

    async fn request_value(&self, method: &str, params: Value) -> Result<Value, TestCallError> {
        let mut reply = self.request(method, params).await;
        match reply.response.get_mut("error") {
            Some(error) => Err(TestCallError::Rpc { error: error.take() }),
            None => Ok(reply.response.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
        }
    }
}
