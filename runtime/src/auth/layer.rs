use super::{Principal, TokenVerifier};
use crate::jsonrpc::{McpError, error_response};
use axum::body::Body;
use http::{HeaderValue, Request, Response, StatusCode, header};
use std::sync::Arc;
use std::task::{Context, Poll};

/// A tower layer that authenticates `Authorization: Bearer <token>` with a [`TokenVerifier`]
/// and hands the [`Principal`] to the MCP router (as a request extension).
///
/// No `Authorization` header: the request goes on anonymously. A header that is not a bearer
/// token, a token the verifier refuses, or more than one `Authorization` header: HTTP 401,
/// `WWW-Authenticate: Bearer error="invalid_token"`, and an id-less JSON-RPC error `-32600`.
///
/// ```no_run
/// use switchyard::auth::{BearerAuth, JwtVerifier};
/// use switchyard::transport::http::{HttpConfig, router};
/// # fn app(server: switchyard::Server) -> Result<axum::Router, switchyard::auth::AuthError> {
/// let verifier = JwtVerifier::hs256(b"a long random secret")?.issuer("https://idp.example");
/// Ok(router(server, HttpConfig::default()).layer(BearerAuth::new(verifier)))
/// # }
/// ```
#[derive(Clone)]
pub struct BearerAuth {
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth").finish_non_exhaustive()
    }
}

impl BearerAuth {
    /// A layer using `verifier`.
    pub fn new(verifier: impl TokenVerifier) -> Self {
        BearerAuth { verifier: Arc::new(verifier) }
    }
}

impl<S> tower::Layer<S> for BearerAuth {
    type Service = BearerAuthService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        BearerAuthService { inner, verifier: self.verifier.clone() }
    }
}

/// The service of [`BearerAuth`].
#[derive(Clone)]
pub struct BearerAuthService<S> {
    inner: S,
    verifier: Arc<dyn TokenVerifier>,
}

impl<S> std::fmt::Debug for BearerAuthService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuthService").finish_non_exhaustive()
    }
}

type BoxedResponse<E> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response<Body>, E>> + Send>>;

impl<S> tower::Service<Request<Body>> for BearerAuthService<S>
where
    S: tower::Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = BoxedResponse<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        if req.headers().get_all(header::AUTHORIZATION).iter().count() > 1 {
            // Two credentials: a proxy and this server might each pick a different one.
            return Box::pin(async { Ok(unauthorized("send one Authorization header")) });
        }
        if let Some(value) = req.headers().get(header::AUTHORIZATION) {
            let token = value.to_str().ok().and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
            match token.map(|t| self.verifier.verify(t)) {
                Some(Ok(principal)) => {
                    req.extensions_mut().insert::<Principal>(principal);
                }
                Some(Err(e)) => return Box::pin(async move { Ok(unauthorized(&e.to_string())) }),
                None => return Box::pin(async { Ok(unauthorized("expected `Authorization: Bearer <token>`")) }),
            }
        }
        // The readied service answers this request; a fresh clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move { inner.call(req).await })
    }
}

fn unauthorized(reason: &str) -> Response<Body> {
    let body = error_response(None, &McpError::invalid_request(format!("unauthorized: {reason}")));
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = StatusCode::UNAUTHORIZED;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer error=\"invalid_token\""));
    resp
}
