//! [`Upstream`]: one server the gateway serves from, how to reach it, and what its items are
//! called here.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;
use switchyard::McpError;
use switchyard_client::{Client, ClientBuilder, ClientError, ElicitationModes};

/// How long an upstream call may take unless set otherwise: 60 s.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long connecting (starting the child, negotiating the revision) may take unless set
/// otherwise: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The first wait before reconnecting a lost upstream unless set otherwise: 250 ms (doubling
/// after each failed attempt).
pub const DEFAULT_RECONNECT_MIN: Duration = Duration::from_millis(250);
/// The longest wait between reconnection attempts unless set otherwise: 30 s.
pub const DEFAULT_RECONNECT_MAX: Duration = Duration::from_secs(30);

/// Where an upstream server is.
#[derive(Clone)]
enum Transport {
    /// A child process spoken to over its stdin and stdout.
    Stdio { program: OsString, args: Vec<OsString>, envs: Vec<(OsString, OsString)>, dir: Option<PathBuf> },
    /// A Streamable HTTP endpoint.
    Http { url: String },
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The environment may hold secrets: only the variables' names are shown.
            Transport::Stdio { program, args, envs, dir } => f
                .debug_struct("Stdio")
                .field("program", program)
                .field("args", args)
                .field("envs", &envs.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .field("dir", dir)
                .finish(),
            Transport::Http { url } => f.debug_struct("Http").field("url", url).finish(),
        }
    }
}

/// One upstream MCP server: a child process over
/// [stdio](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio) or a
/// [Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)
/// URL, of either protocol era (the client negotiates 2026-07-28 or a 2025 session when it
/// connects), and how its items are named here.
///
/// Its tools and prompts are served as `{prefix}{name}`, its resources as
/// `{uri_prefix}{uri}` and its resource templates as `{uri_prefix}{uriTemplate}`. Everything
/// else the upstream lists (titles, descriptions, schemas, annotations, icons, `_meta`) is
/// served unchanged.
///
/// ```
/// use std::time::Duration;
/// use switchyard_gateway::Upstream;
///
/// let weather = Upstream::stdio("weather", "python3", ["weather.py"])
///     .prefix("weather_")
///     .uri_prefix("weather+")
///     .call_timeout(Duration::from_secs(20));
/// assert_eq!(weather.name(), "weather");
/// ```
#[derive(Debug, Clone)]
pub struct Upstream {
    name: String,
    transport: Transport,
    pub(crate) prefix: String,
    pub(crate) uri_prefix: String,
    pub(crate) call_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) reconnect: (Duration, Duration),
    pub(crate) roles: &'static [&'static str],
    pub(crate) scopes: &'static [&'static str],
    client: ClientBuilder,
}

impl Upstream {
    fn with(name: impl Into<String>, transport: Transport) -> Self {
        let name = name.into();
        Upstream {
            client: default_client(&name),
            name,
            transport,
            prefix: String::new(),
            uri_prefix: String::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            reconnect: (DEFAULT_RECONNECT_MIN, DEFAULT_RECONNECT_MAX),
            roles: &[],
            scopes: &[],
        }
    }

    /// An upstream started as the child process `program args...` and spoken to over its
    /// stdin and stdout (its stderr is the gateway's). A new child is started for each
    /// connection; the child is killed when its connection ends or the gateway stops.
    pub fn stdio<I, S>(name: impl Into<String>, program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let transport = Transport::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            envs: Vec::new(),
            dir: None,
        };
        Upstream::with(name, transport)
    }

    /// An upstream at the Streamable HTTP endpoint `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Upstream::with(name, Transport::Http { url: url.into() })
    }

    /// Sets an environment variable of a stdio upstream's child (no effect over HTTP).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Transport::Stdio { envs, .. } = &mut self.transport {
            envs.push((key.into(), value.into()));
        }
        self
    }

    /// Sets the working directory of a stdio upstream's child (no effect over HTTP).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio { dir: d, .. } = &mut self.transport {
            *d = Some(dir.into());
        }
        self
    }

    /// The upstream's name, as errors and logs name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Serves the upstream's tools and prompts as `{prefix}{name}` (default: no prefix). A
    /// name that the prefix makes invalid (over 128 characters) is left out with a warning.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Serves the upstream's resources as `{uri_prefix}{uri}` and its templates as
    /// `{uri_prefix}{uriTemplate}` (default: as they are); reads strip the prefix again, and
    /// the `uri` of each content read gets it. `"weather+"` turns `file:///a` into
    /// `weather+file:///a`, still a URI (a scheme may contain `+`).
    pub fn uri_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.uri_prefix = prefix.into();
        self
    }

    /// How long one call to the upstream (`tools/call`, `prompts/get`, `resources/read`) may
    /// wait for its answer (default [`DEFAULT_CALL_TIMEOUT`]; on 2026-07-28, each input round).
    /// A call that runs out is cancelled upstream and answered as the
    /// [crate docs](crate#errors) say.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long connecting may take (default [`DEFAULT_CONNECT_TIMEOUT`]); an upstream that
    /// takes longer counts as down and is tried again after the backoff.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The backoff between reconnection attempts: `min` first, doubling after each attempt
    /// that failed, or whose connection ended within `max`, up to `max` (defaults
    /// [`DEFAULT_RECONNECT_MIN`], [`DEFAULT_RECONNECT_MAX`]); back to `min` after a connection
    /// that lasted at least `max`, so an upstream that crashes right after its handshake is
    /// not restarted in a tight loop.
    pub fn reconnect_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.reconnect = (min, max.max(min));
        self
    }

    /// Restricts every item of this upstream to callers holding one of `roles` (as
    /// `#[mcp_tool(roles = [..])]`; the server's [`Policy`](switchyard::auth::Policy) decides).
    pub fn roles(mut self, roles: &'static [&'static str]) -> Self {
        self.roles = roles;
        self
    }

    /// Restricts every item of this upstream to callers whose token grants all of `scopes`
    /// (as `#[mcp_tool(scopes = [..])]`).
    pub fn scopes(mut self, scopes: &'static [&'static str]) -> Self {
        self.scopes = scopes;
        self
    }

    /// The client the gateway connects with: its name, the revisions it offers
    /// ([`ClientBuilder::protocol_versions`]), its limits, its input handlers. Its request
    /// timeout is replaced by [`connect_timeout`](Self::connect_timeout) for connecting and
    /// listing, and each call has [`call_timeout`](Self::call_timeout). Default: a client
    /// named `switchyard-gateway/{name}` offering every revision and declaring `elicitation`
    /// (forms and URLs) and `sampling`, so that a 2025 session upstream may ask them during a
    /// call: the gateway relays such a question to the client of that call; one the upstream
    /// sends outside any call (or, over stdio, while several calls are in flight: nothing there
    /// says which it belongs to) is refused (`-32600`). A builder given here declares what its
    /// own handlers answer; they answer only questions outside any call, since during a call
    /// the relay asks the call's client (and tells a 2026-07-28 upstream that client's
    /// capabilities, not the builder's).
    pub fn client(mut self, client: ClientBuilder) -> Self {
        self.client = client;
        self
    }

    /// Connects once, bounded by the connect timeout.
    ///
    /// Errors: what the client's `connect_*` returns; [`ClientError::Timeout`] when the
    /// connect timeout runs out first.
    pub(crate) async fn connect(&self) -> Result<Client, ClientError> {
        let client = self.client.clone().request_timeout(self.connect_timeout);
        let connecting = async {
            match &self.transport {
                Transport::Stdio { program, args, envs, dir } => {
                    let mut command = tokio::process::Command::new(program);
                    command.args(args).envs(envs.iter().map(|(k, v)| (k, v)));
                    if let Some(dir) = dir {
                        command.current_dir(dir);
                    }
                    client.connect_stdio(command).await
                }
                Transport::Http { url } => client.connect_http(url.clone()).await,
            }
        };
        match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(connected) => connected,
            Err(_) => Err(ClientError::Timeout { method: "initialize".to_owned(), timeout: self.connect_timeout }),
        }
    }
}

/// The default client of upstream `name`: it declares `elicitation` and `sampling` so that a
/// session upstream may ask them; the relay answers those that belong to a call, and these
/// handlers the ones that belong to none.
fn default_client(name: &str) -> ClientBuilder {
    fn outside_a_call(what: &str) -> McpError {
        McpError::invalid_request(format!(
            "the gateway relays {what} to the client of the call it belongs to: over HTTP one asked on a call's \
             stream, over stdio (where a request names no call) one asked while a single call is in flight"
        ))
    }
    ClientBuilder::new(format!("switchyard-gateway/{name}"), env!("CARGO_PKG_VERSION"))
        .on_elicitation(ElicitationModes::FormAndUrl, |_| async { Err(outside_a_call("elicitation")) })
        .on_sampling(|_| async { Err(outside_a_call("sampling")) })
}
