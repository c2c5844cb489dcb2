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
//! The OAuth exchanges themselves (authorization URL, PKCE, token and refresh requests, client
//! authentication) are the `oauth2` crate's.

mod bounded;
mod challenge;
mod discovery;
mod flow;

pub(crate) use challenge::Challenge;
pub(crate) use flow::OAuthSession;

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
    /// Set for the client credentials grant: no user, no redirect.
    pub(crate) machine: Option<MachineCredential>,
}

/// How a client authenticates itself in the client credentials grant.
#[derive(Clone)]
pub(crate) enum MachineCredential {
    /// A client secret, sent as the token endpoint's metadata asks (basic or post).
    Secret,
    /// A JWT signed with this private key (`private_key_jwt`,
    /// [RFC 7523 §2.2](https://www.rfc-editor.org/rfc/rfc7523#section-2.2)).
    PrivateKeyJwt { pem: String, algorithm: String },
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("pre_registered", &self.pre_registered.as_ref().map(|(id, _)| id))
            .field("scopes", &self.scopes)
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
