//! The HTTP client token requests go out with: reqwest, with the answer's size bounded (the
//! `oauth2` crate's own adapter reads any answer whole, so an authorization server could make
//! the client buffer gigabytes), and a DPoP proof on each request when the tokens are bound to
//! the connection's key (RFC 9449 §5), sent again with the server's nonce when it asks for one
//! (§8).

use super::dpop::{DpopKey, nonce_header};
use oauth2::url::Url;
use oauth2::{AsyncHttpClient, HttpClientError, HttpRequest, HttpResponse};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The largest token endpoint answer read: 64 KiB (a token response is a few hundred bytes;
/// a JWT access token a few KiB).
const MAX_TOKEN_ANSWER_BYTES: usize = 64 * 1024;

/// `reqwest::Client` for the `oauth2` crate (and this crate's own grants), reading at most
/// [`MAX_TOKEN_ANSWER_BYTES`], proving possession of `dpop` when set.
pub(crate) struct Bounded {
    pub(crate) http: reqwest::Client,
    pub(crate) dpop: Option<Arc<DpopKey>>,
}

impl Bounded {
    /// A client that sends no DPoP proofs.
    pub(crate) fn plain(http: &reqwest::Client) -> Self {
        Bounded { http: http.clone(), dpop: None }
    }
}

impl<'c> AsyncHttpClient<'c> for Bounded {
    type Error = HttpClientError<reqwest::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + Sync + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let Some(key) = &self.dpop else { return self.send(request).await };
            let (parts, body) = request.into_parts();
            let url = Url::parse(&parts.uri.to_string()).map_err(|e| HttpClientError::Other(e.to_string()))?;
            // One more try when the server answers `use_dpop_nonce` with a nonce not sent yet.
            let mut retried = false;
            loop {
                let proof =
                    key.proof(parts.method.as_str(), &url, None).map_err(|e| HttpClientError::Other(e.message))?;
                let mut request = http::Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
                for (name, value) in &parts.headers {
                    request = request.header(name, value);
                }
                let request = request.header("dpop", proof).body(body.clone()).map_err(HttpClientError::Http)?;
                let answer = self.send(request).await?;
                let fresh_nonce = nonce_header(answer.headers()).is_some_and(|n| key.remember_nonce(&url, n));
                if !retried
                    && fresh_nonce
                    && answer.status() == http::StatusCode::BAD_REQUEST
                    && asks_for_nonce(&answer)
                {
                    retried = true;
                    continue;
                }
                return Ok(answer);
            }
        })
    }
}

impl Bounded {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpClientError<reqwest::Error>> {
        let request: reqwest::Request = request.try_into().map_err(Box::new)?;
        let mut response = self.http.execute(request).await.map_err(Box::new)?;
        let mut answer = http::Response::builder().status(response.status()).version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(Box::new)? {
            if body.len() + chunk.len() > MAX_TOKEN_ANSWER_BYTES {
                return Err(HttpClientError::Other(format!(
                    "the token endpoint answered with more than {MAX_TOKEN_ANSWER_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        answer.body(body).map_err(HttpClientError::Http)
    }
}

/// Whether a token endpoint's error answer is `use_dpop_nonce` (RFC 9449 §8).
fn asks_for_nonce(answer: &HttpResponse) -> bool {
    serde_json::from_slice::<serde_json::Value>(answer.body())
        .ok()
        .is_some_and(|v| v.get("error").and_then(serde_json::Value::as_str) == Some("use_dpop_nonce"))
}
