//! # Switchyard client
//!
//! A Model Context Protocol (MCP) client: it connects to a server over stdio or Streamable
//! HTTP ([`ClientBuilder::connect_http`], feature `http`, on by default), agrees on a protocol
//! revision, and calls tools, prompts and resources, with the wire model the Switchyard server
//! crate uses ([`CallToolResult`], ...).
//!
//! ```no_run
//! # async fn run() -> Result<(), switchyard_client::ClientError> {
//! use switchyard_client::ClientBuilder;
//!
//! let mut server = tokio::process::Command::new("weather-server");
//! server.arg("--stdio");
//! let client = ClientBuilder::new("my-agent", "1.0.0").connect_stdio(server).await?;
//! println!("{} speaks {}", client.server_info().map_or("?", |s| s.name.as_str()), client.protocol_version());
//! for tool in client.list_tools().await? {
//!     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//! }
//! let forecast = client.call_tool("forecast", serde_json::json!({ "city": "Oslo" })).await?;
//! if forecast.is_error == Some(true) {
//!     eprintln!("the tool failed: {:?}", forecast.content);
//! }
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! ## Protocol revisions
//!
//! [`ClientBuilder::connect_io`] first sends `server/discover`; a server that lists
//! 2026-07-28 in `supportedVersions` is spoken to statelessly, every request carrying its
//! `_meta` ([SEP-2575](https://modelcontextprotocol.io/specification/2026-07-28/basic)). Any
//! other server gets `initialize` with the newest session revision offered (2025-11-25,
//! 2025-06-18, 2025-03-26) and `notifications/initialized`
//! ([lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle)).
//! [`ClientBuilder::protocol_versions`] narrows the offer.
//!
//! ## Signing in
//!
//! Over HTTP, [`ClientBuilder::oauth`] (feature `oauth`, on by default) signs in to a
//! protected server when it answers `401`: discovery, a client id, the authorization code flow
//! with PKCE through the application's [`Authorizer`], step-up on `403 insufficient_scope`,
//! refresh ([authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)).
//!
//! ## Errors and a misbehaving server
//!
//! [`ClientError`] separates what the server answered ([`ClientError::Rpc`]) from a server that
//! breaks the protocol ([`ClientError::Protocol`]), a broken connection
//! ([`ClientError::Transport`], [`ClientError::Http`], [`ClientError::Closed`]) and silence
//! ([`ClientError::Timeout`]). Lines that are no JSON-RPC message, responses to no request and
//! lines over [`ClientBuilder::max_message_bytes`] are skipped with a warning (tracing target
//! `switchyard_client`); nothing the server sends panics the client, and every request ends
//! by its timeout at the latest.
//!
//! ## Input from the user
//!
//! A server may ask the client for input: an elicitation (a form, or a URL the user opens),
//! a sampling request (a model's answer) or the client's roots. The application registers a
//! handler for each kind it can serve ([`ClientBuilder::on_elicitation`],
//! [`ClientBuilder::on_sampling`], [`ClientBuilder::on_roots`]); only those kinds are declared
//! in the client's capabilities. The client answers however the server asks: its requests on a
//! session, `input_required` results on 2026-07-28 (the call is repeated with the answers and
//! the untouched `requestState`). The server's `ping` is always answered, and other server
//! requests are refused with `-32601`.

mod client;
mod decode;
mod error;
mod input;
mod listen;
mod model;
#[cfg(feature = "oauth")]
mod oauth;
mod options;
mod param_headers;
mod peer;
mod session;
mod tasks;
mod transport;
mod typed;

pub use client::{
    Client, ClientBuilder, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_PAGES,
    DEFAULT_PROBE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT,
};
pub use error::ClientError;
pub use input::{ElicitRequest, ElicitationModes, SamplingRequest};
pub use listen::{Subscription, SubscriptionFilter};
pub use model::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
#[cfg(feature = "oauth")]
pub use oauth::{Authorizer, IdentityProvider, OAuthConfig, TokenSource};
pub use options::{ProgressUpdate, RequestOptions};
pub use tasks::{TaskHandle, TaskState, ToolCall};
pub use typed::WithOptions;
// The wire types in this crate's signatures, from the server crate that defines them, so a
// client needs no direct dependency on it.
pub use switchyard::input::{CreateMessageResult, ElicitAction, ElicitResult, Root};
pub use switchyard::jsonrpc::Notification;
pub use switchyard::{
    CallToolResult, CancellationToken, Completion, CompletionRef, Content, ErrorCode, GetPromptResult, LogLevel,
    McpError, PromptMessage, ReadResourceResult, ResourceContents,
};

/// The client guide's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/client.md")]
pub struct ClientGuideDoctests;
