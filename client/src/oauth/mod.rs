//! Signing in to a protected MCP server over HTTP
//! ([authorization](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization)):
//! a `401` starts discovery (the server's protected resource metadata, its authorization
//! server's metadata), the client gets a client id (pre-registered, a client ID metadata
//! document URL, or dynamic registration), runs the authorization code flow with PKCE and the
//! `resource` parameter through the application's [`Authorizer`] (which shows the user the
//! sign-in page and hands back where it redirected), and retries with the access token. A `403`
//! `insufficient_scope` asks again for the union of the scopes held and those the challenge
//! names; an expired token is refreshed.
//!
//! Without a user, the client signs in with the client credentials grant, a workload identity
//! token ([`OAuthConfig::workload_identity`]) or the user's enterprise identity provider
//! ([`OAuthConfig::enterprise_managed`]). Tokens are bound to a key of the connection (DPoP)
//! where the server asks for it ([`OAuthConfig::dpop`]).
//!
//! The OAuth exchanges themselves (authorization URL, PKCE, token and refresh requests, client
//! authentication) are the `oauth2` crate's.

mod bounded;
mod challenge;
mod discovery;
mod dpop;
mod flow;
mod grant;

pub(crate) use challenge::Challenge;
pub(crate) use flow::{Credentials, OAuthSession};

use futures::future::BoxFuture;
use std::future::Future;
use std::sync::Arc;

/// Shows the user the authorization server's sign-in page and hands back the redirect.
///
/// `authorize(url)` gets the full authorization URL (`https://as.example.com/authorize?...`);
/// it opens a browser (or prints the URL), waits for the authorization server to redirect to
/// the configured redirect URI, and returns that full redirect URL
/// (`http://127.0.0.1:8976/callback?code=...&state=...&iss=...`). The client checks `state`
/// and `iss` itself. An `Err` (the user gave up) fails the request that needed the token with
/// [`ClientError::Auth`](crate::ClientError::Auth).
///
/// Any `Fn(String) -> impl Future<Output = Result<String, String>>` is an `Authorizer`.
pub trait Authorizer: Send + Sync + 'static {
    /// Runs the sign-in at `authorization_url`; returns the redirect URL with `code`.
    fn authorize(&self, authorization_url: String) -> BoxFuture<'static, Result<String, String>>;
}

impl<F, Fut> Authorizer for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    fn authorize(&self, authorization_url: String) -> BoxFuture<'static, Result<String, String>> {
        Box::pin(self(authorization_url))
    }
}

/// Hands the client a token it presents as an assertion: a workload identity token
/// ([`OAuthConfig::workload_identity`]) or the user's ID token
/// ([`IdentityProvider::new`]).
///
/// `token(audience)` gets who the token will be presented to (the authorization server's
/// issuer URL for a workload identity token, the identity provider's token endpoint for an ID
/// token) and returns the token, a compact JWT. It is called at every sign-in, so a platform
/// token that rotates (a Kubernetes projected service account token, a CI job's OIDC token) is
/// read fresh. An `Err` fails the sign-in with [`ClientError::Auth`](crate::ClientError::Auth).
///
/// Any `Fn(String) -> impl Future<Output = Result<String, String>>` is a `TokenSource`.
pub trait TokenSource: Send + Sync + 'static {
    /// The token to present to `audience`.
    fn token(&self, audience: String) -> BoxFuture<'static, Result<String, String>>;
}

impl<F, Fut> TokenSource for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, String>> + Send + 'static,
{
    fn token(&self, audience: String) -> BoxFuture<'static, Result<String, String>> {
        Box::pin(self(audience))
    }
}

/// The enterprise identity provider of [`OAuthConfig::enterprise_managed`]: where the user's
/// ID token is exchanged for an identity assertion authorization grant (ID-JAG), and as which
/// client.
#[derive(Clone)]
pub struct IdentityProvider {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) id_token: Arc<dyn TokenSource>,
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IdentityProvider {
    /// The identity provider whose token endpoint is `token_endpoint`
    /// (`https://idp.example.com/oauth2/token`), where this application is the client
    /// `client_id` (a public client unless [`client_secret`](Self::client_secret) is set), and
    /// `id_token` gives the signed-in user's OpenID Connect ID token.
    pub fn new(token_endpoint: impl Into<String>, client_id: impl Into<String>, id_token: impl TokenSource) -> Self {
        IdentityProvider {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token: Arc::new(id_token),
        }
    }

    /// The client secret at the identity provider (sent as `client_secret_basic`).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// How the client signs in to a protected server: its redirect URI, its identity, and the
/// [`Authorizer`] that shows the user the sign-in page. Pass it to
/// [`ClientBuilder::oauth`](crate::ClientBuilder::oauth).
///
/// ```no_run
/// # async fn run() -> Result<(), switchyard_client::ClientError> {
/// use switchyard_client::{ClientBuilder, OAuthConfig};
///
/// let oauth = OAuthConfig::new("http://127.0.0.1:8976/callback", |url: String| async move {
///     println!("Open {url} and paste the address you are sent back to:");
///     let mut line = String::new();
///     std::io::stdin().read_line(&mut line).map_err(|e| e.to_string())?;
///     Ok(line.trim().to_owned())
/// })
/// .client_name("my-agent");
/// let client = ClientBuilder::new("my-agent", "1.0.0").oauth(oauth).connect_http("https://mcp.example.com/mcp").await?;
/// # let _ = client; Ok(()) }
/// ```
#[derive(Clone)]
pub struct OAuthConfig {
    pub(crate) redirect_uri: String,
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) client_name: String,
    pub(crate) application_type: String,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) pre_registered: Option<(String, Option<String>)>,
    pub(crate) scopes: Option<Vec<String>>,
    /// Set for the grants with no user and no redirect.
    pub(crate) machine: Option<MachineCredential>,
    /// Whether tokens are bound to a key (DPoP): `None` when the server asks for it.
    pub(crate) dpop: Option<bool>,
}

/// How a client with no user gets its tokens.
#[derive(Clone)]
pub(crate) enum MachineCredential {
    /// A client secret, sent as the token endpoint's metadata asks (basic or post).
    Secret,
    /// A JWT signed with this private key (`private_key_jwt`,
    /// [RFC 7523 §2.2](https://www.rfc-editor.org/rfc/rfc7523#section-2.2)).
    PrivateKeyJwt { pem: String, algorithm: String },
    /// The JWT bearer grant with a workload identity token as the assertion.
    WorkloadIdentity(Arc<dyn TokenSource>),
    /// The user's ID token exchanged at the identity provider for an ID-JAG, which is the
    /// assertion of the JWT bearer grant.
    Enterprise(IdentityProvider),
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("pre_registered", &self.pre_registered.as_ref().map(|(id, _)| id))
            .field("scopes", &self.scopes)
            .field("dpop", &self.dpop)
            .finish_non_exhaustive()
    }
}

impl OAuthConfig {
    /// Signs in with the authorization code flow, the authorization server redirecting to
    /// `redirect_uri` (registered as given; a loopback `http://127.0.0.1:PORT/...` for a
    /// native app), the user's part done by `authorizer`. The client registers itself
    /// dynamically ([RFC 7591](https://www.rfc-editor.org/rfc/rfc7591)) as a `native`
    /// application named after the crate unless [`client_name`](Self::client_name),
    /// [`client_metadata_url`](Self::client_metadata_url) or
    /// [`pre_registered`](Self::pre_registered) say otherwise.
    pub fn new(redirect_uri: impl Into<String>, authorizer: impl Authorizer) -> Self {
        OAuthConfig {
            redirect_uri: redirect_uri.into(),
            authorizer: Arc::new(authorizer),
            client_name: "switchyard-mcp-client".to_owned(),
            application_type: "native".to_owned(),
            client_metadata_url: None,
            pre_registered: None,
            scopes: None,
            machine: None,
            dpop: None,
        }
    }

    /// A client that signs in as itself, with no user: the client credentials grant with a
    /// client secret (`client_secret_basic`, or `client_secret_post` where the authorization
    /// server lists only that), as the
    /// [client credentials extension](https://github.com/modelcontextprotocol/ext-auth)
    /// describes for machine-to-machine MCP clients. Discovery, `resource` and scopes as for
    /// the authorization code flow; no registration, no browser.
    pub fn client_credentials(client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        let mut config = OAuthConfig::new("", no_user);
        config.pre_registered = Some((client_id.into(), Some(client_secret.into())));
        config.machine = Some(MachineCredential::Secret);
        config
    }

    /// [`client_credentials`](Self::client_credentials) authenticated with a JWT this client
    /// signs (`private_key_jwt`, RFC 7523): `private_key_pem` is a PKCS#8 PEM key for
    /// `algorithm` (`ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...); the assertion names the
    /// client as `iss` and `sub`, the authorization server's issuer as `aud`, and lives five
    /// minutes.
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        private_key_pem: impl Into<String>,
        algorithm: impl Into<String>,
    ) -> Self {
        let mut config = OAuthConfig::new("", no_user);
        config.pre_registered = Some((client_id.into(), None));
        config.machine =
            Some(MachineCredential::PrivateKeyJwt { pem: private_key_pem.into(), algorithm: algorithm.into() });
        config
    }

    /// A workload that signs in as itself with a token its platform issued
    /// ([SEP-1933](https://github.com/modelcontextprotocol/modelcontextprotocol/pull/1933),
    /// workload identity federation): the JWT bearer grant
    /// ([RFC 7523 §2.1](https://www.rfc-editor.org/rfc/rfc7523#section-2.1)) with the token
    /// `assertion` gives for the authorization server's issuer as its audience. Discovery,
    /// `resource` and scopes as for the other flows; no registration, no browser. The grant
    /// names no client unless [`pre_registered`](Self::pre_registered) gives a client id.
    ///
    /// A refused grant (`invalid_grant`, `invalid_scope`, `unauthorized_client`) fails the
    /// request with [`ClientError::Auth`](crate::ClientError::Auth) carrying the server's
    /// error, and is not retried with the same token, nor with another grant type.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), switchyard_client::ClientError> {
    /// use switchyard_client::{ClientBuilder, OAuthConfig};
    ///
    /// // A Kubernetes projected service account token, read again at each sign-in.
    /// let oauth = OAuthConfig::workload_identity(|_audience: String| async {
    ///     std::fs::read_to_string("/var/run/secrets/tokens/mcp").map(|t| t.trim().to_owned()).map_err(|e| e.to_string())
    /// });
    /// let client = ClientBuilder::new("batch-job", "1.0.0").oauth(oauth).connect_http("https://mcp.example.com/mcp").await?;
    /// # let _ = client; Ok(()) }
    /// ```
    pub fn workload_identity(assertion: impl TokenSource) -> Self {
        let mut config = OAuthConfig::new("", no_user);
        config.machine = Some(MachineCredential::WorkloadIdentity(Arc::new(assertion)));
        config
    }

    /// Signs in with the user's enterprise single sign-on
    /// ([SEP-990](https://github.com/modelcontextprotocol/ext-auth), enterprise-managed
    /// authorization): the user's ID token is exchanged at `idp`
    /// ([RFC 8693](https://www.rfc-editor.org/rfc/rfc8693) token exchange, `audience` the MCP
    /// server's authorization server, `resource` the MCP server) for an identity assertion
    /// authorization grant, which the client presents to the authorization server in the JWT
    /// bearer grant as `client_id` (with `client_secret` when it is a confidential client). No
    /// browser: the identity provider's policy decides, not a consent screen.
    ///
    /// A refusal at either server fails the request with
    /// [`ClientError::Auth`](crate::ClientError::Auth) naming that server and its error.
    pub fn enterprise_managed(
        idp: IdentityProvider,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        let mut config = OAuthConfig::new("", no_user);
        config.pre_registered = Some((client_id.into(), client_secret));
        config.machine = Some(MachineCredential::Enterprise(idp));
        config
    }

    /// Whether access tokens are bound to a key this connection holds
    /// ([RFC 9449](https://www.rfc-editor.org/rfc/rfc9449) DPoP, the MCP DPoP extension):
    /// every token request and every request to the MCP server then carries a fresh proof
    /// signed with a P-256 key generated for the connection, and the token goes out as
    /// `Authorization: DPoP <token>`.
    ///
    /// `true` requires it (signing in fails with
    /// [`ClientError::Auth`](crate::ClientError::Auth) when the authorization server does not
    /// list `ES256` in `dpop_signing_alg_values_supported`, or answers with a token whose
    /// `token_type` is not `DPoP`, as also where the MCP server requires bound tokens);
    /// `false` never uses it. By default
    /// the client uses DPoP when the MCP server asks for it (a `DPoP` challenge in its `401`, or
    /// `dpop_bound_access_tokens_required` in its protected resource metadata) and the
    /// authorization server supports it. Nonces the servers require (`use_dpop_nonce`) are
    /// picked up and the request sent again, once.
    pub fn dpop(mut self, required: bool) -> Self {
        self.dpop = Some(required);
        self
    }

    /// The `client_name` sent with dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// `"web"` instead of `"native"` as the registered `application_type` (a client whose
    /// redirect URI is a public web page).
    pub fn web_application(mut self) -> Self {
        self.application_type = "web".to_owned();
        self
    }

    /// The HTTPS URL of this client's
    /// [client ID metadata document](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#client-id-metadata-documents),
    /// used as the client id where the authorization server supports such documents
    /// (`client_id_metadata_document_supported`), instead of registering.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client id (and secret, for a confidential client) registered with the authorization
    /// server beforehand; no registration is attempted.
    pub fn pre_registered(mut self, client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        self.pre_registered = Some((client_id.into(), client_secret));
        self
    }

    /// Asks for these scopes at the first sign-in instead of choosing them (by default: the
    /// challenge's `scope`, else the resource's `scopes_supported`, else none).
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }
}

/// The authorizer of a client with no user: never called (the client credentials grant has
/// no authorization step).
async fn no_user(_: String) -> Result<String, String> {
    Err("this client signs in with client credentials; there is no user to ask".to_owned())
}

/// Why signing in failed, before it becomes a [`ClientError::Auth`](crate::ClientError::Auth).
#[derive(Debug)]
pub(crate) struct AuthFailure {
    pub(crate) message: String,
    pub(crate) source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl AuthFailure {
    pub(crate) fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        AuthFailure { message: message.into(), source: Some(Box::new(source)) }
    }
}

pub(crate) fn fail(message: impl Into<String>) -> AuthFailure {
    AuthFailure { message: message.into(), source: None }
}

impl From<AuthFailure> for crate::ClientError {
    fn from(failure: AuthFailure) -> Self {
        crate::ClientError::Auth { message: failure.message, source: failure.source }
    }
}
