use super::{AuthError, Principal, TokenVerifier};
use serde_json::Value;

/// Verifies JWTs with the `jsonwebtoken` crate: signature and algorithm, `exp`/`nbf`, and, when
/// configured, `iss` and `aud`. The principal's id is `sub`; its roles come from a claim that
/// holds an array of strings (default `roles`) or a space-separated string (as `scope` does).
pub struct JwtVerifier {
    key: jsonwebtoken::DecodingKey,
    validation: jsonwebtoken::Validation,
    roles_claim: String,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier").field("roles_claim", &self.roles_claim).finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// HMAC-SHA256 (`HS256`) tokens signed with `secret`.
    ///
    /// Errors: [`AuthError`] when the key is refused (e.g. empty).
    pub fn hs256(secret: &[u8]) -> Result<Self, AuthError> {
        let key = jsonwebtoken::DecodingKey::from_secret(secret).map_err(|e| AuthError(e.to_string()))?;
        Ok(Self::new(key, jsonwebtoken::Algorithm::HS256))
    }

    /// RSA (`RS256`) tokens verified with a PEM public key.
    ///
    /// Errors: [`AuthError`] when the PEM cannot be read.
    pub fn rs256_pem(public_key_pem: &[u8]) -> Result<Self, AuthError> {
        let key = jsonwebtoken::DecodingKey::from_rsa_pem(public_key_pem).map_err(|e| AuthError(e.to_string()))?;
        Ok(Self::new(key, jsonwebtoken::Algorithm::RS256))
    }

    /// Tokens of `algorithm` verified with `key`.
    pub fn new(key: jsonwebtoken::DecodingKey, algorithm: jsonwebtoken::Algorithm) -> Self {
        let mut validation = jsonwebtoken::Validation::new(algorithm);
        validation.set_required_spec_claims(&["exp", "sub"]);
        JwtVerifier { key, validation, roles_claim: "roles".to_owned() }
    }

    /// Requires `iss` to be `issuer`.
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.validation.set_issuer(&[issuer]);
        self
    }

    /// Requires `aud` to contain `audience`.
    pub fn audience(mut self, audience: &str) -> Self {
        self.validation.set_audience(&[audience]);
        self
    }

    /// Reads roles from `claim` instead of `roles`.
    pub fn roles_claim(mut self, claim: impl Into<String>) -> Self {
        self.roles_claim = claim.into();
        self
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let data =
            jsonwebtoken::decode::<Value>(token, &self.key, &self.validation).map_err(|e| AuthError(e.to_string()))?;
        let claims = data.claims;
        let id = claims.get("sub").and_then(Value::as_str).ok_or_else(|| AuthError("no `sub` claim".to_owned()))?;
        let roles: Vec<String> = match claims.get(&self.roles_claim) {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            _ => Vec::new(),
        };
        let mut p = Principal::new(id, roles);
        p.claims = claims;
        Ok(p)
    }
}
