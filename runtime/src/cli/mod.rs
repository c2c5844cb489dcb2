//! The shared command line of Switchyard server binaries, on [clap](https://docs.rs/clap/4):
//!
//! - `--stdio`: serve on stdin/stdout (the default when no flag is given);
//! - `--http HOST:PORT`: serve
//!   [Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports)
//!   at `/mcp`, printing exactly one line `listening on http://HOST:PORT/mcp` to stderr once
//!   connections are accepted (`PORT` 0 picks a free port; the line shows the real one; the path
//!   is [`ServeOptions::http`]'s, `/mcp` by default);
//! - `--log-format pretty|json` and `--log-level FILTER`: how and what the server logs, to
//!   stderr only (stdout belongs to the stdio transport);
//! - `--listen-max-per-connection N` and `--listen-max-per-principal N`: caps on open
//!   `subscriptions/listen` subscriptions ([`ListenLimits`](crate::subscriptions::ListenLimits));
//! - `--help` and `--version`.
//!
//! `--http` is there with the `http` feature (on by default). With the `otel` feature, the
//! request spans and the duration metric are also exported over OTLP when the environment
//! names a collector (`OTEL_EXPORTER_OTLP_ENDPOINT`, see [`ServeArgs::init_tracing`]).
//!
//! Every flag also reads an environment variable (see [`ServeArgs`]); `RUST_LOG` stays the log
//! filter when `--log-level` is not given, `warn` when neither is.
//!
//! A server without flags of its own ends `main` with [`run`]:
//!
//! ```no_run
//! # async fn main_body(server: switchyard::Server) -> std::process::ExitCode {
//! switchyard::cli::run(server).await
//! # }
//! ```
//!
//! A server with flags of its own flattens [`ServeArgs`] into its own clap parser, which then
//! answers `--help` and `--version` for all of them, and serves with [`serve`] or
//! [`serve_with`]:
//!
//! ```no_run
//! use clap::Parser;
//!
//! /// My server.
//! #[derive(Parser)]
//! #[command(version)]
//! struct Cli {
//!     #[command(flatten)]
//!     serve: switchyard::cli::ServeArgs,
//!     /// Install the Tasks extension.
//!     #[arg(long)]
//!     tasks: bool,
//! }
//!
//! # async fn main_body() -> std::process::ExitCode {
//! let cli = Cli::parse();
//! cli.serve.init_tracing();
//! let server = switchyard::Server::builder("my-server", env!("CARGO_PKG_VERSION")).build().expect("valid");
//! switchyard::cli::serve(server, &cli.serve).await
//! # }
//! ```
//!
//! Over HTTP, SIGTERM drains the server ([`Server::drain`]): readiness (`/readyz`) turns 503
//! and the server keeps serving for `--drain-grace` (default 5 s) so that a load balancer moves
//! away, then it stops accepting, ends listen streams and gives requests in flight
//! `--drain-timeout` (default 20 s) before cancelling them; tasks are handed back before the
//! process exits. Ctrl-C drains without the grace period; a second signal stops at once. On
//! stdio, SIGTERM, Ctrl-C and EOF shut the server down.

#[cfg(feature = "otel")]
mod telemetry;

#[cfg(feature = "http")]
use crate::auth::BearerAuth;
use crate::auth::Principal;
use crate::server::Server;
#[cfg(feature = "http")]
use crate::transport::http::HttpConfig;
use crate::transport::stdio::{self, StdioConfig};
use std::process::ExitCode;

/// The flags every Switchyard server binary shares; `#[command(flatten)]` it into a binary's
/// own `clap::Parser` to add flags of its own next to them.
///
/// | flag | environment variable | field | default |
/// |---|---|---|---|
/// | `--stdio` | `SWITCHYARD_STDIO` (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`) | [`stdio`](Self::stdio) | stdio when `--http` is not given either |
/// | `--http HOST:PORT` | `SWITCHYARD_HTTP` | [`http`](Self::http) | none |
/// | `--allowed-hosts HOST,...` | `SWITCHYARD_ALLOWED_HOSTS` | [`allowed_hosts`](Self::allowed_hosts) | the `localhost` names on a loopback address, every host elsewhere |
/// | `--allowed-origins ORIGIN,...` | `SWITCHYARD_ALLOWED_ORIGINS` | [`allowed_origins`](Self::allowed_origins) | pages served from the allowed hosts |
/// | `--auth-issuer URL,...` | `SWITCHYARD_AUTH_ISSUER` | [`auth_issuer`](Self::auth_issuer) | none: no OAuth |
/// | `--auth-resource URL` | `SWITCHYARD_AUTH_RESOURCE` | [`auth_resource`](Self::auth_resource) | none (required with `--auth-issuer`) |
/// | `--auth-audience AUD` | `SWITCHYARD_AUTH_AUDIENCE` | [`auth_audience`](Self::auth_audience) | the resource URL |
/// | `--auth-scopes SCOPE,...` | `SWITCHYARD_AUTH_SCOPES` | [`auth_scopes`](Self::auth_scopes) | none |
/// | `--auth-allow-anonymous` | `SWITCHYARD_AUTH_ALLOW_ANONYMOUS` | [`auth_allow_anonymous`](Self::auth_allow_anonymous) | false |
/// | `--auth-introspection URL` | `SWITCHYARD_AUTH_INTROSPECTION` (secret: `SWITCHYARD_AUTH_CLIENT_SECRET`) | [`auth_introspection`](Self::auth_introspection) | none: opaque tokens refused |
/// | `--auth-client-id ID` | `SWITCHYARD_AUTH_CLIENT_ID` | [`auth_client_id`](Self::auth_client_id) | none (required with `--auth-introspection`) |
/// | `--auth-dpop allowed\|required` | `SWITCHYARD_AUTH_DPOP` (nonce secret: `SWITCHYARD_AUTH_DPOP_NONCE_SECRET`) | [`auth_dpop`](Self::auth_dpop) | none: DPoP-bound tokens refused |
/// | `--auth-refresh-interval SECONDS` | `SWITCHYARD_AUTH_REFRESH_INTERVAL` | [`auth_refresh_interval`](Self::auth_refresh_interval) | 10 |
/// | `--log-format pretty\|json` | `SWITCHYARD_LOG_FORMAT` | [`log_format`](Self::log_format) | `pretty` |
/// | `--log-level FILTER` | `SWITCHYARD_LOG_LEVEL`, then `RUST_LOG` | [`log_level`](Self::log_level) | `warn` |
/// | `--listen-max-per-connection N` | `SWITCHYARD_LISTEN_MAX_PER_CONNECTION` | [`listen_max_per_connection`](Self::listen_max_per_connection) | the server's, 1 000 unless it set one |
/// | `--listen-max-per-principal N` | `SWITCHYARD_LISTEN_MAX_PER_PRINCIPAL` | [`listen_max_per_principal`](Self::listen_max_per_principal) | the server's, 10 000 unless it set one |
/// | `--http-header-timeout SECONDS` | `SWITCHYARD_HTTP_HEADER_TIMEOUT` | [`http_header_timeout`](Self::http_header_timeout) | 15 |
/// | `--http-max-connections N` | `SWITCHYARD_HTTP_MAX_CONNECTIONS` | [`http_max_connections`](Self::http_max_connections) | 10 000 |
/// | `--http-max-connections-per-client N` | `SWITCHYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT` | [`http_max_connections_per_client`](Self::http_max_connections_per_client) | the server's, none unless it set one |
/// | `--http-sessions-per-client N` | `SWITCHYARD_HTTP_SESSIONS_PER_CLIENT` | [`http_sessions_per_client`](Self::http_sessions_per_client) | 64 |
/// | `--http-session-rate N` | `SWITCHYARD_HTTP_SESSION_RATE` | [`http_session_rate`](Self::http_session_rate) | 10 |
/// | `--http-session-burst N` | `SWITCHYARD_HTTP_SESSION_BURST` | [`http_session_burst`](Self::http_session_burst) | 64 |
/// | `--trusted-proxies CIDR,...` | `SWITCHYARD_TRUSTED_PROXIES` | [`trusted_proxies`](Self::trusted_proxies) | none: forwarding headers ignored |
/// | `--proxy-protocol` | `SWITCHYARD_PROXY_PROTOCOL` | [`proxy_protocol`](Self::proxy_protocol) | off |
/// | `--forwarded-header x-forwarded-for\|forwarded` | `SWITCHYARD_FORWARDED_HEADER` | [`forwarded_header`](Self::forwarded_header) | `x-forwarded-for` |
/// | `--sse-after SECONDS` | `SWITCHYARD_SSE_AFTER` | [`sse_after`](Self::sse_after) | 10 (0: never) |
/// | `--sse-keep-alive SECONDS` | `SWITCHYARD_SSE_KEEP_ALIVE` | [`sse_keep_alive`](Self::sse_keep_alive) | 15 |
///
/// A flag on the command line beats its own variable. Parsing fails (clap's
/// `ArgumentConflict`, exit code 2) when both modes are given, and a set variable counts as
/// given whatever its value: with `SWITCHYARD_HTTP` in the environment `--stdio` is refused,
/// and so is `--http` with `SWITCHYARD_STDIO=0`. A `--log-format` other than `pretty`/`json`
/// fails as `InvalidValue`, a `--log-level` that is not a valid filter as `ValueValidation`.
///
/// [`Default`] is stdio with the default logging; `ServeArgs::from(Mode::Http(addr))` is HTTP.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
// Without these, clap makes the doc comment above the `about` of a command that flattens this
// struct and has none of its own.
#[command(about = None, long_about = None)]
#[non_exhaustive]
pub struct ServeArgs {
    /// `--stdio`: serve on stdin/stdout. Only documents the choice: stdio is the mode whenever
    /// [`http`](Self::http) is `None`.
    #[arg(
        long,
        env = "SWITCHYARD_STDIO",
        value_parser = clap::builder::BoolishValueParser::new(),
        help = "Serve MCP on stdin/stdout, one JSON-RPC message per line (the default)"
    )]
    #[cfg_attr(feature = "http", arg(conflicts_with = "http"))]
    pub stdio: bool,
    /// `--http HOST:PORT`: serve Streamable HTTP on this address (a host name or an IP
    /// address, `PORT` 0 for a free port); `None` serves stdio. With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP",
        value_name = "HOST:PORT",
        help = "Serve Streamable HTTP at http://HOST:PORT/mcp (PORT 0 picks a free port)"
    )]
    pub http: Option<String>,
    /// `--allowed-hosts HOST,...`: the `Host` values HTTP requests may carry (exact names,
    /// `HOST:PORT`, `*.example.com` for subdomains, `*` for every host; see
    /// [`HostPattern`](crate::transport::http::HostPattern)); empty keeps the
    /// [`HostPolicy`](crate::transport::http::HostPolicy) of [`ServeOptions::http`]
    /// ([`automatic`](crate::transport::http::HostPolicy::automatic) by default: only the
    /// `localhost` names on a loopback address, every host elsewhere). Repeatable; commas
    /// separate entries. With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_ALLOWED_HOSTS",
        value_name = "HOSTS",
        value_delimiter = ',',
        help = "Accept HTTP requests for these hosts only: NAME, NAME:PORT, *.DOMAIN or * (comma-separated) [default: localhost names on a loopback address, any host elsewhere]"
    )]
    pub allowed_hosts: Vec<crate::transport::http::HostPattern>,
    /// `--allowed-origins ORIGIN,...`: web pages (`Origin` values, `SCHEME://HOST[:PORT]`,
    /// `https://*.example.com`, `null`, or `*`; see
    /// [`OriginPattern`](crate::transport::http::OriginPattern)) that may call the server,
    /// beside pages served from the allowed hosts. Repeatable; commas separate entries. With the
    /// `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_ALLOWED_ORIGINS",
        value_name = "ORIGINS",
        value_delimiter = ',',
        help = "Also accept browser requests from these origins: SCHEME://HOST[:PORT], SCHEME://*.DOMAIN, null or * (comma-separated) [default: pages of the allowed hosts only]"
    )]
    pub allowed_origins: Vec<crate::transport::http::OriginPattern>,
    /// `--auth-issuer URL,...`: require OAuth bearer tokens (JWT access tokens) from these
    /// authorization servers (issuer identifiers), checked against the keys they publish
    /// ([`JwksVerifier`](crate::auth::JwksVerifier)); needs
    /// [`auth_resource`](Self::auth_resource). The server then serves its protected resource
    /// metadata and answers requests without a valid token with 401 and a challenge naming it.
    /// Replaces the binary's own [`ServeOptions::auth`]. With the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_ISSUER",
        value_name = "URL",
        value_delimiter = ',',
        value_parser = parse_http_url,
        requires = "auth_resource",
        help = "Require OAuth access tokens issued by these authorization servers (issuer URLs, comma-separated); needs --auth-resource"
    )]
    pub auth_issuer: Vec<String>,
    /// `--auth-resource URL`: the public URL of this MCP endpoint as clients reach it (behind a
    /// proxy, the proxy's), its canonical resource URI (RFC 8707): the audience tokens must
    /// carry unless [`auth_audience`](Self::auth_audience) says otherwise, and where the
    /// metadata URL is derived from. With the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_RESOURCE",
        value_name = "URL",
        value_parser = parse_resource,
        requires = "auth_issuer",
        help = "The public URL of this endpoint (e.g. https://mcp.example.com/mcp): the resource tokens are for"
    )]
    pub auth_resource: Option<String>,
    /// `--auth-audience AUD`: the `aud` tokens must carry, when the authorization server
    /// writes something else than the resource URL. With the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_AUDIENCE",
        value_name = "AUD",
        requires = "auth_issuer",
        help = "The aud tokens must carry [default: the --auth-resource URL]"
    )]
    pub auth_audience: Option<String>,
    /// `--auth-scopes SCOPE,...`: scopes every request needs (403 `insufficient_scope`
    /// without them), asked for in the 401 challenge and listed in the metadata. With the
    /// `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_SCOPES",
        value_name = "SCOPES",
        value_delimiter = ',',
        requires = "auth_issuer",
        help = "Scopes every request's token must grant (comma-separated)"
    )]
    pub auth_scopes: Vec<String>,
    /// `--auth-allow-anonymous`: with `--auth-issuer`, serve requests without a token
    /// anonymously (roles and scopes then decide what they may use); invalid tokens are still
    /// refused. With the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_ALLOW_ANONYMOUS",
        value_parser = clap::builder::BoolishValueParser::new(),
        requires = "auth_issuer",
        help = "With --auth-issuer, serve requests without a token anonymously"
    )]
    pub auth_allow_anonymous: bool,
    /// `--auth-introspection URL`: with `--auth-issuer`, hand tokens that are not JWTs (opaque
    /// tokens) to this RFC 7662 introspection endpoint
    /// ([`IntrospectionVerifier`](crate::auth::IntrospectionVerifier)), as the client
    /// [`auth_client_id`](Self::auth_client_id) with the secret in the environment variable
    /// `SWITCHYARD_AUTH_CLIENT_SECRET` (never a flag: command lines are visible to every user of
    /// the machine). With the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_INTROSPECTION",
        value_name = "URL",
        value_parser = parse_http_url,
        requires_all = ["auth_issuer", "auth_client_id"],
        help = "Introspect opaque tokens at this RFC 7662 endpoint (secret in SWITCHYARD_AUTH_CLIENT_SECRET)"
    )]
    pub auth_introspection: Option<String>,
    /// `--auth-client-id ID`: this server's client id at the introspection endpoint. With the
    /// `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_CLIENT_ID",
        value_name = "ID",
        requires = "auth_introspection",
        help = "This server's client id at the introspection endpoint"
    )]
    pub auth_client_id: Option<String>,
    /// `--auth-dpop allowed|required`: with `--auth-issuer`, accept DPoP-bound access tokens
    /// with their proofs (RFC 9449), or only those ([`Dpop`](crate::auth::Dpop)). Server nonces
    /// (RFC 9449 §9) are required when `SWITCHYARD_AUTH_DPOP_NONCE_SECRET` holds a secret of at
    /// least 32 bytes; give every instance behind one URL the same one. With the `oauth`
    /// feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_DPOP",
        value_enum,
        value_name = "MODE",
        requires = "auth_issuer",
        help = "With --auth-issuer, accept DPoP-bound tokens with proofs (RFC 9449), or require them (nonces: SWITCHYARD_AUTH_DPOP_NONCE_SECRET)"
    )]
    pub auth_dpop: Option<DpopMode>,
    /// `--auth-refresh-interval SECONDS`: how often, at most, the issuers' key sets are fetched
    /// again when a token names a key they lack (default 10; 1 to 86 400).
    /// With the `oauth` feature.
    #[cfg(feature = "oauth")]
    #[arg(
        long,
        env = "SWITCHYARD_AUTH_REFRESH_INTERVAL",
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..=86_400),
        requires = "auth_issuer",
        help = "Fetch the issuers' keys again at most this often when a token names an unknown key [default: 10]"
    )]
    pub auth_refresh_interval: Option<u64>,
    /// `--log-format`: how log events are written to stderr (default [`LogFormat::Pretty`]).
    #[arg(
        long,
        env = "SWITCHYARD_LOG_FORMAT",
        value_enum,
        default_value_t,
        value_name = "FORMAT",
        help = "How log events are written to stderr"
    )]
    pub log_format: LogFormat,
    /// `--log-level`: a `tracing` filter in `RUST_LOG` syntax (`debug`,
    /// `switchyard=trace,warn`, ...) checked when parsed; `None` reads `RUST_LOG` (`warn` when
    /// it is unset or invalid).
    #[arg(
        long,
        env = "SWITCHYARD_LOG_LEVEL",
        value_name = "FILTER",
        value_parser = parse_filter,
        help = "What to log, in RUST_LOG syntax, e.g. debug or switchyard=trace,warn [default: RUST_LOG, else warn]"
    )]
    pub log_level: Option<String>,
    /// `--listen-max-per-connection N`: most `subscriptions/listen` subscriptions open at once
    /// on one transport connection; `None` keeps the server's
    /// [`ListenLimits::per_connection`](crate::subscriptions::ListenLimits::per_connection)
    /// (1 000 unless [`ServerBuilder::listen_limits`](crate::ServerBuilder::listen_limits) set
    /// another). At least 1.
    #[arg(
        long,
        env = "SWITCHYARD_LISTEN_MAX_PER_CONNECTION",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help = "Refuse a subscriptions/listen beyond N open on one connection [default: 1000, or the server's]"
    )]
    pub listen_max_per_connection: Option<u64>,
    /// `--listen-max-per-principal N`: most `subscriptions/listen` subscriptions open at once
    /// for one caller (authenticated principal, else peer IP address) over all its
    /// connections; `None` keeps the server's
    /// [`ListenLimits::per_principal`](crate::subscriptions::ListenLimits::per_principal)
    /// (10 000 unless [`ServerBuilder::listen_limits`](crate::ServerBuilder::listen_limits) set
    /// another). At least 1.
    #[arg(
        long,
        env = "SWITCHYARD_LISTEN_MAX_PER_PRINCIPAL",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help = "Refuse a subscriptions/listen beyond N open for one caller (principal, else IP address) [default: 10000, or the server's]"
    )]
    pub listen_max_per_principal: Option<u64>,
    /// `--http-header-timeout SECONDS`: how long an HTTP client may take to send a request
    /// head before its connection is closed; `None` keeps
    /// [`ConnectionLimits::header_read_timeout`](crate::transport::http::ConnectionLimits::header_read_timeout)
    /// of [`ServeOptions::http`] (15 s by default). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP_HEADER_TIMEOUT",
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..=86_400),
        help = "Close an HTTP connection whose request head is not complete after SECONDS (at most 86400) [default: 15]"
    )]
    pub http_header_timeout: Option<u64>,
    /// `--http-max-connections N`: most HTTP connections open at once; `None` keeps
    /// [`ConnectionLimits::max_connections`](crate::transport::http::ConnectionLimits::max_connections)
    /// of [`ServeOptions::http`] (10 000 by default). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP_MAX_CONNECTIONS",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help = "Accept at most N HTTP connections at once; more wait in the backlog [default: 10000]"
    )]
    pub http_max_connections: Option<u64>,
    /// `--http-max-connections-per-client N`: most HTTP connections one client address (IPv4
    /// address, IPv6 /64) holds open at once; the ones beyond are closed when accepted.
    /// `None` keeps
    /// [`ConnectionLimits::max_connections_per_client`](crate::transport::http::ConnectionLimits::max_connections_per_client)
    /// of [`ServeOptions::http`] (no cap per client by default: behind a proxy every
    /// connection has the proxy's address). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help = "Close HTTP connections beyond N open from one client address (IPv4, IPv6 /64); not behind a proxy [default: no cap]"
    )]
    pub http_max_connections_per_client: Option<u64>,
    /// `--http-sessions-per-client N`: most legacy HTTP sessions one client (principal, else
    /// peer address) holds at once; `None` keeps
    /// [`SessionLimits::per_client`](crate::transport::http::SessionLimits::per_client) of
    /// [`ServeOptions::http`] (64 by default). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP_SESSIONS_PER_CLIENT",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..),
        help = "Let one HTTP client (principal, else IP address) hold at most N legacy sessions [default: 64]"
    )]
    pub http_sessions_per_client: Option<u64>,
    /// `--http-session-rate N`: legacy HTTP sessions one client may create per second once
    /// its burst is spent (0: no rate limit); `None` keeps
    /// [`SessionLimits::creations_per_second`](crate::transport::http::SessionLimits::creations_per_second)
    /// of [`ServeOptions::http`] (10 by default). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP_SESSION_RATE",
        value_name = "N",
        help = "Let one HTTP client create N legacy sessions per second after its burst; 0: no limit [default: 10]"
    )]
    pub http_session_rate: Option<u32>,
    /// `--http-session-burst N`: legacy HTTP sessions one client may create at once; `None`
    /// keeps [`SessionLimits::creation_burst`](crate::transport::http::SessionLimits::creation_burst)
    /// of [`ServeOptions::http`] (64 by default). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_HTTP_SESSION_BURST",
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..),
        help = "Let one HTTP client create N legacy sessions at once before the rate applies [default: 64]"
    )]
    pub http_session_burst: Option<u32>,
    /// `--drain-grace SECONDS`: after SIGTERM, how long to keep serving with readiness off
    /// before closing ([`Drain::grace`](crate::server::Drain::grace), default 5 s); SIGINT
    /// (Ctrl-C) drains without grace, and a second signal shuts down at once. With the `http`
    /// feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_DRAIN_GRACE",
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(0..=3_600),
        help = "After SIGTERM, keep serving SECONDS with readiness off so the balancer moves away [default: 5]"
    )]
    pub drain_grace: Option<u64>,
    /// `--drain-timeout SECONDS`: once closing, how long requests in flight may take before
    /// they are cancelled ([`Drain::timeout`](crate::server::Drain::timeout), default 20 s).
    /// With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_DRAIN_TIMEOUT",
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(0..=86_400),
        help = "When stopping, give requests in flight SECONDS to finish before cancelling them [default: 20]"
    )]
    pub drain_timeout: Option<u64>,
    /// `--liveness-path PATH`: where the liveness probe is answered
    /// ([`Probes::liveness`](crate::transport::http::Probes::liveness), default `/healthz`; an
    /// empty value turns it off). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_LIVENESS_PATH",
        value_name = "PATH",
        value_parser = probe_path,
        help = "Answer the liveness probe at PATH; empty: none [default: /healthz]"
    )]
    pub liveness_path: Option<String>,
    /// `--readiness-path PATH`: where the readiness probe is answered
    /// ([`Probes::readiness`](crate::transport::http::Probes::readiness), default `/readyz`;
    /// an empty value turns it off). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_READINESS_PATH",
        value_name = "PATH",
        value_parser = probe_path,
        help = "Answer the readiness probe (503 while draining or a check fails) at PATH; empty: none [default: /readyz]"
    )]
    pub readiness_path: Option<String>,
    /// `--trusted-proxies CIDR,...`: reverse proxies (networks such as `10.0.0.0/8`, or single
    /// addresses) whose forwarding header names the client of their requests; empty keeps
    /// [`HttpConfig::trusted_proxies`] of [`ServeOptions::http`] (none by default). Repeatable;
    /// commas separate entries. With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_TRUSTED_PROXIES",
        value_name = "CIDR",
        value_delimiter = ',',
        value_parser = parse_network,
        help = "Take the client address from X-Forwarded-For (or --forwarded-header) of requests from these proxies: CIDR or IP (comma-separated); list only your own proxies [default: none, headers ignored]"
    )]
    pub trusted_proxies: Vec<crate::transport::http::IpNet>,
    /// `--proxy-protocol`: connections from the `--trusted-proxies` (layer-4 balancers such as
    /// HAProxy `send-proxy-v2` or AWS NLB) start with a PROXY protocol header, required from
    /// them ([`ConnectionLimits::proxy_protocol`](crate::transport::http::ConnectionLimits::proxy_protocol)).
    /// Refused (exit code 2 from `serve`) without `--trusted-proxies`. With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_PROXY_PROTOCOL",
        value_parser = clap::builder::BoolishValueParser::new(),
        help = "Connections from --trusted-proxies start with a PROXY protocol header (v1 or v2), required from them"
    )]
    pub proxy_protocol: bool,
    /// `--forwarded-header x-forwarded-for|forwarded`: the header the trusted proxies write;
    /// `None` keeps [`HttpConfig::forwarded_header`] of [`ServeOptions::http`]
    /// (`X-Forwarded-For` by default). With the `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_FORWARDED_HEADER",
        value_name = "HEADER",
        value_parser = parse_forwarded_header,
        help = "The header trusted proxies name the client in: x-forwarded-for or forwarded (RFC 7239) [default: x-forwarded-for]"
    )]
    pub forwarded_header: Option<crate::transport::http::ForwardedHeader>,
    /// `--sse-after SECONDS`: how long an HTTP request may run without sending anything
    /// before its reply turns into an SSE stream with keep-alive comments (0: never); `None`
    /// keeps [`HttpConfig::sse_after`] of [`ServeOptions::http`] (10 s by default). With the
    /// `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_SSE_AFTER",
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(0..=86_400),
        help = "Turn the reply of an HTTP request silent for SECONDS into an SSE stream with keep-alive comments, for proxies' idle timeouts; 0: never [default: 10]"
    )]
    pub sse_after: Option<u64>,
    /// `--sse-keep-alive SECONDS`: the interval of keep-alive comments on SSE streams; `None`
    /// keeps [`HttpConfig::keep_alive`] of [`ServeOptions::http`] (15 s by default). With the
    /// `http` feature.
    #[cfg(feature = "http")]
    #[arg(
        long,
        env = "SWITCHYARD_SSE_KEEP_ALIVE",
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..=86_400),
        help = "Send a keep-alive comment on idle SSE streams every SECONDS; keep it under the proxies' idle timeouts [default: 15]"
    )]
    pub sse_keep_alive: Option<u64>,
}

/// A probe path: empty (none) or starting with `/`.
#[cfg(feature = "http")]
fn probe_path(value: &str) -> Result<String, String> {
    if value.contains(['?', '#']) {
        Err(format!("{value:?} has a query or fragment, which a request path never matches; give the path alone"))
    } else if value.is_empty() || value.starts_with('/') {
        Ok(value.to_owned())
    } else {
        Err(format!("{value:?} is not a path: start it with '/' (e.g. /readyz), or leave it empty for none"))
    }
}

/// Whether a protected server takes DPoP-bound tokens (`--auth-dpop`, RFC 9449).
#[cfg(feature = "oauth")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[non_exhaustive]
pub enum DpopMode {
    /// [`Dpop::allowed`](crate::auth::Dpop::allowed): bound tokens with proofs, plain bearer
    /// tokens as before.
    #[value(help = "DPoP-bound tokens with proofs, and plain bearer tokens")]
    Allowed,
    /// [`Dpop::required`](crate::auth::Dpop::required): only bound tokens with proofs.
    #[value(help = "only DPoP-bound tokens with proofs")]
    Required,
}

/// How [`ServeArgs::init_tracing`] writes log events (`--log-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
#[non_exhaustive]
pub enum LogFormat {
    /// One line per event for people: time, level, target, message and fields, coloured when
    /// stderr is a terminal (`tracing_subscriber`'s default format).
    #[default]
    #[value(help = "one line per event, for people (coloured on a terminal)")]
    Pretty,
    /// One JSON object per line for log collectors (`tracing_subscriber`'s JSON format:
    /// `timestamp`, `level`, `fields`, `target`, `span`, `spans`).
    #[value(help = "one JSON object per line, for log collectors")]
    Json,
}

/// How to serve: [`ServeArgs::mode`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// stdin/stdout (`--stdio`, the default).
    Stdio,
    /// Streamable HTTP on `HOST:PORT`, the address as given (`--http HOST:PORT`). With the
    /// `http` feature.
    #[cfg(feature = "http")]
    Http(String),
}

impl From<Mode> for ServeArgs {
    /// Serving in `mode`, logging as the defaults say.
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Stdio => ServeArgs { stdio: true, ..ServeArgs::default() },
            #[cfg(feature = "http")]
            Mode::Http(addr) => ServeArgs { http: Some(addr), ..ServeArgs::default() },
        }
    }
}

impl ServeArgs {
    /// [`Mode::Http`] when [`http`](Self::http) holds an address, [`Mode::Stdio`] otherwise.
    pub fn mode(&self) -> Mode {
        #[cfg(feature = "http")]
        if let Some(addr) = &self.http {
            return Mode::Http(addr.clone());
        }
        Mode::Stdio
    }

    /// `options` with the HTTP host policy, the OAuth settings, the connection and session
    /// limits, the trusted proxies and the SSE timing these flags set; `Err` says why the OAuth settings cannot be used (a server must
    /// not start unprotected when protection was asked for).
    #[cfg(feature = "http")]
    fn http_options(&self, mut options: ServeOptions) -> Result<ServeOptions, String> {
        if !self.allowed_hosts.is_empty() {
            let origins = options.http.hosts.listed_origins().to_vec();
            options.http.hosts =
                crate::transport::http::HostPolicy::hosts(self.allowed_hosts.iter().cloned()).origins(origins);
        }
        if !self.allowed_origins.is_empty() {
            options.http.hosts = options.http.hosts.origins(self.allowed_origins.iter().cloned());
        }
        #[cfg(feature = "oauth")]
        if let Some(resource) = &self.auth_resource
            && !self.auth_issuer.is_empty()
        {
            let (resource, auth) = self.oauth(resource).map_err(|e| format!("the --auth-* settings: {e}"))?;
            options.http.protected_resource = Some(resource);
            options.auth = Some(auth);
        }
        let limits = &mut options.http.connections;
        if let Some(seconds) = self.http_header_timeout {
            limits.header_read_timeout = std::time::Duration::from_secs(seconds);
        }
        if let Some(n) = self.http_max_connections {
            limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = self.http_max_connections_per_client {
            limits.max_connections_per_client = Some(usize::try_from(n).unwrap_or(usize::MAX));
        }
        let sessions = &mut options.http.session_limits;
        if let Some(n) = self.http_sessions_per_client {
            sessions.per_client = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = self.http_session_rate {
            sessions.creations_per_second = n;
        }
        if let Some(n) = self.http_session_burst {
            sessions.creation_burst = n;
        }
        if let Some(path) = &self.liveness_path {
            options.http.probes.liveness = Some(path.clone()).filter(|p| !p.is_empty());
        }
        if let Some(path) = &self.readiness_path {
            options.http.probes.readiness = Some(path.clone()).filter(|p| !p.is_empty());
        }
        let probes = &options.http.probes;
        if probes.liveness.is_some() && probes.liveness == probes.readiness {
            return Err(format!(
                "--liveness-path and --readiness-path are both {:?}: a balancer would read liveness (always 200) as \
                 readiness; give them different paths",
                probes.liveness.as_deref().unwrap_or_default()
            ));
        }
        for path in [&probes.liveness, &probes.readiness].into_iter().flatten() {
            if *path == options.http.path {
                return Err(format!("the probe path {path:?} is the MCP endpoint's; give the probe another path"));
            }
        }
        if !self.trusted_proxies.is_empty() {
            options.http.trusted_proxies.clone_from(&self.trusted_proxies);
        }
        if self.proxy_protocol {
            if options.http.trusted_proxies.is_empty() {
                return Err("--proxy-protocol reads the header only from --trusted-proxies, and none are given; \
                            name the balancers that send it (e.g. --trusted-proxies 10.0.0.5)"
                    .to_owned());
            }
            options.http.connections.proxy_protocol.clone_from(&options.http.trusted_proxies);
        }
        if let Some(header) = self.forwarded_header {
            options.http.forwarded_header = header;
        }
        if let Some(seconds) = self.sse_after {
            options.http.sse_after = (seconds > 0).then(|| std::time::Duration::from_secs(seconds));
        }
        if let Some(seconds) = self.sse_keep_alive {
            options.http.keep_alive = std::time::Duration::from_secs(seconds);
        }
        Ok(options)
    }

    /// The protected resource and the bearer layer `--auth-*` describe.
    #[cfg(feature = "oauth")]
    fn oauth(&self, resource: &str) -> Result<(crate::auth::ProtectedResource, BearerAuth), crate::auth::AuthError> {
        let mut metadata =
            crate::auth::ProtectedResource::new(resource)?.required_scopes(self.auth_scopes.iter().cloned());
        for issuer in &self.auth_issuer {
            metadata = metadata.authorization_server(issuer)?;
        }
        let audience = self.auth_audience.clone().unwrap_or_else(|| metadata.resource().to_owned());
        let audience = audience.as_str();
        let mut verifier = crate::auth::JwksVerifier::new(self.auth_issuer.iter().cloned(), audience)?;
        if let Some(seconds) = self.auth_refresh_interval {
            verifier = verifier.refresh_interval(std::time::Duration::from_secs(seconds));
        }
        if let Some(mode) = self.auth_dpop {
            let mut dpop = match mode {
                DpopMode::Allowed => crate::auth::Dpop::allowed(),
                DpopMode::Required => crate::auth::Dpop::required(),
            };
            if let Some(secret) = std::env::var_os("SWITCHYARD_AUTH_DPOP_NONCE_SECRET").filter(|s| !s.is_empty()) {
                dpop = dpop.nonces(secret.as_encoded_bytes())?;
            }
            metadata = metadata.dpop(dpop);
        }
        if let (Some(endpoint), Some(client_id)) = (&self.auth_introspection, &self.auth_client_id) {
            let secret = std::env::var("SWITCHYARD_AUTH_CLIENT_SECRET").unwrap_or_default();
            let introspection = crate::auth::IntrospectionVerifier::new(endpoint, client_id, &secret, audience)?;
            verifier = verifier.introspection(introspection);
        }
        let mut auth = BearerAuth::new(verifier).protected_resource(metadata.clone());
        if self.auth_allow_anonymous {
            auth = auth.allow_anonymous();
        }
        Ok((metadata, auth))
    }

    /// Sets the listen limits of `server` that `--listen-max-*` name; the others stay.
    /// How SIGTERM and SIGINT stop the server in `mode`: drained as `--drain-grace` and
    /// `--drain-timeout` say over HTTP; `None` on stdio (shut down at once).
    fn drain(&self, mode: &Mode) -> Option<crate::server::Drain> {
        match mode {
            Mode::Stdio => None,
            #[cfg(feature = "http")]
            Mode::Http(_) => {
                let mut drain = crate::server::Drain::default();
                if let Some(s) = self.drain_grace {
                    drain = drain.grace(std::time::Duration::from_secs(s));
                }
                if let Some(s) = self.drain_timeout {
                    drain = drain.timeout(std::time::Duration::from_secs(s));
                }
                Some(drain)
            }
        }
    }

    fn apply_listen_limits(&self, server: &Server) {
        let mut limits = server.listen_limits();
        if let Some(n) = self.listen_max_per_connection {
            limits.per_connection = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = self.listen_max_per_principal {
            limits.per_principal = usize::try_from(n).unwrap_or(usize::MAX);
        }
        server.set_listen_limits(limits);
    }

    /// Installs the global `tracing` subscriber these flags describe: events to stderr (never
    /// stdout, which belongs to the stdio transport) in [`log_format`](Self::log_format),
    /// filtered by [`log_level`](Self::log_level), else `RUST_LOG`, else `warn`.
    ///
    /// With the `otel` feature and a collector named in the environment
    /// ([`otel::export_requested`](crate::otel::export_requested): `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// and the other `OTEL_*` variables [`otel::build`](crate::otel::build) reads), the request
    /// spans and the `mcp.server.operation.duration` metric are exported too (the filter then
    /// always enables target `switchyard::request` at `INFO`), until [`serve_with`] returns. The
    /// exported `service.name` is the server's when [`serve_with`] installs the subscriber,
    /// the executable's when a binary calls this first; `OTEL_SERVICE_NAME` beats both.
    /// Invalid `OTEL_EXPORTER_OTLP_*` values are reported on stderr, and the server logs
    /// without exporting.
    ///
    /// Does nothing when a global subscriber is installed already, so a binary may call it
    /// first, to see the logs of its own setup, and [`serve_with`] again later; a binary that
    /// installs its own subscriber (e.g. with [`otel::init_from_env`](crate::otel::init_from_env))
    /// keeps it.
    pub fn init_tracing(&self) {
        self.install_subscriber(None);
    }

    /// [`init_tracing`](Self::init_tracing), naming the exported telemetry after `server`.
    fn install_subscriber(&self, #[cfg_attr(not(feature = "otel"), allow(unused))] server: Option<&Server>) {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        use tracing_subscriber::{EnvFilter, fmt};
        if tracing::dispatcher::has_been_set() {
            return;
        }
        let fallback = || EnvFilter::new("warn");
        #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
        let mut filter = match &self.log_level {
            // Checked when parsed; only a value set in code can fail here.
            Some(level) => EnvFilter::try_new(level).unwrap_or_else(|_| fallback()),
            None => EnvFilter::try_from_default_env().unwrap_or_else(|_| fallback()),
        };
        #[cfg(feature = "otel")]
        let guard = crate::otel::export_requested().then(|| telemetry::exporters(server)).flatten();
        #[cfg(feature = "otel")]
        if guard.is_some() {
            filter = filter.add_directive(telemetry::request_spans());
        }
        #[cfg(feature = "otel")]
        let export = guard.as_ref().map(|g| g.layer());
        #[cfg(not(feature = "otel"))]
        let export: Option<tracing_subscriber::layer::Identity> = None;
        let (pretty, json) = match self.log_format {
            LogFormat::Pretty => {
                let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
                (Some(fmt::layer().with_writer(std::io::stderr).with_ansi(ansi)), None)
            }
            LogFormat::Json => (None, Some(fmt::layer().json().with_writer(std::io::stderr).with_ansi(false))),
        };
        let installed =
            tracing_subscriber::registry().with(export).with(filter).with(pretty).with(json).try_init().is_ok();
        #[cfg(feature = "otel")]
        if installed && let Some(guard) = guard {
            telemetry::installed(guard);
        }
        #[cfg(not(feature = "otel"))]
        let _ = installed;
    }
}

/// A `--trusted-proxies` entry: a network in CIDR notation or a single address.
#[cfg(feature = "http")]
fn parse_network(s: &str) -> Result<crate::transport::http::IpNet, String> {
    crate::transport::http::parse_network(s)
}

/// A `--forwarded-header` value: `x-forwarded-for` or `forwarded`, in any case.
#[cfg(feature = "http")]
fn parse_forwarded_header(s: &str) -> Result<crate::transport::http::ForwardedHeader, String> {
    use crate::transport::http::ForwardedHeader;
    match s.trim().to_ascii_lowercase().as_str() {
        "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
        "forwarded" => Ok(ForwardedHeader::Forwarded),
        _ => Err("x-forwarded-for or forwarded (RFC 7239)".to_owned()),
    }
}

/// Accepts an absolute `http(s)` URL (an issuer identifier).
#[cfg(feature = "oauth")]
fn parse_http_url(s: &str) -> Result<String, String> {
    crate::auth::ProtectedResource::new(s)
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string().replace("the resource", "the URL"))
}

/// Accepts a protected resource URL.
#[cfg(feature = "oauth")]
fn parse_resource(s: &str) -> Result<String, String> {
    crate::auth::ProtectedResource::new(s).map(|_| s.to_owned()).map_err(|e| e.to_string())
}

/// Accepts `s` when `tracing_subscriber` can filter by it.
fn parse_filter(s: &str) -> Result<String, String> {
    match tracing_subscriber::EnvFilter::try_new(s) {
        Ok(_) => Ok(s.to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// Transport options of [`serve_with`].
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// HTTP: authenticate bearer tokens with this layer (see [`auth`](crate::auth)).
    #[cfg(feature = "http")]
    pub auth: Option<BearerAuth>,
    /// stdio: the principal the peer acts as (stdio has no authentication of its own).
    pub principal: Option<Principal>,
    /// HTTP: the transport configuration (default [`HttpConfig::default`]: path `/mcp`,
    /// localhost only, keep-alive comments every 15 s, ...).
    #[cfg(feature = "http")]
    pub http: HttpConfig,
}

/// Parses the process arguments as [`ServeArgs`] alone and serves; the whole `main` of a server
/// without flags of its own.
///
/// The command is named and versioned after `server` (its `serverInfo`, by convention
/// `Server::builder(NAME, env!("CARGO_PKG_VERSION"))`), so `--version` prints `NAME VERSION`;
/// usage lines name the binary as it was invoked.
///
/// Returns the exit code: 0 after `--help` (printed to stdout), `--version` or a graceful
/// shutdown; 2 for a command line it cannot parse (the reason and usage on stderr); otherwise
/// as [`serve_with`].
pub async fn run(server: Server) -> ExitCode {
    let info = server.server_info();
    let name = info["name"].as_str().unwrap_or("server").to_owned();
    let version = info["version"].as_str().unwrap_or_default().to_owned();
    match parse_alone(name, version, std::env::args_os()) {
        Ok(args) => serve(server, &args).await,
        Err(e) => {
            // Help and version go to stdout, mistakes to stderr; clap chooses.
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
        }
    }
}

/// [`ServeArgs`] as the only flags of a command named `name`, at `version`.
fn parse_alone(
    name: String,
    version: String,
    args: impl IntoIterator<Item = impl Into<std::ffi::OsString> + Clone>,
) -> Result<ServeArgs, clap::Error> {
    use clap::{Args, FromArgMatches};
    let command = ServeArgs::augment_args(clap::Command::new(name).version(version));
    ServeArgs::from_arg_matches(&command.try_get_matches_from(args)?)
}

/// Serves `server` as `args` say until shutdown; [`serve_with`] with the default
/// [`ServeOptions`].
pub async fn serve(server: Server, args: &ServeArgs) -> ExitCode {
    serve_with(server, args, ServeOptions::default()).await
}

/// Serves `server` in [`args.mode()`](ServeArgs::mode) with transport options (authentication,
/// the HTTP configuration) until shutdown, logging as `args` say (see
/// [`ServeArgs::init_tracing`]).
///
/// Returns the process exit code: 0 after a graceful shutdown, 1 when the address cannot be
/// bound or I/O fails, 2 before listening when the `--auth-*` settings cannot be used (a DPoP
/// nonce secret under 32 bytes; the reason is printed to stderr). On stdio the process ends here, with
/// that code: see the comment inside.
pub async fn serve_with(server: Server, args: &ServeArgs, options: ServeOptions) -> ExitCode {
    args.install_subscriber(Some(&server));
    #[cfg(feature = "otel")]
    telemetry::observe(&server);
    let mode = args.mode();
    spawn_signal_handler(server.clone(), args.drain(&mode));
    args.apply_listen_limits(&server);
    let result = match &mode {
        Mode::Stdio => serve_stdio(server.clone(), options).await,
        #[cfg(feature = "http")]
        Mode::Http(addr) => match args.http_options(options) {
            Ok(options) => serve_http(server.clone(), addr, options).await,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };
    // Whatever still runs (tasks) is cancelled now; work handed back before exiting.
    server.shutdown();
    if !server.holds_released(HOLDS_WAIT).await {
        tracing::warn!("exiting with work not handed back within {HOLDS_WAIT:?} of shutdown");
    }
    #[cfg(feature = "otel")]
    telemetry::stop().await;
    if let Err(e) = &result {
        eprintln!("error: {e}");
    }
    if mode == Mode::Stdio {
        // tokio reads stdin on a blocking thread that a runtime cannot interrupt: after a
        // shutdown with stdin still open, returning from main would wait for input forever.
        // Everything is written, flushed and exported at this point, so end the process here.
        std::process::exit(if result.is_ok() { 0 } else { 1 });
    }
    if result.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// How long the process waits after shutdown for work to be handed back
/// ([`Server::holds_released`]): a few store writes. With the default drain (5 s + 20 s) and the
/// 1 s connections get after shutdown, the process is gone within 29 s of SIGTERM, under
/// Kubernetes' 30 s before SIGKILL.
const HOLDS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

async fn serve_stdio(server: Server, options: ServeOptions) -> std::io::Result<()> {
    let config = StdioConfig::default().principal(options.principal);
    let (reader, writer) = stdio::process_streams();
    serve_stdio_streams(server, reader, writer, config).await
}

/// [`stdio::serve_io`], with a panic in the connection (an incoming message filter runs on its
/// task) turned into an error, so that it ends the process as an I/O error does: through the
/// shutdown, the hand-back of held work and the telemetry flush of `serve_with`, not by
/// unwinding past them.
async fn serve_stdio_streams<R, W>(server: Server, reader: R, writer: W, config: StdioConfig) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(stdio::serve_io(server, reader, writer, config)).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(panic) => Err(std::io::Error::other(format!(
            "the stdio transport stopped: it panicked: {}",
            crate::pipeline::serve::panic_message(panic.as_ref())
        ))),
    }
}

#[cfg(feature = "http")]
async fn serve_http(server: Server, addr: &str, options: ServeOptions) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot read the bound address: {e}")))?;
    eprintln!("listening on http://{bound}{}", options.http.path);
    crate::transport::http::serve_endpoint(listener, server, options.http, options.auth).await
}

/// Installs the handlers of SIGTERM and SIGINT (Ctrl-C): the first signal drains the server
/// (`drain`: SIGTERM with its grace period, SIGINT without), a second one shuts it down at once.
/// Without `drain` (stdio) the first signal shuts down.
fn spawn_signal_handler(server: Server, drain: Option<crate::server::Drain>) {
    // Register the handlers before anything is served: registering inside the spawned task raced
    // with the listener, and a SIGTERM that arrived first killed the process with the default
    // action instead of shutting it down.
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
            tracing::warn!("cannot install the SIGTERM/SIGINT handlers; signals end the process abruptly");
            return;
        };
        tokio::spawn(async move {
            // An orchestrator's SIGTERM gets the grace period (its balancer needs it); a person's
            // Ctrl-C does not wait for a balancer.
            let terminate = tokio::select! {
                _ = term.recv() => true,
                _ = int.recv() => false,
            };
            let Some(drain) = drain else { return server.shutdown() };
            server.drain(if terminate { drain } else { drain.grace(std::time::Duration::ZERO) });
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = server.shutdown_token().cancelled() => return,
            }
            tracing::info!("second signal: shutting down now");
            server.shutdown();
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        let Some(drain) = drain else { return server.shutdown() };
        server.drain(drain.grace(std::time::Duration::ZERO));
        let _ = tokio::signal::ctrl_c().await;
        server.shutdown();
    });
}

// The cases name `--http` throughout; the default features have it.
#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use clap::Parser;
    use clap::error::ErrorKind;

    /// Panics on a message whose method is `boom`.
    struct Boom;

    impl crate::pipeline::MessageFilter for Boom {
        fn incoming(&self, message: &serde_json::Value) -> bool {
            assert_ne!(message["method"], "boom", "the filter refuses to go on");
            true
        }
    }

    #[tokio::test]
    async fn a_panic_in_the_stdio_connection_is_an_error_not_an_unwind() {
        use tokio::io::AsyncWriteExt;
        let server = Server::builder("t", "1").groups(["cli-panic"]).message_filter(Boom).build().expect("builds");
        let (mut client_out, server_in) = tokio::io::duplex(4096);
        let (server_out, _client_in) = tokio::io::duplex(4096);
        client_out.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"boom\"}\n").await.expect("write");
        let served = serve_stdio_streams(server, server_in, server_out, StdioConfig::default()).await;
        let error = served.expect_err("the panic ends serving with an error");
        assert!(error.to_string().contains("panicked: assertion"), "{error}");
        assert!(error.to_string().contains("the filter refuses to go on"), "{error}");
    }

    /// A binary's own parser: the shared flags flattened next to one of its own.
    #[derive(Debug, Parser)]
    #[command(name = "t", version = "1.2.3")]
    struct TestCli {
        #[command(flatten)]
        serve: ServeArgs,
        /// A flag of the binary's own.
        #[arg(long)]
        tasks: bool,
    }

    fn parse(args: &[&str]) -> Result<TestCli, clap::Error> {
        TestCli::try_parse_from(std::iter::once("t").chain(args.iter().copied()))
    }

    fn kind(args: &[&str]) -> ErrorKind {
        parse(args).expect_err("a parse error").kind()
    }

    // These assume the SWITCHYARD_* variables unset (`environment_variables_*` sets them in
    // child processes of its own).

    #[test]
    fn stdio_is_the_default_and_logging_defaults_to_pretty_and_rust_log() {
        let cli = parse(&[]).expect("valid");
        assert_eq!(cli.serve, ServeArgs::default());
        assert_eq!(cli.serve.mode(), Mode::Stdio);
        assert_eq!(cli.serve.log_format, LogFormat::Pretty);
        assert_eq!(cli.serve.log_level, None);
        assert!(!cli.tasks);
        assert_eq!(parse(&["--stdio"]).expect("valid").serve.mode(), Mode::Stdio);
    }

    #[test]
    fn http_takes_an_address_and_sits_next_to_the_binary_s_own_flags() {
        let cli = parse(&["--tasks", "--http", "127.0.0.1:0"]).expect("valid");
        assert_eq!(cli.serve.mode(), Mode::Http("127.0.0.1:0".into()));
        assert!(cli.tasks);
        assert_eq!(parse(&["--http=[::1]:3000"]).expect("valid").serve.http.as_deref(), Some("[::1]:3000"));
        assert_eq!(kind(&["--http"]), ErrorKind::InvalidValue);
    }

    #[test]
    fn both_modes_at_once_are_refused() {
        assert_eq!(kind(&["--stdio", "--http", "127.0.0.1:0"]), ErrorKind::ArgumentConflict);
        assert_eq!(kind(&["--http", "127.0.0.1:0", "--stdio"]), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn log_format_and_level() {
        let cli = parse(&["--log-format", "json", "--log-level", "switchyard=trace,warn"]).expect("valid");
        assert_eq!(cli.serve.log_format, LogFormat::Json);
        assert_eq!(cli.serve.log_level.as_deref(), Some("switchyard=trace,warn"));
        assert_eq!(parse(&["--log-format", "pretty"]).expect("valid").serve.log_format, LogFormat::Pretty);
        assert_eq!(kind(&["--log-format", "xml"]), ErrorKind::InvalidValue);
        assert_eq!(kind(&["--log-level", "switchyard=loud"]), ErrorKind::ValueValidation);
    }

    #[test]
    fn unknown_flags_are_refused() {
        assert_eq!(kind(&["--htp", "127.0.0.1:0"]), ErrorKind::UnknownArgument);
        assert_eq!(kind(&["stray"]), ErrorKind::UnknownArgument);
    }

    #[test]
    fn help_lists_every_flag_with_its_variable_and_version_names_the_binary() {
        let e = parse(&["--help"]).expect_err("help is an early exit");
        assert_eq!((e.kind(), e.exit_code()), (ErrorKind::DisplayHelp, 0));
        let help = e.render().to_string();
        assert!(help.starts_with("A binary's own parser"), "the binary's about, not ServeArgs' docs: {help}");
        for needle in [
            "--stdio",
            "SWITCHYARD_STDIO",
            "--http <HOST:PORT>",
            "SWITCHYARD_HTTP",
            "--allowed-hosts <HOSTS>",
            "SWITCHYARD_ALLOWED_HOSTS",
            "--allowed-origins <ORIGINS>",
            "SWITCHYARD_ALLOWED_ORIGINS",
            "--auth-issuer <URL>",
            "SWITCHYARD_AUTH_ISSUER",
            "--auth-resource <URL>",
            "SWITCHYARD_AUTH_RESOURCE",
            "--auth-audience <AUD>",
            "--auth-scopes <SCOPES>",
            "--auth-allow-anonymous",
            "--auth-introspection <URL>",
            "--auth-client-id <ID>",
            "--log-format <FORMAT>",
            "SWITCHYARD_LOG_FORMAT",
            "pretty",
            "json",
            "--log-level <FILTER>",
            "SWITCHYARD_LOG_LEVEL",
            "--listen-max-per-connection <N>",
            "SWITCHYARD_LISTEN_MAX_PER_CONNECTION",
            "--listen-max-per-principal <N>",
            "SWITCHYARD_LISTEN_MAX_PER_PRINCIPAL",
            "--http-header-timeout <SECONDS>",
            "SWITCHYARD_HTTP_HEADER_TIMEOUT",
            "--http-max-connections <N>",
            "SWITCHYARD_HTTP_MAX_CONNECTIONS",
            "--http-max-connections-per-client <N>",
            "SWITCHYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT",
            "--http-sessions-per-client <N>",
            "SWITCHYARD_HTTP_SESSIONS_PER_CLIENT",
            "--http-session-rate <N>",
            "SWITCHYARD_HTTP_SESSION_RATE",
            "--http-session-burst <N>",
            "SWITCHYARD_HTTP_SESSION_BURST",
            "--tasks",
            "A flag of the binary's own",
            "--version",
        ] {
            assert!(help.contains(needle), "{needle:?} in {help}");
        }
        let e = parse(&["--version"]).expect_err("version is an early exit");
        assert_eq!((e.kind(), e.exit_code()), (ErrorKind::DisplayVersion, 0));
        assert_eq!(e.render().to_string().trim(), "t 1.2.3");
        assert_eq!(parse(&["--stdio", "--bogus"]).expect_err("unknown").exit_code(), 2);
    }

    #[test]
    fn run_names_the_command_after_the_server() {
        let e = parse_alone("srv".into(), "4.5.6".into(), ["./bin/srv-bin", "--version"]).expect_err("version");
        assert_eq!((e.kind(), e.render().to_string().trim()), (ErrorKind::DisplayVersion, "srv 4.5.6"));
        let e = parse_alone("srv".into(), "4.5.6".into(), ["./bin/srv-bin", "--help"]).expect_err("help");
        let help = e.render().to_string();
        assert!(help.starts_with("Usage: srv-bin [OPTIONS]") && help.contains("--http <HOST:PORT>"), "{help}");
        let args = parse_alone("srv".into(), "1".into(), ["srv", "--http", "127.0.0.1:0"]).expect("valid");
        assert_eq!(args, ServeArgs::from(Mode::Http("127.0.0.1:0".into())));
        assert_eq!(parse_alone("srv".into(), "1".into(), ["srv", "--tasks"]).expect_err("unknown").exit_code(), 2);
    }

    #[test]
    fn probe_paths_move_or_turn_off_and_unusable_ones_are_refused() {
        let options = |args: &[&str]| parse(args).expect("valid").serve.http_options(ServeOptions::default());
        let moved = options(&["--readiness-path", "/ready", "--liveness-path", ""]).expect("usable settings");
        assert_eq!((moved.http.probes.liveness, moved.http.probes.readiness.as_deref()), (None, Some("/ready")));
        let same = options(&["--liveness-path", "/readyz"]).expect_err("liveness read as readiness");
        assert!(same.contains("different paths"), "{same}");
        let endpoint = options(&["--readiness-path", "/mcp"]).expect_err("the endpoint's path");
        assert!(endpoint.contains("MCP endpoint"), "{endpoint}");
        assert!(parse(&["--readiness-path", "/readyz?probe=1"]).is_err(), "a query never matches");
        assert!(parse(&["--readiness-path", "readyz"]).is_err(), "not a path");
    }

    #[test]
    fn host_flags_set_the_host_policy_and_bad_entries_are_refused_when_parsed() {
        use crate::transport::http::{HostPattern, HostPolicy, OriginPattern};
        let cli = parse(&[
            "--allowed-hosts",
            "mcp.example.com,*.internal:8080",
            "--allowed-hosts",
            "[::1]",
            "--allowed-origins",
            "https://app.example.com",
        ])
        .expect("valid");
        let hosts: Vec<HostPattern> =
            ["mcp.example.com", "*.internal:8080", "[::1]"].iter().map(|h| h.parse().expect("a host")).collect();
        let origin: OriginPattern = "https://app.example.com".parse().expect("an origin");
        assert_eq!(cli.serve.allowed_hosts, hosts);
        let options = cli.serve.http_options(ServeOptions::default()).expect("usable settings");
        assert_eq!(options.http.hosts, HostPolicy::hosts(hosts.clone()).origins([origin.clone()]));
        // Origins alone keep the configured hosts (automatic unless the binary chose others).
        let only_origins = parse(&["--allowed-origins", "https://app.example.com"]).expect("valid");
        let mut configured = ServeOptions::default();
        configured.http.hosts = HostPolicy::localhost();
        assert_eq!(
            only_origins.serve.http_options(configured).expect("usable settings").http.hosts,
            HostPolicy::localhost().origins([origin.clone()])
        );
        // Hosts from the flag keep origins the binary listed.
        let mut configured = ServeOptions::default();
        configured.http.hosts = HostPolicy::automatic().origins([origin.clone()]);
        let only_hosts = parse(&["--allowed-hosts", "mcp.example.com"]).expect("valid");
        assert_eq!(
            only_hosts.serve.http_options(configured).expect("usable settings").http.hosts,
            HostPolicy::hosts([hosts[0].clone()]).origins([origin])
        );
        assert_eq!(
            parse(&[]).expect("valid").serve.http_options(ServeOptions::default()).expect("usable settings").http.hosts,
            HostPolicy::automatic()
        );
        for bad in [["--allowed-hosts", "https://mcp.example.com"], ["--allowed-origins", "app.example.com"]] {
            let e = parse(&bad).expect_err("a bad entry");
            assert_eq!(e.kind(), ErrorKind::ValueValidation, "{e}");
            assert!(e.to_string().contains("write"), "the error says what to write: {e}");
        }
    }

    #[test]
    fn auth_flags_guard_the_endpoint_with_an_issuer_s_keys() {
        let cli = parse(&[
            "--auth-issuer",
            "https://auth.example.com",
            "--auth-resource",
            "https://mcp.example.com/mcp",
            "--auth-scopes",
            "mcp,files:read",
        ])
        .expect("valid");
        let options = cli.serve.http_options(ServeOptions::default()).expect("usable settings");
        let resource = options.http.protected_resource.expect("a protected resource");
        assert_eq!(resource.resource(), "https://mcp.example.com/mcp");
        assert_eq!(resource.authorization_servers(), ["https://auth.example.com"]);
        assert_eq!(resource.required().iter().map(String::as_str).collect::<Vec<_>>(), ["files:read", "mcp"]);
        let auth = options.auth.expect("a bearer layer");
        assert_eq!(auth.resource(), Some(&resource));
        // Each needs the other; bad URLs are refused when parsed.
        assert_eq!(kind(&["--auth-issuer", "https://auth.example.com"]), ErrorKind::MissingRequiredArgument);
        assert_eq!(kind(&["--auth-resource", "https://mcp.example.com/mcp"]), ErrorKind::MissingRequiredArgument);
        let bad = ["--auth-issuer", "auth.example.com", "--auth-resource", "https://mcp.example.com/mcp"];
        assert_eq!(kind(&bad), ErrorKind::ValueValidation);
        let bad = ["--auth-issuer", "https://a.example", "--auth-resource", "https://mcp.example.com/mcp#x"];
        assert_eq!(kind(&bad), ErrorKind::ValueValidation);
        assert!(
            parse(&[])
                .expect("valid")
                .serve
                .http_options(ServeOptions::default())
                .expect("usable settings")
                .auth
                .is_none()
        );
        // Introspection needs the issuer flags and a client id.
        let with = [
            "--auth-issuer",
            "https://auth.example.com",
            "--auth-resource",
            "https://mcp.example.com/mcp",
            "--auth-introspection",
            "https://auth.example.com/introspect",
            "--auth-client-id",
            "mcp-server",
        ];
        let cli = parse(&with).expect("valid");
        assert_eq!(cli.serve.auth_introspection.as_deref(), Some("https://auth.example.com/introspect"));
        assert!(cli.serve.http_options(ServeOptions::default()).expect("usable settings").auth.is_some());
        assert_eq!(kind(&with[..6]), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn dpop_and_refresh_flags_reach_the_protected_resource() {
        let base = ["--auth-issuer", "https://auth.example.com", "--auth-resource", "https://mcp.example.com/mcp"];
        let with = |extra: &[&str]| {
            let args: Vec<&str> = base.iter().chain(extra).copied().collect();
            parse(&args)
        };
        let cli = with(&["--auth-dpop", "required", "--auth-refresh-interval", "60"]).expect("valid");
        assert_eq!(cli.serve.auth_dpop, Some(DpopMode::Required));
        assert_eq!(cli.serve.auth_refresh_interval, Some(60));
        let options = cli.serve.http_options(ServeOptions::default()).expect("usable settings");
        let doc = options.http.protected_resource.expect("a resource").document([]);
        assert_eq!(doc["dpop_bound_access_tokens_required"], true);
        let cli = with(&["--auth-dpop", "allowed"]).expect("valid");
        let options = cli.serve.http_options(ServeOptions::default()).expect("usable settings");
        let doc = options.http.protected_resource.expect("a resource").document([]);
        assert_eq!(doc["dpop_bound_access_tokens_required"], false);
        let plain = with(&[]).expect("valid").serve.http_options(ServeOptions::default()).expect("usable settings");
        assert!(
            plain
                .http
                .protected_resource
                .expect("a resource")
                .document([])
                .get("dpop_signing_alg_values_supported")
                .is_none()
        );
        assert_eq!(
            with(&["--auth-dpop", "sometimes"]).map(|_| ()).expect_err("refused").kind(),
            ErrorKind::InvalidValue
        );
        assert_eq!(
            with(&["--auth-refresh-interval", "0"]).map(|_| ()).expect_err("refused").kind(),
            ErrorKind::ValueValidation
        );
        assert_eq!(kind(&["--auth-dpop", "required"]), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn connection_limit_flags_override_the_configured_limits() {
        let cli = parse(&[
            "--http",
            "127.0.0.1:0",
            "--http-header-timeout",
            "2",
            "--http-max-connections",
            "7",
            "--http-max-connections-per-client",
            "3",
        ])
        .expect("valid");
        let options = cli.serve.http_options(ServeOptions::default()).expect("usable settings");
        assert_eq!(options.http.connections.header_read_timeout, std::time::Duration::from_secs(2));
        assert_eq!(options.http.connections.max_connections, 7);
        assert_eq!(options.http.connections.max_connections_per_client, Some(3));
        let untouched =
            parse(&[]).expect("valid").serve.http_options(ServeOptions::default()).expect("usable settings");
        assert_eq!(untouched.http.connections, crate::transport::http::ConnectionLimits::default());
        assert_eq!(untouched.http.session_limits, crate::transport::http::SessionLimits::default());
        assert_eq!(kind(&["--http-header-timeout", "0"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--http-header-timeout", "86401"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--http-max-connections-per-client", "0"]), ErrorKind::ValueValidation);
    }

    #[test]
    fn listen_limit_flags_override_the_server_s_limits_they_name() {
        use crate::subscriptions::ListenLimits;
        let server = || {
            let limits = ListenLimits::default().per_connection(5).per_principal(50);
            Server::builder("t", "1").listen_limits(limits).build().expect("valid")
        };
        let s = server();
        parse(&[]).expect("valid").serve.apply_listen_limits(&s);
        assert_eq!(s.listen_limits(), ListenLimits::default().per_connection(5).per_principal(50));
        parse(&["--listen-max-per-principal", "7"]).expect("valid").serve.apply_listen_limits(&s);
        assert_eq!(s.listen_limits(), ListenLimits::default().per_connection(5).per_principal(7));
        let s = server();
        let both = parse(&["--listen-max-per-connection", "2", "--listen-max-per-principal", "3"]).expect("valid");
        both.serve.apply_listen_limits(&s);
        assert_eq!(s.listen_limits(), ListenLimits::default().per_connection(2).per_principal(3));
        assert_eq!(kind(&["--listen-max-per-connection", "0"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--listen-max-per-principal", "many"]), ErrorKind::ValueValidation);
    }

    #[test]
    fn session_limit_flags_override_the_configured_limits() {
        let cli = parse(&[
            "--http",
            "127.0.0.1:0",
            "--http-sessions-per-client",
            "3",
            "--http-session-rate",
            "0",
            "--http-session-burst",
            "5",
        ])
        .expect("valid");
        let limits = cli.serve.http_options(ServeOptions::default()).expect("usable settings").http.session_limits;
        let expected =
            crate::transport::http::SessionLimits::default().per_client(3).creations_per_second(0).creation_burst(5);
        assert_eq!(limits, expected);
        assert_eq!(kind(&["--http-sessions-per-client", "0"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--http-session-burst", "0"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--http-session-rate", "ten"]), ErrorKind::ValueValidation);
    }

    #[test]
    fn trusted_proxy_and_sse_flags_set_the_http_config() {
        use crate::transport::http::{ForwardedHeader, IpNet};
        use std::time::Duration;
        let cli = parse(&[
            "--http",
            "127.0.0.1:0",
            "--trusted-proxies",
            "10.0.0.0/8,127.0.0.1",
            "--trusted-proxies=2001:db8::/32",
            "--forwarded-header",
            "forwarded",
            "--sse-after",
            "3",
            "--sse-keep-alive",
            "2",
        ])
        .expect("valid");
        let http = cli.serve.http_options(ServeOptions::default()).expect("usable settings").http;
        let nets: Vec<IpNet> =
            ["10.0.0.0/8", "127.0.0.1/32", "2001:db8::/32"].iter().map(|n| n.parse().expect("a network")).collect();
        assert_eq!(http.trusted_proxies, nets);
        assert_eq!(http.forwarded_header, ForwardedHeader::Forwarded);
        assert_eq!((http.sse_after, http.keep_alive), (Some(Duration::from_secs(3)), Duration::from_secs(2)));
        let off = parse(&["--sse-after", "0"]).expect("valid").serve.http_options(ServeOptions::default());
        assert_eq!(off.expect("usable settings").http.sse_after, None);
        // Without the flags the server's own configuration stands.
        let configured = ServeOptions {
            http: HttpConfig::default()
                .trusted_proxies(nets.clone())
                .sse_after(Some(Duration::from_secs(4)))
                .forwarded_header(ForwardedHeader::Forwarded),
            ..ServeOptions::default()
        };
        let kept = parse(&[]).expect("valid").serve.http_options(configured).expect("usable settings").http;
        assert_eq!((kept.trusted_proxies, kept.sse_after), (nets, Some(Duration::from_secs(4))));
        assert_eq!(kept.forwarded_header, ForwardedHeader::Forwarded);
        let plain = parse(&[]).expect("valid").serve.http_options(ServeOptions::default()).expect("usable settings");
        assert!(plain.http.trusted_proxies.is_empty());
        assert_eq!(plain.http.forwarded_header, ForwardedHeader::XForwardedFor);
        assert!(plain.http.connections.proxy_protocol.is_empty(), "no PROXY protocol unless asked");
        // --proxy-protocol reads the header from the trusted proxies, and only with some.
        let proxied = parse(&["--trusted-proxies", "10.0.0.0/8", "--proxy-protocol"]).expect("valid");
        let proxied = proxied.serve.http_options(ServeOptions::default()).expect("usable settings");
        assert_eq!(proxied.http.connections.proxy_protocol, ["10.0.0.0/8".parse::<IpNet>().expect("a network")]);
        let alone = parse(&["--proxy-protocol"]).expect("valid").serve.http_options(ServeOptions::default());
        assert!(alone.expect_err("refused").contains("--trusted-proxies"));
        assert_eq!(kind(&["--trusted-proxies", "10.0.0.0/33"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--trusted-proxies", "proxy.example.com"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--forwarded-header", "x-real-ip"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--sse-keep-alive", "0"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--sse-after", "ten"]), ErrorKind::ValueValidation);
    }

    #[test]
    fn modes_convert_to_args() {
        assert_eq!(ServeArgs::from(Mode::Stdio).mode(), Mode::Stdio);
        assert_eq!(ServeArgs::from(Mode::Http("h:1".into())).mode(), Mode::Http("h:1".into()));
        assert_eq!(ServeArgs::default().mode(), Mode::Stdio);
    }

    /// Set in the environment of this test binary run again as a child: which case of
    /// [`environment_variables_stand_in_for_the_flags`] it checks.
    const CHILD_CASE: &str = "SWITCHYARD_CLI_TEST_ENV_CASE";

    const SHARED_VARS: [&str; 24] = [
        "SWITCHYARD_AUTH_INTROSPECTION",
        "SWITCHYARD_AUTH_CLIENT_ID",
        "SWITCHYARD_AUTH_CLIENT_SECRET",
        "SWITCHYARD_STDIO",
        "SWITCHYARD_HTTP",
        "SWITCHYARD_AUTH_ISSUER",
        "SWITCHYARD_AUTH_RESOURCE",
        "SWITCHYARD_AUTH_AUDIENCE",
        "SWITCHYARD_AUTH_SCOPES",
        "SWITCHYARD_AUTH_ALLOW_ANONYMOUS",
        "SWITCHYARD_ALLOWED_HOSTS",
        "SWITCHYARD_ALLOWED_ORIGINS",
        "SWITCHYARD_LOG_FORMAT",
        "SWITCHYARD_LOG_LEVEL",
        "SWITCHYARD_HTTP_HEADER_TIMEOUT",
        "SWITCHYARD_HTTP_MAX_CONNECTIONS",
        "SWITCHYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT",
        "SWITCHYARD_HTTP_SESSIONS_PER_CLIENT",
        "SWITCHYARD_HTTP_SESSION_RATE",
        "SWITCHYARD_HTTP_SESSION_BURST",
        "SWITCHYARD_TRUSTED_PROXIES",
        "SWITCHYARD_FORWARDED_HEADER",
        "SWITCHYARD_SSE_AFTER",
        "SWITCHYARD_SSE_KEEP_ALIVE",
    ];

    // Setting variables in this process would leak into the tests running beside it (and is
    // `unsafe` in edition 2024), so each case runs this test again in a child process whose
    // environment holds the variables, and checks them there.
    #[test]
    fn environment_variables_stand_in_for_the_flags() {
        match std::env::var(CHILD_CASE).as_deref() {
            Ok("http") => {
                let cli = parse(&[]).expect("valid");
                assert_eq!(cli.serve.mode(), Mode::Http("127.0.0.1:7".into()));
                assert_eq!(cli.serve.log_format, LogFormat::Json);
                assert_eq!(cli.serve.log_level.as_deref(), Some("debug"));
                assert_eq!(cli.serve.http_max_connections_per_client, Some(4));
                assert_eq!(cli.serve.trusted_proxies, ["10.0.0.0/8".parse().expect("a network")]);
                assert_eq!(cli.serve.sse_after, Some(0));
                let names: Vec<String> = cli.serve.allowed_hosts.iter().map(ToString::to_string).collect();
                assert_eq!(names, ["mcp.example.com", "*.example.net"]);
                let origins: Vec<String> = cli.serve.allowed_origins.iter().map(ToString::to_string).collect();
                assert_eq!(origins, ["https://app.example.com"]);
                // A flag beats its variable...
                let cli = parse(&["--http", "127.0.0.1:8", "--log-format", "pretty"]).expect("valid");
                assert_eq!(cli.serve.mode(), Mode::Http("127.0.0.1:8".into()));
                assert_eq!(cli.serve.log_format, LogFormat::Pretty);
                // ...but a variable for the other mode counts as given.
                assert_eq!(kind(&["--stdio"]), ErrorKind::ArgumentConflict);
            }
            Ok("stdio") => {
                assert!(parse(&[]).expect("valid").serve.stdio);
                assert_eq!(kind(&["--http", "127.0.0.1:0"]), ErrorKind::ArgumentConflict);
            }
            Ok("bad") => {
                assert_eq!(kind(&[]), ErrorKind::InvalidValue);
            }
            Ok(other) => panic!("unknown case {other:?}"),
            Err(_) => {
                let cases: [(&str, &[(&str, &str)]); 3] = [
                    (
                        "http",
                        &[
                            ("SWITCHYARD_HTTP", "127.0.0.1:7"),
                            ("SWITCHYARD_LOG_FORMAT", "json"),
                            ("SWITCHYARD_LOG_LEVEL", "debug"),
                            ("SWITCHYARD_HTTP_MAX_CONNECTIONS_PER_CLIENT", "4"),
                            ("SWITCHYARD_TRUSTED_PROXIES", "10.0.0.0/8"),
                            ("SWITCHYARD_SSE_AFTER", "0"),
                            ("SWITCHYARD_ALLOWED_HOSTS", "mcp.example.com,*.example.net"),
                            ("SWITCHYARD_ALLOWED_ORIGINS", "https://app.example.com"),
                        ],
                    ),
                    ("stdio", &[("SWITCHYARD_STDIO", "1")]),
                    ("bad", &[("SWITCHYARD_LOG_FORMAT", "xml")]),
                ];
                let test = concat!(module_path!(), "::environment_variables_stand_in_for_the_flags");
                let test = test.split_once("::").map_or(test, |(_crate, path)| path);
                for (case, vars) in cases {
                    let mut child = std::process::Command::new(std::env::current_exe().expect("the test binary"));
                    child.args([test, "--exact", "--test-threads=1"]).env(CHILD_CASE, case);
                    for var in SHARED_VARS {
                        child.env_remove(var);
                    }
                    let out = child.envs(vars.iter().copied()).output().expect("the test binary runs");
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert!(
                        out.status.success() && stdout.contains("1 passed"),
                        "case {case}: {stdout}{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            }
        }
    }
}
