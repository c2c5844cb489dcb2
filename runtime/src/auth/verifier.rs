use super::Principal;
use std::collections::HashMap;

/// Why a bearer token was refused (HTTP 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid bearer token: {0}")]
pub struct AuthError(pub String);

/// Turns a bearer token into a [`Principal`].
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the text after `Bearer `).
    ///
    /// Errors: [`AuthError`] for a token that is malformed, expired, badly signed or unknown.
    fn verify(&self, token: &str) -> Result<Principal, AuthError>;
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
    fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        self.tokens.get(token).cloned().ok_or_else(|| AuthError("unknown token".to_owned()))
    }
}
