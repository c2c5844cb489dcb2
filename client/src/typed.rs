//! [`Client`] as a [`Caller`]: the typed calls `#[mcp_tool]` and `#[mcp_rpc]` generate
//! (`greet::call(&client, args)`) go through [`Client::call_tool`] and [`Client::request`], with
//! everything those do (input rounds, the `Mcp-Param-*` headers, sign-in, timeouts).

use crate::{Client, ClientError, RequestOptions};
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

impl Client {
    /// This client with per-request [`RequestOptions`] (a progress callback, a cancellation
    /// token, a timeout of its own) for typed calls, which take any [`Caller`]:
    ///
    /// ```no_run
    /// # use switchyard_client::{Client, ClientError, RequestOptions};
    /// # mod greet { pub async fn call<C: switchyard::call::Caller>(_: &C, _: ()) -> Result<String, C::Error> { unimplemented!() } }
    /// # async fn run(client: Client) -> Result<(), ClientError> {
    /// let options = RequestOptions::new()
    ///     .on_progress(|p| println!("{} of {:?}", p.progress, p.total))
    ///     .timeout(std::time::Duration::from_secs(300));
    /// let greeting = greet::call(&client.with_options(options), ()).await?;
    /// # let _ = greeting; Ok(()) }
    /// ```
    ///
    /// Each call through it is [`call_tool_with`](Client::call_tool_with) or
    /// [`request_with`](Client::request_with) with a copy of `options`.
    pub fn with_options(&self, options: RequestOptions) -> WithOptions<'_> {
        WithOptions { client: self, options }
    }
}

/// A [`Client`] and the [`RequestOptions`] its typed calls carry; made by
/// [`Client::with_options`].
#[derive(Debug, Clone)]
pub struct WithOptions<'c> {
    client: &'c Client,
    options: RequestOptions,
}

impl Caller for WithOptions<'_> {
    type Error = ClientError;

    fn call_tool_value<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, ClientError>> + Send + 'a {
        self.client.call_tool_with(name, arguments, self.options.clone())
    }

    fn request_value<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> impl Future<Output = Result<Value, ClientError>> + Send + 'a {
        self.client.request_with(method, params, self.options.clone())
    }
}
