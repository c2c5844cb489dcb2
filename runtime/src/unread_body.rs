//! Answers given before a request's body was read: what is left of the body is read and
//! dropped first, so that an HTTP/1.1 connection stays usable for the client's next request.
//!
//! When a handler drops a request body it has not read, hyper tries once to read the rest
//! and, if the rest has not arrived yet, closes the connection after the answer, which does
//! not say `Connection: close`. A client that sends its next request at once on the same
//! connection (an OAuth client fetching the protected resource metadata named by a 401)
//! finds it broken off. So a refusal first takes the rest of the body, within bounds, and
//! says `Connection: close` when it cannot (RFC 9112 §9.6), so the client opens a new one.

use axum::body::Body;
use http::{HeaderMap, HeaderValue, Response, Version, header};
use std::time::Duration;

/// How much of an unread body is taken before an early answer, and for how long.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    /// The most bytes read and dropped; a longer body closes the connection.
    pub(crate) max_bytes: usize,
    /// How long the rest may take to arrive, counted only when it is not there at once.
    pub(crate) timeout: Duration,
}

/// `resp`, once `body` (of a request of `version` with `headers`) is [taken](take); with
/// `Connection: close` when it is not.
pub(crate) async fn answer_after(
    version: Version,
    headers: &HeaderMap,
    body: Body,
    resp: Response<Body>,
    bounds: Bounds,
) -> Response<Body> {
    let closes = take(version, headers, body, bounds).await;
    closing_if(closes, resp)
}

/// Reads `body` (of a request of `version` with `headers`) to its end within `bounds` and drops
/// it. Whether the connection must close because it did not (longer, later, broken off, or
/// awaiting a `100 Continue` that a refusal should not send, RFC 9110 §10.1.1). Over HTTP/2
/// and later, `false` at once: only the request's stream ends, not the connection.
pub(crate) async fn take(version: Version, headers: &HeaderMap, body: Body, bounds: Bounds) -> bool {
    use http_body::Body as _;
    if version >= Version::HTTP_2 || body.is_end_stream() {
        return false;
    }
    let expects_continue =
        headers.get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let taken = !expects_continue
        && body.size_hint().lower() <= bounds.max_bytes as u64
        && read_to_end_in_time(body, bounds).await;
    !taken
}

/// Whether answering `req` without reading its body closes its connection: an HTTP/1.x request
/// with a body. Such an answer should say so ([`closing_if`]), so that the client does not send
/// its next request into the closing connection.
pub(crate) fn closes_unread(req: &http::Request<Body>) -> bool {
    req.version() < Version::HTTP_2 && !http_body::Body::is_end_stream(req.body())
}

/// `resp`, with `Connection: close` (RFC 9112 §9.6) when `closes`.
pub(crate) fn closing_if(closes: bool, mut resp: Response<Body>) -> Response<Body> {
    if closes {
        resp.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// Whether `body` ended within `bounds`. The timer starts only when the body is not all there
/// at once, so the usual refusal (a body that came with its head) pays no timer.
async fn read_to_end_in_time(body: Body, bounds: Bounds) -> bool {
    let read = read_to_end(body, bounds.max_bytes);
    let mut read = std::pin::pin!(read);
    if let std::task::Poll::Ready(ended) = futures::poll!(&mut read) {
        return ended;
    }
    tokio::time::timeout(bounds.timeout, read).await.unwrap_or(false)
}

/// Reads and drops `body`: whether it ended cleanly within `max_bytes`.
async fn read_to_end(body: Body, max_bytes: usize) -> bool {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    let mut seen = 0usize;
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else { return false };
        seen = seen.saturating_add(chunk.len());
        if seen > max_bytes {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    const BOUNDS: Bounds = Bounds { max_bytes: 8, timeout: Duration::from_millis(50) };

    fn closes(resp: &Response<Body>) -> bool {
        resp.headers().get(header::CONNECTION).is_some_and(|v| v == "close")
    }

    async fn answered(version: Version, headers: HeaderMap, body: Body) -> Response<Body> {
        answer_after(version, &headers, body, Response::new(Body::empty()), BOUNDS).await
    }

    fn streamed(chunks: Vec<Result<Bytes, std::io::Error>>) -> Body {
        Body::from_stream(futures::stream::iter(chunks))
    }

    #[tokio::test]
    async fn a_body_within_bounds_is_taken_and_the_connection_kept() {
        assert!(!closes(&answered(Version::HTTP_11, HeaderMap::new(), Body::from("12345678")).await));
        assert!(!closes(&answered(Version::HTTP_11, HeaderMap::new(), Body::empty()).await));
        let chunks = vec![Ok(Bytes::from_static(b"1234")), Ok(Bytes::from_static(b"5678"))];
        assert!(!closes(&answered(Version::HTTP_11, HeaderMap::new(), streamed(chunks)).await));
    }

    #[tokio::test]
    async fn a_longer_broken_or_late_body_closes_the_connection() {
        assert!(closes(&answered(Version::HTTP_11, HeaderMap::new(), Body::from("123456789")).await));
        let chunks = vec![Ok(Bytes::from_static(b"1234")), Ok(Bytes::from_static(b"56789"))];
        assert!(closes(&answered(Version::HTTP_11, HeaderMap::new(), streamed(chunks)).await));
        let broken = vec![Ok(Bytes::from_static(b"12")), Err(std::io::Error::other("reset"))];
        assert!(closes(&answered(Version::HTTP_11, HeaderMap::new(), streamed(broken)).await));
        let late = Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>());
        assert!(closes(&answered(Version::HTTP_10, HeaderMap::new(), late).await));
    }

    /// A body whose `Content-Length` is over the bound: refused by its size, never read.
    struct Unreadable;

    impl http_body::Body for Unreadable {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
            panic!("a body over the bound by its length is not read")
        }

        fn size_hint(&self) -> http_body::SizeHint {
            http_body::SizeHint::with_exact(9)
        }
    }

    #[tokio::test]
    async fn a_body_longer_than_the_bound_by_its_length_is_not_read() {
        assert!(closes(&answered(Version::HTTP_11, HeaderMap::new(), Body::new(Unreadable)).await));
    }

    #[tokio::test]
    async fn a_client_awaiting_100_continue_is_not_asked_for_its_body() {
        let mut headers = HeaderMap::new();
        headers.insert(header::EXPECT, HeaderValue::from_static("100-Continue"));
        assert!(closes(&answered(Version::HTTP_11, headers, Body::from("1")).await));
    }

    #[tokio::test]
    async fn over_http2_the_answer_goes_at_once() {
        let late = Body::from_stream(futures::stream::pending::<Result<Bytes, std::io::Error>>());
        assert!(!closes(&answered(Version::HTTP_2, HeaderMap::new(), late).await));
    }
}
