//! How the verifiers talk to an authorization server: one HTTP client shape and one bounded
//! read of an answer.

use super::AuthError;
use std::time::Duration;

/// A client whose requests end within `timeout` and follow no redirect: keys and verdicts come
/// from where the issuer's metadata or the configuration says, not from where a redirect sends.
pub(super) fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// The body of `resp`, which must be a 200, of at most `limit` bytes.
///
/// Errors: [`AuthError::Unavailable`] naming `what` (e.g. `GET https://…`) for another status,
/// a broken body, or one over the limit.
pub(super) async fn body(mut resp: reqwest::Response, limit: usize, what: &str) -> Result<Vec<u8>, AuthError> {
    let unavailable = |e: String| AuthError::unavailable_because(format!("{what}: {e}"));
    if resp.status() != reqwest::StatusCode::OK {
        return Err(unavailable(format!("status {}", resp.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| AuthError::unavailable(format!("{what}: {e}"), e))? {
        body.extend_from_slice(&chunk);
        if body.len() > limit {
            return Err(unavailable(format!("the answer is larger than {} KiB", limit / 1024)));
        }
    }
    Ok(body)
}
