//! Opaque access tokens, checked by asking the authorization server (RFC 7662 token
//! introspection), with the answers kept no longer than the tokens live.

use super::{AuthError, Principal, TokenVerifier};
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// Largest introspection response read (bytes).
const MAX_RESPONSE_BYTES: usize = 256 * 1024;

/// Verifies opaque access tokens by POSTing them to the authorization server's introspection
/// endpoint ([RFC 7662 §2](https://www.rfc-editor.org/rfc/rfc7662#section-2)), authenticated
/// as a confidential client with `client_secret_basic`.
///
/// - **Checks**: `active` must be `true`; `exp`, when present, in the future; `nbf`, when
///   present, past; `aud`, when present, must contain the [audience](Self::new) (the server's
///   resource URI, RFC 8707) — [`require_audience`](Self::require_audience) makes it required;
///   `iss`, when [`issuer`](Self::issuer) names one, must equal it. The principal's id is `sub`,
///   else `username`, else `client_id`; scopes come from `scope`, roles from `roles`.
/// - **Cache**: an answer is kept (keyed by the token's SHA-256, never the token) until the
///   token expires, at most [`max_cache`](Self::max_cache) (default 60 s); a refusal for 10 s.
///   Concurrent requests with one token share one introspection. At most 10 000 answers are
///   kept.
/// - **Errors**: [`AuthError::InvalidToken`] (401) for an inactive, expired or foreign token;
///   [`AuthError::Unavailable`] (503) when the endpoint cannot be reached within the
///   [timeout](Self::timeout) (default 5 s), answers another status than 200, or answers
///   something that is not an introspection response.
#[derive(Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    client_id: String,
    client_secret: String,
    audience: String,
    require_audience: bool,
    issuer: Option<String>,
    roles_claim: String,
    max_cache: Duration,
    timeout: Duration,
    client: reqwest::Client,
    cache: moka::future::Cache<[u8; 32], Answer>,
}

/// A cached introspection verdict and how long it stands.
#[derive(Clone)]
struct Answer {
    verdict: Result<Principal, AuthError>,
    ttl: Duration,
}

struct AnswerExpiry;

impl moka::Expiry<[u8; 32], Answer> for AnswerExpiry {
    fn expire_after_create(&self, _: &[u8; 32], answer: &Answer, _: std::time::Instant) -> Option<Duration> {
        Some(answer.ttl)
    }
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.inner.endpoint)
            .field("client_id", &self.inner.client_id)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// Tokens introspected at `endpoint` by the client `client_id`/`client_secret` (registered
    /// with the authorization server for this resource server), for `audience`.
    ///
    /// Errors: [`AuthError::Config`] when `endpoint` is not an absolute `http(s)` URL or the
    /// client id or audience is empty.
    pub fn new(endpoint: &str, client_id: &str, client_secret: &str, audience: &str) -> Result<Self, AuthError> {
        let uri: http::Uri = endpoint
            .parse()
            .map_err(|_| AuthError::config_because(format!("the endpoint {endpoint:?} is not a URL")))?;
        if !matches!(uri.scheme_str(), Some("https" | "http")) || uri.authority().is_none() {
            return Err(AuthError::config_because(format!("the endpoint {endpoint:?} is not an absolute http(s) URL")));
        }
        if client_id.is_empty() {
            return Err(AuthError::config_because("the introspection client id is empty".to_owned()));
        }
        if audience.trim().is_empty() {
            return Err(AuthError::config_because("the audience is empty; use the server's resource URI".to_owned()));
        }
        let timeout = Duration::from_secs(5);
        Ok(IntrospectionVerifier {
            inner: Arc::new(Inner {
                endpoint: endpoint.to_owned(),
                client_id: client_id.to_owned(),
                client_secret: client_secret.to_owned(),
                audience: audience.to_owned(),
                require_audience: false,
                issuer: None,
                roles_claim: "roles".to_owned(),
                max_cache: Duration::from_secs(60),
                timeout,
                client: super::fetch::client(timeout),
                cache: cache(),
            }),
        })
    }

    fn edit(self, f: impl FnOnce(&mut Inner)) -> Self {
        let i = &self.inner;
        let mut inner = Inner {
            endpoint: i.endpoint.clone(),
            client_id: i.client_id.clone(),
            client_secret: i.client_secret.clone(),
            audience: i.audience.clone(),
            require_audience: i.require_audience,
            issuer: i.issuer.clone(),
            roles_claim: i.roles_claim.clone(),
            max_cache: i.max_cache,
            timeout: i.timeout,
            client: i.client.clone(),
            cache: cache(),
        };
        f(&mut inner);
        IntrospectionVerifier { inner: Arc::new(inner) }
    }

    /// Refuses answers without `aud` too (default: `aud` is checked when present).
    pub fn require_audience(self) -> Self {
        self.edit(|i| i.require_audience = true)
    }

    /// Requires `iss`, when the answer has one, to be `issuer`.
    pub fn issuer(self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        self.edit(|i| i.issuer = Some(issuer))
    }

    /// Reads roles from `claim` instead of `roles`.
    pub fn roles_claim(self, claim: impl Into<String>) -> Self {
        let claim = claim.into();
        self.edit(|i| i.roles_claim = claim)
    }

    /// The longest an answer is kept, also for tokens that live longer (default 60 s): how late
    /// a revoked token is noticed.
    pub fn max_cache(self, max: Duration) -> Self {
        self.edit(|i| i.max_cache = max)
    }

    /// How long an introspection may take (default 5 s).
    pub fn timeout(self, timeout: Duration) -> Self {
        self.edit(|i| {
            i.timeout = timeout;
            i.client = super::fetch::client(timeout);
        })
    }
}

fn cache() -> moka::future::Cache<[u8; 32], Answer> {
    moka::future::Cache::builder().max_capacity(10_000).expire_after(AnswerExpiry).build()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl Inner {
    async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let answer = self
            .cache
            .try_get_with(key, async {
                match self.introspect(token).await {
                    Ok(answer) => Ok(answer),
                    // Not cached: the next request asks again.
                    Err(e @ AuthError::Unavailable { .. }) => Err(e),
                    Err(e) => Ok(Answer { verdict: Err(e), ttl: Duration::from_secs(10) }),
                }
            })
            .await
            .map_err(|e: Arc<AuthError>| (*e).clone())?;
        answer.verdict
    }

    /// The verdict on `token` and how long it stands.
    async fn introspect(&self, token: &str) -> Result<Answer, AuthError> {
        let what = format!("introspection at {}", self.endpoint);
        let resp = self
            .client
            .post(&self.endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header(http::header::ACCEPT, "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| AuthError::unavailable(format!("{what}: {e}"), e))?;
        let body = super::fetch::body(resp, MAX_RESPONSE_BYTES, &what).await?;
        let claims: Map<String, Value> = serde_json::from_slice(&body).map_err(|e| {
            AuthError::unavailable(format!("{what}: not an introspection response (RFC 7662 §2.2): {e}"), e)
        })?;
        let refused = |why: &str| Ok(Answer { verdict: Err(AuthError::invalid(why)), ttl: Duration::from_secs(10) });
        if claims.get("active") != Some(&Value::Bool(true)) {
            return refused("the authorization server says the token is not active");
        }
        let now = unix_now();
        let exp = claims.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp <= now) {
            return refused("the token has expired");
        }
        if claims.get("nbf").and_then(Value::as_u64).is_some_and(|nbf| nbf > now) {
            return refused("the token is not valid yet");
        }
        match claims.get("aud") {
            Some(Value::String(a)) if a == &self.audience => {}
            Some(Value::Array(list)) if list.iter().any(|a| a.as_str() == Some(&self.audience)) => {}
            None if !self.require_audience => {}
            _ => return refused("the token is not for this resource (aud)"),
        }
        if let Some(iss) = &self.issuer
            && claims.get("iss").and_then(Value::as_str).is_some_and(|i| i != iss)
        {
            return refused("the token is from another issuer");
        }
        let mut claims = claims;
        if !claims.get("sub").is_some_and(Value::is_string) {
            let id = ["username", "client_id"].iter().find_map(|k| claims.get(*k).filter(|v| v.is_string()).cloned());
            match id {
                Some(id) => {
                    claims.insert("sub".to_owned(), id);
                }
                None => return refused("the introspection response names no subject"),
            }
        }
        let Some(principal) = Principal::from_claims(Value::Object(claims), &self.roles_claim) else {
            return refused("the introspection response names no subject");
        };
        let lives = exp.map_or(self.max_cache, |exp| Duration::from_secs(exp - now));
        Ok(Answer { verdict: Ok(principal), ttl: lives.min(self.max_cache) })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.inner.verify(token))
    }
}
