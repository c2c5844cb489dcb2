//! DPoP (RFC 9449) at a protected server, over real HTTP: access tokens bound to a client key
//! (`cnf.jkt`) from the test's own issuer (`jwks::start_as`), proofs made with `jsonwebtoken`,
//! every check of RFC 9449 §4.3 tried with a proof that fails it, the `DPoP` challenges, the
//! required mode, server nonces shared by two instances, and a scope step-up with a DPoP token.

use super::jwks::{EC_A, RSA_A, RSA_B, jwk, key, now, sign, start_as};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use switchyard::auth::{BearerAuth, Dpop, JwksVerifier, ProtectedResource};
use switchyard::prelude::*;
use switchyard::transport::http::{ConnectionLimits, HttpConfig, router, serve_app};

const EC_B: &[u8] = include_bytes!("keys/ec-b.pem");
const NONCE_SECRET: &[u8] = b"the nonce secret every instance of the test shares";

/// Needs more than the `mcp` scope every request needs.
#[mcp_tool(scopes = ["files:write"], group = "dpop")]
async fn write_file() -> &'static str {
    "written"
}

/// A client's proof key: its private half and its public JWK.
struct ProofKey {
    key: EncodingKey,
    alg: Algorithm,
    jwk: Value,
}

impl ProofKey {
    fn new(pem: &[u8], alg: Algorithm) -> Self {
        let key = key(pem, alg);
        let jwk = serde_json::to_value(Jwk::from_encoding_key(&key, alg).expect("a JWK")).expect("JSON");
        ProofKey { key, alg, jwk }
    }

    fn thumbprint(&self) -> String {
        let jwk: Jwk = serde_json::from_value(self.jwk.clone()).expect("a JWK");
        jwk.thumbprint(ThumbprintHash::SHA256).expect("a thumbprint")
    }
}

/// What a proof says, before a test spoils one part of it.
struct Proof {
    header: Value,
    claims: Value,
}

fn ath(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

impl Proof {
    /// A correct proof for `method` on `htu` presenting `token`.
    fn new(key: &ProofKey, method: &str, htu: &str, token: &str) -> Self {
        let jti = format!("{:x}", rand_u128());
        Proof {
            header: json!({ "typ": "dpop+jwt", "alg": format!("{:?}", key.alg), "jwk": key.jwk }),
            claims: json!({ "jti": jti, "htm": method, "htu": htu, "iat": now(), "ath": ath(token) }),
        }
    }

    /// The compact JWS, signed by `key`.
    fn signed(&self, key: &ProofKey) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(self.header.to_string()),
            URL_SAFE_NO_PAD.encode(self.claims.to_string())
        );
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &key.key, key.alg).expect("signs");
        format!("{input}.{signature}")
    }
}

fn rand_u128() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    (u128::from(std::process::id()) << 64) | u128::from(N.fetch_add(1, Ordering::SeqCst)) | (now() as u128) << 32
}

/// A server of the `dpop` group guarded by `issuer`'s keys with `dpop`, needing scope `mcp`;
/// its base URL.
async fn start_guarded(issuer: &str, dpop: Dpop) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("an address").port());
    start_at(listener, &format!("{base}/mcp"), issuer, dpop);
    base
}

fn start_at(listener: tokio::net::TcpListener, resource: &str, issuer: &str, dpop: Dpop) {
    let resource = ProtectedResource::new(resource)
        .and_then(|r| r.authorization_server(issuer))
        .expect("a resource")
        .required_scopes(["mcp"])
        .dpop(dpop);
    let verifier = JwksVerifier::new([issuer], resource.resource()).expect("a verifier");
    let server = Server::builder("dpop", "1").groups(["dpop"]).build().expect("builds");
    let shutdown = server.shutdown_token().clone();
    let app = router(server, HttpConfig::default().protected_resource(resource.clone()))
        .layer(BearerAuth::new(verifier).protected_resource(resource));
    tokio::spawn(async move { serve_app(listener, app, shutdown, &ConnectionLimits::default()).await });
}

/// An access token for the server at `base` from `issuer`, bound to `key` when given.
fn token(issuer: &str, base: &str, bound_to: Option<&ProofKey>, scope: &str) -> String {
    let mut claims =
        json!({ "sub": "ada", "iss": issuer, "aud": format!("{base}/mcp"), "exp": now() + 600, "scope": scope });
    if let Some(key) = bound_to {
        claims["cnf"] = json!({ "jkt": key.thumbprint() });
    }
    sign(RSA_A, Algorithm::RS256, Some("k1"), &claims)
}

fn call(c: &reqwest::Client, base: &str, tool: Option<&str>) -> reqwest::RequestBuilder {
    let (method, params) = match tool {
        Some(name) => ("tools/call", json!({ "name": name, "arguments": {} })),
        None => ("server/discover", json!({})),
    };
    let mut params = params;
    params["_meta"] = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {} });
    let mut rb = c
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = tool {
        rb = rb.header("mcp-name", name);
    }
    rb.body(json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string())
}

fn with_dpop(rb: reqwest::RequestBuilder, token: &str, proof: &str) -> reqwest::RequestBuilder {
    rb.header("authorization", format!("DPoP {token}")).header("dpop", proof)
}

/// The protected resource metadata of the server at `base`.
async fn metadata(c: &reqwest::Client, base: &str) -> Value {
    let r = c.get(format!("{base}/.well-known/oauth-protected-resource/mcp")).send().await.expect("sent");
    r.json().await.expect("JSON")
}

fn challenges(r: &reqwest::Response) -> Vec<String> {
    r.headers().get_all("www-authenticate").iter().map(|v| v.to_str().expect("ASCII").to_owned()).collect()
}

/// Sends `rb` and expects 401 with one `DPoP` challenge carrying `error` and a description
/// naming `what` failed (a word of it, before any `:`); returns the challenge.
async fn refused(rb: reqwest::RequestBuilder, error: &str, what: &str) -> String {
    let r = rb.send().await.expect("sent");
    assert_eq!(r.status(), 401, "{what}");
    let all = challenges(&r);
    assert_eq!(all.len(), 1, "{what}: {all:?}");
    let c = all[0].clone();
    assert!(c.starts_with(&format!("DPoP error=\"{error}\"")), "{what}: {c}");
    assert!(c.contains("resource_metadata=\"") && c.contains("algs=\""), "{what}: {c}");
    let reason = what.split(':').next_back().expect("a word").trim();
    assert!(c.contains(reason), "{what}: the description should name {reason:?}: {c}");
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], -32600, "{what}");
    c
}

async fn served(rb: reqwest::RequestBuilder, what: &str) -> reqwest::Response {
    let r = rb.send().await.expect("sent");
    assert_eq!(r.status(), 200, "{what}: {:?}", challenges(&r));
    r
}

#[tokio::test]
async fn bound_tokens_need_a_fresh_proof_of_their_key_and_every_bad_proof_is_refused() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let base = start_guarded(&a.issuer, Dpop::allowed()).await;
    let htu = format!("{base}/mcp");
    let c = reqwest::Client::new();
    let ec = ProofKey::new(EC_B, Algorithm::ES256);
    let bound = token(&a.issuer, &base, Some(&ec), "mcp");

    // Metadata and the first challenge offer both schemes.
    let doc = metadata(&c, &base).await;
    assert_eq!(doc["dpop_bound_access_tokens_required"], false);
    assert!(doc["dpop_signing_alg_values_supported"].as_array().expect("a list").contains(&json!("ES256")));
    let r = call(&c, &base, None).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    let offered = challenges(&r);
    assert_eq!(offered.len(), 2, "{offered:?}");
    assert!(r.headers().get("dpop-nonce").is_none(), "no nonces asked for");
    assert!(offered[0].starts_with("Bearer scope=\"mcp\""), "{offered:?}");
    assert!(offered[1].starts_with("DPoP scope=\"mcp\"") && offered[1].contains("algs=\"ES256 "), "{offered:?}");

    // A correct proof is served, once.
    let proof = Proof::new(&ec, "POST", &htu, &bound).signed(&ec);
    served(with_dpop(call(&c, &base, None), &bound, &proof), "ES256 proof").await;
    refused(with_dpop(call(&c, &base, None), &bound, &proof), "invalid_dpop_proof", "a replayed proof: used before")
        .await;
    // RS256 proofs, and an htu written differently but naming the same resource.
    let rsa = ProofKey::new(RSA_B, Algorithm::RS256);
    let rsa_bound = token(&a.issuer, &base, Some(&rsa), "mcp");
    let upper = htu.replace("http://", "HTTP://") + "?x=1";
    let proof = Proof::new(&rsa, "POST", &upper, &rsa_bound).signed(&rsa);
    served(with_dpop(call(&c, &base, None), &rsa_bound, &proof), "RS256 proof").await;

    // Each check of RFC 9449 §4.3, failed once.
    type Spoil = fn(&mut Proof);
    let spoiled: [(&str, Spoil); 14] = [
        ("typ: typ", |p| p.header["typ"] = json!("JWT")),
        ("no typ: typ", |p| drop(p.header.as_object_mut().expect("object").remove("typ"))),
        ("no jwk: no jwk", |p| drop(p.header.as_object_mut().expect("object").remove("jwk"))),
        ("private jwk: private", |p| p.header["jwk"]["d"] = json!("c2VjcmV0")),
        ("htm: htm", |p| p.claims["htm"] = json!("GET")),
        ("htu host: htu", |p| p.claims["htu"] = json!("http://evil.example/mcp")),
        ("htu path: htu", |p| {
            p.claims["htu"] = json!(p.claims["htu"].as_str().expect("text").replace("/mcp", "/other"))
        }),
        ("old iat: iat is more", |p| p.claims["iat"] = json!(now() - 400)),
        ("future iat: iat is more", |p| p.claims["iat"] = json!(now() + 400)),
        ("text iat: no iat", |p| p.claims["iat"] = json!("now")),
        ("no jti: no jti", |p| drop(p.claims.as_object_mut().expect("object").remove("jti"))),
        ("long jti: jti is longer", |p| p.claims["jti"] = json!("j".repeat(300))),
        ("no ath: no ath", |p| drop(p.claims.as_object_mut().expect("object").remove("ath"))),
        ("ath of another token: ath is not", |p| p.claims["ath"] = json!(ath("another token"))),
    ];
    for (what, spoil) in spoiled {
        let mut proof = Proof::new(&ec, "POST", &htu, &bound);
        spoil(&mut proof);
        refused(with_dpop(call(&c, &base, None), &bound, &proof.signed(&ec)), "invalid_dpop_proof", what).await;
    }
    // Signed by another key than the one in the header.
    let other = ProofKey::new(EC_A, Algorithm::ES256);
    let mut proof = Proof::new(&ec, "POST", &htu, &bound);
    proof.header["jwk"] = other.jwk.clone();
    refused(with_dpop(call(&c, &base, None), &bound, &proof.signed(&ec)), "invalid_dpop_proof", "forged: signature")
        .await;
    // A good proof by a key the token is not bound to.
    let proof = Proof::new(&other, "POST", &htu, &bound).signed(&other);
    refused(with_dpop(call(&c, &base, None), &bound, &proof), "invalid_dpop_proof", "another key: cnf.jkt").await;
    // alg none, and HMAC keyed with something the attacker chose.
    let mut none = Proof::new(&ec, "POST", &htu, &bound);
    none.header["alg"] = json!("none");
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(none.header.to_string()),
        URL_SAFE_NO_PAD.encode(none.claims.to_string())
    );
    refused(with_dpop(call(&c, &base, None), &bound, &unsigned), "invalid_dpop_proof", "alg none: alg").await;
    let hmac =
        ProofKey { key: EncodingKey::from_secret(b"chosen").expect("a key"), alg: Algorithm::HS256, jwk: json!({}) };
    let mut hs = Proof::new(&ec, "POST", &htu, &bound);
    hs.header["alg"] = json!("HS256");
    hs.header["jwk"] = json!({ "kty": "oct", "k": "Y2hvc2Vu" });
    refused(with_dpop(call(&c, &base, None), &bound, &hs.signed(&hmac)), "invalid_dpop_proof", "HS256: alg").await;
    // Not a JWT, no proof, two proofs, an oversized one.
    for (what, proofs) in [
        ("garbage: not a JWT", vec!["not a jwt".to_owned()]),
        ("two proofs: exactly one", vec![Proof::new(&ec, "POST", &htu, &bound).signed(&ec); 2]),
        ("oversized: exactly one", vec!["a".repeat(9000)]),
    ] {
        let mut rb = call(&c, &base, None).header("authorization", format!("DPoP {bound}"));
        for p in proofs {
            rb = rb.header("dpop", p);
        }
        refused(rb, "invalid_dpop_proof", what).await;
    }
    refused(
        call(&c, &base, None).header("authorization", format!("DPoP {bound}")),
        "invalid_dpop_proof",
        "no proof: exactly one",
    )
    .await;

    // A bound token as a bearer token, and an unbound one as a DPoP token: the wrong scheme.
    refused(call(&c, &base, None).bearer_auth(&bound), "invalid_token", "bound token as Bearer: is bound").await;
    let plain = token(&a.issuer, &base, None, "mcp");
    let proof = Proof::new(&ec, "POST", &htu, &plain).signed(&ec);
    refused(with_dpop(call(&c, &base, None), &plain, &proof), "invalid_token", "unbound token as DPoP: not bound")
        .await;
    // An unbound bearer token is still served: DPoP is allowed, not required.
    served(call(&c, &base, None).bearer_auth(&plain), "plain bearer").await;

    // A DPoP client lacking a scope is told so in its own scheme.
    let proof = Proof::new(&ec, "POST", &htu, &bound).signed(&ec);
    let r = with_dpop(call(&c, &base, Some("write_file")), &bound, &proof).send().await.expect("sent");
    assert_eq!(r.status(), 403);
    let c0 = challenges(&r);
    assert!(c0[0].starts_with("DPoP error=\"insufficient_scope\", scope=\"files:write\""), "{c0:?}");
    let wider = token(&a.issuer, &base, Some(&ec), "mcp files:write");
    let proof = Proof::new(&ec, "POST", &htu, &wider).signed(&ec);
    let r = served(with_dpop(call(&c, &base, Some("write_file")), &wider, &proof), "stepped up").await;
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["result"]["content"][0]["text"], "written", "{body}");
}

#[tokio::test]
async fn required_dpop_refuses_bearer_and_nonces_work_across_instances() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    // Two instances behind one public URL, keyed by one nonce secret.
    let l1 = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let l2 = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let base1 = format!("http://127.0.0.1:{}", l1.local_addr().expect("an address").port());
    let base2 = format!("http://127.0.0.1:{}", l2.local_addr().expect("an address").port());
    let public = "https://mcp.example.com";
    let htu = format!("{public}/mcp");
    let dpop = || Dpop::required().nonces(NONCE_SECRET).expect("a long secret");
    start_at(l1, &htu, &a.issuer, dpop());
    start_at(l2, &htu, &a.issuer, dpop());
    let c = reqwest::Client::new();
    let ec = ProofKey::new(EC_B, Algorithm::ES256);
    let bound = token(&a.issuer, public, Some(&ec), "mcp");

    let doc = metadata(&c, &base1).await;
    assert_eq!(doc["dpop_bound_access_tokens_required"], true);
    // Only DPoP is offered.
    let r = call(&c, &base1, None).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    let offered = challenges(&r);
    assert_eq!(offered.len(), 1, "{offered:?}");
    assert!(offered[0].starts_with("DPoP scope=\"mcp\""), "{offered:?}");
    assert!(r.headers().get("dpop-nonce").is_some(), "a nonce for the first proof");
    let plain = token(&a.issuer, public, None, "mcp");
    refused(call(&c, &base1, None).bearer_auth(&plain), "invalid_token", "Bearer when required: requires DPoP").await;

    // No nonce: refused with one to use; with it, served, by either instance.
    let proof = Proof::new(&ec, "POST", &htu, &bound).signed(&ec);
    let r = with_dpop(call(&c, &base1, None), &bound, &proof).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    assert!(challenges(&r)[0].starts_with("DPoP error=\"use_dpop_nonce\""), "{:?}", challenges(&r));
    let nonce = r.headers()["dpop-nonce"].to_str().expect("ASCII").to_owned();
    for base in [&base1, &base2] {
        let mut proof = Proof::new(&ec, "POST", &htu, &bound);
        proof.claims["nonce"] = json!(nonce);
        let r = served(with_dpop(call(&c, base, None), &bound, &proof.signed(&ec)), "with the nonce").await;
        assert!(r.headers().get("dpop-nonce").is_none(), "a fresh nonce is not renewed");
    }
    // A nonce this server did not make.
    let mut proof = Proof::new(&ec, "POST", &htu, &bound);
    proof.claims["nonce"] = json!(URL_SAFE_NO_PAD.encode([0u8; 24]));
    let r = with_dpop(call(&c, &base2, None), &bound, &proof.signed(&ec)).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    assert!(challenges(&r)[0].starts_with("DPoP error=\"use_dpop_nonce\""), "{:?}", challenges(&r));
    assert!(r.headers().get("dpop-nonce").is_some());
    // The proof names the public URL, not the instance's address.
    let mut proof = Proof::new(&ec, "POST", &format!("{base1}/mcp"), &bound);
    proof.claims["nonce"] = json!(nonce);
    refused(with_dpop(call(&c, &base1, None), &bound, &proof.signed(&ec)), "invalid_dpop_proof", "instance URL: htu")
        .await;
}

/// A nonce past half its life is still accepted, and the answer hands out a fresh one, so a
/// busy client never meets `use_dpop_nonce` again.
#[tokio::test]
async fn an_ageing_nonce_is_renewed_on_a_served_request() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let dpop = Dpop::required().window(std::time::Duration::from_secs(10)).nonces(NONCE_SECRET).expect("a secret");
    let base = start_guarded(&a.issuer, dpop).await;
    let htu = format!("{base}/mcp");
    let c = reqwest::Client::new();
    let ec = ProofKey::new(EC_B, Algorithm::ES256);
    let bound = token(&a.issuer, &base, Some(&ec), "mcp");
    let proof = Proof::new(&ec, "POST", &htu, &bound).signed(&ec);
    let r = with_dpop(call(&c, &base, None), &bound, &proof).send().await.expect("sent");
    let nonce = r.headers()["dpop-nonce"].to_str().expect("ASCII").to_owned();
    // Past half of the 10 s window, within it.
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    let mut proof = Proof::new(&ec, "POST", &htu, &bound);
    proof.claims["nonce"] = json!(nonce);
    let r = served(with_dpop(call(&c, &base, None), &bound, &proof.signed(&ec)), "an ageing nonce").await;
    let renewed = r.headers().get("dpop-nonce").expect("a fresh nonce").to_str().expect("ASCII").to_owned();
    assert_ne!(renewed, nonce);
    let mut proof = Proof::new(&ec, "POST", &htu, &bound);
    proof.claims["nonce"] = json!(renewed);
    served(with_dpop(call(&c, &base, None), &bound, &proof.signed(&ec)), "the renewed nonce").await;
}
