//! Sender-constrained access tokens: DPoP proofs (RFC 9449) checked by the resource server,
//! as the MCP DPoP extension ([SEP-1932](https://github.com/modelcontextprotocol/modelcontextprotocol/pull/1932))
//! adopts them.

use super::AuthError;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Longest `DPoP` header value looked at (bytes); a proof carries one public key.
pub(crate) const MAX_PROOF_BYTES: usize = 8 * 1024;
/// Longest `jti` kept for replay detection (bytes).
const MAX_JTI_BYTES: usize = 256;
/// Proofs remembered for replay detection, at most; the oldest go first past it.
const REPLAY_CAPACITY: u64 = 1_000_000;
/// Shortest secret that may key server nonces (bytes).
const MIN_NONCE_SECRET: usize = 32;
/// Bytes of the HMAC-SHA256 tag kept in a nonce.
const NONCE_TAG_BYTES: usize = 16;

/// DPoP (RFC 9449) at this resource server: access tokens bound to a client's key (`cnf.jkt`,
/// RFC 9449 §6) are accepted only as `Authorization: DPoP <token>` with a `DPoP` proof JWT made
/// with that key for this very request. A stolen token is useless without the key.
///
/// Set it on the [`ProtectedResource`](super::ProtectedResource) with
/// [`ProtectedResource::dpop`](super::ProtectedResource::dpop): the metadata then lists
/// `dpop_signing_alg_values_supported` (and `dpop_bound_access_tokens_required` when
/// [required](Self::required)), and [`BearerAuth`](super::BearerAuth) checks proofs.
///
/// Each proof is checked as RFC 9449 §4.3 and §7.1 say: one `DPoP` header holding a JWT with
/// `typ` `dpop+jwt`, an asymmetric `alg` from the [allow-list](Self::algorithms) and a public
/// `jwk` (no private parts) that verifies its signature; `htm` equal to the request's method;
/// `htu` equal to the resource URL (scheme and host case-insensitive, default port dropped,
/// query and fragment ignored); `iat` within the [window](Self::window) (default ±300 s) of
/// now; `ath` the base64url SHA-256 of the access token; the key's RFC 7638 thumbprint equal to
/// the token's `cnf.jkt`; a `jti` (at most 256 bytes) not seen before within the window on
/// this instance; and, with [server nonces](Self::nonces), a `nonce` this server issued within
/// the window.
///
/// | request | answer |
/// |---|---|
/// | a proof that fails a check | 401, `WWW-Authenticate: DPoP error="invalid_dpop_proof", error_description="…", algs="…"` |
/// | a bound token sent as `Bearer`, an unbound one as `DPoP`, or `Bearer` when DPoP is [required](Self::required) | 401, `WWW-Authenticate: DPoP error="invalid_token", …` |
/// | nonces on and a proof without a current one | 401, `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a fresh `DPoP-Nonce` header |
///
/// Every challenge carries `resource_metadata` (RFC 9728 §5.1). A token without `cnf.jkt` sent
/// as `Bearer` is served as before unless DPoP is [required](Self::required).
///
/// Replays are detected per instance: behind a load balancer a proof replayed to another
/// instance within the window passes there; a shorter [window](Self::window) narrows that.
///
/// ```
/// use switchyard::auth::{Dpop, ProtectedResource};
/// # fn main() -> Result<(), switchyard::auth::AuthError> {
/// let resource = ProtectedResource::new("https://mcp.example.com/mcp")?
///     .authorization_server("https://auth.example.com")?
///     .dpop(Dpop::required().nonces(b"a secret of 32 bytes or more, shared by instances")?);
/// assert_eq!(resource.document([])["dpop_bound_access_tokens_required"], true);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Dpop {
    inner: Arc<Inner>,
}

struct Inner {
    required: bool,
    algorithms: Vec<Algorithm>,
    window: Duration,
    nonce_key: Option<hmac::Hmac<Sha256>>,
    /// `jkt jti` of the proofs accepted within the window.
    seen: moka::future::Cache<String, ()>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("required", &self.inner.required)
            .field("algorithms", &self.inner.algorithms)
            .field("window", &self.inner.window)
            .field("nonces", &self.inner.nonce_key.is_some())
            .finish_non_exhaustive()
    }
}

impl PartialEq for Dpop {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for Dpop {}

/// Why a DPoP request was refused: the `error` code of its `DPoP` challenge (RFC 9449 §7.1,
/// §9) and a description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DpopError {
    /// `invalid_dpop_proof`.
    Proof(String),
    /// `invalid_token`: the token does not fit the scheme it came with.
    Token(String),
    /// `use_dpop_nonce`, with the nonce to use.
    Nonce { reason: String, nonce: String },
}

/// The claims of a proof (RFC 9449 §4.2).
#[derive(Deserialize)]
struct Claims {
    jti: Option<String>,
    htm: Option<String>,
    htu: Option<String>,
    iat: Option<Value>,
    ath: Option<String>,
    nonce: Option<String>,
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl Dpop {
    fn with(required: bool) -> Self {
        let window = Duration::from_secs(300);
        Dpop {
            inner: Arc::new(Inner {
                required,
                algorithms: super::jwt::ASYMMETRIC.to_vec(),
                window,
                nonce_key: None,
                seen: replay_cache(window),
            }),
        }
    }

    /// DPoP-bound tokens must come with proofs; plain bearer tokens (no `cnf.jkt`) are still
    /// accepted as `Bearer`.
    pub fn allowed() -> Self {
        Self::with(false)
    }

    /// Every token must be DPoP-bound and come with a proof: `Bearer` is refused, and the
    /// metadata says `dpop_bound_access_tokens_required: true` (RFC 9728 §2).
    pub fn required() -> Self {
        Self::with(true)
    }

    fn edit(self, f: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            required: shared.required,
            algorithms: shared.algorithms.clone(),
            window: shared.window,
            nonce_key: shared.nonce_key.clone(),
            seen: replay_cache(shared.window),
        });
        f(&mut inner);
        Dpop { inner: Arc::new(inner) }
    }

    /// The proof algorithms accepted (default ES256, ES384, RS256, RS384, RS512, PS256, PS384,
    /// PS512, EdDSA); HMAC algorithms are dropped from the list, since a proof's key is public.
    pub fn algorithms(self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        let list: Vec<Algorithm> = algorithms.into_iter().filter(|a| a.family() != AlgorithmFamily::Hmac).collect();
        self.edit(|i| i.algorithms = list)
    }

    /// How far a proof's `iat` may lie from now, either way (default 300 s), and so how long
    /// a `jti` is remembered and a nonce lasts.
    pub fn window(self, window: Duration) -> Self {
        self.edit(|i| {
            i.window = window;
            i.seen = replay_cache(window);
        })
    }

    /// Requires server-provided nonces (RFC 9449 §9): a proof must carry a `nonce` this
    /// server (or another instance keyed by the same `secret`) issued within the window. A
    /// nonce is the time it was made with an HMAC-SHA256 tag; a fresh one comes in the
    /// `DPoP-Nonce` header of every `use_dpop_nonce` refusal, and of a served request whose
    /// nonce is past half its life.
    ///
    /// Errors: [`AuthError::Config`] for a secret shorter than 32 bytes.
    pub fn nonces(self, secret: impl AsRef<[u8]>) -> Result<Self, AuthError> {
        let secret = secret.as_ref();
        if secret.len() < MIN_NONCE_SECRET {
            return Err(AuthError::config_because(format!(
                "the DPoP nonce secret has {} bytes; use at least {MIN_NONCE_SECRET} random bytes",
                secret.len()
            )));
        }
        let key = hmac::Hmac::<Sha256>::new_from_slice(secret)
            .map_err(|e| AuthError::config("the nonce secret is not a usable HMAC key", e))?;
        Ok(self.edit(|i| i.nonce_key = Some(key)))
    }

    /// True when every token must be DPoP-bound.
    pub fn is_required(&self) -> bool {
        self.inner.required
    }

    /// The accepted proof algorithms, as JOSE names them (`"ES256"`).
    pub fn algorithm_names(&self) -> Vec<String> {
        self.inner.algorithms.iter().map(|a| format!("{a:?}")).collect()
    }

    /// A fresh nonce, when nonces are on: every 401 that offers `DPoP` carries one, so that a
    /// client's first proof can already hold it.
    pub(crate) fn fresh_nonce(&self) -> Option<String> {
        self.inner.nonce_key.as_ref().map(|key| make_nonce(key, now_secs()))
    }

    /// Checks `proof` (the `DPoP` header) for a request of `method` to the resource `htu`
    /// presenting `token`, bound by the token's `cnf.jkt` claim (`jkt`). `Ok` carries a fresh
    /// nonce when the proof's is past half its life.
    pub(crate) async fn check(
        &self,
        proof: &str,
        method: &str,
        htu: &url::Url,
        token: &str,
        jkt: Option<&str>,
    ) -> Result<Option<String>, DpopError> {
        let bad = |why: &str| DpopError::Proof(why.to_owned());
        let Some(jkt) = jkt else {
            return Err(DpopError::Token(
                "the token is not bound to a key (no cnf.jkt); ask the authorization server for a DPoP-bound token"
                    .to_owned(),
            ));
        };
        let header = proof_header(proof).ok_or_else(|| bad("the DPoP header is not a JWT"))?;
        if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
            return Err(bad("the proof's typ is not dpop+jwt"));
        }
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .and_then(|a| Algorithm::from_str(a).ok())
            .filter(|a| self.inner.algorithms.contains(a))
            .ok_or_else(|| bad("the proof's alg is not one this server accepts (see algs)"))?;
        let jwk_value = header.get("jwk").filter(|j| j.is_object()).ok_or_else(|| bad("the proof has no jwk"))?;
        if ["d", "p", "q", "dp", "dq", "qi", "oth", "k"].iter().any(|k| jwk_value.get(k).is_some()) {
            return Err(bad("the proof's jwk holds private or symmetric key material"));
        }
        let jwk: Jwk = serde_json::from_value(jwk_value.clone()).map_err(|_| bad("the proof's jwk is not a key"))?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|_| bad("the proof's jwk is not a usable public key"))?;
        if key_family(&jwk) != Some(alg.family()) {
            return Err(bad("the proof's jwk does not fit its alg"));
        }
        let mut validation = Validation::new(alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Claims>(proof, &key, &validation)
            .map_err(|e| {
                bad(&format!("the proof does not check out: {}", super::jwt::describe(&e).replace("token", "proof")))
            })?
            .claims;
        let missing = |name: &str| bad(&format!("the proof has no {name}"));
        let jti = claims.jti.filter(|j| !j.is_empty()).ok_or_else(|| missing("jti"))?;
        if jti.len() > MAX_JTI_BYTES {
            return Err(bad("the proof's jti is longer than 256 bytes"));
        }
        if claims.htm.as_deref().ok_or_else(|| missing("htm"))? != method {
            return Err(bad(&format!("the proof's htm is not this request's method ({method})")));
        }
        let claimed = claims.htu.as_deref().ok_or_else(|| missing("htu"))?;
        if !same_target(claimed, htu) {
            return Err(bad(&format!("the proof's htu is not this resource ({})", target(htu))));
        }
        let iat = claims.iat.as_ref().and_then(Value::as_f64).ok_or_else(|| missing("iat (a number)"))?;
        let now = now_secs();
        if (now as f64 - iat).abs() > self.inner.window.as_secs_f64() {
            return Err(bad(&format!(
                "the proof's iat is more than {} s from this server's clock; make a fresh proof",
                self.inner.window.as_secs()
            )));
        }
        let ath = claims.ath.ok_or_else(|| missing("ath"))?;
        if ath != URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())) {
            return Err(bad("the proof's ath is not the hash of this access token"));
        }
        let thumbprint =
            jwk.thumbprint(ThumbprintHash::SHA256).map_err(|_| bad("the proof's jwk has no thumbprint"))?;
        if thumbprint != jkt {
            return Err(bad("the proof's key is not the one the token is bound to (cnf.jkt)"));
        }
        let mut renew = None;
        if let Some(key) = &self.inner.nonce_key {
            let use_nonce = |reason: &str| DpopError::Nonce { reason: reason.to_owned(), nonce: make_nonce(key, now) };
            let issued = match claims.nonce.as_deref() {
                None => return Err(use_nonce("this server requires a DPoP nonce; use the one in DPoP-Nonce")),
                Some(n) => {
                    nonce_time(key, n).ok_or_else(|| use_nonce("the proof's nonce is not one this server made"))?
                }
            };
            let age = now.saturating_sub(issued);
            if age > self.inner.window.as_secs() || issued > now + self.inner.window.as_secs() {
                return Err(use_nonce("the proof's nonce has expired; use the one in DPoP-Nonce"));
            }
            if age > self.inner.window.as_secs() / 2 {
                renew = Some(make_nonce(key, now));
            }
        }
        // Last, so that a refused proof does not use up its jti.
        let entry = self.inner.seen.entry(format!("{jkt} {jti}")).or_insert(()).await;
        if !entry.is_fresh() {
            return Err(bad("the proof was used before (its jti repeats); make a fresh proof for each request"));
        }
        Ok(renew)
    }
}

fn replay_cache(window: Duration) -> moka::future::Cache<String, ()> {
    // A proof is acceptable from `window` before its iat to `window` after it.
    moka::future::Cache::builder().max_capacity(REPLAY_CAPACITY).time_to_live(window.saturating_mul(2)).build()
}

/// The JOSE header of the compact JWS `proof`, as JSON.
fn proof_header(proof: &str) -> Option<serde_json::Map<String, Value>> {
    let (header, rest) = proof.split_once('.')?;
    if rest.matches('.').count() != 1 {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(header).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn key_family(jwk: &Jwk) -> Option<AlgorithmFamily> {
    use jsonwebtoken::jwk::AlgorithmParameters as P;
    match &jwk.algorithm {
        P::RSA(_) => Some(AlgorithmFamily::Rsa),
        P::EllipticCurve(_) => Some(AlgorithmFamily::Ec),
        P::OctetKeyPair(_) => Some(AlgorithmFamily::Ed),
        _ => None,
    }
}

/// `url` without query and fragment, as `htu` names it.
fn target(url: &url::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// True when `claimed` names the same HTTP target as `expected` (RFC 9449 §4.3 step 9): both
/// parsed as URLs, so that scheme and host case, a default port and percent-encoding of
/// unreserved characters do not matter; query and fragment are ignored.
fn same_target(claimed: &str, expected: &url::Url) -> bool {
    match url::Url::parse(claimed) {
        Ok(claimed) => target(&claimed).trim_end_matches('/') == target(expected).trim_end_matches('/'),
        Err(_) => false,
    }
}

fn make_nonce(key: &hmac::Hmac<Sha256>, at: u64) -> String {
    let mut mac = key.clone();
    mac.update(&at.to_be_bytes());
    let tag = mac.finalize().into_bytes();
    let mut bytes = at.to_be_bytes().to_vec();
    bytes.extend_from_slice(&tag[..NONCE_TAG_BYTES]);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// When `nonce` was made, if `key` made it.
fn nonce_time(key: &hmac::Hmac<Sha256>, nonce: &str) -> Option<u64> {
    let bytes = URL_SAFE_NO_PAD.decode(nonce).ok()?;
    if bytes.len() != 8 + NONCE_TAG_BYTES {
        return None;
    }
    let (at, tag) = bytes.split_at(8);
    let mut mac = key.clone();
    mac.update(at);
    mac.verify_truncated_left(tag).ok()?;
    Some(u64::from_be_bytes(at.try_into().ok()?))
}

/// `WWW-Authenticate: DPoP …` (RFC 9449 §7.1): `algs`, the error when there is one, the scope
/// and the resource metadata URL.
pub(crate) fn challenge(dpop: &Dpop, metadata: Option<&str>, error: Option<(&str, &str)>, scope: &str) -> String {
    let algs = format!("algs=\"{}\"", dpop.algorithm_names().join(" "));
    super::resource::challenge_in("DPoP", metadata, error, scope, Some(algs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> hmac::Hmac<Sha256> {
        hmac::Hmac::<Sha256>::new_from_slice(&[7u8; 32]).expect("any length")
    }

    #[test]
    fn nonces_round_trip_and_refuse_forgeries() {
        let n = make_nonce(&key(), 1_700_000_000);
        assert_eq!(nonce_time(&key(), &n), Some(1_700_000_000));
        let other = hmac::Hmac::<Sha256>::new_from_slice(&[8u8; 32]).expect("any length");
        assert_eq!(nonce_time(&other, &n), None);
        let mut bytes = URL_SAFE_NO_PAD.decode(&n).expect("base64");
        bytes[7] ^= 1;
        assert_eq!(nonce_time(&key(), &URL_SAFE_NO_PAD.encode(bytes)), None);
        assert_eq!(nonce_time(&key(), "not a nonce"), None);
        assert_eq!(nonce_time(&key(), ""), None);
    }

    #[test]
    fn htu_compares_as_a_url() {
        let expected = url::Url::parse("https://mcp.example.com/mcp").expect("url");
        for same in [
            "https://mcp.example.com/mcp",
            "HTTPS://MCP.Example.com:443/mcp",
            "https://mcp.example.com/mcp?x=1",
            "https://mcp.example.com/mcp#f",
            "https://mcp.example.com/mcp/",
        ] {
            assert!(same_target(same, &expected), "{same}");
        }
        for other in [
            "http://mcp.example.com/mcp",
            "https://mcp.example.com:8443/mcp",
            "https://evil.example.com/mcp",
            "https://mcp.example.com/other",
            "/mcp",
            "",
        ] {
            assert!(!same_target(other, &expected), "{other}");
        }
    }

    #[test]
    fn short_nonce_secrets_are_refused() {
        assert!(matches!(Dpop::allowed().nonces(b"short"), Err(AuthError::Config { .. })));
        assert!(Dpop::allowed().nonces([1u8; 32]).is_ok());
    }

    #[test]
    fn the_challenge_names_the_algorithms() {
        let d = Dpop::required().algorithms([Algorithm::ES256, Algorithm::HS256]);
        assert_eq!(challenge(&d, None, None, ""), "DPoP algs=\"ES256\"");
        assert_eq!(
            challenge(&d, Some("https://x/m"), Some(("invalid_dpop_proof", "bad")), "a"),
            "DPoP error=\"invalid_dpop_proof\", error_description=\"bad\", scope=\"a\", \
             resource_metadata=\"https://x/m\", algs=\"ES256\""
        );
    }
}
