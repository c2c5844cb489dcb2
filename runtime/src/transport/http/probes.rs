//! Liveness and readiness probes for orchestrators and load balancers, answered beside the MCP
//! endpoint: outside authentication and the `Host`/`Origin` checks (a probe names the instance
//! by its address, not the public host), and only to `GET` and `HEAD`.

use crate::server::Server;
use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};

/// Where the probes are answered. Part of [`HttpConfig`](super::HttpConfig)
/// (`HttpConfig::probes`); a path equal to the MCP endpoint's is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Probes {
    /// Liveness (default `/healthz`): 200 `{"status":"alive"}` while the process serves HTTP,
    /// draining or not. An orchestrator restarts an instance that stops answering it.
    pub liveness: Option<String>,
    /// Readiness (default `/readyz`): 200 `{"status":"ready","checks":{...}}` when the server is
    /// not draining and every readiness check passes
    /// ([`Server::readiness`](crate::Server::readiness)); 503 with `"status":"draining"` or
    /// `"not ready"` and `Retry-After: 5` otherwise. A load balancer sends requests only to
    /// ready instances.
    pub readiness: Option<String>,
}

impl Default for Probes {
    fn default() -> Self {
        Probes { liveness: Some("/healthz".to_owned()), readiness: Some("/readyz".to_owned()) }
    }
}

impl Probes {
    /// No probes: both paths are 404.
    pub fn none() -> Self {
        Probes { liveness: None, readiness: None }
    }

    /// Sets [`liveness`](Self::liveness) (`None`: not served).
    pub fn liveness(mut self, path: Option<String>) -> Self {
        self.liveness = path;
        self
    }

    /// Sets [`readiness`](Self::readiness) (`None`: not served).
    pub fn readiness(mut self, path: Option<String>) -> Self {
        self.readiness = path;
        self
    }

    /// Which probe `path` is, if any.
    pub(crate) fn which(&self, path: &str) -> Option<Probe> {
        if self.liveness.as_deref() == Some(path) {
            Some(Probe::Liveness)
        } else if self.readiness.as_deref() == Some(path) {
            Some(Probe::Readiness)
        } else {
            None
        }
    }

    /// True when any probe is served.
    pub(crate) fn any(&self) -> bool {
        self.liveness.is_some() || self.readiness.is_some()
    }
}

/// One of the probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    Liveness,
    Readiness,
}

/// The answer of `probe` for `server` to a request with `method`: 405 (`Allow: GET, HEAD`) for
/// other methods.
pub(crate) async fn answer(probe: Probe, server: &Server, method: &Method) -> Response {
    if method != Method::GET && method != Method::HEAD {
        let mut resp = Response::new(Body::empty());
        *resp.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return resp;
    }
    let (status, body) = match probe {
        Probe::Liveness => (StatusCode::OK, serde_json::json!({ "status": "alive" })),
        Probe::Readiness => {
            let readiness = server.readiness().await;
            let status = if readiness.is_ready() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
            (status, readiness.to_json())
        }
    };
    let text = body.to_string();
    let length = text.len();
    let mut resp = Response::new(Body::from(text));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if status == StatusCode::SERVICE_UNAVAILABLE {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    if method == Method::HEAD {
        // The length of the GET reply it stands for (RFC 9110 §9.3.2).
        resp.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        *resp.body_mut() = Body::empty();
    }
    resp
}
