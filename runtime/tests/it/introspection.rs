//! `IntrospectionVerifier` (RFC 7662) against an introspection endpoint of the test's own on
//! loopback: active and inactive tokens, expiry, audience, client authentication, the cache
//! bounded by the token's life, concurrent requests sharing one introspection, an endpoint that
//! is down or answers garbage, and opaque tokens handed over by `JwksVerifier`.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::auth::{AuthError, IntrospectionVerifier, JwksVerifier, TokenVerifier};

const AUDIENCE: &str = "https://mcp.example.com/mcp";
const BASIC: &str = "Basic bWNwLXNlcnZlcjpzM2NyM3Q="; // mcp-server:s3cr3t

struct Endpoint {
    /// The answer for each token; unknown tokens are inactive.
    answers: Mutex<HashMap<String, Value>>,
    calls: AtomicUsize,
    /// 0: answer; 1: 503; 2: garbage.
    mode: AtomicUsize,
}

async fn introspect(State(e): State<Arc<Endpoint>>, headers: http::HeaderMap, body: String) -> Response {
    e.calls.fetch_add(1, Ordering::SeqCst);
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(BASIC) {
        return http::StatusCode::UNAUTHORIZED.into_response();
    }
    match e.mode.load(Ordering::SeqCst) {
        1 => return http::StatusCode::SERVICE_UNAVAILABLE.into_response(),
        2 => return "<html>oops</html>".into_response(),
        _ => {}
    }
    // Slow enough that concurrent requests overlap.
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The test's tokens are plain words: nothing to percent-decode.
    let token = body.split('&').find_map(|kv| kv.strip_prefix("token=")).unwrap_or_default().to_owned();
    let answer = e.answers.lock().expect("answers").get(&token).cloned().unwrap_or(json!({ "active": false }));
    ([(http::header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response()
}

async fn start() -> (Arc<Endpoint>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://127.0.0.1:{}/introspect", listener.local_addr().expect("an address").port());
    let state = Arc::new(Endpoint {
        answers: Mutex::new(HashMap::new()),
        calls: AtomicUsize::new(0),
        mode: AtomicUsize::new(0),
    });
    let app = Router::new().route("/introspect", post(introspect)).with_state(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (state, url)
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn verifier(url: &str) -> IntrospectionVerifier {
    IntrospectionVerifier::new(url, "mcp-server", "s3cr3t", AUDIENCE).expect("a verifier")
}

#[tokio::test]
async fn active_tokens_become_principals_and_the_rest_are_refused() {
    let (e, url) = start().await;
    {
        let mut answers = e.answers.lock().expect("answers");
        answers.insert(
            "good".into(),
            json!({ "active": true, "sub": "ada", "aud": AUDIENCE, "exp": now() + 600, "scope": "mcp files:read" }),
        );
        answers.insert("client-only".into(), json!({ "active": true, "client_id": "robot", "exp": now() + 600 }));
        answers.insert("expired".into(), json!({ "active": true, "sub": "ada", "exp": now() - 10 }));
        answers.insert("foreign".into(), json!({ "active": true, "sub": "ada", "aud": "https://other.example/mcp" }));
        answers.insert("future".into(), json!({ "active": true, "sub": "ada", "nbf": now() + 600 }));
        answers.insert("nobody".into(), json!({ "active": true }));
        answers.insert("off".into(), json!({ "active": false, "sub": "ada" }));
    }
    let v = verifier(&url);
    let p = v.verify("good").await.expect("active");
    assert_eq!(p.id, "ada");
    assert!(p.has_scope("files:read") && p.has_scope("mcp"));
    assert_eq!(v.verify("client-only").await.expect("a client's own token").id, "robot");
    for bad in ["expired", "foreign", "future", "nobody", "off", "unknown"] {
        assert!(matches!(v.verify(bad).await, Err(AuthError::InvalidToken(_))), "{bad}");
    }
    // An answer without `aud` passes unless the audience is required.
    let strict = verifier(&url).require_audience();
    assert!(matches!(strict.verify("client-only").await, Err(AuthError::InvalidToken(_))));
    // The wrong client secret: the endpoint says 401, which is no verdict on the token.
    let wrong = IntrospectionVerifier::new(&url, "mcp-server", "guess", AUDIENCE).expect("a verifier");
    assert!(matches!(wrong.verify("good").await, Err(AuthError::Unavailable { .. })));
}

#[tokio::test]
async fn answers_are_cached_for_the_token_s_life_and_shared_by_concurrent_requests() {
    let (e, url) = start().await;
    e.answers
        .lock()
        .expect("answers")
        .insert("short".into(), json!({ "active": true, "sub": "ada", "aud": AUDIENCE, "exp": now() + 5 }));
    let v = verifier(&url);
    let results = futures::future::join_all((0..50).map(|_| v.verify("short"))).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(e.calls.load(Ordering::SeqCst), 1, "fifty concurrent requests, one introspection");
    v.verify("short").await.expect("cached");
    assert_eq!(e.calls.load(Ordering::SeqCst), 1);
    // Past its `exp` the answer is gone, and the token is asked about (and refused) again.
    tokio::time::sleep(Duration::from_millis(6100)).await;
    assert!(matches!(v.verify("short").await, Err(AuthError::InvalidToken(_))));
    assert_eq!(e.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_endpoint_that_is_down_or_garbled_is_unavailable_and_not_cached() {
    let (e, url) = start().await;
    e.answers.lock().expect("answers").insert("good".into(), json!({ "active": true, "sub": "ada" }));
    let v = verifier(&url);
    for mode in [1, 2] {
        e.mode.store(mode, Ordering::SeqCst);
        assert!(matches!(v.verify("good").await, Err(AuthError::Unavailable { .. })), "mode {mode}");
    }
    e.mode.store(0, Ordering::SeqCst);
    v.verify("good").await.expect("answered once the endpoint is back");
    let nowhere = verifier("http://127.0.0.1:9/introspect").timeout(Duration::from_millis(500));
    let refused = nowhere.verify("good").await.expect_err("nothing listens");
    assert!(refused.is_transient(), "{refused:?}");
    // The HTTP client's own error stays reachable, for code that inspects it.
    let source = std::error::Error::source(&refused).expect("a source error");
    assert!(source.downcast_ref::<reqwest::Error>().is_some_and(|e| e.is_connect()), "{source:?}");
    assert!(matches!(IntrospectionVerifier::new("not a url", "a", "b", AUDIENCE), Err(AuthError::Config { .. })));
}

#[tokio::test]
async fn a_jwks_verifier_hands_opaque_tokens_to_introspection() {
    let (e, url) = start().await;
    e.answers.lock().expect("answers").insert("opaque-1".into(), json!({ "active": true, "sub": "ada" }));
    let jwks = JwksVerifier::new(["http://127.0.0.1:9"], AUDIENCE).expect("a verifier");
    assert!(matches!(jwks.verify("opaque-1").await, Err(AuthError::InvalidToken(_))), "no introspection: refused");
    let both = jwks.introspection(verifier(&url));
    assert_eq!(both.verify("opaque-1").await.expect("introspected").id, "ada");
}
