#[cfg(feature = "oauth")]
use super::dpop::{DpopError, MAX_PROOF_BYTES};
use super::resource::{ProtectedResource, challenge};
use super::{AuthError, Principal, TokenVerifier};
use crate::jsonrpc::{McpError, error_response};
use crate::unread_body;
use axum::body::Body;
use http::{HeaderValue, Request, Response, StatusCode, header};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Longest bearer token looked at (bytes); a longer one is refused without decoding it.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// A tower layer that authenticates `Authorization: Bearer <token>` (RFC 6750 §2.1) with a
/// [`TokenVerifier`] and hands the [`Principal`] to the MCP endpoint as a request extension.
///
/// | request | answer |
/// |---|---|
/// | a token the verifier accepts (with every [required scope](ProtectedResource::required_scopes)) | served as that principal |
/// | no `Authorization` header, anonymous allowed ([`new`](Self::new) without a resource, or [`allow_anonymous`](Self::allow_anonymous)) | served anonymously |
/// | no `Authorization` header, tokens required ([`protected_resource`](Self::protected_resource)) | 401, `WWW-Authenticate: Bearer scope="<required>", resource_metadata="<url>"` |
/// | a header that is not one bearer token, a refused token, a token over 16 KiB, two `Authorization` headers | 401, `WWW-Authenticate: Bearer error="invalid_token", error_description="…", resource_metadata="<url>"` |
/// | a valid token lacking a required scope | 403, `WWW-Authenticate: Bearer error="insufficient_scope", scope="<required>", resource_metadata="<url>"` |
/// | the verifier cannot reach the authorization server ([`AuthError::Unavailable`]) | 503, `Retry-After: 5` |
///
/// Every refusal carries an id-less JSON-RPC error (`-32600`; `-32603` for 503) whose message
/// says what to do. `resource_metadata` is there only with a [`ProtectedResource`]
/// ([MCP authorization](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization),
/// RFC 9728 §5.1).
///
/// Over HTTP/1.x a refusal first reads what is left of the request's body (up to 4 MiB,
/// arriving within 30 s: the HTTP transport's defaults) and drops it, so that the connection
/// carries the client's next request, such as its metadata request after a 401; a longer or
/// slower body, or one awaiting `100 Continue`, is refused with `Connection: close`
/// (RFC 9112 §9.6) instead. Over HTTP/2 the refusal goes at once.
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
    resource: Option<Arc<ProtectedResource>>,
    /// The resource's metadata paths: public, passed through without a token.
    public_paths: Arc<[String]>,
    anonymous: bool,
    /// DPoP, when the resource asks for it, with the `htu` its proofs must name.
    #[cfg(feature = "oauth")]
    dpop: Option<(super::Dpop, Arc<url::Url>)>,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.resource)
            .field("anonymous", &self.anonymous)
            .finish_non_exhaustive()
    }
}

impl BearerAuth {
    /// A layer using `verifier`; a request without a token is served anonymously (roles and
    /// scopes then decide what it may use).
    pub fn new(verifier: impl TokenVerifier) -> Self {
        BearerAuth {
            verifier: Arc::new(verifier),
            resource: None,
            public_paths: Arc::new([]),
            anonymous: true,
            #[cfg(feature = "oauth")]
            dpop: None,
        }
    }

    /// Guards `resource`: every request needs a valid token with its required scopes, and
    /// challenges name its metadata URL; requests for the metadata itself pass without one.
    /// Serve the same metadata with
    /// [`HttpConfig::protected_resource`](crate::transport::http::HttpConfig::protected_resource)
    /// ([`serve`](crate::transport::http::serve) and the CLI do that from one setting).
    ///
    /// With [`ProtectedResource::dpop`] the layer also checks DPoP proofs (RFC 9449) of
    /// requests sent as `Authorization: DPoP <token>`; see [`Dpop`](super::Dpop).
    pub fn protected_resource(mut self, resource: ProtectedResource) -> Self {
        self.public_paths = resource.metadata_paths().into();
        #[cfg(feature = "oauth")]
        {
            self.dpop = resource
                .dpop_settings()
                .and_then(|d| Some((d.clone(), Arc::new(url::Url::parse(resource.resource()).ok()?))));
        }
        self.resource = Some(Arc::new(resource));
        self.anonymous = false;
        self
    }

    /// Serves requests without a token anonymously even with a protected resource (a server
    /// with some public tools); invalid tokens are still refused.
    pub fn allow_anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }

    /// The protected resource this layer guards, if any.
    pub fn resource(&self) -> Option<&ProtectedResource> {
        self.resource.as_deref()
    }
}

impl<S> tower::Layer<S> for BearerAuth {
    type Service = BearerAuthService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        BearerAuthService { inner, auth: self.clone() }
    }
}

/// The service of [`BearerAuth`].
#[derive(Clone)]
pub struct BearerAuthService<S> {
    inner: S,
    auth: BearerAuth,
}

impl<S> std::fmt::Debug for BearerAuthService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuthService").finish_non_exhaustive()
    }
}

type BoxedResponse<E> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response<Body>, E>> + Send>>;

/// How the client presented its token (RFC 6750 §2.1, RFC 9449 §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

/// What is wrong with an `Authorization` header.
enum BadHeader {
    /// A scheme other than `Bearer` and `DPoP`: as if there were no credentials (RFC 6750 §3.1,
    /// no error code).
    Unsupported,
    /// A header that is not exactly one token of a known scheme.
    Malformed(&'static str),
}

/// The access token of `req` and its scheme: `Ok(None)` without an `Authorization` header.
fn credential(req: &Request<Body>) -> Result<Option<(Scheme, String)>, BadHeader> {
    let mut values = req.headers().get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        // Two credentials: a proxy and this server might each pick a different one.
        return Err(BadHeader::Malformed("send one Authorization header"));
    }
    let malformed = BadHeader::Malformed("expected `Authorization: <scheme> <token>`, one token of visible ASCII");
    let value = value.to_str().map_err(|_| BadHeader::Malformed("the Authorization header is not ASCII"))?;
    let (scheme, token) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return Err(BadHeader::Unsupported);
    };
    match token.trim() {
        t if t.is_empty() || t.contains(' ') => Err(malformed),
        t if t.len() > MAX_TOKEN_BYTES => Err(BadHeader::Malformed("the token is longer than 16 KiB")),
        t => Ok(Some((scheme, t.to_owned()))),
    }
}

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
        // The readied service answers this request; a fresh clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let auth = self.auth.clone();
        Box::pin(async move {
            let renewed_nonce = match auth.admit(&mut req).await {
                Ok(nonce) => nonce,
                Err(refused) => {
                    let (parts, body) = req.into_parts();
                    return Ok(
                        unread_body::answer_after(parts.version, &parts.headers, body, refused, UNREAD_BODY).await
                    );
                }
            };
            let mut resp = inner.call(req).await?;
            if let Some(nonce) = renewed_nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
                resp.headers_mut().insert(DPOP_NONCE, nonce);
            }
            Ok(resp)
        })
    }
}

/// What of a refused request's unread body is taken before the refusal, so that its HTTP/1.1
/// connection can carry the request the client sends next (the metadata after a 401, or the
/// same request with a token): as much as the HTTP transport takes by default
/// ([`HttpConfig::max_body_bytes`](crate::transport::http::HttpConfig::max_body_bytes), 4 MiB,
/// arriving within its `body_read_timeout`, 30 s), so that a body the endpoint would serve
/// gets its 401 rather than a reset connection. A longer or slower body gets the refusal with
/// `Connection: close`.
const UNREAD_BODY: unread_body::Bounds =
    unread_body::Bounds { max_bytes: 4 * 1024 * 1024, timeout: std::time::Duration::from_secs(30) };

impl BearerAuth {
    /// Checks `req`'s credential, inserting its [`Principal`] when it has one; a renewed DPoP
    /// nonce for the answer, or the refusal.
    async fn admit(&self, req: &mut Request<Body>) -> Result<Option<String>, Response<Body>> {
        if self.public_paths.iter().any(|p| p == req.uri().path()) {
            return Ok(None);
        }
        let (scheme, token) = match credential(req) {
            Ok(Some(credential)) => credential,
            Ok(None) if self.anonymous => return Ok(None),
            Ok(None) => return Err(self.refusal(Refusal::NoToken)),
            Err(BadHeader::Unsupported) => return Err(self.refusal(Refusal::Unsupported)),
            Err(BadHeader::Malformed(reason)) => return Err(self.refusal(Refusal::Invalid(reason.to_owned()))),
        };
        self.scheme_allowed(scheme).map_err(|refusal| self.refusal(refusal))?;
        let principal = match self.verifier.verify(&token).await {
            Ok(p) => p,
            Err(AuthError::Unavailable { message, .. }) => return Err(unavailable(&message)),
            Err(e) => return Err(self.refusal(Refusal::Invalid(e.to_string()))),
        };
        let renewed_nonce = self
            .proof(req.headers(), req.method(), scheme, &token, &principal)
            .await
            .map_err(|refusal| self.refusal(refusal))?;
        if let Some(resource) = &self.resource
            && resource.required().iter().any(|s| !principal.has_scope(s))
        {
            return Err(self.refusal(Refusal::Scope(scheme)));
        }
        req.extensions_mut().insert::<Principal>(principal);
        Ok(renewed_nonce)
    }
}

/// The response header carrying a server nonce (RFC 9449 §8.1, §9).
const DPOP_NONCE: &str = "dpop-nonce";

impl BearerAuth {
    /// Refuses a scheme this layer does not take: `DPoP` without DPoP set up, `Bearer` when
    /// DPoP is required.
    fn scheme_allowed(&self, scheme: Scheme) -> Result<(), Refusal> {
        match (scheme, self.dpop_settings()) {
            (Scheme::Dpop, None) => Err(Refusal::Invalid(
                "this server does not check DPoP proofs (DPoP is off): send a token without a DPoP binding as \
                 `Authorization: Bearer <token>`, or turn DPoP on at the server (--auth-dpop)"
                    .to_owned(),
            )),
            #[cfg(feature = "oauth")]
            (Scheme::Bearer, Some(d)) if d.is_required() => Err(Refusal::Dpop(DpopError::Token(
                "this server requires DPoP-bound tokens: send `Authorization: DPoP <token>` with a `DPoP` proof"
                    .to_owned(),
            ))),
            _ => Ok(()),
        }
    }

    #[cfg(feature = "oauth")]
    fn dpop_settings(&self) -> Option<&super::Dpop> {
        self.dpop.as_ref().map(|(d, _)| d)
    }

    #[cfg(not(feature = "oauth"))]
    fn dpop_settings(&self) -> Option<&std::convert::Infallible> {
        None
    }

    /// Checks the DPoP proof of a request (RFC 9449 §7.1), or that a token bound to a key
    /// did not come as a plain bearer token; `Ok` holds a nonce to hand out when the
    /// proof's is getting old.
    #[cfg(feature = "oauth")]
    async fn proof(
        &self,
        headers: &http::HeaderMap,
        method: &http::Method,
        scheme: Scheme,
        token: &str,
        principal: &Principal,
    ) -> Result<Option<String>, Refusal> {
        let jkt = principal.claims.pointer("/cnf/jkt").and_then(serde_json::Value::as_str);
        let Some((dpop, htu)) = &self.dpop else {
            return match jkt {
                Some(_) => Err(Refusal::Invalid(
                    "the token is bound to a key (cnf.jkt) and this server does not check DPoP proofs \
                     (DPoP is off): ask for a token without a DPoP binding, or turn DPoP on at the server \
                     (--auth-dpop)"
                        .to_owned(),
                )),
                None => Ok(None),
            };
        };
        if scheme == Scheme::Bearer {
            return match jkt {
                Some(_) => Err(Refusal::Dpop(DpopError::Token(
                    "the token is bound to a key (cnf.jkt): send it as `Authorization: DPoP <token>` with a `DPoP` proof"
                        .to_owned(),
                ))),
                None => Ok(None),
            };
        }
        let mut proofs = headers.get_all("dpop").iter();
        let proof = match (proofs.next(), proofs.next()) {
            (Some(p), None) if p.len() <= MAX_PROOF_BYTES => p.to_str().ok(),
            _ => None,
        };
        let Some(proof) = proof else {
            return Err(Refusal::Dpop(DpopError::Proof(
                "send exactly one `DPoP` header holding a proof JWT (ASCII, at most 8 KiB)".to_owned(),
            )));
        };
        dpop.check(proof, method.as_str(), htu, token, jkt).await.map_err(Refusal::Dpop)
    }

    #[cfg(not(feature = "oauth"))]
    async fn proof(
        &self,
        _headers: &http::HeaderMap,
        _method: &http::Method,
        _scheme: Scheme,
        _token: &str,
        _principal: &Principal,
    ) -> Result<Option<String>, Refusal> {
        Ok(None)
    }
}

enum Refusal {
    NoToken,
    Unsupported,
    Invalid(String),
    Scope(Scheme),
    #[cfg(feature = "oauth")]
    Dpop(DpopError),
}

impl BearerAuth {
    fn refusal(&self, refusal: Refusal) -> Response<Body> {
        let required = self.resource.as_ref().map(|r| r.required().iter().cloned().collect::<Vec<_>>().join(" "));
        let required = required.unwrap_or_default();
        let metadata = self.resource.as_ref().map(|r| r.metadata_url());
        let (status, message, error, schemes) = match &refusal {
            Refusal::NoToken | Refusal::Unsupported => {
                let offered = self.offered();
                let wanted = match offered.as_slice() {
                    [Scheme::Dpop] => "`Authorization: DPoP <token>` with a `DPoP` proof",
                    [_, _] => "`Authorization: Bearer <token>` (or `DPoP <token>` with a `DPoP` proof)",
                    _ => "`Authorization: Bearer <token>`",
                };
                let sent = if matches!(refusal, Refusal::Unsupported) {
                    "an Authorization scheme it does not take"
                } else {
                    "no token"
                };
                let message = format!(
                    "unauthorized: the request has {sent}; this server needs {wanted}. The WWW-Authenticate \
                     header names its resource metadata, which names the authorization server"
                );
                (StatusCode::UNAUTHORIZED, message, None, offered)
            }
            Refusal::Invalid(reason) => (
                StatusCode::UNAUTHORIZED,
                format!("unauthorized: {reason}"),
                Some(("invalid_token", reason.as_str())),
                self.offered(),
            ),
            Refusal::Scope(scheme) => (
                StatusCode::FORBIDDEN,
                format!(
                    "forbidden: the token lacks a scope this server requires ({required}); authorize again with it"
                ),
                Some(("insufficient_scope", "")),
                vec![*scheme],
            ),
            #[cfg(feature = "oauth")]
            Refusal::Dpop(e) => {
                let (code, reason) = match e {
                    DpopError::Proof(r) => ("invalid_dpop_proof", r),
                    DpopError::Token(r) => ("invalid_token", r),
                    DpopError::Nonce { reason, .. } => ("use_dpop_nonce", reason),
                };
                (
                    StatusCode::UNAUTHORIZED,
                    format!("unauthorized: {reason}"),
                    Some((code, reason.as_str())),
                    vec![Scheme::Dpop],
                )
            }
        };
        let mut resp = json_error(status, &McpError::invalid_request(message));
        for scheme in schemes {
            let value = match scheme {
                Scheme::Bearer => challenge(metadata.as_deref(), error, &required),
                #[cfg(feature = "oauth")]
                Scheme::Dpop => match self.dpop_settings() {
                    Some(d) => super::dpop::challenge(d, metadata.as_deref(), error, &required),
                    None => continue,
                },
                #[cfg(not(feature = "oauth"))]
                Scheme::Dpop => continue,
            };
            if let Ok(v) = HeaderValue::from_str(&value) {
                resp.headers_mut().append(header::WWW_AUTHENTICATE, v);
            }
        }
        #[cfg(feature = "oauth")]
        {
            let nonce = match &refusal {
                Refusal::Dpop(DpopError::Nonce { nonce, .. }) => Some(nonce.clone()),
                _ if status == StatusCode::UNAUTHORIZED => self.dpop_settings().and_then(|d| d.fresh_nonce()),
                _ => None,
            };
            if let Some(v) = nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
                resp.headers_mut().insert(DPOP_NONCE, v);
            }
        }
        resp
    }

    /// The schemes a request may use, in the challenges of a 401: `Bearer` unless DPoP is
    /// required, `DPoP` when it is on.
    fn offered(&self) -> Vec<Scheme> {
        match self.dpop_settings() {
            None => vec![Scheme::Bearer],
            #[cfg(feature = "oauth")]
            Some(d) if d.is_required() => vec![Scheme::Dpop],
            Some(_) => vec![Scheme::Bearer, Scheme::Dpop],
        }
    }
}

fn json_error(status: StatusCode, err: &McpError) -> Response<Body> {
    let body = error_response(None, err);
    let mut resp = Response::new(Body::from(body.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn unavailable(why: &str) -> Response<Body> {
    let err = McpError::internal(format!("the token cannot be verified now ({why}); try again shortly"));
    let mut resp = json_error(StatusCode::SERVICE_UNAVAILABLE, &err);
    resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    resp
}
