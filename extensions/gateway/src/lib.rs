//! Proxying and gateways for Switchyard MCP servers: serve the tools, prompts, resources and
//! resource templates of upstream MCP servers (a child process over stdio, or a Streamable
//! HTTP URL; either protocol era) through yours, under a name prefix per upstream.
//!
//! ```no_run
//! use switchyard::Server;
//! use switchyard_gateway::{Gateway, Upstream};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder("gateway", "1.0.0").build()?;
//! let gateway = Gateway::new()
//!     .upstream(Upstream::stdio("weather", "python3", ["weather.py"]).prefix("weather_"))
//!     .upstream(Upstream::http("notes", "http://127.0.0.1:8080/mcp").prefix("notes_").uri_prefix("notes+"))
//!     .attach(&server)
//!     .await?;
//! // Serve `server` as usual (switchyard::cli::run, serve_stdio, the HTTP transport).
//! # let _ = gateway; Ok(()) }
//! ```
//!
//! # What is served
//!
//! Each upstream's items become run-time items of the server (`switchyard::server::DynamicTool`
//! and its siblings): tools and prompts as `{prefix}{name}`, resources as `{uri_prefix}{uri}`,
//! templates as `{uri_prefix}{uriTemplate}`, with the upstream's titles, descriptions, input
//! and output schemas, annotations, icons and `_meta`. An item our checks refuse with its
//! decoration (annotations that disagree, a bad icon) is served without it; one refused even
//! then (an invalid name, a schema that does not compile), or whose name the server already
//! serves, is left out with a warning (target `switchyard_gateway`).
//!
//! Because they are the server's own items, everything in front of its items is in front of
//! them: the authorization policy (give [`Upstream::roles`] or [`Upstream::scopes`]), raw and
//! message filters, argument validation against the upstream's input schema, request spans and
//! metrics.
//!
//! # Calls
//!
//! `tools/call`, `prompts/get` and `resources/read` are relayed to the upstream with the
//! original name, URI and arguments:
//!
//! - **Cancellation** passes through: our client's `notifications/cancelled` cancels the
//!   request's token, and the upstream is sent `notifications/cancelled` for its request
//!   ([cancellation](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation)).
//! - **Progress** passes through: when our client sent a `progressToken`, the upstream call
//!   carries one too, and each of its `notifications/progress` is sent to our client under our
//!   token, in order, before the answer
//!   ([progress](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress)).
//!   A tool the upstream runs as a task reports through the task: a 2026-07-28 task's status
//!   messages (where the Tasks extension puts its progress) become reports numbered 1, 2, ..
//!   with the message as `message`.
//! - **Timeouts**: each call waits at most [`Upstream::call_timeout`] (60 s by default).
//! - **Links**: read contents come back under `{uri_prefix}{uri}`; a `resource_link` or embedded
//!   `resource` in a tool result or prompt's messages that names one of the upstream's resources
//!   we serve (mirrored, or matching a mirrored template) gets our URI too, so our client can
//!   follow it; other links, and all of them when the upstream has no `uri_prefix`, stay.
//! - **Completions**: when the upstream declares the `completions` capability, each of its
//!   mirrored prompts and resource templates has a completion handler: `completion/complete`
//!   ([completion](https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion))
//!   of our `{prefix}{name}` or `{uri_prefix}{uriTemplate}` is relayed with `ref` set to the
//!   upstream's own prompt name or URI template, `argument` and `context` unchanged, and the
//!   upstream's `completion` object (`{values, total?, hasMore?}`, cut to 100 values) is the
//!   answer. Items of an upstream without the capability have no handler and complete to the
//!   empty list.
//! - **Input** is relayed both ways on a 2026-07-28 upstream: the upstream call declares our
//!   client's `elicitation`, `sampling` and `roots` capabilities, and each request of an
//!   upstream `input_required` round
//!   ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)) is
//!   asked of our client through the request's input API (`RequestContext::input`): as a request
//!   of ours on a session, or as an `input_required` round of ours on 2026-07-28, after which
//!   our client's retry runs the relay again and the upstream (which also runs its handler again
//!   from the top) gets the answer. A session upstream asks with requests of its own, which the
//!   client cannot tie to one call on every transport: those go to the input handlers of the
//!   [`ClientBuilder`](switchyard_client::ClientBuilder) given to [`Upstream::client`] (none by
//!   default, so nothing is declared and a well-behaved upstream does not ask).
//!
//! # Errors
//!
//! No failure of an upstream panics or blocks the server past the configured timeouts, and the
//! server's other items keep serving.
//!
//! | upstream | `tools/call` | `prompts/get`, `resources/read`, `completion/complete` |
//! |---|---|---|
//! | answers with a JSON-RPC error | that error: its code and `data`, the message prefixed `` upstream `name`: ``; an authorization refusal's `data.reason` (`forbidden`, `insufficient_scope`) becomes `upstream_forbidden` / `upstream_insufficient_scope`, so our transport does not answer it as ours (403, or 401 with a challenge) | the same |
//! | not connected, no answer within the call timeout (cancelled upstream), closes the connection mid-call, answers with something that is no result of the method, ends the task a task-only tool ran as `cancelled` | an `isError: true` result whose text names the upstream and what happened, for the model to read ([tool errors](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling)) | `-32603` with that text and `data: {"upstream": name}` |
//!
//! An upstream whose connection ends has its items removed (our clients get
//! `notifications/*/list_changed`) and is connected again with exponential backoff
//! ([`Upstream::reconnect_backoff`]: 250 ms doubling to 30 s by default, reset by a
//! connection that lasted at least the longest wait); its items come back when it does.
//!
//! # List changes
//!
//! An upstream's `notifications/tools/list_changed` (prompts, resources likewise) on a session,
//! or the same events of a `subscriptions/listen` stream on 2026-07-28
//! ([subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/subscriptions)),
//! makes the gateway list that kind again and apply the difference, which publishes our own
//! list change to our clients (their listen streams, or their sessions).
//!
//! # Resource updates
//!
//! While a client of this server instance is subscribed to one of our URIs served from an
//! upstream (a mirrored resource's, or one matching a mirrored template, such as
//! `notes+file:///a.txt` for the upstream's `file:///{path}`), the gateway is subscribed to the
//! upstream's URI of it: a `resources/subscribe` on a session upstream that declares
//! `resources.subscribe`, a `subscriptions/listen` naming every such URI in
//! `resourceSubscriptions` on 2026-07-28. The upstream's
//! `notifications/resources/updated` is then published under our URI
//! ([subscriptions](https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions)).
//! When the last of our subscribers leaves, the upstream subscription goes too
//! (`resources/unsubscribe`, or a listen without that URI). The subscriptions counted are this
//! instance's (`Server::subscribed_resources`); an update published here reaches every
//! instance behind a shared delivery hub. An update that happens upstream before the gateway's
//! subscription is in place is not heard.

mod gateway;
mod mirror;
mod relay;
mod updates;
mod upstream;

pub use gateway::{Gateway, GatewayError, GatewayHandle, UpstreamState, UpstreamStatus};
pub use upstream::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RECONNECT_MAX, DEFAULT_RECONNECT_MIN, Upstream,
};
