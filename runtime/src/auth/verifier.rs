use super::Principal;
use futures::future::BoxFuture;
use std::collections::HashMap;

/// Why a bearer token did not yield a [`Principal`].
///
/// The HTTP layer ([`BearerAuth`](crate::auth::BearerAuth)) answers
/// [`InvalidToken`](Self::InvalidToken) with 401 and
/// `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1), and
/// [`Unavailable`](Self::Unavailable) with 503 and `Retry-After`: the token may be fine, but
/// nobody could vouch for it.
///
/// Cloneable (a verdict is cached and handed to every request with the same token), so the
/// underlying error of [`Unavailable`](Self::Unavailable) and [`Config`](Self::Config) is
/// shared (`Arc`); [`std::error::Error::source`] returns it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AuthError {
    /// The token is malformed, expired or not yet valid, badly signed, from an issuer that is
    /// not trusted, for another audience, or unknown.
    InvalidToken(String),
    /// The authorization server (its metadata, its key set, its introspection endpoint) could
    /// not be reached, or answered with something that is not what RFC 8414 / RFC 7517 /
    /// RFC 7662 describe, and no cached answer could stand in.
    Unavailable {
        /// What could not be fetched or read, and why.
        message: String,
        /// The HTTP client's or the JSON parser's error, when there is one.
        source: Option<SharedError>,
    },
    /// A verifier was configured with something it cannot use (an unreadable key, an issuer that
    /// is not a URL); returned by constructors, never for a request.
    Config {
        /// What is wrong with the configuration.
        message: String,
        /// The key parser's error, when there is one.
        source: Option<SharedError>,
    },
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::InvalidToken(reason) => write!(f, "invalid bearer token: {reason}"),
            AuthError::Unavailable { message, .. } => write!(f, "cannot verify the bearer token now: {message}"),
            AuthError::Config { message, .. } => write!(f, "invalid verifier configuration: {message}"),
        }
    }
}

// By hand rather than derived: the source is the error inside the `Arc` (so callers can
// downcast it to `reqwest::Error`, ...), not the `Arc` itself.
impl std::error::Error for AuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AuthError::Unavailable { source, .. } | AuthError::Config { source, .. } => {
                source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
            }
            AuthError::InvalidToken(_) => None,
        }
    }
}

/// The underlying error of an [`AuthError`]: shared, so the error stays `Clone`.
pub type SharedError = std::sync::Arc<dyn std::error::Error + Send + Sync + 'static>;

impl AuthError {
    /// [`AuthError::InvalidToken`] with `reason`.
    pub fn invalid(reason: impl Into<String>) -> Self {
        AuthError::InvalidToken(reason.into())
    }

    /// [`AuthError::Unavailable`] with the error that made it so as its source.
    pub fn unavailable(message: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        AuthError::Unavailable { message: message.into(), source: Some(std::sync::Arc::new(source)) }
    }

    /// [`AuthError::Unavailable`] without a source error.
    pub fn unavailable_because(message: impl Into<String>) -> Self {
        AuthError::Unavailable { message: message.into(), source: None }
    }

    /// [`AuthError::Config`] with the error that made it so as its source.
    pub fn config(message: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        AuthError::Config { message: message.into(), source: Some(std::sync::Arc::new(source)) }
    }

    /// [`AuthError::Config`] without a source error.
    pub fn config_because(message: impl Into<String>) -> Self {
        AuthError::Config { message: message.into(), source: None }
    }

    /// Whether the same token may verify later ([`AuthError::Unavailable`]: HTTP 503 with
    /// `Retry-After`, not 401).
    pub fn is_transient(&self) -> bool {
        matches!(self, AuthError::Unavailable { .. })
    }
}

/// Turns a bearer token into a [`Principal`]. Asynchronous, so that a verifier may ask someone:
/// fetch an issuer's keys, or introspect an opaque token (RFC 7662). Keep the usual path free of
/// I/O and locks (cache what was fetched): it runs before every authenticated request.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the text after `Bearer `).
    ///
    /// Errors: [`AuthError::InvalidToken`] for a token that is malformed, expired, badly
    /// signed or unknown; [`AuthError::Unavailable`] when the verdict depends on a server that
    /// cannot be reached.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>>;
}

/// Fixed tokens, each standing for one principal (tests, development, service accounts).
#[derive(Debug, Clone, Default)]
pub struct StaticTokens {
    tokens: HashMap<String, Principal>,
}

impl StaticTokens {
    /// No tokens yet.
    pub fn new() -> Self {
        StaticTokens::default()
    }

    /// Adds `token` for `principal`.
    pub fn with(mut self, token: impl Into<String>, principal: Principal) -> Self {
        self.tokens.insert(token.into(), principal);
        self
    }
}

impl TokenVerifier for StaticTokens {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        let found = self.tokens.get(token).cloned().ok_or_else(|| AuthError::invalid("unknown token"));
        Box::pin(std::future::ready(found))
    }
}
