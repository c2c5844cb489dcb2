//! The HTTP client the `oauth2` crate sends token requests with: reqwest, with the answer's
//! size bounded (the crate's own adapter reads any answer whole, so an authorization server
//! could make the client buffer gigabytes).

use oauth2::{AsyncHttpClient, HttpClientError, HttpRequest, HttpResponse};
use std::future::Future;
use std::pin::Pin;

/// The largest token endpoint answer read: 64 KiB (a token response is a few hundred bytes;
/// a JWT access token a few KiB).
const MAX_TOKEN_ANSWER_BYTES: usize = 64 * 1024;

/// `reqwest::Client` for the `oauth2` crate, reading at most [`MAX_TOKEN_ANSWER_BYTES`].
pub(crate) struct Bounded(pub(crate) reqwest::Client);

impl<'c> AsyncHttpClient<'c> for Bounded {
    type Error = HttpClientError<reqwest::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + Sync + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request: reqwest::Request = request.try_into().map_err(Box::new)?;
            let mut response = self.0.execute(request).await.map_err(Box::new)?;
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
        })
    }
}
