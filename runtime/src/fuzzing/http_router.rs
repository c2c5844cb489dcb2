//! The HTTP seam: arbitrary methods, header sets and bodies through the Streamable HTTP router,
//! in process (no socket), the way [`serve`](crate::transport::http::serve) hands requests to it.

use super::check_server_message;
use axum::Router;
use axum::body::Body;
use http::{HeaderName, HeaderValue, Method, Request};
use tower::ServiceExt;

/// Methods the first input byte picks from (POST twice: it reaches the most code).
const METHODS: [Method; 8] = [
    Method::POST,
    Method::GET,
    Method::DELETE,
    Method::PUT,
    Method::OPTIONS,
    Method::HEAD,
    Method::PATCH,
    Method::POST,
];

/// Frames of a streamed (SSE) reply read before the stream is dropped: a listen subscription
/// or a session stream never ends by itself.
const MAX_FRAMES: usize = 32;

/// A server with the default [`HttpConfig`](crate::transport::http::HttpConfig) twice: as the
/// axum router of [`router`](crate::transport::http::router) and as the endpoint service that
/// [`serve`](crate::transport::http::serve) runs, fed requests decoded from fuzz input.
#[derive(Clone)]
pub struct HttpTarget {
    router: Router,
    endpoint: crate::transport::http::endpoint::Endpoint<crate::transport::http::endpoint::Handler>,
}

impl HttpTarget {
    /// The default-configured router and endpoint of `server` at `/mcp` (each with sessions
    /// of its own).
    pub fn new(server: crate::Server) -> Self {
        HttpTarget {
            router: crate::transport::http::router(server.clone(), Default::default()),
            endpoint: crate::transport::http::endpoint_service(server, Default::default()),
        }
    }

    /// Decodes `data` into a request (see [`http_request`]), serves it (through the endpoint
    /// when bit `0x40` of the first byte is set, else the router) and checks the reply:
    /// every JSON body or SSE `data:` frame a well-formed JSON-RPC message (or batch of them),
    /// no body on a reply to HEAD. Streams are read for at most 32 frames.
    ///
    /// Returns the status code; errors: a sentence saying what is wrong with the reply.
    pub async fn exchange(&self, data: &[u8]) -> Result<u16, String> {
        use futures::StreamExt;
        let req = http_request(data);
        // A reply to HEAD carries the headers of the reply to GET and no body.
        let head = req.method() == Method::HEAD;
        let through_endpoint = data.first().is_some_and(|b| b & 0x40 != 0);
        let response = if through_endpoint {
            self.endpoint.clone().oneshot(req).await
        } else {
            self.router.clone().oneshot(req).await
        };
        let response = match response {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut frames = response.into_body().into_data_stream();
        let mut body = Vec::new();
        let mut read = 0;
        while read < MAX_FRAMES {
            match frames.next().await {
                Some(Ok(chunk)) => body.extend_from_slice(&chunk),
                Some(Err(e)) => return Err(format!("the reply body failed: {e}")),
                None => break,
            }
            read += 1;
        }
        if head {
            return if body.is_empty() { Ok(status) } else { Err(format!("a reply to HEAD with a body ({status})")) };
        }
        if content_type.starts_with("application/json") {
            check_json_body(&body)?;
        } else if content_type.starts_with("text/event-stream") {
            for line in complete_lines(&body).split(|&b| b == b'\n') {
                if let Some(data) = line.strip_prefix(b"data:") {
                    let data = data.strip_prefix(b" ").unwrap_or(data);
                    check_json_body(data)?;
                }
            }
        }
        Ok(status)
    }
}

/// The complete lines of a body read in part (a stream cut off after [`MAX_FRAMES`]).
fn complete_lines(body: &[u8]) -> &[u8] {
    match body.iter().rposition(|&b| b == b'\n') {
        Some(end) => &body[..end],
        None => &[],
    }
}

fn check_json_body(body: &[u8]) -> Result<(), String> {
    let shown = || String::from_utf8_lossy(body).into_owned();
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Array(items)) if !items.is_empty() => {
            for item in items {
                let line = serde_json::to_vec(&item).map_err(|e| e.to_string())?;
                check_server_message(&line).map_err(|e| format!("{e}: {}", shown()))?;
            }
            Ok(())
        }
        _ => check_server_message(body).map_err(|e| format!("{e}: {}", shown())),
    }
}

/// The request `data` encodes: the first byte picks the method (of POST, GET, DELETE, PUT,
/// OPTIONS, HEAD, PATCH; its low three bits) and, with its bit `0x80`, the path `/other`
/// instead of `/mcp` (bit `0x40` picks the service in [`HttpTarget::exchange`]); up to
/// the first empty line come `name: value` header lines (lines that are no valid header are
/// skipped), the rest is the body. `Host: localhost` is added when no line names a host.
pub fn http_request(data: &[u8]) -> Request<Body> {
    let (selector, rest) = data.split_first().map(|(s, r)| (*s, r)).unwrap_or((0, &[][..]));
    let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => (rest, &[][..]),
    };
    let path = if selector & 0x80 != 0 { "/other" } else { "/mcp" };
    let mut req = Request::new(Body::from(body.to_vec()));
    *req.method_mut() = METHODS[usize::from(selector & 0x7f) % METHODS.len()].clone();
    *req.uri_mut() = http::Uri::from_static(path);
    let headers = req.headers_mut();
    for line in head.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
        let value = &line[colon + 1..];
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(&line[..colon]), HeaderValue::from_bytes(value)) {
            headers.append(name, value);
        }
    }
    if !headers.contains_key(http::header::HOST) {
        headers.insert(http::header::HOST, HeaderValue::from_static("localhost"));
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_method_path_headers_and_body() {
        let req = http_request(b"\x81mcp-method: ping\nbad header\nhost: example.com\n\n{\"x\":1}");
        assert_eq!(req.method(), Method::GET);
        assert_eq!(req.uri().path(), "/other");
        assert_eq!(req.headers()["mcp-method"], "ping");
        assert_eq!(req.headers()["host"], "example.com");
        assert_eq!(req.headers().len(), 2);
        let req = http_request(b"");
        assert_eq!((req.method(), req.uri().path()), (&Method::POST, "/mcp"));
        assert_eq!(req.headers()["host"], "localhost");
    }
}
