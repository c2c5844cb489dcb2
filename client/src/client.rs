//! [`Client`] and [`ClientBuilder`]: connect, then call.

use crate::decode::{decode, decode_text, value_of};
use crate::error::ClientError;
use crate::input::{ElicitRequest, ElicitationModes, InputHandlers, SamplingRequest};
use crate::listen::{Subscription, SubscriptionFilter};
use crate::model::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use crate::options::{InputFn, ProgressFn, RequestOptions, progress_for};
use crate::param_headers::ParamHeaders;
use crate::peer::Peer;
use crate::session::{Offer, Session, negotiate};
use crate::transport::stdio::{read_lines, write_lines};
use futures::Stream;
use futures::future::Either;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::input::{CreateMessageResult, ElicitResult, Root};
use switchyard::jsonrpc::Notification;
use switchyard::protocol::{LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, MODERN_VERSION};
use switchyard::{CallToolResult, Completion, CompletionRef, GetPromptResult, LogLevel, McpError, ReadResourceResult};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// How long a request may wait for its answer unless set otherwise: 60 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest message accepted from a server unless set otherwise: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The most pages one listing follows unless set otherwise: 1,000.
pub const DEFAULT_MAX_PAGES: usize = 1000;
/// How long the `server/discover` probe waits before trying `initialize` instead: 5 s.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The most `input_required` rounds one request goes through unless set otherwise: 16.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 16;

/// How a [`Client`] connects: its identity, timeouts, limits and the revisions it offers.
///
/// ```no_run
/// # async fn run() -> Result<(), switchyard_client::ClientError> {
/// use switchyard_client::ClientBuilder;
///
/// let mut server = tokio::process::Command::new("my-mcp-server");
/// server.arg("--stdio");
/// let client = ClientBuilder::new("my-agent", "1.0.0").connect_stdio(server).await?;
/// let tools = client.list_tools().await?;
/// let result = client.call_tool("echo", serde_json::json!({ "text": "hi" })).await?;
/// # let _ = (tools, result); Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    name: String,
    version: String,
    versions: Vec<String>,
    request_timeout: Duration,
    probe_timeout: Duration,
    max_message_bytes: usize,
    max_pages: usize,
    max_input_rounds: usize,
    handlers: InputHandlers,
    #[cfg(feature = "oauth")]
    oauth: Option<crate::oauth::OAuthConfig>,
}

impl ClientBuilder {
    /// A client that calls itself `name` `version` (its `clientInfo`), offering every revision
    /// this crate speaks: 2026-07-28, then 2025-11-25, 2025-06-18 and 2025-03-26.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut versions = vec![MODERN_VERSION.to_owned()];
        versions.extend(LEGACY_VERSIONS.iter().map(|v| (*v).to_owned()));
        ClientBuilder {
            name: name.into(),
            version: version.into(),
            versions,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_pages: DEFAULT_MAX_PAGES,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            handlers: InputHandlers::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// Signs in to a protected server over HTTP when it asks (feature `oauth`,
    /// [authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)):
    /// a `401` starts discovery from its `WWW-Authenticate` challenge (protected resource
    /// metadata, RFC 9728; authorization server metadata, RFC 8414 or OpenID discovery), a
    /// client id (pre-registered, a client ID metadata document, or dynamic registration, RFC
    /// 7591), the authorization code flow with PKCE (S256) and `resource` (RFC 8707) through
    /// `config`'s [`Authorizer`](crate::Authorizer), and the request is sent again with the
    /// token. A `403 insufficient_scope` signs in again for the scopes held plus those the
    /// challenge names; an expiring token is refreshed. Each request is retried once after a
    /// sign-in.
    ///
    /// The sign-in happens inside the request that met the `401`, so its time counts against
    /// that request's timeout: give [`request_timeout`](Self::request_timeout) room for a user
    /// at a browser. The `server/discover` probe then waits as long as requests do.
    ///
    /// Errors (of the request that needed the token): [`ClientError::Auth`].
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, config: crate::oauth::OAuthConfig) -> Self {
        self.oauth = Some(config);
        self
    }

    /// Answers the server's `elicitation/create` requests with `handler`, and declares the
    /// `elicitation` capability with `modes` (`{"form":{}}`, or `{"form":{},"url":{}}`)
    /// ([elicitation](https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation)).
    ///
    /// The handler gets the request's params and returns the user's `ElicitResult`
    /// (`accept` with `content`, `decline`, `cancel`). On `accept`, properties of the
    /// requested schema the content leaves out are filled with their schema `default`
    /// (SEP-1034: the user saw them pre-filled). An `Err` is sent to the server as the
    /// JSON-RPC error. A URL-mode request when only forms were declared is refused with
    /// `-32602` without calling the handler.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), switchyard_client::ClientError> {
    /// use switchyard_client::{ClientBuilder, ElicitAction, ElicitResult, ElicitationModes};
    ///
    /// let client = ClientBuilder::new("my-agent", "1.0.0")
    ///     .on_elicitation(ElicitationModes::Form, |request| async move {
    ///         println!("the server asks: {}", request.message);
    ///         Ok(ElicitResult { action: ElicitAction::Decline, content: None })
    ///     })
    ///     .connect_http("http://127.0.0.1:8080/mcp")
    ///     .await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn on_elicitation<F, Fut>(mut self, modes: ElicitationModes, handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ElicitResult, McpError>> + Send + 'static,
    {
        self.handlers.set_elicitation(modes, handler);
        self
    }

    /// Answers the server's `sampling/createMessage` requests with `handler` (which asks a
    /// model and returns its `CreateMessageResult`), and declares the `sampling` capability
    /// ([sampling](https://modelcontextprotocol.io/specification/2025-11-25/client/sampling)).
    /// An `Err` is sent to the server as the JSON-RPC error (`-1` for a user who refused is
    /// the spec's convention).
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<CreateMessageResult, McpError>> + Send + 'static,
    {
        self.handlers.set_sampling(handler);
        self
    }

    /// Answers the server's `roots/list` requests with the roots `handler` returns, and
    /// declares the `roots` capability
    /// ([roots](https://modelcontextprotocol.io/specification/2025-11-25/client/roots)).
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Vec<Root>, McpError>> + Send + 'static,
    {
        self.handlers.set_roots(handler);
        self
    }

    /// The most `input_required` rounds one 2026-07-28 request goes through before it fails
    /// with [`ClientError::Protocol`] (default [`DEFAULT_MAX_INPUT_ROUNDS`]): a server that
    /// asks again and again cannot keep a call going forever.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Offers only these revisions, in order of preference: `["2025-11-25"]` forces a
    /// session, `["2026-07-28"]` refuses servers without it. `initialize` asks for the first
    /// session revision listed, and the server's choice must be one listed that this crate
    /// speaks; other strings are ignored. With none this crate speaks,
    /// [`connect_io`](Self::connect_io) fails with [`ClientError::Protocol`].
    pub fn protocol_versions<S: AsRef<str>>(mut self, versions: impl IntoIterator<Item = S>) -> Self {
        self.versions = versions.into_iter().map(|v| v.as_ref().to_owned()).collect();
        self
    }

    /// How long each request waits for its answer before it is cancelled and fails with
    /// [`ClientError::Timeout`] (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the `server/discover` probe waits before falling back to `initialize`
    /// (default [`DEFAULT_PROBE_TIMEOUT`]): a session-era server may never answer it.
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// The longest message accepted from the server, in bytes (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]); a longer one is skipped with a warning, and the request
    /// it answered then times out.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The most pages one listing (`list_tools`, `tools()`, ...) follows before it fails with
    /// [`ClientError::Protocol`] (default [`DEFAULT_MAX_PAGES`]): a server that hands out a new
    /// cursor forever cannot keep a listing going forever.
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages;
        self
    }

    /// Starts `command` with piped stdin and stdout (stderr as the command has it) and
    /// connects over them ([stdio](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio)).
    /// The child is killed when the last handle on the client is dropped.
    ///
    /// Errors: [`ClientError::Transport`] when the command cannot be started; then as
    /// [`connect_io`](Self::connect_io).
    pub async fn connect_stdio(self, mut command: tokio::process::Command) -> Result<Client, ClientError> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| ClientError::transport("starting the server", e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Protocol("the server's stdin and stdout could not be piped".to_owned()));
        };
        let mut client = self.connect_io(stdout, stdin).await?;
        if let Some(inner) = Arc::get_mut(&mut client.inner) {
            inner.child = Some(tokio::sync::Mutex::new(child));
        }
        Ok(client)
    }

    /// Connects over a byte stream pair, one JSON-RPC message per line: `reader` is what the
    /// server writes, `writer` what it reads (a child's stdout and stdin, a socket's halves, a
    /// `tokio::io::duplex` pipe to an in-process server).
    ///
    /// Negotiates the revision first: `server/discover` (2026-07-28) when offered, and on any
    /// JSON-RPC error or no answer within the probe timeout, `initialize` with the newest
    /// session revision offered, then `notifications/initialized`.
    ///
    /// Errors: [`ClientError::Protocol`] when the server accepts no offered revision;
    /// [`ClientError::Rpc`] when it refuses `initialize`; [`ClientError::Timeout`],
    /// [`ClientError::Closed`] or [`ClientError::Transport`] when it does not answer.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (incoming, outgoing) = (read_lines(reader, self.max_message_bytes), write_lines(writer));
        let handlers = Arc::new(self.handlers.clone());
        self.connect_over(Peer::start(incoming, outgoing, handlers, false), Arc::default()).await
    }

    /// Connects to the Streamable HTTP endpoint at `url` (e.g. `https://mcp.example.com/mcp`):
    /// each message is a POST, answered with JSON or an event stream
    /// ([Streamable HTTP](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http)).
    /// On 2026-07-28 each request carries `MCP-Protocol-Version`, `Mcp-Method` and, where the
    /// method routes by one, `Mcp-Name`; on a session, `Mcp-Session-Id` and the revision, and
    /// the session is ended with `DELETE` when the client closes. Negotiation as
    /// [`connect_io`](Self::connect_io).
    ///
    /// On a session the `GET` stream the server pushes notifications and requests on is kept
    /// open, and a broken stream is resumed with `Last-Event-ID`
    /// ([resumability](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery)).
    /// A protected server is signed in to as [`oauth`](Self::oauth) configures; a fixed bearer
    /// token can instead be set on the `reqwest::Client` of
    /// [`connect_http_with`](Self::connect_http_with).
    ///
    /// Errors: as [`connect_io`](Self::connect_io); an HTTP status without a JSON-RPC error
    /// body is [`ClientError::Transport`] naming the status.
    #[cfg(feature = "http")]
    pub async fn connect_http(self, url: impl Into<String>) -> Result<Client, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| ClientError::transport("setting up the HTTP client", e))?;
        self.connect_http_with(http, url).await
    }

    /// [`connect_http`](Self::connect_http) with a `reqwest::Client` of the caller's (default
    /// headers such as `Authorization`, proxies, TLS roots, timeouts).
    ///
    /// Errors: as [`connect_http`](Self::connect_http).
    #[cfg(feature = "http")]
    pub async fn connect_http_with(self, http: reqwest::Client, url: impl Into<String>) -> Result<Client, ClientError> {
        let url = url.into();
        let param_headers = Arc::new(ParamHeaders::default());
        #[cfg(feature = "oauth")]
        let auth = match &self.oauth {
            Some(config) => Some(Arc::new(crate::oauth::OAuthSession::new(config.clone(), &url)?)),
            None => None,
        };
        let (incoming, outgoing) = crate::transport::http::connect(
            http,
            url,
            self.max_message_bytes,
            param_headers.clone(),
            #[cfg(feature = "oauth")]
            auth,
        );
        let handlers = Arc::new(self.handlers.clone());
        self.connect_over(Peer::start(incoming, outgoing, handlers, true), param_headers).await
    }

    /// The probe's timeout: never longer than a request's, and as long when a sign-in may
    /// happen inside it.
    fn effective_probe_timeout(&self) -> Duration {
        #[cfg(feature = "oauth")]
        if self.oauth.is_some() {
            return self.request_timeout;
        }
        self.probe_timeout.min(self.request_timeout)
    }

    async fn connect_over(self, peer: Arc<Peer>, param_headers: Arc<ParamHeaders>) -> Result<Client, ClientError> {
        let offer = Offer {
            versions: &self.versions,
            client_info: json!({ "name": self.name, "version": self.version }),
            capabilities: self.handlers.capabilities(),
            probe_timeout: self.effective_probe_timeout(),
            timeout: self.request_timeout,
        };
        let session = match negotiate(&peer, offer).await {
            Ok(session) => session,
            Err(e) => {
                peer.close();
                return Err(e);
            }
        };
        let inner = Inner {
            peer,
            session,
            timeout: self.request_timeout,
            max_pages: self.max_pages,
            max_input_rounds: self.max_input_rounds,
            handlers: self.handlers,
            param_headers,
            task_support: Arc::default(),
            log_level: std::sync::RwLock::new(None),
            progress_tokens: std::sync::atomic::AtomicU64::new(1),
            child: None,
        };
        Ok(Client { inner: Arc::new(inner) })
    }
}

/// A connection to one MCP server. Cheap to clone; every clone shares the connection, and
/// requests from several tasks run concurrently over it.
///
/// Each request waits at most the builder's [request timeout](ClientBuilder::request_timeout);
/// dropping its future first cancels it (`notifications/cancelled`,
/// [cancellation](https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation)).
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    peer: Arc<Peer>,
    session: Session,
    timeout: Duration,
    max_pages: usize,
    max_input_rounds: usize,
    handlers: InputHandlers,
    param_headers: Arc<ParamHeaders>,
    /// Per tool of the last listing, whether a session's `tools/call` of it may carry a `task`
    /// param (`execution.taskSupport` `optional` or `required`).
    task_support: Arc<Mutex<HashMap<String, bool>>>,
    /// The level asked for with `set_logging_level`, sent in each 2026-07-28 request's `_meta`.
    log_level: std::sync::RwLock<Option<LogLevel>>,
    progress_tokens: std::sync::atomic::AtomicU64,
    child: Option<tokio::sync::Mutex<tokio::process::Child>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("protocol_version", &self.session.version)
            .field("server", &self.session.server_info)
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.peer.close();
    }
}

impl Client {
    /// What was agreed with the server (for the extensions built on the client).
    pub(crate) fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Whether the last listing said tool `name` may run as a 2025-11-25 task; `None` for a
    /// tool it did not name.
    pub(crate) fn known_task_support(&self, name: &str) -> Option<bool> {
        self.inner.task_support.lock().unwrap_or_else(|p| p.into_inner()).get(name).copied()
    }

    /// The client's timeout for one request.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The agreed protocol revision: `"2026-07-28"` (stateless, every request carries its
    /// `_meta`) or a session revision such as `"2025-11-25"`.
    pub fn protocol_version(&self) -> &str {
        &self.inner.session.version
    }

    /// The server's `serverInfo` (`_meta["io.modelcontextprotocol/serverInfo"]` of
    /// `server/discover`, or `initialize`'s `serverInfo`), when it sent one that decodes.
    pub fn server_info(&self) -> Option<&Implementation> {
        self.inner.session.server_info.as_ref()
    }

    /// The server's `ServerCapabilities` object as it sent it (`{"tools":{..},...}`).
    pub fn capabilities(&self) -> &Value {
        &self.inner.session.capabilities
    }

    /// The server's `instructions`, when it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.session.instructions.as_deref()
    }

    /// Sends `method` with `params` (a JSON object, or `null` for none; the 2026-07-28 `_meta`
    /// is added on that wire) and returns the `result` as sent.
    ///
    /// On 2026-07-28 an `input_required` result is answered here: each of its
    /// `inputRequests` goes to the handler registered for its method
    /// ([`on_elicitation`](ClientBuilder::on_elicitation), ...), and the request is sent
    /// again, with a new id, the answers as `inputResponses` and the result's `requestState`
    /// passed back untouched (left out when the server sent none), round after round until
    /// the server completes it
    /// ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
    /// Each round waits at most the request timeout; the handlers' time is not counted.
    ///
    /// Errors: [`ClientError::Encode`] for params that are no object, or a `_meta` that is
    /// none; [`ClientError::Rpc`] with the server's error object; [`ClientError::Protocol`]
    /// for an `input_required` result that asks for input no handler gives, is malformed, or
    /// keeps asking past [`max_input_rounds`](ClientBuilder::max_input_rounds);
    /// [`ClientError::Timeout`], [`ClientError::Closed`].
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.request_with(method, params, RequestOptions::default()).await
    }

    /// [`request`](Self::request) with per-request [`RequestOptions`]: a progress callback
    /// (`_meta.progressToken`), a cancellation token, a timeout of its own. With feature `otel`,
    /// the current span's W3C trace context goes in `_meta` as `traceparent`/`tracestate`
    /// ([SEP-414](https://modelcontextprotocol.io/seps/414-request-meta)) unless the params
    /// carry their own.
    ///
    /// Errors: as [`request`](Self::request); [`ClientError::Cancelled`] when the token is
    /// cancelled first (the server is sent `notifications/cancelled`).
    pub async fn request_with(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Value, ClientError> {
        let result = self.request_text(method, params, options).await?;
        value_of(method, &result)
    }

    /// [`request_with`](Self::request_with), the result left as JSON text (as sent, for a plain
    /// success response), for the caller to decode the type it expects without an intermediate
    /// [`Value`].
    ///
    /// Not an `async fn`: the request is stamped here, and a request without a progress
    /// callback or a cancellation token (most) is its rounds' future alone; one with either is
    /// boxed with the loop that watches them, whose room would otherwise size every request's
    /// future.
    pub(crate) fn request_text<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        options: RequestOptions,
    ) -> impl Future<Output = Result<Box<RawValue>, ClientError>> + 'a {
        // On 2026-07-28 the input handler answers `input_required` rounds and its capabilities
        // go in the request; on a session it answers the server's requests that belong to this one.
        let (capabilities, input) = match options.input {
            Some((capabilities, handler)) => (self.inner.session.modern.then_some(capabilities), Some(handler)),
            None => (None, None),
        };
        let mut params = match self.inner.session.stamp_declaring(params, capabilities) {
            Ok(params) => params,
            Err(e) => return Either::Left(std::future::ready(Err(e))),
        };
        let progress = options.progress.map(|callback| {
            let n = self.inner.progress_tokens.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (format!("switchyard-client-{n}"), callback)
        });
        let level = *self.inner.log_level.read().unwrap_or_else(|p| p.into_inner());
        let level = level.filter(|_| self.inner.session.modern);
        // `_meta` is touched only when something goes in it: most requests carry nothing more.
        if progress.is_some() || level.is_some() || cfg!(feature = "otel") {
            let meta = meta_mut(&mut params);
            if let Some((token, _)) = &progress {
                meta.insert("progressToken".to_owned(), Value::from(token.clone()));
            }
            if let Some(level) = level {
                meta.entry(switchyard::protocol::META_LOG_LEVEL.to_owned()).or_insert_with(|| json!(level));
            }
            #[cfg(feature = "otel")]
            crate::options::inject_trace_context(meta);
            if meta.is_empty() {
                drop_empty_meta(&mut params);
            }
        }
        let timeout = options.timeout.unwrap_or(self.inner.timeout);
        if progress.is_none() && options.cancel.is_none() {
            return Either::Right(Either::Left(self.rounds(method, params, timeout, input)));
        }
        let watched = self.watched(method, params, timeout, input, progress, options.cancel);
        Either::Right(Either::Right(Box::pin(watched)))
    }

    /// The rounds of a request with a progress callback (its token, and the server's
    /// notifications it is read from) or a cancellation token: reports go to the callback as
    /// they come, and the token's cancellation drops the rounds (which sends
    /// `notifications/cancelled` for the request in flight) and fails the request with
    /// [`ClientError::Cancelled`].
    async fn watched(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        input: Option<InputFn>,
        progress: Option<(String, ProgressFn)>,
        cancel: Option<CancellationToken>,
    ) -> Result<Box<RawValue>, ClientError> {
        // Subscribed before the request goes out, so that no report of it is missed.
        let mut notes = progress.as_ref().map(|_| self.inner.peer.subscribe());
        let rounds = self.rounds(method, params, timeout, input);
        tokio::pin!(rounds);
        let cancelled = async {
            match &cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        loop {
            let note = async {
                match notes.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                // Dropping the rounds sends notifications/cancelled for the request in flight.
                () = &mut cancelled => return Err(ClientError::Cancelled { method: method.to_owned() }),
                note = note => match note {
                    Ok(note) if note.method == "notifications/progress" => {
                        if let Some((token, callback)) = &progress
                            && let Some(update) = progress_for(note.params.as_ref(), token)
                        {
                            callback(update);
                        }
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => notes = None,
                },
                result = &mut rounds => return result,
            }
        }
    }

    /// Sends the request, answering `input_required` rounds (see [`request`](Self::request)).
    async fn rounds(
        &self,
        method: &str,
        mut params: Value,
        timeout: Duration,
        input: Option<InputFn>,
    ) -> Result<Box<RawValue>, ClientError> {
        if !self.inner.session.modern {
            // A session has no rounds: the server asks with requests of its own.
            return match input {
                Some(handler) => self.inner.peer.request_asking(method, params, timeout, handler).await,
                None => self.inner.peer.request(method, params, timeout).await,
            };
        }
        let input = input.as_ref();
        // A request that declares no capability to answer with cannot be asked (MRTR's
        // questions are elicitation, sampling and roots requests), so it is sent once, without
        // the copy kept for a retry.
        let may_retry = declares_input(&params);
        for _ in 0..=self.inner.max_input_rounds {
            let sent = if may_retry { params.clone() } else { std::mem::take(&mut params) };
            let result = self.inner.peer.request(method, sent, timeout).await?;
            if !asks_for_input(&result) {
                return Ok(result);
            }
            let result = value_of(method, &result)?;
            // Before any handler runs: its answer (a user's form, a paid sampling call) could
            // not be sent.
            if !may_retry {
                return Err(ClientError::Protocol(format!(
                    "{method}: the server asks for input, but the request declared no elicitation, sampling or \
                     roots capability to answer with"
                )));
            }
            let responses = match input {
                Some(handler) => answer_with(handler, method, &result).await?,
                None => self.answer_inputs(method, &result).await?,
            };
            // `params` is an object here: `stamp` made it one on this wire, and a session
            // never gets this far (its servers ask with requests of their own).
            if let Some(object) = params.as_object_mut() {
                object.insert("inputResponses".to_owned(), Value::Object(responses));
                match result.get("requestState") {
                    Some(state) => object.insert("requestState".to_owned(), state.clone()),
                    None => object.remove("requestState"),
                };
            }
        }
        Err(ClientError::Protocol(format!(
            "{method}: the server still asks for input after {} rounds; raise ClientBuilder::max_input_rounds to answer more",
            self.inner.max_input_rounds
        )))
    }

    /// Asks the server for log messages (`notifications/message`) at `level` and above: on a
    /// session with `logging/setLevel`; on 2026-07-28, where that method is gone, by sending
    /// the level in every later request's `_meta` (`io.modelcontextprotocol/logLevel`)
    /// ([logging](https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging)).
    ///
    /// Errors: as [`request`](Self::request) (on a session; nothing is sent on 2026-07-28).
    pub async fn set_logging_level(&self, level: LogLevel) -> Result<(), ClientError> {
        if !self.inner.session.modern {
            self.request("logging/setLevel", json!({ "level": level })).await?;
        }
        *self.inner.log_level.write().unwrap_or_else(|p| p.into_inner()) = Some(level);
        Ok(())
    }

    /// Suggestions for an argument of a prompt or resource template (`completion/complete`,
    /// [completion](https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion)):
    /// `argument` is its name, `value` what the user typed so far, `context` the values of the
    /// arguments already chosen (`{"name": "value", ...}`, or `None`).
    ///
    /// Errors: [`ClientError::Rpc`] `-32601` when the server offers no completions, `-32602`
    /// for an unknown prompt or template; as [`request`](Self::request) otherwise.
    pub async fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        context: Option<Map<String, Value>>,
    ) -> Result<Completion, ClientError> {
        let mut params = json!({ "ref": reference, "argument": { "name": argument, "value": value } });
        if let Some(arguments) = context {
            params["context"] = json!({ "arguments": arguments });
        }
        let mut result = self.request("completion/complete", params).await?;
        decode("completion/complete", result.get_mut("completion").map(Value::take).unwrap_or_default())
    }

    /// Subscribes to list changes and resource updates on 2026-07-28 (`subscriptions/listen`,
    /// [subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)):
    /// waits for the server's acknowledgement (at most the request timeout), then yields the
    /// granted notifications, each tagged with the subscription's id, in order. When the
    /// server ends the subscription gracefully it is opened again; dropping the
    /// [`Subscription`] ends it. Several may be open at once.
    ///
    /// ```no_run
    /// # async fn run(client: switchyard_client::Client) -> Result<(), switchyard_client::ClientError> {
    /// use futures::StreamExt;
    /// use switchyard_client::SubscriptionFilter;
    ///
    /// let mut changes = client.listen(SubscriptionFilter::new().tools().resource("file:///cfg.toml")).await?;
    /// while let Some(event) = changes.next().await {
    ///     println!("{}", event?.method); // notifications/tools/list_changed, notifications/resources/updated
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`ClientError::Protocol`] on a session (where `notifications()` carries list
    /// changes and [`subscribe_resource`](Self::subscribe_resource) asks for updates), or when a
    /// notification of the subscription comes before its acknowledgement;
    /// [`ClientError::Rpc`] `-32601` from a server without subscriptions;
    /// [`ClientError::Timeout`] when no acknowledgement comes.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        if !self.inner.session.modern {
            return Err(ClientError::Protocol(format!(
                "subscriptions/listen exists on 2026-07-28, not on a {} session",
                self.inner.session.version
            )));
        }
        self.listen_with(json!({ "notifications": filter })).await
    }

    /// [`listen`](Self::listen) with the request's params as given (`notifications`, and a
    /// `_meta` of the caller's, such as one declaring an extension); modern only.
    pub(crate) async fn listen_with(&self, params: Value) -> Result<Subscription, ClientError> {
        let params = self.inner.session.stamp(params)?;
        crate::listen::listen(self.inner.peer.clone(), params, self.inner.timeout).await
    }

    /// Asks a session server for `notifications/resources/updated` when the resource at `uri`
    /// changes (`resources/subscribe`; the server must declare `resources.subscribe`).
    ///
    /// Errors: [`ClientError::Protocol`] on 2026-07-28, which has no such method (a
    /// subscription there rides `subscriptions/listen`); as [`request`](Self::request).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.legacy_only("resources/subscribe")?;
        self.request("resources/subscribe", json!({ "uri": uri })).await.map(drop)
    }

    /// Ends a [`subscribe_resource`](Self::subscribe_resource) (`resources/unsubscribe`).
    ///
    /// Errors: as [`subscribe_resource`](Self::subscribe_resource).
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.legacy_only("resources/unsubscribe")?;
        self.request("resources/unsubscribe", json!({ "uri": uri })).await.map(drop)
    }

    fn legacy_only(&self, method: &str) -> Result<(), ClientError> {
        if self.inner.session.modern {
            return Err(ClientError::Protocol(format!("{method} does not exist on 2026-07-28")));
        }
        Ok(())
    }

    /// The `inputResponses` for an `input_required` `result`: each input request answered by
    /// its handler, concurrently, under the same key.
    pub(crate) async fn answer_inputs(&self, method: &str, result: &Value) -> Result<Map<String, Value>, ClientError> {
        if !self.inner.session.modern {
            return Err(ClientError::Protocol(format!(
                "{method}: an input_required result on a {} session, where servers ask with requests",
                self.inner.session.version
            )));
        }
        let requests = result.get("inputRequests").and_then(Value::as_object);
        let Some(requests) = requests.filter(|r| !r.is_empty()) else {
            // Answering nothing would only repeat the same request.
            return Err(ClientError::Protocol(format!("{method}: an input_required result that asks for no input")));
        };
        let handlers = &self.inner.handlers;
        let answers = requests.iter().map(|(key, request)| async move {
            let kind = request.get("method").and_then(Value::as_str).unwrap_or_default();
            if !handlers.serves(kind) {
                return Err(ClientError::Protocol(format!(
                    "{method}: the server asks for {kind:?} (inputRequests.{key}), which this client has no handler for"
                )));
            }
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            // A handler's refusal is no answer the wire can carry inside `inputResponses`: the
            // call fails with it, as a server's own error would.
            let answer = handlers
                .answer(kind, params)
                .await
                .map_err(|error| ClientError::Rpc { method: kind.to_owned(), error: Box::new(error) })?;
            Ok((key.clone(), answer))
        });
        futures::future::try_join_all(answers).await.map(Map::from_iter)
    }

    /// Sends a notification (`_meta` added on the 2026-07-28 wire).
    ///
    /// Errors: [`ClientError::Encode`] as for [`request`](Self::request); [`ClientError::Closed`];
    /// [`ClientError::Timeout`] when the server has stopped reading and the queue stays full.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let params = self.inner.session.stamp(params)?;
        self.inner.peer.notify(method, params, self.inner.timeout).await
    }

    /// Checks that the server answers: `ping` on a session, `server/discover` on 2026-07-28
    /// (which has no `ping`).
    ///
    /// Errors: as [`request`](Self::request).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = if self.inner.session.modern { "server/discover" } else { "ping" };
        self.request(method, json!({})).await.map(drop)
    }

    /// Every tool, following `nextCursor` through all pages.
    ///
    /// Errors: as [`tools`](Self::tools).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        collect(self.tools()).await
    }

    /// The tools one at a time, page by page as they are needed (`tools/list`).
    ///
    /// A tool whose input schema marks arguments with `x-mcp-header` in a way the
    /// [schema extension](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#schema-extension)
    /// forbids (an empty or non-token name, one used twice, on a property that is no string,
    /// integer or boolean) is left out, with a warning: clients must reject it. The
    /// annotations of the others are remembered, for the `Mcp-Param-*` headers of
    /// [`call_tool`](Self::call_tool) over HTTP.
    ///
    /// Errors (as the stream's last item): as [`request`](Self::request);
    /// [`ClientError::Protocol`] when a page has no `tools` array or an entry is no `Tool`, or
    /// a cursor repeats.
    pub fn tools(&self) -> impl Stream<Item = Result<Tool, ClientError>> + Send + 'static {
        use futures::StreamExt;
        let param_headers = self.inner.param_headers.clone();
        // Read only by a session's task calls.
        let task_support = (!self.inner.session.modern).then(|| self.inner.task_support.clone());
        self.pages("tools/list", "tools").filter_map(move |tool: Result<Tool, ClientError>| {
            if let (Ok(tool), Some(task_support)) = (&tool, &task_support) {
                let support = tool.extra.get("execution").and_then(|e| e.get("taskSupport")).and_then(Value::as_str);
                let may = matches!(support, Some("optional" | "required"));
                task_support.lock().unwrap_or_else(|p| p.into_inner()).insert(tool.name.clone(), may);
            }
            let kept = match tool {
                Ok(tool) => match param_headers.learn(&tool.name, &tool.input_schema) {
                    Ok(()) => Some(Ok(tool)),
                    Err(reason) => {
                        tracing::warn!(target: "switchyard_client", tool = %tool.name, %reason, "a listed tool is left out: its x-mcp-header annotations break the rules");
                        None
                    }
                },
                Err(e) => Some(Err(e)),
            };
            std::future::ready(kept)
        })
    }

    /// Calls tool `name` with `arguments` (any value serializing to a JSON object; `()` or
    /// `json!({})` for none).
    ///
    /// A tool that ran and failed is `Ok` with `is_error: Some(true)`.
    ///
    /// Over HTTP on 2026-07-28, arguments the tool's schema marks with `x-mcp-header` are
    /// mirrored in `Mcp-Param-*` headers, as learnt from the last [`tools`](Self::tools)
    /// listing; when the server refuses the headers (`-32020`, the tool changed or was never
    /// listed), the tools are listed again and the call is sent once more.
    ///
    /// Errors: [`ClientError::Rpc`] `-32602` for an unknown tool or arguments the server
    /// refuses outright; [`ClientError::Encode`] when the arguments are not a JSON object;
    /// [`ClientError::Protocol`] when the result is no `CallToolResult`; as [`request`](Self::request) otherwise.
    pub async fn call_tool(&self, name: &str, arguments: impl Serialize) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::default()).await
    }

    /// [`call_tool`](Self::call_tool) with per-request [`RequestOptions`] (progress,
    /// cancellation, timeout).
    ///
    /// Errors: as [`call_tool`](Self::call_tool) and [`request_with`](Self::request_with).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        let result = self.call_tool_text_with(name, arguments, options).await?;
        decode_text("tools/call", &result)
    }

    /// [`call_tool_with`](Self::call_tool_with), the `CallToolResult` left as the JSON text the
    /// server sent (the `result` member of its response), for a caller that passes it on
    /// without decoding it: a gateway. Nothing in it is checked beyond its being JSON; the
    /// runtime's [`ToolResultText::from_peer_text`](switchyard::ToolResultText::from_peer_text)
    /// checks it and keeps it as text where it may.
    ///
    /// Errors: as [`call_tool_with`](Self::call_tool_with), but a result that is no
    /// `CallToolResult` is returned, not refused.
    pub async fn call_tool_text_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, ClientError> {
        let arguments = arguments_object(arguments)?;
        let params = json!({ "name": name, "arguments": arguments });
        self.relisting_on_header_mismatch(params, options, |params, options| {
            self.request_text("tools/call", params, options)
        })
        .await
    }

    /// Sends a `tools/call` (`params`, `options`) with `send` and, when the server refuses its
    /// `Mcp-Param-*` headers (`-32020`: the tool changed or was never listed), lists the tools
    /// again, which updates the headers, and sends it once more.
    ///
    /// Only a 2026-07-28 server over HTTP checks those headers; elsewhere the params are sent
    /// once, without a copy kept for a second try, and the returned future is `send`'s own.
    /// Over HTTP it is boxed: its room for the copy and the retry would otherwise size every
    /// call's future.
    ///
    /// Errors: what `send` returns (the second `-32020` too); the listing's error.
    pub(crate) fn relisting_on_header_mismatch<'a, T, F, Fut>(
        &'a self,
        params: Value,
        options: RequestOptions,
        send: F,
    ) -> impl Future<Output = Result<T, ClientError>> + 'a
    where
        F: Fn(Value, RequestOptions) -> Fut + 'a,
        Fut: Future<Output = Result<T, ClientError>> + 'a,
        T: 'a,
    {
        if !(self.inner.session.modern && self.inner.peer.is_streamable_http()) {
            return Either::Left(send(params, options));
        }
        Either::Right(Box::pin(async move {
            match send(params.clone(), options.clone()).await {
                Err(ClientError::Rpc { error, .. }) if error.code() == switchyard::ErrorCode::HEADER_MISMATCH => {
                    self.list_tools().await?;
                    send(params, options).await
                }
                other => other,
            }
        }))
    }

    /// Every prompt, through all pages (`prompts/list`).
    ///
    /// Errors: as [`tools`](Self::tools).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        collect(self.pages("prompts/list", "prompts")).await
    }

    /// Prompt `name` filled with `arguments` (`prompts/get`).
    ///
    /// Errors: [`ClientError::Rpc`] `-32602` for an unknown prompt or a missing required
    /// argument; as [`request`](Self::request) otherwise.
    pub async fn get_prompt<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, ClientError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let arguments: Map<String, Value> =
            arguments.into_iter().map(|(k, v)| (k.into(), Value::String(v.into()))).collect();
        let params = json!({ "name": name, "arguments": arguments });
        let result = self.request_text("prompts/get", params, RequestOptions::default()).await?;
        decode_text("prompts/get", &result)
    }

    /// Every resource, through all pages (`resources/list`).
    ///
    /// Errors: as [`tools`](Self::tools).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        collect(self.pages("resources/list", "resources")).await
    }

    /// Every resource template, through all pages (`resources/templates/list`).
    ///
    /// Errors: as [`tools`](Self::tools).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        collect(self.pages("resources/templates/list", "resourceTemplates")).await
    }

    /// The contents of the resource at `uri` (`resources/read`).
    ///
    /// Errors: [`ClientError::Rpc`] `-32002` (or `-32602` on older servers) when there is no
    /// such resource; as [`request`](Self::request) otherwise.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let result = self.request_text("resources/read", json!({ "uri": uri }), RequestOptions::default()).await?;
        decode_text("resources/read", &result)
    }

    /// The server's notifications from now on (`notifications/message`, progress, list
    /// changes, ...), in order. A subscriber more than 256 behind misses the oldest (logged);
    /// the stream ends when the connection does.
    pub fn notifications(&self) -> impl Stream<Item = Notification> + Send + 'static {
        let peer = self.inner.peer.clone();
        let rx = peer.subscribe();
        futures::stream::unfold((peer, rx), |(peer, mut rx)| async move {
            loop {
                // Biased: what arrived before the connection ended is delivered first.
                let received = tokio::select! {
                    biased;
                    received = rx.recv() => received,
                    () = peer.closed() => return None,
                };
                match received {
                    Ok(notification) => return Some((notification, (peer, rx))),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(target: "switchyard_client", missed, "notifications were missed by a slow reader");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.peer.is_closed()
    }

    /// Ends the connection: waiting requests fail with [`ClientError::Closed`], the server's
    /// input is closed in the background (a pending write is abandoned; a final flush gets
    /// 5 s; over HTTP a session is ended with `DELETE`), and a child started by
    /// [`ClientBuilder::connect_stdio`] gets up to 5 s to exit before it is killed
    /// ([shutdown](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#shutdown)).
    pub async fn close(&self) {
        self.inner.peer.close();
        if let Some(child) = &self.inner.child {
            let mut child = child.lock().await;
            if tokio::time::timeout(Duration::from_secs(5), child.wait()).await.is_err() {
                let _ = child.kill().await;
            }
        }
    }

    /// Resolves when the connection has ended (the server closed it, or [`close`](Self::close)).
    pub async fn closed(&self) {
        self.inner.peer.closed().await;
    }

    /// The items under `key` of every page of the list `method`.
    fn pages<T: DeserializeOwned + Send + 'static>(
        &self,
        method: &'static str,
        key: &'static str,
    ) -> impl Stream<Item = Result<T, ClientError>> + Send + 'static {
        let client = self.clone();
        let state = Pages {
            client,
            cursor: None,
            seen: std::collections::HashSet::new(),
            buffered: Vec::new().into_iter(),
            done: false,
        };
        futures::stream::unfold(state, move |mut state| async move {
            loop {
                if let Some(item) = state.buffered.next() {
                    return Some((Ok(item), state));
                }
                if state.done {
                    return None;
                }
                match state.next_page(method, key).await {
                    Ok(items) => state.buffered = items.into_iter(),
                    Err(e) => {
                        state.done = true;
                        return Some((Err(e), state));
                    }
                }
            }
        })
    }
}

/// Where a paginated listing stands.
struct Pages<T> {
    client: Client,
    cursor: Option<String>,
    seen: std::collections::HashSet<String>,
    buffered: std::vec::IntoIter<T>,
    done: bool,
}

impl<T: DeserializeOwned> Pages<T> {
    async fn next_page(&mut self, method: &str, key: &str) -> Result<Vec<T>, ClientError> {
        let params = match &self.cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let mut page = self.client.request(method, params).await?;
        let items = page.get_mut(key).map(Value::take).unwrap_or(Value::Null);
        let Value::Array(items) = items else {
            return Err(ClientError::Protocol(format!("{method}: the result has no `{key}` array")));
        };
        let items = items
            .into_iter()
            .map(|item| serde_json::from_value(item).map_err(|e| ClientError::Protocol(format!("{method}: {e}"))))
            .collect::<Result<Vec<T>, _>>()?;
        match page.get("nextCursor").and_then(Value::as_str) {
            // A server that hands out a cursor twice would page forever.
            Some(next) if self.seen.contains(next) => {
                return Err(ClientError::Protocol(format!("{method}: the cursor {next:?} came back a second time")));
            }
            Some(_) if self.seen.len() + 1 >= self.client.inner.max_pages => {
                return Err(ClientError::Protocol(format!(
                    "{method}: more than {} pages; raise ClientBuilder::max_pages to follow more",
                    self.client.inner.max_pages
                )));
            }
            Some(next) => {
                self.seen.insert(next.to_owned());
                self.cursor = Some(next.to_owned());
            }
            None => self.done = true,
        }
        Ok(items)
    }
}

async fn collect<T>(stream: impl Stream<Item = Result<T, ClientError>>) -> Result<Vec<T>, ClientError> {
    use futures::TryStreamExt;
    stream.try_collect().await
}

/// Whether stamped 2026-07-28 `params` declare a capability an `input_required` round may ask
/// for (`elicitation`, `sampling` or `roots` in `_meta`'s client capabilities).
fn declares_input(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(Value::as_object)
        .is_some_and(|c| ["elicitation", "sampling", "roots"].iter().any(|k| c.contains_key(*k)))
}

/// The `_meta` object of `params`, made where there is none (`params` of `null` become `{}`).
pub(crate) fn meta_mut(params: &mut Value) -> &mut Map<String, Value> {
    if !params.is_object() {
        *params = Value::Object(Map::new());
    }
    let object = params.as_object_mut().expect("made an object above");
    let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("made an object above")
}

/// Leaves out an empty `_meta`, and params that are then empty (a session request with none).
fn drop_empty_meta(params: &mut Value) {
    if let Some(object) = params.as_object_mut() {
        object.remove("_meta");
        if object.is_empty() {
            *params = Value::Null;
        }
    }
}

pub(crate) fn arguments_object(arguments: impl Serialize) -> Result<Value, ClientError> {
    match serde_json::to_value(arguments) {
        Ok(Value::Null) => Ok(json!({})),
        Ok(object @ Value::Object(_)) => Ok(object),
        Ok(other) => Err(ClientError::Encode(format!("tool arguments must be a JSON object, not {other}"))),
        Err(e) => Err(ClientError::Encode(format!("the tool arguments could not be encoded: {e}"))),
    }
}

/// Whether a 2026-07-28 result is `input_required`
/// ([MRTR](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).
/// The text is read only when it could say so: it holds the word, or a `\u` escape that could
/// spell it. An object read plainly decides; anything else (a repeated key, say) is read as a
/// `Value`, as every result was before.
fn asks_for_input(result: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "resultType", borrow)]
        result_type: Option<std::borrow::Cow<'a, str>>,
    }
    let text = result.get();
    if !text.contains("input_required") && !text.contains("\\u") {
        return false;
    }
    if text.starts_with('{')
        && let Ok(kind) = serde_json::from_str::<Kind>(text)
    {
        return kind.result_type.as_deref() == Some("input_required");
    }
    serde_json::from_str::<Value>(text)
        .is_ok_and(|v| v.get("resultType").and_then(Value::as_str) == Some("input_required"))
}

/// The answers of one `input_required` round from a request's own input handler
/// ([`RequestOptions::on_input`]), all asked at once.
///
/// Errors: [`ClientError::Protocol`] for a round that asks for nothing; the handler's error as
/// [`ClientError::Rpc`] naming the input method.
pub(crate) async fn answer_with(
    handler: &InputFn,
    method: &str,
    result: &Value,
) -> Result<Map<String, Value>, ClientError> {
    let requests = result.get("inputRequests").and_then(Value::as_object);
    let Some(requests) = requests.filter(|r| !r.is_empty()) else {
        return Err(ClientError::Protocol(format!("{method}: an input_required result that asks for no input")));
    };
    let answers = requests.iter().map(|(key, request)| {
        let kind = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        let asked = handler(key.clone(), kind.clone(), params);
        async move {
            let answer = asked.await.map_err(|error| ClientError::Rpc { method: kind, error: Box::new(error) })?;
            Ok::<_, ClientError>((key.clone(), answer))
        }
    });
    futures::future::try_join_all(answers).await.map(Map::from_iter)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    #[test]
    fn a_typed_result_decodes_from_text_as_from_a_value() {
        for text in [
            r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
            // A repeated key: the text decode refuses it, the `Value` keeps the last one.
            r#"{"content":[],"content":[{"type":"text","text":"x"}]}"#,
            r#"{"content":[{"type":"text","text":"a","text":"b"}]}"#,
            r#"{"content":"not a list"}"#,
            r#"[1]"#,
        ] {
            let from_text = decode_text::<CallToolResult>("tools/call", &raw(text));
            let from_value = decode::<CallToolResult>("tools/call", serde_json::from_str(text).expect("JSON"));
            match (from_text, from_value) {
                (Ok(a), Ok(b)) => assert_eq!(
                    serde_json::to_value(a).expect("encodes"),
                    serde_json::to_value(b).expect("encodes"),
                    "{text}"
                ),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (a, b) => panic!("{text}: {a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn input_required_is_found_however_it_is_spelled() {
        for (text, asks) in [
            (r#"{"resultType":"input_required","inputRequests":{}}"#, true),
            (r#"{"resultType":"input\u005frequired"}"#, true),
            (r#"{"resultType":"complete","resultType":"input_required"}"#, true),
            (r#"{"resultType":"input_required","resultType":"complete"}"#, false),
            (r#"{"resultType":"complete","content":[{"type":"text","text":"input_required"}]}"#, false),
            (r#"{"resultType":"complete","note":"a \"quoted\"\nline"}"#, false),
            (r#"["input_required"]"#, false),
            (r#"{"resultType":7,"x":"input_required"}"#, false),
            (r#"{"content":[]}"#, false),
        ] {
            assert_eq!(asks_for_input(&raw(text)), asks, "{text}");
            let by_value = serde_json::from_str::<Value>(text).expect("JSON").get("resultType").and_then(Value::as_str)
                == Some("input_required");
            assert_eq!(asks, by_value, "{text}");
        }
    }
}
