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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The token is malformed, expired or not yet valid, badly signed, from an issuer that is
    /// not trusted, for another audience, or unknown.
    #[error("invalid bearer token: {0}")]
    InvalidToken(String),
    /// The authorization server (its metadata, its key set, its introspection endpoint) could
    /// not be reached, or answered with something that is not what RFC 8414 / RFC 7517 /
    /// RFC 7662 describe, and no cached answer could stand in.
    #[error("cannot verify the bearer token now: {0}")]
    Unavailable(String),
    /// A verifier was configured with something it cannot use (an unreadable key, an issuer that
    /// is not a URL); returned by constructors, never for a request.
    #[error("invalid verifier configuration: {0}")]
    Config(String),
}

impl AuthError {
    /// [`AuthError::InvalidToken`] with `reason`.
    pub fn invalid(reason: impl Into<String>) -> Self {
        AuthError::InvalidToken(reason.into())
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
