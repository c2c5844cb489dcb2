//! The protected resource metadata document (RFC 9728 §3) at its well-known paths, beside the
//! MCP endpoint. It is public and the same for everyone: served without the `Host`/`Origin`
//! checks and with `Access-Control-Allow-Origin: *`, so that a client running in a browser
//! (the MCP Inspector, a web chat app) can read where to sign in.

use crate::auth::ProtectedResource;
use crate::server::Server;
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};

/// The document and the paths it answers at.
#[derive(Debug)]
pub(crate) struct Metadata {
    paths: Vec<String>,
    body: Bytes,
}

impl Metadata {
    /// The metadata of `resource`, listing the scopes `server`'s primitives declare too.
    pub(crate) fn of(resource: &ProtectedResource, server: &Server) -> Metadata {
        let declared = server.declared_scopes();
        let doc = resource.document(declared.iter().map(String::as_str));
        Metadata { paths: resource.metadata_paths(), body: Bytes::from(serde_json::to_vec(&doc).unwrap_or_default()) }
    }

    /// True when `path` is one the document is served at.
    pub(crate) fn serves(&self, path: &str) -> bool {
        self.paths.iter().any(|p| p == path)
    }

    /// The paths the document is served at.
    pub(crate) fn paths(&self) -> &[String] {
        &self.paths
    }

    /// The answer to `method` at a metadata path: the document to GET (HEAD: its headers), the
    /// CORS preflight to OPTIONS, 405 to anything else.
    pub(crate) fn answer(&self, method: &Method) -> Response {
        let mut resp = Response::new(Body::empty());
        let h = resp.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        match *method {
            Method::GET | Method::HEAD => {
                h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                h.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
                h.insert(header::CONTENT_LENGTH, HeaderValue::from(self.body.len()));
                if *method == Method::GET {
                    *resp.body_mut() = Body::from(self.body.clone());
                }
            }
            Method::OPTIONS => {
                h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, HEAD, OPTIONS"));
                h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("*"));
                *resp.status_mut() = StatusCode::NO_CONTENT;
            }
            _ => {
                h.insert(header::ALLOW, HeaderValue::from_static("GET, HEAD, OPTIONS"));
                *resp.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
            }
        }
        resp
    }
}
