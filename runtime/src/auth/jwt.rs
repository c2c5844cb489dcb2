use super::{AuthError, Principal, TokenVerifier};
use futures::future::BoxFuture;
use serde_json::Value;
use std::time::Duration;

/// Verifies JWTs signed with one key known in advance (RFC 7519), with the `jsonwebtoken`
/// crate: signature and algorithm, `exp` and `sub` always, `nbf` when present (both with a
/// leeway, default 60 s), and `iss` and `aud` whenever [`issuer`](Self::issuer) and
/// [`audience`](Self::audience) name them: then a token without the claim is refused too.
/// The principal's id is `sub`; roles come from a claim holding an array of strings (default
/// `roles`) or a space-separated string; scopes from `scope` (RFC 9068 §2.2.3) or `scp`.
///
/// For an authorization server that publishes its keys (JWKS, rotation), use
/// [`JwksVerifier`](crate::auth::JwksVerifier).
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
    /// Errors: [`AuthError::Config`] when the key is refused (e.g. empty).
    pub fn hs256(secret: &[u8]) -> Result<Self, AuthError> {
        let key = jsonwebtoken::DecodingKey::from_secret(secret)
            .map_err(|e| AuthError::config(format!("the HS256 secret is refused: {e}"), e))?;
        Ok(Self::new(key, jsonwebtoken::Algorithm::HS256))
    }

    /// RSA (`RS256`) tokens verified with a PEM public key.
    ///
    /// Errors: [`AuthError::Config`] when the PEM cannot be read.
    pub fn rs256_pem(public_key_pem: &[u8]) -> Result<Self, AuthError> {
        let key = jsonwebtoken::DecodingKey::from_rsa_pem(public_key_pem)
            .map_err(|e| AuthError::config(format!("the RSA public key PEM cannot be read: {e}"), e))?;
        Ok(Self::new(key, jsonwebtoken::Algorithm::RS256))
    }

    /// Tokens of `algorithm` verified with `key`.
    pub fn new(key: jsonwebtoken::DecodingKey, algorithm: jsonwebtoken::Algorithm) -> Self {
        JwtVerifier { key, validation: base_validation(algorithm), roles_claim: "roles".to_owned() }
    }

    /// Requires `iss` to be present and equal to `issuer`.
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.validation.set_issuer(&[issuer]);
        self.validation.required_spec_claims.insert("iss".to_owned());
        self
    }

    /// Requires `aud` to be present and to contain `audience` (for an MCP server, its canonical
    /// resource URI, RFC 8707).
    pub fn audience(mut self, audience: &str) -> Self {
        self.validation.set_audience(&[audience]);
        self.validation.required_spec_claims.insert("aud".to_owned());
        self
    }

    /// How far `exp` and `nbf` may be off (clock skew); default 60 s, whole seconds.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.validation.leeway = leeway.as_secs();
        self
    }

    /// Reads roles from `claim` instead of `roles`.
    pub fn roles_claim(mut self, claim: impl Into<String>) -> Self {
        self.roles_claim = claim.into();
        self
    }
}

/// The signature algorithms accepted by default where keys are public (an issuer's key set, a
/// DPoP proof's `jwk`): every asymmetric one jsonwebtoken verifies; never `none` or HMAC, since
/// a public key is no secret.
#[cfg(feature = "oauth")]
pub(crate) const ASYMMETRIC: [jsonwebtoken::Algorithm; 9] = {
    use jsonwebtoken::Algorithm::*;
    [ES256, ES384, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA]
};

/// `exp` and `sub` required, `nbf` checked when present, 60 s leeway, only `algorithm`.
pub(crate) fn base_validation(algorithm: jsonwebtoken::Algorithm) -> jsonwebtoken::Validation {
    let mut validation = jsonwebtoken::Validation::new(algorithm);
    validation.set_required_spec_claims(&["exp", "sub"]);
    validation.validate_nbf = true;
    validation
}

/// What went wrong with a JWT, in words a client developer can act on (the claim or part that
/// failed), rather than the library's variant names.
pub(crate) fn describe(e: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind as K;
    match e.kind() {
        K::ExpiredSignature => "the token has expired (exp)".to_owned(),
        K::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
        K::InvalidAudience => "the token is for another resource (aud)".to_owned(),
        K::InvalidIssuer => "the token is from another issuer (iss)".to_owned(),
        K::InvalidSubject => "the token's subject is not accepted (sub)".to_owned(),
        K::InvalidSignature => "the token's signature does not verify".to_owned(),
        K::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        K::InvalidAlgorithm | K::InvalidAlgorithmName => "the token's alg does not fit its key".to_owned(),
        K::MissingAlgorithm => "the token's header names no alg".to_owned(),
        K::Json(_) => "the token's header or claims are not the JSON a JWT holds".to_owned(),
        _ => "the token is not a well-formed JWT".to_owned(),
    }
}

/// Decodes and checks `token` with `key` under `validation`, and makes its principal.
pub(crate) fn principal_of(
    token: &str,
    key: &jsonwebtoken::DecodingKey,
    validation: &jsonwebtoken::Validation,
    roles_claim: &str,
) -> Result<Principal, AuthError> {
    let data = jsonwebtoken::decode::<Value>(token, key, validation).map_err(|e| AuthError::invalid(describe(&e)))?;
    Principal::from_claims(data.claims, roles_claim).ok_or_else(|| AuthError::invalid("no string `sub` claim"))
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(std::future::ready(principal_of(token, &self.key, &self.validation, &self.roles_claim)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header, encode};
    use serde_json::json;

    const SECRET: &[u8] = b"a test secret that is long enough for HS256";

    fn now() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
    }

    fn token(claims: Value) -> String {
        encode(&Header::default(), &claims, &EncodingKey::from_secret(SECRET).expect("a key")).expect("encodes")
    }

    fn verify(v: &JwtVerifier, t: &str) -> Result<Principal, AuthError> {
        futures::executor::block_on(v.verify(t))
    }

    #[test]
    fn an_unreadable_key_is_a_config_error_that_keeps_the_parser_s_error() {
        let err = JwtVerifier::rs256_pem(b"not a PEM").expect_err("refused");
        assert!(matches!(&err, AuthError::Config { message, .. } if message.contains("PEM")), "{err:?}");
        assert!(!err.is_transient());
        let source = std::error::Error::source(&err).expect("the parser's error");
        assert!(source.downcast_ref::<jsonwebtoken::errors::Error>().is_some(), "{source:?}");
    }

    #[test]
    fn a_configured_audience_or_issuer_is_required_not_just_compared() {
        let v = JwtVerifier::hs256(SECRET).expect("a key").audience("https://mcp.example.com/mcp").issuer("https://as");
        let exp = now() + 600;
        let full = json!({ "sub": "ada", "exp": exp, "aud": "https://mcp.example.com/mcp", "iss": "https://as" });
        assert_eq!(verify(&v, &token(full)).expect("valid").id, "ada");
        let no_aud = json!({ "sub": "ada", "exp": exp, "iss": "https://as" });
        assert!(matches!(verify(&v, &token(no_aud)), Err(AuthError::InvalidToken(_))), "a token without aud");
        let no_iss = json!({ "sub": "ada", "exp": exp, "aud": "https://mcp.example.com/mcp" });
        assert!(verify(&v, &token(no_iss)).is_err(), "a token without iss");
        let other = json!({ "sub": "ada", "exp": exp, "aud": "https://other.example.com/mcp", "iss": "https://as" });
        assert!(verify(&v, &token(other)).is_err(), "a token for another resource");
    }

    #[test]
    fn expiry_and_not_before_count_with_the_leeway() {
        let v = JwtVerifier::hs256(SECRET).expect("a key").leeway(Duration::from_secs(5));
        assert!(verify(&v, &token(json!({ "sub": "a", "exp": now() - 60 }))).is_err(), "expired");
        assert!(verify(&v, &token(json!({ "sub": "a", "exp": now() + 60, "nbf": now() + 60 }))).is_err(), "not yet");
        assert!(
            verify(&v, &token(json!({ "sub": "a", "exp": now() + 60, "nbf": now() + 2 }))).is_ok(),
            "within leeway"
        );
        assert!(verify(&v, &token(json!({ "exp": now() + 60 }))).is_err(), "no sub");
    }

    #[test]
    fn scopes_and_roles_come_from_their_claims() {
        let v = JwtVerifier::hs256(SECRET).expect("a key");
        let p = verify(&v, &token(json!({ "sub": "a", "exp": now() + 60, "roles": ["admin"], "scope": "files:read" })))
            .expect("valid");
        assert!(p.has_role("admin") && p.has_scope("files:read") && !p.has_scope("admin"));
    }
}
