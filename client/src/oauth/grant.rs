//! Token requests for the grants the `oauth2` crate does not model, where an assertion stands
//! in for the user: the JWT bearer grant
//! ([RFC 7523 §2.1](https://www.rfc-editor.org/rfc/rfc7523#section-2.1)) and token exchange
//! ([RFC 8693](https://www.rfc-editor.org/rfc/rfc8693)). The request is the plain form POST of
//! RFC 6749 §4.5; the answer decodes into the `oauth2` crate's token response.

use super::bounded::Bounded;
use super::{AuthFailure, fail};
use base64::Engine;
use oauth2::AsyncHttpClient;
use oauth2::basic::BasicTokenResponse;
use oauth2::url::form_urlencoded;
use serde_json::Value;

/// `grant_type` of the JWT bearer grant.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of token exchange.
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub(crate) const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an identity assertion authorization grant (ID-JAG, SEP-990).
pub(crate) const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// How the client authenticates at the token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// `client_secret_basic`: the id and secret, each form-encoded, in `Authorization: Basic`.
    Basic { id: &'a str, secret: &'a str },
    /// `client_secret_post`: both in the body.
    Post { id: &'a str, secret: &'a str },
    /// A public client: its id in the body.
    Public { id: &'a str },
    /// No client identification at all (the assertion identifies the workload).
    Anonymous,
}

/// Why a token request failed.
pub(crate) enum GrantError {
    /// The server answered with an OAuth error (`invalid_grant`, `invalid_scope`, ...).
    Refused(AuthFailure),
    /// The request did not get an answer, or the answer made no sense.
    Failed(AuthFailure),
}

impl From<GrantError> for AuthFailure {
    fn from(error: GrantError) -> Self {
        match error {
            GrantError::Refused(e) | GrantError::Failed(e) => e,
        }
    }
}

/// What came back: the token response, and the `issued_token_type` of a token exchange.
pub(crate) struct Issued {
    pub(crate) token: BasicTokenResponse,
    pub(crate) issued_token_type: Option<String>,
}

/// POSTs `params` (with the client's authentication) to the token endpoint `endpoint` and
/// decodes the token response.
///
/// Errors: [`GrantError::Refused`] for an OAuth error answer (its `error` and
/// `error_description` in the message); [`GrantError::Failed`] when the endpoint cannot be
/// reached, is no URL, or answers with something other than a token response.
pub(crate) async fn request(
    http: &Bounded,
    endpoint: &str,
    auth: ClientAuth<'_>,
    params: &[(&str, &str)],
) -> Result<Issued, GrantError> {
    let mut request = http::Request::builder()
        .method(http::Method::POST)
        .uri(endpoint)
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(http::header::ACCEPT, "application/json");
    let mut params = params.to_vec();
    match auth {
        ClientAuth::Basic { id, secret } => {
            // RFC 6749 §2.3.1: each part form-encoded before the two are joined.
            let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", encode(id), encode(secret));
            let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair));
            request = request.header(http::header::AUTHORIZATION, value);
        }
        ClientAuth::Post { id, secret } => params.extend([("client_id", id), ("client_secret", secret)]),
        ClientAuth::Public { id } => params.push(("client_id", id)),
        ClientAuth::Anonymous => {}
    }
    let request = request
        .body(encode_form(&params))
        .map_err(|e| GrantError::Failed(AuthFailure::with_source(format!("the token endpoint {endpoint:?}"), e)))?;
    let answer = http.call(request).await.map_err(|e| {
        GrantError::Failed(AuthFailure::with_source(format!("the token request to {endpoint} failed"), e))
    })?;
    let body: Value = serde_json::from_slice(answer.body()).map_err(|e| {
        GrantError::Failed(fail(format!("{endpoint} answered HTTP {} with no JSON: {e}", answer.status())))
    })?;
    // RFC 6749 §5.2: an error response is a 400 (or 401 for client authentication) with an
    // `error` code; a 5xx, a 429 or a proxy's page is no verdict on the assertion.
    let oauth_error = matches!(answer.status().as_u16(), 400 | 401) && body.get("error").is_some_and(Value::is_string);
    if !answer.status().is_success() && !oauth_error {
        return Err(GrantError::Failed(fail(format!("{endpoint} answered HTTP {}", answer.status()))));
    }
    if !answer.status().is_success() {
        let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let error =
            Some(text("error")).filter(|e| !e.is_empty()).unwrap_or_else(|| format!("HTTP {}", answer.status()));
        let description = text("error_description");
        return Err(GrantError::Refused(fail(format!("{endpoint} refused the token request: {error} {description}"))));
    }
    let issued_token_type = body.get("issued_token_type").and_then(Value::as_str).map(str::to_owned);
    let token = serde_json::from_value(body)
        .map_err(|e| GrantError::Failed(fail(format!("{endpoint} answered with no token response: {e}"))))?;
    Ok(Issued { token, issued_token_type })
}

/// `application/x-www-form-urlencoded` of `params`.
fn encode_form(params: &[(&str, &str)]) -> Vec<u8> {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        form.append_pair(name, value);
    }
    form.finish().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A token endpoint answering every request with `answer(n)` (n = request count); returns its
    /// URL, the request counter, and the heads of the requests seen.
    async fn endpoint(
        answer: impl Fn(usize) -> Vec<u8> + Send + Sync + 'static,
    ) -> (String, Arc<AtomicUsize>, Arc<std::sync::Mutex<Vec<String>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/token", listener.local_addr().expect("addr"));
        let count = Arc::new(AtomicUsize::new(0));
        let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (c, h) = (count.clone(), heads.clone());
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else { return };
                let (c, h, answer) = (c.clone(), h.clone(), answer.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 65536];
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    h.lock().expect("not poisoned").push(String::from_utf8_lossy(&buf[..n]).into_owned());
                    let k = c.fetch_add(1, Ordering::SeqCst);
                    let _ = sock.write_all(&answer(k)).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        (url, count, heads)
    }

    fn http(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    }

    #[tokio::test]
    async fn a_server_error_is_no_refusal_of_the_assertion() {
        let (url, _, _) =
            endpoint(|_| http("503 Service Unavailable", "", br#"{"error":"temporarily_unavailable"}"#)).await;
        let plain = Bounded::plain(&reqwest::Client::new());
        let r = request(&plain, &url, ClientAuth::Anonymous, &[("grant_type", JWT_BEARER), ("assertion", "a")]).await;
        assert!(matches!(r, Err(GrantError::Failed(_))), "a 503 marks the assertion as refused for good");
    }

    #[tokio::test]
    async fn ten_megabytes_and_garbage_fail_cleanly() {
        let big = vec![b'x'; 10 * 1024 * 1024];
        let (url, _, _) = endpoint(move |_| http("200 OK", "", &big)).await;
        let plain = Bounded::plain(&reqwest::Client::new());
        let r = request(&plain, &url, ClientAuth::Anonymous, &[("grant_type", JWT_BEARER)]).await;
        assert!(matches!(r, Err(GrantError::Failed(_))));
        let (url, _, _) = endpoint(|_| http("200 OK", "", b"\xff\xfe garbage")).await;
        let r = request(&plain, &url, ClientAuth::Anonymous, &[("grant_type", JWT_BEARER)]).await;
        assert!(matches!(r, Err(GrantError::Failed(_))));
        let (url, _, _) = endpoint(|_| http("200 OK", "", br#"{"access_token":5}"#)).await;
        let r = request(&plain, &url, ClientAuth::Anonymous, &[("grant_type", JWT_BEARER)]).await;
        assert!(matches!(r, Err(GrantError::Failed(_))));
    }

    #[tokio::test]
    async fn basic_auth_is_form_encoded_then_base64() {
        let (url, _, heads) = endpoint(|_| http("200 OK", "", br#"{"access_token":"t","token_type":"Bearer"}"#)).await;
        let plain = Bounded::plain(&reqwest::Client::new());
        let r = request(&plain, &url, ClientAuth::Basic { id: "my client:1", secret: "s%e/c+r" }, &[]).await;
        assert!(r.is_ok(), "a token response");
        let head = heads.lock().expect("not poisoned")[0].to_ascii_lowercase();
        let expected = base64::engine::general_purpose::STANDARD.encode("my+client%3A1:s%25e%2Fc%2Br");
        assert!(head.contains(&format!("authorization: basic {}", expected.to_ascii_lowercase())), "{head}");
    }

    #[tokio::test]
    async fn the_dpop_nonce_retry_is_bounded_and_carries_the_nonce() {
        let (url, count, heads) =
            endpoint(|n| http("400 Bad Request", &format!("dpop-nonce: n{n}\r\n"), br#"{"error":"use_dpop_nonce"}"#))
                .await;
        let key = Arc::new(super::super::dpop::DpopKey::generate().expect("key"));
        let bounded = Bounded { http: reqwest::Client::new(), dpop: Some(key) };
        let r = request(&bounded, &url, ClientAuth::Anonymous, &[("grant_type", JWT_BEARER)]).await;
        assert!(matches!(r, Err(GrantError::Refused(_))));
        assert_eq!(count.load(Ordering::SeqCst), 2, "one retry, never more");
        let second = heads.lock().expect("not poisoned")[1].clone();
        let line = second.lines().find(|l| l.to_ascii_lowercase().starts_with("dpop:")).expect("a proof");
        let proof = line.split_once(':').map(|(_, v)| v.trim()).unwrap_or_default();
        let payload = proof.split('.').nth(1).expect("a JWT");
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).expect("base64url");
        let claims: Value = serde_json::from_slice(&decoded).expect("JSON claims");
        assert_eq!(claims["nonce"], "n0");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], url);
        assert!(claims.get("ath").is_none());
    }
}
