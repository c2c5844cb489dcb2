//! Sender-constrained tokens ([RFC 9449](https://www.rfc-editor.org/rfc/rfc9449), DPoP; the
//! MCP [DPoP extension](https://github.com/modelcontextprotocol/ext-auth), SEP-1932): the
//! client holds a P-256 key pair for the life of the connection and signs a fresh proof JWT for
//! every token request and every request to the MCP server, so a stolen access token is
//! useless without the key.
//!
//! The key pair is ring's; the proofs are jsonwebtoken's ES256 JWTs with the public key in the
//! `jwk` header.

use super::{AuthFailure, fail};
use base64::Engine;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use oauth2::url::Url;
use std::collections::HashMap;
use std::sync::Mutex;

/// The signing algorithm of the proofs, the one every DPoP server must accept in practice.
pub(crate) const ALGORITHM: &str = "ES256";
/// The `DPoP-Nonce` values remembered (one per server origin); more origins than this in one
/// connection means something is off, and the oldest are forgotten.
const MAX_NONCES: usize = 16;
/// The longest `DPoP-Nonce` value kept: 1 KiB (servers send a few dozen bytes).
const MAX_NONCE_BYTES: usize = 1024;

/// The connection's proof key, and the nonces the servers handed out.
pub(crate) struct DpopKey {
    key: EncodingKey,
    jwk: Jwk,
    nonces: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").field("jwk", &self.jwk).finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new P-256 key pair from the system's random source.
    ///
    /// Errors: the random source failed, or the key does not encode (neither happens on a
    /// working system).
    pub(crate) fn generate() -> Result<Self, AuthFailure> {
        use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let random = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .map_err(|_| fail("generating the DPoP key pair failed"))?;
        let key = EncodingKey::from_ec_der(pkcs8.as_ref());
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| AuthFailure::with_source("encoding the DPoP public key", e))?;
        Ok(DpopKey { key, jwk, nonces: Mutex::new(HashMap::new()) })
    }

    /// The proof for one HTTP request (RFC 9449 §4.2): `typ` `dpop+jwt`, the public key as
    /// `jwk`; claims `jti` (random), `htm` (`method`), `htu` (`url` without query and fragment),
    /// `iat`, the last nonce `url`'s server sent, and `ath` (the access token's SHA-256,
    /// base64url) when one is presented.
    ///
    /// Errors: signing failed (it does not with a key from [`generate`](Self::generate)).
    pub(crate) fn proof(&self, method: &str, url: &Url, access_token: Option<&str>) -> Result<String, AuthFailure> {
        let mut target = url.clone();
        target.set_query(None);
        target.set_fragment(None);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let mut claims = serde_json::json!({
            "jti": oauth2::CsrfToken::new_random().secret(),
            "htm": method,
            "htu": target.as_str(),
            "iat": now,
        });
        if let Some(token) = access_token {
            let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
            claims["ath"] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref()).into();
        }
        if let Some(nonce) = self.nonces.lock().unwrap_or_else(|p| p.into_inner()).get(target.as_str()) {
            claims["nonce"] = nonce.clone().into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| AuthFailure::with_source("signing a DPoP proof", e))
    }

    /// Keeps the `DPoP-Nonce` the server at `url` sent (RFC 9449 §8, §9), for its next proofs.
    /// Returns whether it is new: a server that repeats a nonce the client already sent is not
    /// asked again.
    pub(crate) fn remember_nonce(&self, url: &Url, nonce: &str) -> bool {
        // A nonce goes back in a JWT claim: only short visible ASCII is taken.
        // RFC 9449 §8.1: nonce = 1*NQCHAR; NQCHAR = %x21 / %x23-5B / %x5D-7E.
        let nqchar = |b: u8| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E);
        if nonce.is_empty() || nonce.len() > MAX_NONCE_BYTES || !nonce.bytes().all(nqchar) {
            return false;
        }
        let mut nonces = self.nonces.lock().unwrap_or_else(|p| p.into_inner());
        // Kept per endpoint (the htu), not per origin: an MCP server and its authorization
        // server often share an origin, and each hands out nonces of its own (§8, §9).
        let mut key = url.clone();
        key.set_query(None);
        key.set_fragment(None);
        if nonces.len() >= MAX_NONCES && !nonces.contains_key(key.as_str()) {
            nonces.clear();
        }
        nonces.insert(key.into(), nonce.to_owned()).as_deref() != Some(nonce)
    }
}

/// The `DPoP-Nonce` header of an answer, if it carries one.
pub(crate) fn nonce_header(headers: &http::HeaderMap) -> Option<&str> {
    headers.get("dpop-nonce").and_then(|v| v.to_str().ok())
}

/// Whether `dpop_signing_alg_values_supported` of a server's metadata admits this client's
/// proofs.
pub(crate) fn supported(algorithms: Option<&[String]>) -> bool {
    algorithms.is_some_and(|a| a.iter().any(|a| a == ALGORITHM))
}

/// An error when DPoP is wanted but the authorization server cannot bind tokens to a key.
pub(crate) fn unsupported(issuer: &str) -> AuthFailure {
    fail(format!(
        "DPoP-bound tokens are required, but the authorization server {issuer} does not list {ALGORITHM} in dpop_signing_alg_values_supported"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    fn decode(proof: &str) -> (jsonwebtoken::Header, serde_json::Value) {
        let header = jsonwebtoken::decode_header(proof).expect("a JWT header");
        let jwk = header.jwk.clone().expect("the public key rides in the header");
        let key = DecodingKey::from_jwk(&jwk).expect("a usable public key");
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims =
            jsonwebtoken::decode::<serde_json::Value>(proof, &key, &validation).expect("the signature verifies");
        (header, claims.claims)
    }

    #[test]
    fn a_proof_verifies_with_its_own_header_key_and_names_the_request() {
        let key = DpopKey::generate().expect("a key");
        let url = Url::parse("https://mcp.example.com/mcp?x=1#frag").expect("a URL");
        let proof = key.proof("POST", &url, Some("token-1")).expect("a proof");
        let (header, claims) = decode(&proof);
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let public = serde_json::to_value(header.jwk.expect("jwk")).expect("JSON");
        assert!(public.get("d").is_none(), "no private part in the header: {public}");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        // SHA-256("token-1"), base64url without padding.
        let digest = ring::digest::digest(&ring::digest::SHA256, b"token-1");
        assert_eq!(claims["ath"], base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref()));
        assert!(claims.get("nonce").is_none());
        let again = decode(&key.proof("POST", &url, None).expect("a proof")).1;
        assert_ne!(claims["jti"], again["jti"], "every proof is fresh");
        assert!(again.get("ath").is_none());
    }

    #[test]
    fn nonces_are_kept_per_server_and_garbage_is_refused() {
        let key = DpopKey::generate().expect("a key");
        let server = Url::parse("https://mcp.example.com/mcp").expect("a URL");
        let other = Url::parse("https://as.example.com/token").expect("a URL");
        assert!(key.remember_nonce(&server, "n-1"));
        assert!(!key.remember_nonce(&server, "n-1"), "the same nonce again is not news");
        assert_eq!(decode(&key.proof("GET", &server, None).expect("proof")).1["nonce"], "n-1");
        assert!(decode(&key.proof("POST", &other, None).expect("proof")).1.get("nonce").is_none());
        for garbage in ["", "with space", "new\nline", &"x".repeat(2000)] {
            assert!(!key.remember_nonce(&other, garbage));
        }
    }

    // RFC 9449 §8.1: nonce = 1*NQCHAR, NQCHAR = %x21 / %x23-5B / %x5D-7E (no `"`, no `\`).
    #[test]
    fn nonces_follow_the_nqchar_grammar() {
        let key = DpopKey::generate().expect("a key");
        let url = Url::parse("https://rs.example/mcp").expect("url");
        assert!(!key.remember_nonce(&url, "a\"b"), "DQUOTE is not NQCHAR");
        assert!(!key.remember_nonce(&url, "a\\b"), "backslash is not NQCHAR");
    }

    // The AS's token endpoint and the MCP server on one origin (a server that is its own AS):
    // the RS's nonce ends up in the proof sent to the token endpoint and vice versa.
    #[test]
    fn nonces_of_two_endpoints_on_one_origin_are_kept_apart() {
        let key = DpopKey::generate().expect("a key");
        let rs = Url::parse("https://h.example/mcp").expect("url");
        let token = Url::parse("https://h.example/oauth/token").expect("url");
        assert!(key.remember_nonce(&token, "as-nonce"));
        assert!(key.remember_nonce(&rs, "rs-nonce"));
        let proof = key.proof("POST", &token, None).expect("proof");
        let claims = decode(&proof).1;
        assert_eq!(claims["nonce"], "as-nonce", "the token endpoint gets the RS nonce: {claims}");
    }
}
