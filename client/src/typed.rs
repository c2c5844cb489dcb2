//! [`Client`] as a [`Caller`]: the typed calls `#[mcp_tool]` and `#[mcp_rpc]` generate
//! (`greet::call(&client, args)`) go through [`Client::call_tool`] and [`Client::request`], with
//! everything those do (input rounds, the `Mcp-Param-*` headers, sign-in, timeouts).

use crate::{Client, ClientError};
use serde_json::Value;
use std::future::Future;
use switchyard::CallToolResult;
use switchyard::call::Caller;

impl Caller for Client {
    type Error = ClientError;

    fn call_tool_value<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, ClientError>> + Send + 'a {
        self.call_tool(name, arguments)
    }

    fn request_value<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> impl Future<Output = Result<Value, ClientError>> + Send + 'a {
        self.request(method, params)
    }
}
