//! JWT access tokens of authorization servers that publish their keys: issuer metadata
//! (RFC 8414, else OpenID Connect Discovery), the key set it names (RFC 7517), kept in memory
//! and fetched again when a token names a key the set lacks (rotation).

use super::jwt::{base_validation, principal_of};
use super::{AuthError, Principal, TokenVerifier};
use arc_swap::ArcSwap;
use base64::Engine as _;
use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest metadata or key set document read (bytes).
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// Verifies JWT access tokens (RFC 9068) from one or more authorization servers by their
/// published keys: a token's `iss` picks the issuer, its header's `kid` the key.
///
/// - **Keys** are fetched when first needed (the issuer may start after this server): the
///   issuer's metadata at `/.well-known/oauth-authorization-server` (RFC 8414 §3), else
///   `/.well-known/openid-configuration`, names the `jwks_uri`; its `issuer` must be the
///   configured one (RFC 8414 §3.3). The key set is kept in memory and read without a lock or a
///   fetch on every request. A token naming a `kid` the set lacks fetches it again (key
///   rotation) — one fetch at a time per issuer, and at most one per
///   [`refresh_interval`](Self::refresh_interval) (default 10 s), so a flood of made-up `kid`s
///   never turns into a fetch per request.
/// - **Checks**: the header's `alg` must be in the allow-list (default RS256, RS384, RS512,
///   PS256, PS384, PS512, ES256, ES384, EdDSA; `none` and HMAC never, since a public key is no
///   secret) and the key's own `alg` when it has one; symmetric (`oct`) and encryption keys are
///   ignored; `iss` must be the issuer, `aud` must contain the [audience](Self::new) (the MCP
///   server's canonical resource URI, RFC 8707), `exp` and `sub` are required and `nbf` is
///   checked, with a [leeway](Self::leeway) (default 60 s).
/// - **Opaque tokens** (not JWTs) go to [`introspection`](Self::introspection) when one is set
///   (RFC 7662), else are refused.
/// - **Errors**: [`AuthError::InvalidToken`] for every refusal (HTTP 401);
///   [`AuthError::Unavailable`] (HTTP 503) when the issuer's keys were never fetched and cannot
///   be now (down, slow past [`timeout`](Self::timeout), or answering something that is not
///   metadata or a key set).
///
/// ```no_run
/// use switchyard::auth::{BearerAuth, JwksVerifier, ProtectedResource};
/// # fn main() -> Result<(), switchyard::auth::AuthError> {
/// let resource = ProtectedResource::new("https://mcp.example.com/mcp")?
///     .authorization_server("https://auth.example.com")?;
/// let verifier = JwksVerifier::new(["https://auth.example.com"], resource.resource())?;
/// let auth = BearerAuth::new(verifier).protected_resource(resource);
/// # let _ = auth; Ok(()) }
/// ```
#[derive(Clone)]
pub struct JwksVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    issuers: Vec<Issuer>,
    audience: String,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    roles_claim: String,
    refresh_interval: Duration,
    client: reqwest::Client,
    timeout: Duration,
    /// Where tokens that are not JWTs go.
    introspection: Option<super::IntrospectionVerifier>,
    /// Principals of tokens verified lately, by the token's SHA-256: a client sends the same
    /// token with every request, and checking an RSA or ECDSA signature costs 10–30 times a
    /// whole unprotected `tools/call`.
    verified: moka::future::Cache<[u8; 32], Verified>,
}

/// A verified token's principal and when the token expires (Unix seconds).
#[derive(Clone)]
struct Verified {
    principal: Principal,
    exp: u64,
}

/// Longest a verified token is served from the cache: how late a key the issuer withdrew
/// still vouches for tokens it signed.
const VERIFIED_FOR: Duration = Duration::from_secs(60);

struct VerifiedExpiry;

impl moka::Expiry<[u8; 32], Verified> for VerifiedExpiry {
    fn expire_after_create(&self, _: &[u8; 32], v: &Verified, _: std::time::Instant) -> Option<Duration> {
        Some(Duration::from_secs(v.exp.saturating_sub(unix_now())).min(VERIFIED_FOR))
    }
}

fn verified_cache() -> moka::future::Cache<[u8; 32], Verified> {
    moka::future::Cache::builder().max_capacity(10_000).expire_after(VerifiedExpiry).build()
}

struct Issuer {
    id: String,
    /// Set when configured; otherwise found by discovery and kept.
    jwks_uri: ArcSwap<Option<String>>,
    keys: ArcSwap<Keys>,
    /// Held while fetching: one fetch at a time; the time of the last attempt.
    fetch: tokio::sync::Mutex<Option<Instant>>,
}

#[derive(Default)]
struct Keys {
    /// `false` until a key set was fetched once.
    fetched: bool,
    /// When the set was fetched (Unix seconds; 0 before).
    fetched_at: u64,
    keys: Vec<Key>,
}

struct Key {
    kid: Option<String>,
    alg: Option<Algorithm>,
    family: jsonwebtoken::AlgorithmFamily,
    key: DecodingKey,
}

impl std::fmt::Debug for JwksVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let issuers: Vec<&str> = self.inner.issuers.iter().map(|i| i.id.as_str()).collect();
        f.debug_struct("JwksVerifier")
            .field("issuers", &issuers)
            .field("audience", &self.inner.audience)
            .field("algorithms", &self.inner.algorithms)
            .finish_non_exhaustive()
    }
}

fn check_url(url: &str, what: &str) -> Result<(), AuthError> {
    let uri: http::Uri = url.parse().map_err(|_| AuthError::config_because(format!("{what} {url:?} is not a URL")))?;
    match (uri.scheme_str(), uri.authority()) {
        (Some("https" | "http"), Some(_)) => Ok(()),
        _ => Err(AuthError::config_because(format!("{what} {url:?} is not an absolute http(s) URL"))),
    }
}

impl JwksVerifier {
    /// Tokens of `issuers` (their issuer identifiers, as the tokens' `iss` and the metadata's
    /// `issuer` spell them) for `audience`.
    ///
    /// Errors: [`AuthError::Config`] when there is no issuer, an issuer is not an absolute
    /// `http(s)` URL, or the audience is empty.
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(issuers: I, audience: &str) -> Result<Self, AuthError> {
        let issuers: Vec<String> = issuers.into_iter().map(Into::into).collect();
        if issuers.is_empty() {
            return Err(AuthError::config_because("name at least one issuer".to_owned()));
        }
        for i in &issuers {
            check_url(i, "the issuer")?;
        }
        if audience.trim().is_empty() {
            return Err(AuthError::config_because("the audience is empty; use the server's resource URI".to_owned()));
        }
        let timeout = Duration::from_secs(5);
        Ok(JwksVerifier {
            inner: Arc::new(Inner {
                issuers: issuers
                    .into_iter()
                    .map(|id| Issuer {
                        id,
                        jwks_uri: ArcSwap::from_pointee(None),
                        keys: ArcSwap::from_pointee(Keys::default()),
                        fetch: tokio::sync::Mutex::new(None),
                    })
                    .collect(),
                audience: audience.to_owned(),
                algorithms: super::jwt::ASYMMETRIC.to_vec(),
                leeway: Duration::from_secs(60),
                roles_claim: "roles".to_owned(),
                refresh_interval: Duration::from_secs(10),
                client: super::fetch::client(timeout),
                timeout,
                introspection: None,
                verified: verified_cache(),
            }),
        })
    }

    /// This verifier changed by `f`, with nothing fetched yet: a setting changed after use
    /// starts from a clean slate.
    fn edit(self, f: impl FnOnce(&mut Inner)) -> Self {
        let shared = &self.inner;
        let mut inner = Inner {
            issuers: shared
                .issuers
                .iter()
                .map(|i| Issuer {
                    id: i.id.clone(),
                    jwks_uri: ArcSwap::new(i.jwks_uri.load_full()),
                    keys: ArcSwap::from_pointee(Keys::default()),
                    fetch: tokio::sync::Mutex::new(None),
                })
                .collect(),
            audience: shared.audience.clone(),
            algorithms: shared.algorithms.clone(),
            leeway: shared.leeway,
            roles_claim: shared.roles_claim.clone(),
            refresh_interval: shared.refresh_interval,
            client: shared.client.clone(),
            timeout: shared.timeout,
            introspection: shared.introspection.clone(),
            verified: verified_cache(),
        };
        f(&mut inner);
        JwksVerifier { inner: Arc::new(inner) }
    }

    /// Takes the key set of `issuer` from `jwks_uri` instead of discovering it (an issuer
    /// without metadata). An issuer not configured is ignored.
    ///
    /// Errors: [`AuthError::Config`] when `jwks_uri` is not an absolute `http(s)` URL.
    pub fn jwks_uri(self, issuer: &str, jwks_uri: &str) -> Result<Self, AuthError> {
        check_url(jwks_uri, "the jwks_uri")?;
        Ok(self.edit(|inner| {
            for i in inner.issuers.iter().filter(|i| i.id == issuer) {
                i.jwks_uri.store(Arc::new(Some(jwks_uri.to_owned())));
            }
        }))
    }

    /// Accepts only `algorithms` (HMAC ones are dropped: a key set holds public keys).
    pub fn algorithms(self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        let list: Vec<Algorithm> =
            algorithms.into_iter().filter(|a| a.family() != jsonwebtoken::AlgorithmFamily::Hmac).collect();
        self.edit(|inner| inner.algorithms = list)
    }

    /// How far `exp` and `nbf` may be off (clock skew); default 60 s, whole seconds.
    pub fn leeway(self, leeway: Duration) -> Self {
        self.edit(|inner| inner.leeway = leeway)
    }

    /// Reads roles from `claim` instead of `roles`.
    pub fn roles_claim(self, claim: impl Into<String>) -> Self {
        let claim = claim.into();
        self.edit(|inner| inner.roles_claim = claim)
    }

    /// The shortest time between two fetches of one issuer's keys (default 10 s).
    pub fn refresh_interval(self, interval: Duration) -> Self {
        self.edit(|inner| inner.refresh_interval = interval)
    }

    /// Hands tokens that are not JWTs (opaque tokens) to `introspection` (RFC 7662) instead of
    /// refusing them.
    pub fn introspection(self, introspection: super::IntrospectionVerifier) -> Self {
        self.edit(|inner| inner.introspection = Some(introspection))
    }

    /// How long a metadata or key set fetch may take (default 5 s).
    pub fn timeout(self, timeout: Duration) -> Self {
        self.edit(|inner| {
            inner.timeout = timeout;
            inner.client = super::fetch::client(timeout);
        })
    }
}

/// The `iss` and `iat` of a JWT's payload, read before its signature is checked: `iss` only to
/// pick the issuer whose keys check it, `iat` only to tell a key too new for the fetched set
/// from one that does not exist.
fn unverified_claims(token: &str) -> Option<(String, Option<u64>)> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let iss = claims.get("iss")?.as_str()?.to_owned();
    Some((iss, claims.get("iat").and_then(Value::as_u64)))
}

/// Now, in Unix seconds.
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl Inner {
    /// [`check`](Self::check), answered from the cache of verified tokens while the token
    /// has not expired (and for at most [`VERIFIED_FOR`]).
    async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        use sha2::Digest as _;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        if let Some(hit) = self.verified.get(&digest).await
            && hit.exp > unix_now()
        {
            return Ok(hit.principal);
        }
        let (principal, jwt) = self.check(token).await?;
        // Introspected tokens keep to the introspection cache's own (shorter) rules.
        if jwt && let Some(exp) = principal.claims.get("exp").and_then(Value::as_u64) {
            self.verified.insert(digest, Verified { principal: principal.clone(), exp }).await;
        }
        Ok(principal)
    }

    /// The principal of `token`, and whether it was a JWT checked here (not introspected).
    async fn check(&self, token: &str) -> Result<(Principal, bool), AuthError> {
        let header = match (jsonwebtoken::decode_header(token), &self.introspection) {
            (Ok(h), _) => h,
            (Err(_), Some(introspection)) => return Ok((introspection.verify(token).await?, false)),
            (Err(_), None) => {
                return Err(AuthError::invalid(
                    "the token is not a JWT with a header this server reads (an asymmetric alg such as RS256 or ES256)",
                ));
            }
        };
        if !self.algorithms.contains(&header.alg) {
            return Err(AuthError::invalid(format!("the algorithm {:?} is not accepted", header.alg)));
        }
        let (iss, iat) = unverified_claims(token).ok_or_else(|| AuthError::invalid("no `iss` claim"))?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.id == iss)
            .ok_or_else(|| AuthError::invalid(format!("tokens of {iss:?} are not accepted")))?;
        if iat.is_some_and(|iat| iat > unix_now().saturating_add(self.leeway.as_secs())) {
            // Never a reason to fetch keys again: no issuer signs tokens in the future.
            return Err(AuthError::invalid("the token was issued in the future (iat)"));
        }
        let (kid, alg) = (header.kid.as_deref(), header.alg);
        let mut keys = issuer.keys.load_full();
        if let Some(kid) = kid
            && find(&keys, Some(kid), alg).is_none()
            && keys.keys.iter().any(|k| k.kid.as_deref() == Some(kid))
        {
            return Err(AuthError::invalid(format!("the token's alg {alg:?} does not fit its key {kid:?}")));
        }
        if find(&keys, kid, alg).is_none() {
            keys = self.refreshed(issuer, kid, alg, iat).await?;
        }
        let key = find(&keys, kid, alg).ok_or_else(|| AuthError::invalid("no key for the token"))?;
        let mut validation = base_validation(header.alg);
        validation.set_issuer(&[&issuer.id]);
        validation.set_audience(&[&self.audience]);
        validation.required_spec_claims.extend(["iss".to_owned(), "aud".to_owned()]);
        validation.leeway = self.leeway.as_secs();
        Ok((principal_of(token, key, &validation, &self.roles_claim)?, true))
    }

    /// The issuer's key set holding the key for `kid`/`alg`, after fetching it again if the
    /// last attempt is old enough; waits for a fetch already under way instead of starting
    /// another.
    ///
    /// A key missing from a set fetched recently is [`AuthError::InvalidToken`] when the token
    /// was issued (`iat`) before that fetch — its key should have been there — and
    /// [`AuthError::Unavailable`] (503, retry) when it may be newer than the set: a key the
    /// issuer just rotated to is fetched on a retry, and signing in again would not help.
    async fn refreshed(
        &self,
        issuer: &Issuer,
        kid: Option<&str>,
        alg: Algorithm,
        iat: Option<u64>,
    ) -> Result<Arc<Keys>, AuthError> {
        let mut last = issuer.fetch.lock().await;
        // Another request may have fetched while this one waited.
        let keys = issuer.keys.load_full();
        if find(&keys, kid, alg).is_some() {
            return Ok(keys);
        }
        let recent = last.is_some_and(|t| t.elapsed() < self.refresh_interval);
        let failure = if recent {
            None
        } else {
            *last = Some(Instant::now());
            match self.fetch_keys(issuer).await {
                Ok(keys) => {
                    issuer.keys.store(Arc::new(keys));
                    None
                }
                Err(e) => {
                    tracing::warn!(issuer = %issuer.id, error = %e, "auth: cannot fetch the issuer's keys");
                    Some(e)
                }
            }
        };
        let keys = issuer.keys.load_full();
        if find(&keys, kid, alg).is_some() {
            return Ok(keys);
        }
        // Issued more than the leeway before the set was fetched: the key should be in it.
        let older_than_keys = iat.is_some_and(|iat| iat.saturating_add(self.leeway.as_secs()) < keys.fetched_at);
        match failure {
            Some(e) if !keys.fetched => Err(e),
            _ if !keys.fetched => Err(AuthError::unavailable_because(format!(
                "the keys of {} could not be fetched yet; retrying at most every {} s",
                issuer.id,
                self.refresh_interval.as_secs_f64()
            ))),
            None if recent && !older_than_keys => Err(AuthError::unavailable_because(format!(
                "the token names a key newer than the key set of {} fetched {} s ago; it is fetched again at \
                 most every {} s",
                issuer.id,
                unix_now().saturating_sub(keys.fetched_at),
                self.refresh_interval.as_secs_f64()
            ))),
            _ => Err(AuthError::invalid(match kid {
                Some(kid) => format!("no key {kid:?} in the key set of {}", issuer.id),
                None => format!("the token names no `kid` and {} has no single {alg:?} key", issuer.id),
            })),
        }
    }

    async fn fetch_keys(&self, issuer: &Issuer) -> Result<Keys, AuthError> {
        let uri = match issuer.jwks_uri.load_full().as_ref() {
            Some(u) => u.clone(),
            None => {
                let found = self.discover(&issuer.id).await?;
                issuer.jwks_uri.store(Arc::new(Some(found.clone())));
                found
            }
        };
        let body = self.get(&uri).await?;
        let set: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| AuthError::unavailable(format!("{uri} is not a JWK set (RFC 7517 §5): {e}"), e))?;
        let keys = set.keys.iter().filter_map(usable).collect();
        Ok(Keys { fetched: true, fetched_at: unix_now(), keys })
    }

    /// The `jwks_uri` of `issuer`'s metadata: RFC 8414 first, OpenID Connect Discovery second.
    async fn discover(&self, issuer: &str) -> Result<String, AuthError> {
        let trimmed = issuer.trim_end_matches('/');
        let (origin, path) = match trimmed.find("://").and_then(|s| trimmed[s + 3..].find('/').map(|p| s + 3 + p)) {
            Some(split) => (&trimmed[..split], &trimmed[split..]),
            None => (trimmed, ""),
        };
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{trimmed}/.well-known/openid-configuration"),
        ];
        let mut errors = Vec::new();
        for url in candidates {
            match self.get(&url).await.and_then(|body| {
                serde_json::from_slice::<Value>(&body)
                    .map_err(|e| AuthError::unavailable(format!("{url} is not JSON metadata: {e}"), e))
            }) {
                Ok(meta) => {
                    if meta.get("issuer").and_then(Value::as_str) != Some(issuer) {
                        errors.push(format!("{url} names issuer {:?}, not {issuer:?}", meta.get("issuer")));
                        continue;
                    }
                    match meta.get("jwks_uri").and_then(Value::as_str) {
                        Some(jwks) if check_url(jwks, "jwks_uri").is_ok() => return Ok(jwks.to_owned()),
                        _ => errors.push(format!("{url} has no jwks_uri")),
                    }
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        Err(AuthError::unavailable_because(format!("no usable metadata for {issuer}: {}", errors.join("; "))))
    }

    /// The body of a GET of `url`: 200 only, at most 1 MiB, within the timeout.
    async fn get(&self, url: &str) -> Result<Vec<u8>, AuthError> {
        let what = format!("GET {url}");
        let resp = self.client.get(url).send().await.map_err(|e| AuthError::unavailable(format!("{what}: {e}"), e))?;
        super::fetch::body(resp, MAX_DOCUMENT_BYTES, &what).await
    }
}

/// A verification key from `jwk`: signature keys of the asymmetric kinds only.
fn usable(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))) {
        return None;
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => jsonwebtoken::AlgorithmFamily::Rsa,
        AlgorithmParameters::EllipticCurve(_) => jsonwebtoken::AlgorithmFamily::Ec,
        AlgorithmParameters::OctetKeyPair(_) => jsonwebtoken::AlgorithmFamily::Ed,
        _ => return None,
    };
    let alg = match &jwk.common.key_algorithm {
        Some(a) => Some(Algorithm::from_str(&a.to_string()).ok()?),
        None => None,
    };
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key { kid: jwk.common.key_id.clone(), alg, family, key })
}

/// The key of `keys` for a token with `kid` and `alg`: the one with that `kid`, or without a
/// `kid` the only key that fits `alg`.
fn find<'k>(keys: &'k Keys, kid: Option<&str>, alg: Algorithm) -> Option<&'k DecodingKey> {
    let fits = |k: &&Key| k.family == alg.family() && k.alg.is_none_or(|a| a == alg);
    match kid {
        Some(kid) => keys.keys.iter().filter(fits).find(|k| k.kid.as_deref() == Some(kid)).map(|k| &k.key),
        None => {
            let mut fitting = keys.keys.iter().filter(fits);
            match (fitting.next(), fitting.next()) {
                (Some(k), None) => Some(&k.key),
                _ => None,
            }
        }
    }
}

impl TokenVerifier for JwksVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.inner.verify(token))
    }
}
