//! The connection-level seam: what a transport needs of a server besides
//! [`Server::handle_request`] and [`Server::notifier`]. The built-in stdio and Streamable HTTP
//! transports use these methods and nothing else of the server, so a transport written outside
//! this crate (WebSocket, an in-process bridge, a serverless adapter) can do all they do; the
//! steps a transport takes are listed in `docs/architecture.md` ("A transport").

use super::Server;
use crate::context::{MessageFilters, Origin};
use crate::jsonrpc::{McpError, Request, ResultObject};
use crate::pipeline::LegacySession;
use crate::protocol::ModernMeta;
use crate::registry::ParamHeader;
use crate::subscriptions::{EventStream, ListenLimits};
use futures::future::{Either, ready};
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

impl Server {
    /// The message filters given to [`ServerBuilder::message_filter`](crate::ServerBuilder::message_filter),
    /// in order. A transport asks [`MessageFilters::incoming`] about every message it read
    /// (each member of a batch on its own) before routing it, and sends every message it writes
    /// through [`MessageFilters::outgoing`]; notifications made by [`Server::notifier`] already
    /// pass through them.
    pub fn message_filters(&self) -> &MessageFilters {
        self.engine().message_filters()
    }

    /// The 2025-11-25 `initialize` handshake
    /// ([lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization)):
    /// negotiates the revision (the client's `params.protocolVersion` when this server serves
    /// it, else 2025-11-25), and returns the new session with the `InitializeResult` to send
    /// (`{"protocolVersion":..,"capabilities":{..},"serverInfo":{..},"instructions"?:..}`).
    ///
    /// `session_id` is the transport's name for the session (the `Mcp-Session-Id` of HTTP; empty
    /// on a connection that is the session, as stdio). `streams` tells whether the transport can
    /// deliver messages outside responses: without it, `listChanged` and `resources.subscribe`
    /// are not advertised. Serve the session's later requests with
    /// [`handle_request`](Self::handle_request) and the session, mark it initialized on
    /// `notifications/initialized` ([`LegacySession::mark_initialized`]), pass the client's
    /// responses to [`LegacySession::client_requests`], and turn [`events`](Self::events) into
    /// its notifications with [`LegacySession::notification_for`].
    ///
    /// Errors: `-32602` when `params` is missing, `params.protocolVersion` is not a string, or
    /// `params.capabilities` is not an object.
    pub fn initialize(
        &self,
        params: Option<&Map<String, Value>>,
        session_id: String,
        streams: bool,
    ) -> Result<(Arc<LegacySession>, Value), McpError> {
        self.engine().initialize(params, session_id, streams)
    }

    /// The server's events (list changes, resource updates, extension events) from its
    /// [`DeliveryHub`](crate::subscriptions::DeliveryHub), from now on: what a transport turns
    /// into a legacy session's notifications. 2026-07-28 clients receive events through
    /// `subscriptions/listen`, which [`handle_request`](Self::handle_request) serves.
    pub fn events(&self) -> EventStream {
        self.engine().hub.subscribe()
    }

    /// Checks the `_meta` protocol version of a 2026-07-28 request (as
    /// [`parse_modern_meta`](crate::protocol::parse_modern_meta) returns it), for a transport
    /// that refuses a request before reading its body to the end or mirrors the version in a
    /// header (HTTP's `MCP-Protocol-Version`).
    ///
    /// Errors: `-32022` UnsupportedProtocolVersion (HTTP 400) with `data = {supported,
    /// requested}` unless it is 2026-07-28; for a 2025 revision the message says to send
    /// `initialize` instead.
    pub fn check_protocol_version(&self, meta: &ModernMeta) -> Result<(), McpError> {
        self.engine().check_modern_version(meta)
    }

    /// [`handle_request`](Self::handle_request) for a stateless 2026-07-28 request (never one
    /// on a legacy session: after `initialize` the whole connection is legacy) whose `_meta` the
    /// transport already parsed with [`parse_modern_meta`](crate::protocol::parse_modern_meta),
    /// so it is not parsed twice.
    ///
    /// Errors: `-32022` unless `meta` names 2026-07-28 (as
    /// [`check_protocol_version`](Self::check_protocol_version)); otherwise as
    /// [`handle_request`](Self::handle_request).
    pub fn handle_modern_request(
        &self,
        req: Request,
        meta: ModernMeta,
        origin: Origin,
    ) -> impl Future<Output = Result<ResultObject, McpError>> + Send + 'static {
        match self.engine().check_modern_version(&meta) {
            Ok(()) => Either::Left(self.engine().serve_modern(req, meta, origin)),
            Err(e) => Either::Right(ready(Err(e))),
        }
    }

    /// The arguments of the tool `name` that a 2026-07-28 HTTP request mirrors in `Mcp-Param-*`
    /// headers, declared by `x-mcp-header` properties of its input schema
    /// ([custom headers](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-behavior-for-custom-headers));
    /// empty for an unknown tool.
    pub fn tool_param_headers(&self, name: &str) -> Vec<ParamHeader> {
        self.engine().tool_param_headers(name)
    }

    /// The limits on open `subscriptions/listen` subscriptions, per connection and per caller.
    pub fn listen_limits(&self) -> ListenLimits {
        self.engine().listen_slots.limits()
    }

    /// Changes the listen limits for subscriptions opened from now on (open ones stay), as the
    /// command line's `--listen-max-*` flags do.
    pub fn set_listen_limits(&self, limits: ListenLimits) {
        self.engine().listen_slots.set_limits(limits);
    }
}
