//! Streamable HTTP transport on axum
//! ([spec](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)),
//! serving both eras on one endpoint.
//!
//! - **2026-07-28** (stateless): POST only; every request carries `MCP-Protocol-Version`,
//!   `Mcp-Method`, `Mcp-Name` (where the method has one) and `Mcp-Param-*` headers, checked in the
//!   order of
//!   [server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation).
//!   The reply is JSON, or SSE when the handler emits progress or log notifications before its
//!   result. GET and DELETE are 405 with `Allow: POST`, whatever `Mcp-Session-Id` says.
//! - **2025-11-25 and older** (sessions): `initialize` without modern `_meta` creates a session
//!   (`Mcp-Session-Id`); later POSTs carry the id; GET opens the session's stream; DELETE ends it.
//!   A GET or DELETE without a modern `MCP-Protocol-Version` is on this wire.
//!   A session that negotiated 2025-03-26 also takes JSON-RPC batches (`batch`); elsewhere a
//!   batch is 400 with `-32600`.
//!
//! Other methods are 405, with `Allow` listing what the endpoint serves (`non_post`).
//!
//! Every request is checked against DNS rebinding first (`Host` and `Origin` allow-lists, 403)
//! and bodies are limited in size (413 with a JSON-RPC error).
//!
//! [`serve`] and [`serve_app`] speak HTTP/1.1 and HTTP/2 over cleartext with prior knowledge
//! (h2c; TLS termination is left to a proxy). Over HTTP/2 many SSE replies and listen streams
//! share one connection, where HTTP/1.1 needs a connection each; the `Host` check then reads
//! the `:authority` pseudo-header.
//!
//! Nest [`router`] into an existing axum app, or run it with [`serve`].

mod batch;
mod batched_writes;
mod client_connections;
mod connections;
pub(crate) mod endpoint;
mod forwarded;
mod head_deadline;
mod headers;
mod host_patterns;
mod legacy;
mod media;
mod metadata;
mod modern;
mod non_post;
mod probes;
mod proxy_protocol;
mod respond;
mod resume;
mod security;
mod sessions;
mod status;

use crate::jsonrpc::{McpError, Message, parse_batch, parse_message};
use crate::protocol::META_PROTOCOL_VERSION;
use crate::server::Server;
use crate::unread_body;
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use http::{Method, Request};
use std::sync::Arc;
use std::time::Duration;

pub use connections::ConnectionLimits;
pub use forwarded::ForwardedHeader;
#[cfg(feature = "cli")]
pub(crate) use forwarded::parse_network;
pub use host_patterns::{HostPattern, OriginPattern, PatternError};
/// An IPv4 or IPv6 network in CIDR notation, of [`HttpConfig::trusted_proxies`]
/// (re-exported from the [`ipnet`](https://docs.rs/ipnet/2) crate, version 2).
pub use ipnet::IpNet;
pub use probes::Probes;
pub use security::HostPolicy;
pub use sessions::SessionLimits;

/// Configuration of the Streamable HTTP transport.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Path of the MCP endpoint (default `/mcp`); it must start with `/`. [`serve`] matches
    /// it exactly (other paths are 404), [`router`] as an axum route.
    pub path: String,
    /// Which `Host` and `Origin` values are accepted (default [`HostPolicy::automatic`]: on a
    /// loopback address, or under [`router`], only `localhost`, `127.0.0.1` and `[::1]`; on
    /// any other address every host, and web pages only from the origins the policy lists).
    /// Others get 403.
    pub hosts: HostPolicy,
    /// Largest accepted request body in bytes (default 4 MiB); larger bodies get 413 with a
    /// `-32600` error. A request answered before its body is read (403 for its host, 415, 406)
    /// has its body read and dropped up to this size first, so that its HTTP/1.1 connection can
    /// carry the next request; a longer body gets the answer with `Connection: close`.
    pub max_body_bytes: usize,
    /// Serve legacy (2025-11-25 / 2025-06-18 / 2025-03-26) sessions beside the stateless wire
    /// (default true). When false, `initialize` is `-32601` and GET/DELETE are 405 (`Allow: POST`).
    pub legacy_sessions: bool,
    /// Interval of SSE keep-alive comments (`: keep-alive`, not JSON-RPC frames) on idle long-lived
    /// streams: listen subscriptions, legacy GET streams and slow requests (default 15 s, well
    /// under idle timeouts such as undici's 300 s body timeout and nginx's 60 s
    /// `proxy_read_timeout`). Values under 1 ms are raised to 1 ms.
    pub keep_alive: Duration,
    /// How long a request may run without sending anything before its reply turns into an SSE
    /// stream (default 10 s; `None`: never). The stream begins at once with a `: keep-alive`
    /// comment, carries one every [`keep_alive`](Self::keep_alive) after that, and ends with
    /// the response as an SSE event, as a reply that streams notifications does
    /// ([sending messages](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages-to-the-server)).
    /// Without it, a request that works in silence for longer than a proxy's idle timeout (nginx's
    /// `proxy_read_timeout` is 60 s, many load balancers' 60 s too) sends no byte before its
    /// result, and the proxy closes the connection, which on the 2026-07-28 wire cancels the
    /// request. 10 s stays well under those timeouts, and over the run time of most calls, which
    /// keep their single JSON body.
    ///
    /// Applies to POSTs on both wires (2026-07-28 requests and legacy session requests and
    /// batches) whose `Accept` allows `text/event-stream`; a client that accepts only
    /// `application/json`, or [`streaming`](Self::streaming) off, always gets JSON. The timer
    /// is armed only for a request still running after its first poll: requests that answer
    /// at once pay nothing for it.
    pub sse_after: Option<Duration>,
    /// Most legacy sessions kept at once (default 10 000). At the limit, `initialize` first
    /// drops expired sessions, then closes the least recently used idle session (no request in
    /// flight, no open GET stream) of the client holding the most sessions, never one of a
    /// client holding no more than the caller; when there is none it is refused with HTTP 503,
    /// `Retry-After: 5` and `-32603`.
    pub max_sessions: usize,
    /// How many legacy sessions one client (principal, else peer address) may hold and how
    /// fast it may create them (default [`SessionLimits::default`]: 64 sessions, bursts of 64,
    /// then 10 per second); beyond them `initialize` is 429 with `Retry-After` and `-32600`.
    pub session_limits: SessionLimits,
    /// A legacy session with no request and no open stream for this long expires (default
    /// 30 minutes); its id then gets 404, after which the client re-initializes.
    pub session_idle_timeout: Duration,
    /// Whether replies may be SSE streams (default true). When false every POST is answered with
    /// one JSON body: progress and log notifications are dropped, `subscriptions/listen` is
    /// `-32601` (404), no `listChanged`/`subscribe` capability is advertised, and the legacy
    /// session stream (GET) is 405.
    pub streaming: bool,
    /// Limits on the connections [`serve`] accepts: header read timeout, head size, open
    /// connections, HTTP/2 streams (default [`ConnectionLimits::default`]). Not used by
    /// [`router`], whose connections belong to whoever serves it.
    pub connections: ConnectionLimits,
    /// The server as an OAuth protected resource (default none): its metadata document
    /// (RFC 9728) is served at the well-known paths of the resource
    /// ([`ProtectedResource::metadata_paths`](crate::auth::ProtectedResource::metadata_paths)),
    /// publicly and with `Access-Control-Allow-Origin: *`. Tokens are checked by a
    /// [`BearerAuth`](crate::auth::BearerAuth) layer guarding the same resource.
    pub protected_resource: Option<crate::auth::ProtectedResource>,
    /// Liveness and readiness probes (default [`Probes::default`]: `/healthz` and `/readyz`),
    /// answered beside the endpoint without authentication or host checks.
    pub probes: Probes,
    /// Reverse proxies whose word on the client's address is believed (default none: every
    /// forwarding header is ignored). A request whose TCP peer lies in one of these networks
    /// counts as coming from the client that [`forwarded_header`](Self::forwarded_header)
    /// names: the rightmost address in it that is not itself a trusted proxy, so that a
    /// client cannot pick its address by sending the header itself. That address replaces
    /// the peer in per-client legacy session limits ([`session_limits`](Self::session_limits)),
    /// in the request's [`Connection::peer`](crate::context::Connection::peer) (listen limits
    /// per caller, your filters and logs), while
    /// [`Connection::proxy`](crate::context::Connection::proxy) keeps the proxy's. A missing or
    /// unreadable header, or a hop whose address the proxy hid, leaves the proxy's address,
    /// as without this setting; no request is refused for its forwarding header.
    ///
    /// List only your own proxies (ideally single addresses): a trusted network any client can
    /// reach lets that client name any address. Not used by
    /// [`ConnectionLimits::max_connections_per_client`], which counts TCP connections before
    /// any header is read. Works under [`router`] too, with the peer address from axum's
    /// `ConnectInfo<SocketAddr>`.
    pub trusted_proxies: Vec<IpNet>,
    /// Which header the [`trusted_proxies`](Self::trusted_proxies) name the client in (default
    /// [`ForwardedHeader::XForwardedFor`]); the other one is never read.
    pub forwarded_header: ForwardedHeader,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: "/mcp".to_owned(),
            hosts: HostPolicy::automatic(),
            max_body_bytes: 4 * 1024 * 1024,
            legacy_sessions: true,
            keep_alive: Duration::from_secs(15),
            max_sessions: 10_000,
            session_limits: SessionLimits::default(),
            session_idle_timeout: Duration::from_secs(30 * 60),
            streaming: true,
            connections: ConnectionLimits::default(),
            protected_resource: None,
            probes: Probes::default(),
            sse_after: Some(Duration::from_secs(10)),
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::XForwardedFor,
        }
    }
}

impl HttpConfig {
    /// Sets [`path`](Self::path).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Sets [`hosts`](Self::hosts).
    pub fn hosts(mut self, hosts: HostPolicy) -> Self {
        self.hosts = hosts;
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    pub fn max_body_bytes(mut self, max_body_bytes: usize) -> Self {
        self.max_body_bytes = max_body_bytes;
        self
    }

    /// Sets [`legacy_sessions`](Self::legacy_sessions).
    pub fn legacy_sessions(mut self, legacy_sessions: bool) -> Self {
        self.legacy_sessions = legacy_sessions;
        self
    }

    /// Sets [`keep_alive`](Self::keep_alive).
    pub fn keep_alive(mut self, keep_alive: Duration) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// Sets [`max_sessions`](Self::max_sessions).
    pub fn max_sessions(mut self, max_sessions: usize) -> Self {
        self.max_sessions = max_sessions;
        self
    }

    /// Sets [`session_limits`](Self::session_limits).
    pub fn session_limits(mut self, session_limits: SessionLimits) -> Self {
        self.session_limits = session_limits;
        self
    }

    /// Sets [`session_idle_timeout`](Self::session_idle_timeout).
    pub fn session_idle_timeout(mut self, session_idle_timeout: Duration) -> Self {
        self.session_idle_timeout = session_idle_timeout;
        self
    }

    /// Sets [`streaming`](Self::streaming).
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Sets [`connections`](Self::connections).
    pub fn connections(mut self, connections: ConnectionLimits) -> Self {
        self.connections = connections;
        self
    }

    /// Sets [`probes`](Self::probes).
    pub fn probes(mut self, probes: Probes) -> Self {
        self.probes = probes;
        self
    }

    /// Sets [`sse_after`](Self::sse_after) (`None`: replies turn into SSE only for
    /// notifications).
    pub fn sse_after(mut self, sse_after: Option<Duration>) -> Self {
        self.sse_after = sse_after;
        self
    }

    /// Sets [`trusted_proxies`](Self::trusted_proxies).
    pub fn trusted_proxies(mut self, networks: impl IntoIterator<Item = IpNet>) -> Self {
        self.trusted_proxies = networks.into_iter().collect();
        self
    }

    /// Sets [`forwarded_header`](Self::forwarded_header).
    pub fn forwarded_header(mut self, header: ForwardedHeader) -> Self {
        self.forwarded_header = header;
        self
    }

    /// Sets [`protected_resource`](Self::protected_resource).
    pub fn protected_resource(mut self, resource: crate::auth::ProtectedResource) -> Self {
        self.protected_resource = Some(resource);
        self
    }
}

pub(crate) struct HttpState {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: sessions::SessionStore,
    /// The protected resource metadata, when the configuration names a resource.
    pub(crate) metadata: Option<Arc<metadata::Metadata>>,
    /// Its URL, for challenges.
    pub(crate) metadata_url: Option<Arc<str>>,
}

impl HttpState {
    /// What an insufficient-scope challenge of a request from `principal` says (`None`: it
    /// had no token).
    pub(crate) fn challenge(&self, principal: Option<&crate::auth::Principal>) -> respond::Challenge {
        respond::Challenge {
            metadata: self.metadata_url.clone(),
            anonymous: principal.is_none(),
            // A key-bound token came with the DPoP scheme (the auth layer refuses it as Bearer).
            dpop: principal.is_some_and(|p| p.claims.pointer("/cnf/jkt").is_some()),
        }
    }
}

/// An axum [`Router`] serving `server` at `config.path`. Nest or merge it into your own app;
/// layers (auth, tracing, CORS) go around it as with any axum router.
///
/// Anonymous legacy sessions count against the peer address
/// ([`HttpConfig::session_limits`]), read from axum's `ConnectInfo<SocketAddr>`: serve the app
/// with `into_make_service_with_connect_info::<SocketAddr>()` (as [`serve_app`] does), or all
/// anonymous clients share one quota. When that address is one of
/// [`HttpConfig::trusted_proxies`], the client address the proxy forwarded counts instead.
///
/// The router does not know the address it is served on: an [automatic](HostPolicy::automatic)
/// host policy accepts only the `localhost` names here; name the public ones in
/// [`HttpConfig::hosts`].
pub fn router(server: Server, config: HttpConfig) -> Router {
    let state = http_state(server, config, None);
    let path = state.config.path.clone();
    let mut router = Router::new().route(&path, axum::routing::any(handle));
    if let Some(metadata) = &state.metadata {
        for p in metadata.paths() {
            let metadata = metadata.clone();
            router = router.route(
                p,
                axum::routing::any(move |req: Request<Body>| async move {
                    unread_body::closing_if(unread_body::closes_unread(&req), metadata.answer(req.method()))
                }),
            );
        }
    }
    for (path, probe) in [
        (&state.config.probes.liveness, probes::Probe::Liveness),
        (&state.config.probes.readiness, probes::Probe::Readiness),
    ] {
        if let Some(p) = path.as_deref().filter(|p| p.starts_with('/') && *p != state.config.path) {
            let server = state.server.clone();
            router = router.route(
                p,
                axum::routing::any(move |req: Request<Body>| async move {
                    let resp = probes::answer(probe, &server, req.method()).await;
                    unread_body::closing_if(unread_body::closes_unread(&req), resp)
                }),
            );
        }
    }
    router.with_state(state)
}

/// What serving `server` with `config` on the address `bound` (`None`: not known) keeps: the
/// server, the configuration, the legacy sessions.
fn http_state(server: Server, mut config: HttpConfig, bound: Option<std::net::SocketAddr>) -> Arc<HttpState> {
    // A zero period has no meaning for a timer (tokio's interval rejects it).
    config.keep_alive = config.keep_alive.max(Duration::from_millis(1));
    config.hosts = config.hosts.resolve(bound);
    let metadata = config.protected_resource.as_ref().map(|r| Arc::new(metadata::Metadata::of(r, &server)));
    let metadata_url = config.protected_resource.as_ref().map(|r| Arc::from(r.metadata_url()));
    Arc::new(HttpState {
        metadata,
        metadata_url,
        sessions: sessions::SessionStore::new(
            config.max_sessions,
            config.session_idle_timeout,
            config.session_limits.clone(),
        ),
        server,
        config,
    })
}

/// Serves `server` on `listener` within `config.connections` until it stops: after
/// [`Server::shutdown`] (in-flight requests are cancelled, open streams closed) or a
/// [`Server::drain`]. While draining it serves as before, but HTTP/1.1 replies carry
/// `Connection: close` and the readiness probe answers 503; once closing it accepts no
/// connection, ends listen subscriptions and session streams, and returns when the requests in
/// flight have finished (or were cancelled by the drain's timeout).
/// Answers as [`router`] does, without axum's routing in front: a request for another path
/// than `config.path` or a probe path ([`HttpConfig::probes`]) is 404 without a body.
///
/// Errors: `InvalidInput` when `config.path` does not start with `/`; a failed `accept` is
/// logged and retried, never an error.
pub async fn serve(listener: tokio::net::TcpListener, server: Server, config: HttpConfig) -> std::io::Result<()> {
    serve_endpoint(listener, server, config, None).await
}

/// The service [`serve`] runs for `server` with `config` (without authentication), for
/// in-process callers such as the HTTP fuzz target.
#[cfg(feature = "fuzzing")]
pub(crate) fn endpoint_service(server: Server, config: HttpConfig) -> endpoint::Endpoint<endpoint::Handler> {
    let state = http_state(server, config, None);
    endpoint::Endpoint::new(&state.config.path.clone(), state.metadata.clone(), endpoint::Handler::new(state.clone()))
        .with_probes(&state.config.probes, &state.server)
}

/// [`serve`], behind `auth` when given (the CLI's `--auth`).
pub(crate) async fn serve_endpoint(
    listener: tokio::net::TcpListener,
    server: Server,
    config: HttpConfig,
    auth: Option<crate::auth::BearerAuth>,
) -> std::io::Result<()> {
    if !config.path.starts_with('/') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("HttpConfig::path {:?} must start with '/' (e.g. \"/mcp\")", config.path),
        ));
    }
    let stages = connections::Stages::of(&server);
    let limits = config.connections.clone();
    let bound = listener.local_addr().ok();
    let automatic = config.hosts.is_automatic();
    let state = http_state(server, config, bound);
    if automatic && state.config.hosts.accepts_every_host() {
        tracing::warn!(
            address = ?bound,
            "http: listening on a non-loopback address: every Host is accepted, and web pages (requests \
             with an Origin) only from --allowed-origins; name the hosts clients use with --allowed-hosts \
             (HttpConfig::hosts) to refuse others"
        );
    }
    let path = state.config.path.clone();
    let metadata = state.metadata.clone();
    let (probes, server) = (state.config.probes.clone(), state.server.clone());
    // Each connection's handler holds its `Connection`, rather than every request carrying it
    // as an extension (`connections::with_extensions`): nothing but the handler reads it here.
    let endpoint =
        endpoint::Endpoint::new(&path, metadata, endpoint::Handler::new(state)).with_probes(&probes, &server);
    match auth {
        Some(auth) => {
            let per_connection = move |connection, _client| {
                endpoint.clone().map_inner(|handler| tower::Layer::layer(&auth, handler.on(connection)))
            };
            connections::serve(listener, per_connection, stages, &limits).await
        }
        None => {
            let per_connection =
                move |connection, _client| endpoint.clone().map_inner(|handler| handler.on(connection));
            connections::serve(listener, per_connection, stages, &limits).await
        }
    }
}

/// Serves an axum app (e.g. [`router`] with layers around it, or merged into a larger app)
/// within `limits` until `shutdown` fires, then waits for open connections to finish.
/// Accepted connections get `TCP_NODELAY` and write the frames of many HTTP/2 streams
/// together; each request carries the peer's address as axum's `ConnectInfo<SocketAddr>` and
/// its connection as a [`Connection`](crate::context::Connection) extension.
///
/// Errors: none so far (a failed `accept`, e.g. out of file descriptors, is logged and retried
/// after 50 ms).
pub async fn serve_app(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: tokio_util::sync::CancellationToken,
    limits: &ConnectionLimits,
) -> std::io::Result<()> {
    connections::serve(listener, connections::with_extensions(app), connections::Stages::until(shutdown), limits).await
}

/// The header check of `fuzzing::mirrored_header`.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn fuzz_mirrored(headers: &http::HeaderMap, name: &str) -> Result<Option<String>, crate::jsonrpc::McpError> {
    headers::mirrored(headers, name).map(|v| v.map(std::borrow::Cow::into_owned))
}

async fn handle(State(state): State<Arc<HttpState>>, req: Request<Body>) -> Response {
    let (parts, body) = req.into_parts();
    handle_request(state, parts, body, None).await
}

/// Answers one request for the MCP endpoint (whatever its path: the caller routed it here)
/// that came on `connection`; `None`: the request's [`Connection`](crate::context::Connection)
/// extension, if any.
///
/// Every request's future is boxed (`endpoint::Handler`), so whatever it holds is allocated
/// and copied per request, and past 1,032 bytes glibc's malloc leaves its per-thread cache for
/// the slower bins. So this is not an `async fn` (one keeps each argument twice): the checks
/// that need no body run here, when the future is made (over HTTP/2 hyper makes it on the
/// connection's task, before it spawns the stream's: they are cheap and do not panic); the
/// future holds the state, the headers, the extensions, the body and what the checks found,
/// then the answer's future, which [`post`] makes without holding the body; the rare paths
/// (another method, a batch, `initialize`) are boxed on their own.
fn handle_request(
    state: Arc<HttpState>,
    parts: http::request::Parts,
    body: Body,
    connection: Option<crate::context::Connection>,
) -> impl Future<Output = Response> + Send + use<> {
    use futures::future::{Either, ready};
    let admitted = match admit(&state, &parts, connection) {
        Ok(admitted) => admitted,
        Err(Early::Answer(resp)) if http_body::Body::is_end_stream(&body) => {
            return Either::Left(Either::Left(ready(*resp)));
        }
        Err(Early::Answer(resp)) => {
            let bounds = unread_bounds(&state.config);
            return Either::Left(Either::Right(futures::FutureExt::boxed(async move {
                unread_body::answer_after(parts.version, &parts.headers, body, *resp, bounds).await
            })));
        }
        Err(Early::NotPost(principal)) => {
            // Read first: a GET's answer may start a stream, a DELETE ends its session.
            return Either::Left(Either::Right(futures::FutureExt::boxed(async move {
                let bounds = unread_bounds(&state.config);
                let closes = unread_body::take(parts.version, &parts.headers, body, bounds).await;
                let resp = non_post::answer(&state, &parts, principal.as_deref()).await;
                unread_body::closing_if(closes, resp)
            })));
        }
    };
    let (headers, extensions, version) = (parts.headers, parts.extensions, parts.version);
    Either::Right(async move {
        let bytes = match read_body_in_time(body, &state.config).await {
            Ok(b) => b,
            Err(e) => return body_refused(&state.config, version, e),
        };
        post(&state, headers, &extensions, bytes, admitted).await
    })
}

/// An answer given before the body is read takes the body first, within the limits a body the
/// endpoint reads has ([`unread_body`]).
fn unread_bounds(config: &HttpConfig) -> unread_body::Bounds {
    unread_body::Bounds { max_bytes: config.max_body_bytes, timeout: config.connections.body_read_timeout }
}

/// What [`admit`] found for a request that goes on to its body.
struct Admitted {
    principal: Option<Arc<crate::auth::Principal>>,
    connection: Option<crate::context::Connection>,
    /// The client's address when a trusted proxy forwarded the request.
    forwarded: Option<std::net::SocketAddr>,
    /// The `Accept` header allows an SSE reply (read once, here).
    accepts_sse: bool,
}

/// How a request ends before its body is read.
enum Early {
    /// Boxed: an error path, and a `Response` would make every `Result` of [`admit`] large.
    Answer(Box<Response>),
    /// Not a POST: [`non_post::answer`], for this principal.
    NotPost(Option<Arc<crate::auth::Principal>>),
}

/// The checks of a request that need no body: host and origin ([`security::reject`]), the
/// method, the body's media type and what the client accepts.
fn admit(
    state: &HttpState,
    parts: &http::request::Parts,
    connection: Option<crate::context::Connection>,
) -> Result<Admitted, Early> {
    if let Some(resp) = security::reject(&state.config.hosts, &parts.headers, &parts.uri) {
        return Err(Early::Answer(Box::new(resp)));
    }
    // Set by an authentication layer such as `auth::BearerAuth`; absent: anonymous.
    let principal = parts.extensions.get::<crate::auth::Principal>().cloned().map(Arc::new);
    // Held by `serve`'s handler, inserted by `serve_app` per accepted connection; absent under
    // a server of the application's own.
    let mut connection = connection.or_else(|| parts.extensions.get::<crate::context::Connection>().cloned());
    // The client's address when a trusted proxy forwarded the request; `None` (the peer is the
    // client) without trusted proxies, at the cost of one length check.
    let forwarded = if state.config.trusted_proxies.is_empty() {
        None
    } else {
        peer_of(&parts.extensions, connection.as_ref())
            .map(|peer| {
                let cfg = &state.config;
                (peer, forwarded::client_address(peer, &parts.headers, &cfg.trusted_proxies, cfg.forwarded_header))
            })
            .and_then(|(peer, client)| (client != peer).then_some(client))
    };
    if let Some(client) = forwarded {
        connection = connection.map(|c| c.forwarded_for(client));
    }
    if parts.method != Method::POST {
        return Err(Early::NotPost(principal));
    }
    if let Some(refused) = media::refuse_body(&parts.headers) {
        return Err(Early::Answer(Box::new(refused)));
    }
    let accepts = media::accepts(&parts.headers);
    if !accepts.json && !accepts.sse {
        let refused = media::not_acceptable(&parts.headers, "application/json, text/event-stream");
        return Err(Early::Answer(Box::new(refused)));
    }
    Ok(Admitted { principal, connection, forwarded, accepts_sse: accepts.sse })
}

/// The answer to a body that could not be taken: 408, 413 or 400. Over HTTP/1.x a 408, and a
/// 413 whose body was not read to its end, say `Connection: close`: hyper closes a connection
/// whose request body is left unread.
fn body_refused(config: &HttpConfig, version: http::Version, error: BodyError) -> Response {
    let (resp, closes) = match error {
        BodyError::Late => {
            let seconds = config.connections.body_read_timeout.as_secs_f64();
            let err = McpError::invalid_request(format!(
                "the request body did not arrive within {seconds} s; send the whole body at once"
            ));
            (respond::error(408, None, &err), true)
        }
        BodyError::TooLarge { drained } => {
            let err = McpError::invalid_request(format!("request body is larger than {} bytes", config.max_body_bytes));
            (respond::error(413, None, &err), !drained)
        }
        BodyError::Broken => {
            let err = McpError::invalid_request(
                "the request body ended early or could not be read (shorter than its Content-Length?)",
            );
            (respond::error(400, None, &err), false)
        }
    };
    unread_body::closing_if(closes && version < http::Version::HTTP_2, resp)
}

/// A POST's body, parsed and sent the way of its era: a batch, a legacy session's request,
/// `initialize`, or a stateless request. Synchronous up to the answer's future, which holds
/// neither the body nor the headers (their values may be slices of the connection's read
/// buffer), and for the usual requests not the message either.
fn post(
    state: &Arc<HttpState>,
    headers: http::HeaderMap,
    extensions: &http::Extensions,
    bytes: bytes::Bytes,
    admitted: Admitted,
) -> impl Future<Output = Response> + Send + use<> {
    use futures::future::{Either, ready};
    let Admitted { principal, connection, forwarded, accepts_sse } = admitted;
    // Before the whole-body message filter: filters see each message of a batch, not the array.
    if let Some(batch) = parse_batch(&bytes) {
        drop(bytes);
        let session_id = headers::session_id(&headers).map(std::borrow::Cow::into_owned);
        let state = state.clone();
        return Either::Left(Either::Right(Box::pin(async move {
            batch::post(&state, session_id.as_deref(), &headers, batch, principal, connection, accepts_sse).await
        }) as crate::registry::BoxFuture<Response>));
    }
    let filters = state.server.message_filters();
    if !filters.is_empty()
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && !filters.incoming(&v)
    {
        return Either::Left(Either::Left(ready(respond::accepted())));
    }
    let msg = match parse_message(&bytes) {
        Ok(m) => m,
        // Not one JSON-RPC message (-32700 or -32600).
        Err(f) => return Either::Left(Either::Left(ready(respond::error(400, f.id.as_ref(), &f.error)))),
    };
    // The body may be a slice of the connection's read buffer: not held while the request runs.
    drop(bytes);
    let header_version = headers::protocol_version(&headers);
    let header_is_legacy = header_version.as_deref().is_some_and(crate::protocol::is_legacy_version);
    // A legacy request names a legacy version or none, and carries no 2026-07-28 `_meta`;
    // anything else (2026-07-28, or an unknown version that the stateless checks will reject)
    // is stateless, whatever Mcp-Session-Id says: the modern path ignores that header. The
    // `_meta` is read only when the header leaves the era open.
    let legacy_candidate = (header_version.is_none() || header_is_legacy) && !has_modern_meta(&msg);
    let is_initialize = matches!(&msg, Message::Request(r) if r.method == "initialize");
    // Read only where a session may be named: the stateless path ignores the header.
    if state.config.legacy_sessions && legacy_candidate {
        if let Some(id) = &headers::session_id(&headers) {
            return Either::Right(Either::Left(legacy::post(
                state,
                id,
                header_version.as_deref(),
                legacy::Head::of(state, &headers, accepts_sse),
                msg,
                principal,
                connection,
            )));
        }
        if is_initialize && (header_version.is_none() || header_is_legacy) {
            let peer = forwarded.or_else(|| peer_of(extensions, connection.as_ref()));
            let state = state.clone();
            return Either::Left(Either::Right(Box::pin(async move {
                legacy::initialize(&state, msg, principal, peer).await
            })));
        }
        if header_is_legacy {
            let id = match &msg {
                Message::Request(r) => Some(r.id.clone()),
                _ => None,
            };
            let err = McpError::invalid_request("missing Mcp-Session-Id: send initialize first");
            return Either::Left(Either::Left(ready(respond::error(400, id.as_ref(), &err))));
        }
    }
    Either::Right(Either::Right(modern::post(
        state,
        header_version.as_deref(),
        &headers,
        msg,
        principal,
        connection,
        accepts_sse,
    )))
}

/// True when the message's `params._meta` names a protocol version (the 2026-07-28 envelope).
fn has_modern_meta(msg: &Message) -> bool {
    match msg {
        Message::Request(r) => r.meta.contains_key(META_PROTOCOL_VERSION),
        Message::Notification(n) => {
            n.params.as_ref().and_then(|p| p.get("_meta")).and_then(|m| m.get(META_PROTOCOL_VERSION)).is_some()
        }
        Message::Response { .. } => false,
    }
}

/// The TCP peer of a request: axum's `ConnectInfo` (recorded by `serve_app` and
/// `into_make_service_with_connect_info`), else the [`Connection`](crate::context::Connection)
/// `serve`'s handler holds or a layer inserted; `None` when neither is there.
fn peer_of(
    extensions: &http::Extensions,
    connection: Option<&crate::context::Connection>,
) -> Option<std::net::SocketAddr> {
    extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0)
        .or_else(|| connection.and_then(crate::context::Connection::peer))
}

/// Why a request body could not be taken.
enum BodyError {
    /// Larger than the limit (413); `drained`: read to its end all the same, so the connection
    /// can carry another request.
    TooLarge { drained: bool },
    /// The connection broke off, or the body ended before its `Content-Length` (400).
    Broken,
    /// Not all there within the body read timeout (408).
    Late,
}

/// [`read_body`] within `config.connections.body_read_timeout`. The timer starts only when the
/// body is not all there at once, so the usual request (body in the same packets as its head)
/// pays no timer.
async fn read_body_in_time(body: Body, config: &HttpConfig) -> Result<bytes::Bytes, BodyError> {
    let read = read_body(body, config.max_body_bytes);
    let mut read = std::pin::pin!(read);
    if let std::task::Poll::Ready(done) = futures::poll!(&mut read) {
        return done;
    }
    tokio::time::timeout(config.connections.body_read_timeout, read).await.unwrap_or(Err(BodyError::Late))
}

/// Reads a body of at most `limit` bytes. An oversized body is still read to its end
/// (discarding it, up to 16 times the limit) so that the client, which is usually still
/// sending, receives the 413 instead of a reset connection.
async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, BodyError> {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    // A body that comes as one chunk (the usual request) is that chunk, not a copy of it.
    let mut first: Option<bytes::Bytes> = None;
    let mut joined: Option<bytes::BytesMut> = None;
    let mut seen = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|_| if seen > limit { BodyError::TooLarge { drained: false } } else { BodyError::Broken })?;
        // An HTTP/2 stream may end with an empty DATA frame: nothing to join.
        if chunk.is_empty() {
            continue;
        }
        seen += chunk.len();
        if seen <= limit {
            match (&mut joined, first.take()) {
                (Some(buf), _) => buf.extend_from_slice(&chunk),
                (None, None) => first = Some(chunk),
                (None, Some(earlier)) => {
                    let mut buf = bytes::BytesMut::with_capacity(seen);
                    buf.extend_from_slice(&earlier);
                    buf.extend_from_slice(&chunk);
                    joined = Some(buf);
                }
            }
        } else if seen > limit.saturating_mul(16) {
            return Err(BodyError::TooLarge { drained: false });
        }
    }
    if seen > limit {
        return Err(BodyError::TooLarge { drained: true });
    }
    Ok(match joined {
        Some(buf) => buf.freeze(),
        None => first.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::{BodyError, HttpConfig, handle_request, http_state, read_body};
    use crate::server::Server;
    use axum::body::Body;

    /// Every request's future is boxed (as `endpoint::Handler` boxes it, mapped into a
    /// `Result`); past 1,032 bytes glibc's malloc takes the slow path (no per-thread cache) for
    /// each request. The pipeline's own future is boxed apart, so this counts what the
    /// transport holds around it. The layout checked is the test build's; the release build
    /// lays it out the same (`cargo +nightly rustc --release -- -Zprint-type-sizes`).
    #[test]
    fn a_requests_future_fits_the_allocators_thread_cache() {
        use futures::FutureExt as _;
        let server = Server::builder("t", "0").groups(["none"]).build().expect("builds");
        let state = http_state(server, HttpConfig::default(), None);
        let (parts, body) = http::Request::post("/mcp").body(Body::empty()).expect("a request").into_parts();
        let future = handle_request(state, parts, body, None).map(Ok::<_, std::convert::Infallible>);
        assert!(std::mem::size_of_val(&future) <= 1032, "{} bytes", std::mem::size_of_val(&future));
    }

    fn chunked(chunks: &[&'static str]) -> Body {
        let chunks: Vec<Result<bytes::Bytes, std::io::Error>> =
            chunks.iter().map(|c| Ok(bytes::Bytes::from_static(c.as_bytes()))).collect();
        Body::from_stream(futures::stream::iter(chunks))
    }

    /// However the body is cut into chunks, the bytes read are the bytes sent, and the limit
    /// counts them all.
    #[tokio::test]
    async fn a_body_reads_the_same_in_one_chunk_or_many() {
        let cases =
            [&[][..], &[""], &["{\"a\":1}"], &["", "{\"a\":1}", ""], &["{\"a\"", ":1}"], &["", "{\"a\":", "", "1}"]];
        for chunks in cases {
            let whole = chunks.concat();
            let Ok(read) = read_body(chunked(chunks), 7).await else { panic!("{chunks:?} read") };
            assert_eq!(read, whole.as_bytes(), "{chunks:?}");
            // One chunk with data, whatever empty ones come with it, is that chunk: no copy.
            if let [only] = chunks.iter().filter(|c| !c.is_empty()).collect::<Vec<_>>()[..] {
                assert_eq!(read.as_ptr(), only.as_ptr(), "{chunks:?} is not a copy");
            }
            let over = read_body(chunked(chunks), whole.len().saturating_sub(1)).await;
            assert!(whole.is_empty() || matches!(over, Err(BodyError::TooLarge { .. })), "{chunks:?} over the limit");
        }
    }
}
