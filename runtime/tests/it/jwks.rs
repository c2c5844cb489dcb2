//! `JwksVerifier` against an authorization server of the test's own on loopback (axum): OpenID
//! discovery, RS256 and ES256 tokens, key rotation, a flood of unknown `kid`s, and an issuer
//! that is down, slow, or answers garbage. The keys are test-only PEM files in `keys/`.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::auth::{AuthError, JwksVerifier, Principal, TokenVerifier};

const AUDIENCE: &str = "https://mcp.example.com/mcp";
pub(super) const RSA_A: &[u8] = include_bytes!("keys/rsa-a.pem");
pub(super) const RSA_B: &[u8] = include_bytes!("keys/rsa-b.pem");
pub(super) const EC_A: &[u8] = include_bytes!("keys/ec-a.pem");
const RSA_A_PUBLIC: &[u8] = include_bytes!("keys/rsa-a.pub.pem");

/// How the test authorization server answers its key set.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Serve,
    Down,
    Slow,
    Garbage,
}

pub(super) struct As {
    pub(super) issuer: String,
    pub(super) keys: Mutex<Vec<Jwk>>,
    mode: Mutex<Mode>,
    jwks_fetches: AtomicUsize,
    /// Whether RFC 8414 metadata is served (else only OpenID discovery).
    rfc8414: bool,
}

async fn oauth_metadata(State(s): State<Arc<As>>) -> Response {
    if !s.rfc8414 {
        return http::StatusCode::NOT_FOUND.into_response();
    }
    json_reply(json!({ "issuer": s.issuer, "jwks_uri": format!("{}/jwks", s.issuer) }))
}

/// A JSON answer (axum's `Json` needs a feature the runtime leaves off).
fn json_reply(v: Value) -> Response {
    ([(http::header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

async fn openid_metadata(State(s): State<Arc<As>>) -> Response {
    json_reply(json!({ "issuer": s.issuer, "jwks_uri": format!("{}/jwks", s.issuer) }))
}

async fn jwks(State(s): State<Arc<As>>) -> Response {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let mode = *s.mode.lock().expect("mode");
    match mode {
        Mode::Serve => {
            let set = JwkSet { keys: s.keys.lock().expect("keys").clone() };
            json_reply(serde_json::to_value(set).expect("a JWK set"))
        }
        Mode::Down => http::StatusCode::SERVICE_UNAVAILABLE.into_response(),
        Mode::Slow => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            http::StatusCode::OK.into_response()
        }
        Mode::Garbage => "<html>not a key set</html>".into_response(),
    }
}

pub(super) async fn start_as(rfc8414: bool) -> Arc<As> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let issuer = format!("http://127.0.0.1:{}", listener.local_addr().expect("an address").port());
    let state = Arc::new(As {
        issuer,
        keys: Mutex::new(Vec::new()),
        mode: Mutex::new(Mode::Serve),
        jwks_fetches: AtomicUsize::new(0),
        rfc8414,
    });
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(oauth_metadata))
        .route("/.well-known/openid-configuration", get(openid_metadata))
        .route("/jwks", get(jwks))
        .with_state(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    state
}

pub(super) fn key(pem: &[u8], alg: Algorithm) -> EncodingKey {
    match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(pem).expect("an EC key"),
        _ => EncodingKey::from_rsa_pem(pem).expect("an RSA key"),
    }
}

pub(super) fn jwk(pem: &[u8], alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&key(pem, alg), alg).expect("a JWK");
    jwk.common.key_id = Some(kid.to_owned());
    jwk
}

pub(super) fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

fn claims(issuer: &str) -> Value {
    json!({ "sub": "ada", "iss": issuer, "aud": AUDIENCE, "exp": now() + 600, "scope": "files:read mcp" })
}

pub(super) fn sign(pem: &[u8], alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    encode(&header, claims, &key(pem, alg)).expect("signs")
}

fn verifier(issuer: &str) -> JwksVerifier {
    JwksVerifier::new([issuer], AUDIENCE).expect("a verifier").timeout(Duration::from_millis(500))
}

async fn verify(v: &JwksVerifier, token: &str) -> Result<Principal, AuthError> {
    v.verify(token).await
}

fn invalid(r: Result<Principal, AuthError>, what: &str) {
    assert!(matches!(r, Err(AuthError::InvalidToken(_))), "{what}: {r:?}");
}

#[tokio::test]
async fn rs256_and_es256_tokens_verify_against_the_discovered_key_set() {
    let a = start_as(false).await;
    a.keys.lock().expect("keys").extend([jwk(RSA_A, Algorithm::RS256, "rsa-a"), jwk(EC_A, Algorithm::ES256, "ec-a")]);
    let v = verifier(&a.issuer);
    let p = verify(&v, &sign(RSA_A, Algorithm::RS256, Some("rsa-a"), &claims(&a.issuer))).await.expect("RS256");
    assert_eq!(p.id, "ada");
    assert!(p.has_scope("files:read") && p.has_scope("mcp"));
    verify(&v, &sign(EC_A, Algorithm::ES256, Some("ec-a"), &claims(&a.issuer))).await.expect("ES256");
    // Keys were fetched once, through OpenID discovery (no RFC 8414 metadata here).
    assert_eq!(a.jwks_fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn bad_tokens_are_refused_with_the_reason() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "rsa-a"));
    let v = verifier(&a.issuer);
    let good = claims(&a.issuer);
    let with = |k: &str, value: Value| {
        let mut c = good.clone();
        c[k] = value;
        sign(RSA_A, Algorithm::RS256, Some("rsa-a"), &c)
    };
    let without = |k: &str| {
        let mut c = good.clone();
        c.as_object_mut().expect("an object").remove(k);
        sign(RSA_A, Algorithm::RS256, Some("rsa-a"), &c)
    };
    invalid(verify(&v, &without("aud")).await, "no aud");
    invalid(verify(&v, &with("aud", json!("https://other.example.com/mcp"))).await, "another resource");
    invalid(verify(&v, &with("exp", json!(now() - 3600))).await, "expired");
    invalid(verify(&v, &with("nbf", json!(now() + 3600))).await, "not yet valid");
    invalid(verify(&v, &with("iss", json!("https://evil.example"))).await, "untrusted issuer");
    invalid(verify(&v, &without("iss")).await, "no iss");
    invalid(verify(&v, &without("sub")).await, "no sub");
    invalid(verify(&v, "not.a.jwt").await, "garbage");
    invalid(verify(&v, "").await, "empty");
    // Signed by a key the set does not hold, under a kid it does.
    invalid(verify(&v, &sign(RSA_B, Algorithm::RS256, Some("rsa-a"), &good)).await, "wrong key");
    // `alg: none`, and HS256 keyed with the RSA public key (the algorithm-confusion attack).
    let payload = base64_url(&serde_json::to_vec(&good).expect("JSON"));
    let none = format!("{}.{payload}.", base64_url(br#"{"alg":"none","typ":"JWT"}"#));
    invalid(verify(&v, &none).await, "alg none");
    let hs = encode(&Header::new(Algorithm::HS256), &good, &EncodingKey::from_secret(RSA_A_PUBLIC).expect("a key"))
        .expect("signs");
    invalid(verify(&v, &hs).await, "HS256 with the public key");
    verify(&v, &with("aud", json!([AUDIENCE, "other"]))).await.expect("aud as a list holding the resource");
    // A known kid under another algorithm, and a token "issued" far in the future: refused as
    // invalid (401), never taken for a rotation that would make the client retry a 503.
    let fetches = a.jwks_fetches.load(Ordering::SeqCst);
    let mut ps = Header::new(Algorithm::PS256);
    ps.kid = Some("rsa-a".to_owned());
    let ps = encode(&ps, &good, &key(RSA_A, Algorithm::PS256)).expect("signs");
    let r = verify(&v, &ps).await;
    assert!(matches!(&r, Err(AuthError::InvalidToken(m)) if m.contains("does not fit")), "alg of another key: {r:?}");
    let r = verify(&v, &sign(RSA_A, Algorithm::RS256, Some("rsa-b"), &with_iat(&good, now() + 100_000))).await;
    assert!(matches!(&r, Err(AuthError::InvalidToken(m)) if m.contains("future")), "iat ahead: {r:?}");
    assert_eq!(a.jwks_fetches.load(Ordering::SeqCst), fetches, "neither fetched the keys again");
    // Reasons in words, not library variant names.
    let r = verify(&v, &with("exp", json!(now() - 3600))).await;
    assert!(matches!(&r, Err(AuthError::InvalidToken(m)) if m.contains("expired (exp)")), "{r:?}");
    let r = verify(&v, &with("aud", json!("https://other.example.com/mcp"))).await;
    assert!(matches!(&r, Err(AuthError::InvalidToken(m)) if m.contains("another resource (aud)")), "{r:?}");
}

fn with_iat(claims: &Value, iat: i64) -> Value {
    let mut c = claims.clone();
    c["iat"] = json!(iat);
    c
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[tokio::test]
async fn a_rotated_key_is_fetched_without_a_restart() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let v = verifier(&a.issuer).refresh_interval(Duration::ZERO);
    verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer))).await.expect("the first key");
    // The server publishes a new key beside the old one and signs with it.
    a.keys.lock().expect("keys").push(jwk(RSA_B, Algorithm::RS256, "k2"));
    verify(&v, &sign(RSA_B, Algorithm::RS256, Some("k2"), &claims(&a.issuer))).await.expect("the rotated key");
    verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer))).await.expect("the old key still");
    assert_eq!(a.jwks_fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_flood_of_unknown_kids_fetches_the_keys_at_most_once_per_interval() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let v = verifier(&a.issuer);
    verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer))).await.expect("valid");
    // Made-up kids in tokens issued long before the keys were fetched: refused outright.
    let mut old = claims(&a.issuer);
    old["iat"] = json!(now() - 3600);
    let old_tokens: Vec<String> =
        (0..100).map(|i| sign(RSA_A, Algorithm::RS256, Some(&format!("made-up-{i}")), &old)).collect();
    // And in tokens that may be newer than the keys: "try again", not "sign in again".
    let new_tokens: Vec<String> =
        (0..100).map(|i| sign(RSA_A, Algorithm::RS256, Some(&format!("new-{i}")), &claims(&a.issuer))).collect();
    let (olds, news) = futures::future::join(
        futures::future::join_all(old_tokens.iter().map(|t| verify(&v, t))),
        futures::future::join_all(new_tokens.iter().map(|t| verify(&v, t))),
    )
    .await;
    assert!(olds.into_iter().all(|r| matches!(r, Err(AuthError::InvalidToken(_)))));
    assert!(news.into_iter().all(|r| matches!(r, Err(AuthError::Unavailable { .. }))));
    // The first fetch, and at most one more for the whole flood (10 s interval).
    assert!(a.jwks_fetches.load(Ordering::SeqCst) <= 2, "{} fetches", a.jwks_fetches.load(Ordering::SeqCst));
    verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer))).await.expect("still valid");
}

/// A key the issuer rotates to right after a fetch: 503 until the interval has passed, then
/// accepted; never a 401 that would send the host to sign in again for the same key.
#[tokio::test]
async fn a_key_rotated_to_just_after_a_fetch_is_a_retry_not_a_refusal() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let v = verifier(&a.issuer).refresh_interval(Duration::from_millis(500));
    verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer))).await.expect("the first key");
    a.keys.lock().expect("keys").push(jwk(RSA_B, Algorithm::RS256, "k2"));
    let mut fresh = claims(&a.issuer);
    fresh["iat"] = json!(now());
    let token = sign(RSA_B, Algorithm::RS256, Some("k2"), &fresh);
    // Within the interval of the first fetch (when the machine is not slower than 500 ms).
    match verify(&v, &token).await {
        Err(AuthError::Unavailable { .. }) | Ok(_) => {}
        other => panic!("a rotated key is never refused as invalid: {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    verify(&v, &token).await.expect("fetched once the interval passed");
}

#[tokio::test]
async fn an_issuer_that_is_down_slow_or_garbled_is_unavailable_until_it_answers() {
    for mode in [Mode::Down, Mode::Slow, Mode::Garbage] {
        let a = start_as(true).await;
        a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
        *a.mode.lock().expect("mode") = mode;
        let v = verifier(&a.issuer).refresh_interval(Duration::ZERO);
        let token = sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer));
        let r = verify(&v, &token).await;
        assert!(matches!(r, Err(AuthError::Unavailable { .. })), "never fetched: {r:?}");
        *a.mode.lock().expect("mode") = Mode::Serve;
        verify(&v, &token).await.expect("served again");
        // Once fetched, the keys stand in while the issuer is away again.
        *a.mode.lock().expect("mode") = mode;
        verify(&v, &token).await.expect("cached keys");
        let unknown = sign(RSA_A, Algorithm::RS256, Some("k9"), &claims(&a.issuer));
        invalid(verify(&v, &unknown).await, "an unknown kid while the issuer is away");
    }
    // An issuer that does not answer at all.
    let v = JwksVerifier::new(["http://127.0.0.1:9"], AUDIENCE).expect("a verifier");
    let claims = claims("http://127.0.0.1:9");
    let r = verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims)).await;
    assert!(matches!(r, Err(AuthError::Unavailable { .. })), "{r:?}");
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_not_trusted() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    // The same server under another name: its metadata names 127.0.0.1, not localhost.
    let issuer = a.issuer.replace("127.0.0.1", "localhost");
    let v = JwksVerifier::new([issuer.as_str()], AUDIENCE).expect("a verifier");
    let r = verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&issuer))).await;
    assert!(matches!(r, Err(AuthError::Unavailable { .. })), "{r:?}");
    // With the key set named directly, no metadata is needed.
    let v = v.jwks_uri(&issuer, &format!("{}/jwks", a.issuer)).expect("a URL");
    verify(&v, &sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&issuer))).await.expect("valid");
}

#[test]
fn configurations_that_cannot_work_are_refused() {
    assert!(matches!(JwksVerifier::new(Vec::<String>::new(), AUDIENCE), Err(AuthError::Config { .. })));
    assert!(matches!(JwksVerifier::new(["not a url"], AUDIENCE), Err(AuthError::Config { .. })));
    assert!(matches!(JwksVerifier::new(["https://as.example"], " "), Err(AuthError::Config { .. })));
}

/// A server guarded by the keys of `issuer`, needing scope `mcp`, on a loopback port; its
/// base URL.
async fn start_guarded(issuer: &str) -> String {
    use switchyard::auth::{BearerAuth, ProtectedResource};
    use switchyard::transport::http::{ConnectionLimits, HttpConfig, router, serve_app};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("an address").port());
    let resource = ProtectedResource::new(&format!("{base}/mcp"))
        .and_then(|r| r.authorization_server(issuer))
        .expect("a resource")
        .required_scopes(["mcp"]);
    let verifier = JwksVerifier::new([issuer], resource.resource()).expect("a verifier");
    let server = switchyard::Server::builder("guarded", "1").groups(["none"]).build().expect("builds");
    let shutdown = server.shutdown_token().clone();
    let app = router(server, HttpConfig::default().protected_resource(resource.clone()))
        .layer(BearerAuth::new(verifier).protected_resource(resource));
    tokio::spawn(async move { serve_app(listener, app, shutdown, &ConnectionLimits::default()).await });
    base
}

fn discover(c: &reqwest::Client, base: &str, token: Option<String>) -> reqwest::RequestBuilder {
    let rb = c
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(
            json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {} } } })
            .to_string(),
        );
    match token {
        Some(t) => rb.bearer_auth(t),
        None => rb,
    }
}

/// The HTTP answers of a server guarded by an issuer's keys: the challenge and metadata a host
/// starts sign-in from, and each kind of refusal.
#[tokio::test]
async fn a_protected_server_challenges_serves_its_metadata_and_refuses_by_kind() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let base = start_guarded(&a.issuer).await;
    let c = reqwest::Client::new();
    let metadata_url = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let r = discover(&c, &base, None).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.headers()["www-authenticate"].to_str().expect("ASCII"),
        format!("Bearer scope=\"mcp\", resource_metadata=\"{metadata_url}\"")
    );
    let doc: Value = c.get(&metadata_url).send().await.expect("sent").json().await.expect("JSON");
    assert_eq!(doc["resource"], format!("{base}/mcp"));
    assert_eq!(doc["authorization_servers"], json!([a.issuer]));
    assert_eq!(doc["scopes_supported"], json!(["mcp"]));
    // `claims` writes another resource as the audience: refused.
    let theirs = sign(RSA_A, Algorithm::RS256, Some("k1"), &claims(&a.issuer));
    let r = discover(&c, &base, Some(theirs)).send().await.expect("sent");
    assert_eq!(r.status(), 401);
    let challenge = r.headers()["www-authenticate"].to_str().expect("ASCII").to_owned();
    assert!(challenge.starts_with("Bearer error=\"invalid_token\", error_description=\""), "{challenge}");
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
    let mut mine = claims(&a.issuer);
    mine["aud"] = json!(format!("{base}/mcp"));
    let r = discover(&c, &base, Some(sign(RSA_A, Algorithm::RS256, Some("k1"), &mine))).send().await.expect("sent");
    assert_eq!(r.status(), 200);
    mine["scope"] = json!("files:read");
    let r = discover(&c, &base, Some(sign(RSA_A, Algorithm::RS256, Some("k1"), &mine))).send().await.expect("sent");
    assert_eq!(r.status(), 403);
    let challenge = r.headers()["www-authenticate"].to_str().expect("ASCII").to_owned();
    assert!(challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp\""), "{challenge}");
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], -32600);
    // Malformed headers and oversized tokens are refused without asking the issuer.
    // A scheme the server does not take counts as no credentials: no error code (RFC 6750 §3.1).
    let r = discover(&c, &base, None).header("authorization", "Basic YWRhOnB3").send().await.expect("sent");
    assert_eq!(r.status(), 401);
    let challenge = r.headers()["www-authenticate"].to_str().expect("ASCII").to_owned();
    assert!(challenge.starts_with("Bearer scope=\"mcp\", resource_metadata="), "{challenge}");
    for header in ["Bearer", "Bearer a b", "DPoP", &format!("Bearer {}", "x".repeat(20_000))] {
        let r = discover(&c, &base, None).header("authorization", header).send().await.expect("sent");
        assert_eq!(r.status(), 401, "{header:.40}");
        assert!(r.headers()["www-authenticate"].to_str().expect("ASCII").contains("error=\"invalid_token\""));
    }
    // Two credentials.
    let r = discover(&c, &base, None)
        .header("authorization", "Bearer a")
        .header("authorization", "Bearer b")
        .send()
        .await
        .expect("sent");
    assert_eq!(r.status(), 401);
}

/// An issuer whose keys cannot be had is 503 with `Retry-After`, not 401: the token may be
/// fine, and signing in again would not help. Other requests keep being answered meanwhile.
#[tokio::test]
async fn an_unreachable_issuer_is_503_and_the_server_keeps_serving() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    *a.mode.lock().expect("mode") = Mode::Slow;
    let base = start_guarded(&a.issuer).await;
    let c = reqwest::Client::new();
    let mut mine = claims(&a.issuer);
    mine["aud"] = json!(format!("{base}/mcp"));
    let token = sign(RSA_A, Algorithm::RS256, Some("k1"), &mine);
    let waiting = discover(&c, &base, Some(token.clone())).send();
    // While that waits for the slow issuer, the metadata and the challenge are served.
    let (r, meta, challenge) = tokio::join!(
        waiting,
        c.get(format!("{base}/.well-known/oauth-protected-resource/mcp")).send(),
        discover(&c, &base, None).send()
    );
    assert_eq!(meta.expect("sent").status(), 200);
    assert_eq!(challenge.expect("sent").status(), 401);
    let r = r.expect("sent");
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "5");
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["error"]["code"], -32603);
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("try again")), "{body}");
}

/// A token checked once is served from memory on its next requests (no signature check, no
/// key lookup, no fetch), at most until it expires.
#[tokio::test]
async fn a_verified_token_is_remembered_until_it_expires() {
    let a = start_as(true).await;
    a.keys.lock().expect("keys").push(jwk(RSA_A, Algorithm::RS256, "k1"));
    let v = verifier(&a.issuer).refresh_interval(Duration::ZERO).leeway(Duration::ZERO);
    let mut c = claims(&a.issuer);
    c["exp"] = json!(now() + 2);
    let token = sign(RSA_A, Algorithm::RS256, Some("k1"), &c);
    assert_eq!(verify(&v, &token).await.expect("checked").id, "ada");
    // The issuer withdraws the key: the remembered token still passes (for at most 60 s),
    // without a fetch or a signature check.
    a.keys.lock().expect("keys").clear();
    let fetches = a.jwks_fetches.load(Ordering::SeqCst);
    for _ in 0..3 {
        assert_eq!(verify(&v, &token).await.expect("remembered").id, "ada");
    }
    assert_eq!(a.jwks_fetches.load(Ordering::SeqCst), fetches);
    // Past its exp the remembered token is checked again, and refused.
    // Whole seconds: `exp` is now + 2 rounded down, and a token is expired once now > exp.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    invalid(verify(&v, &token).await, "expired while remembered");
}
