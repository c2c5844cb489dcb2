//! The MCP endpoint as a tower service of its own, which [`serve`](super::serve) and the CLI
//! run: the answers of [`router`](super::router) without axum's routing in front of them.
//!
//! axum's router clones the matched route's boxed service, boxes its future twice and wraps
//! the response per request (callgrind, 2026-12-01: ~5,300 of ~86,000 instructions of a
//! stateless `tools/call` at one connection). With one route there is nothing to route: the
//! path is compared, and what axum's top-level route does to a response is done here (a
//! `Content-Length` from an exact body size, no body on a reply to `HEAD`), outside any layer
//! (the CLI's bearer authentication) between it and the handler, as axum's route is outside a
//! layer on the router. A test sends the same requests to both and compares the answers.

use super::HttpState;
use axum::body::Body;
use axum::body::HttpBody as _;
use axum::response::Response;
use futures::FutureExt as _;
use futures::future::{Either, Ready, ready};
use http::{HeaderValue, Method, Request, StatusCode, header};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The MCP endpoint at `path` around `inner` (the [`Handler`], maybe behind layers): any
/// other path is 404 without a body, as axum's router answers it, and a reply to `HEAD` loses
/// its body.
#[derive(Clone)]
pub(crate) struct Endpoint<S> {
    path: Arc<str>,
    /// The protected resource metadata, answered at its own paths outside `inner` (it is
    /// public: no authentication, no host check).
    metadata: Option<Arc<super::metadata::Metadata>>,
    /// The liveness and readiness probes with the server they report on, when any is served
    /// (public, as the metadata is).
    probes: Option<Arc<(super::Probes, crate::server::Server)>>,
    inner: S,
}

impl<S> Endpoint<S> {
    pub(crate) fn new(path: &str, metadata: Option<Arc<super::metadata::Metadata>>, inner: S) -> Self {
        Endpoint { path: path.into(), metadata, probes: None, inner }
    }

    /// The same endpoint in front of `f(inner)`.
    pub(crate) fn map_inner<T>(self, f: impl FnOnce(S) -> T) -> Endpoint<T> {
        Endpoint { path: self.path, metadata: self.metadata, probes: self.probes, inner: f(self.inner) }
    }

    /// Answers `probes` for `server` beside the endpoint.
    pub(crate) fn with_probes(mut self, probes: &super::Probes, server: &crate::server::Server) -> Self {
        self.probes = probes.any().then(|| Arc::new((probes.clone(), server.clone())));
        self
    }
}

/// A probe's answer, computed after the readiness checks ran.
type ProbeFuture = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<S> tower::Service<Request<Body>> for Endpoint<S>
where
    S: tower::Service<Request<Body>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Either<Ready<Result<Response, Infallible>>, ProbeFuture>, HeadAware<S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if req.uri().path() != &*self.path {
            // These answers never read a body, and hyper closes an HTTP/1.1 connection whose
            // request body is left unread: say so, so that the client does not send its next
            // request into it (a POST to the wrong path, a 405).
            let closes = crate::unread_body::closes_unread(&req);
            if let Some(metadata) = self.metadata.as_ref().filter(|m| m.serves(req.uri().path())) {
                let resp = crate::unread_body::closing_if(closes, metadata.answer(req.method()));
                return Either::Left(Either::Left(ready(Ok(resp))));
            }
            if let Some(probes) = &self.probes
                && let Some(probe) = probes.0.which(req.uri().path())
            {
                let probes = probes.clone();
                let method = req.method().clone();
                return Either::Left(Either::Right(Box::pin(async move {
                    let resp = super::probes::answer(probe, &probes.1, &method).await;
                    Ok(crate::unread_body::closing_if(closes, resp))
                })));
            }
            let mut resp = Response::new(Body::empty());
            *resp.status_mut() = StatusCode::NOT_FOUND;
            return Either::Left(Either::Left(ready(Ok(crate::unread_body::closing_if(closes, resp)))));
        }
        let head = req.method() == Method::HEAD;
        Either::Right(HeadAware { inner: self.inner.call(req), head })
    }
}

pin_project_lite::pin_project! {
    /// The reply of `inner`, without its body when it answers `HEAD`.
    pub(crate) struct HeadAware<F> {
        #[pin]
        inner: F,
        head: bool,
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for HeadAware<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Poll::Ready(Ok(mut resp)) = this.inner.poll(cx) else { return Poll::Pending };
        if *this.head {
            // The reply to GET without its body (RFC 9110 §9.3.2), its length still announced.
            if !resp.headers().contains_key(header::CONTENT_LENGTH)
                && let Some(size) = resp.body().size_hint().exact()
            {
                resp.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(size));
            }
            *resp.body_mut() = Body::empty();
        }
        Poll::Ready(Ok(resp))
    }
}

/// Answers every request it gets as the MCP endpoint ([`handle_request`](super::handle_request)).
#[derive(Clone)]
pub(crate) struct Handler {
    state: Arc<HttpState>,
    /// The connection every request comes on, when one handler serves one connection;
    /// `None`: each request's `Connection` extension, if any.
    connection: Option<crate::context::Connection>,
}

impl Handler {
    pub(crate) fn new(state: Arc<HttpState>) -> Self {
        Handler { state, connection: None }
    }

    /// This handler for the requests of `connection` alone.
    pub(crate) fn on(self, connection: crate::context::Connection) -> Self {
        Handler { connection: Some(connection), ..self }
    }
}

impl tower::Service<Request<Body>> for Handler {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let (parts, body) = req.into_parts();
        Box::pin(super::handle_request(self.state.clone(), parts, body, self.connection.clone()).map(Ok))
    }
}

#[cfg(test)]
mod tests {
    use super::{Endpoint, Handler};
    use crate::auth::{BearerAuth, Principal, StaticTokens};
    use crate::server::{DynamicTool, Server};
    use crate::transport::http::{HttpConfig, http_state, router};
    use axum::body::Body;
    use http::{Request, Response};
    use tower::ServiceExt;

    const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    fn server() -> Server {
        let server = Server::builder("endpoint", "1").groups(["none"]).build().expect("builds");
        server
            .add_tool(DynamicTool::new("echo", |_ctx, args: serde_json::Value| async move {
                Ok::<_, crate::ToolError>(args["text"].as_str().unwrap_or_default().to_owned())
            }))
            .expect("a new tool");
        server
    }

    /// One request: method, path, headers and body; `{session}` in a header value or the body
    /// stands for the session the service under test handed out.
    type Spec = (&'static str, &'static str, Vec<(&'static str, String)>, String);

    fn specs() -> Vec<Spec> {
        let modern = |method: &str, name: Option<&str>| {
            let mut h = vec![
                ("content-type", "application/json".to_owned()),
                ("accept", "application/json, text/event-stream".to_owned()),
                ("mcp-protocol-version", "2026-07-28".to_owned()),
                ("mcp-method", method.to_owned()),
            ];
            if let Some(n) = name {
                h.push(("mcp-name", n.to_owned()));
            }
            h
        };
        let legacy = vec![
            ("content-type", "application/json".to_owned()),
            ("mcp-protocol-version", "2025-11-25".to_owned()),
            ("mcp-session-id", "{session}".to_owned()),
        ];
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hé"}},{MODERN_META}}}}}"#
        );
        vec![
            ("POST", "/mcp", modern("tools/call", Some("echo")), call.clone()),
            ("POST", "/mcp?x=1", modern("tools/call", Some("echo")), call.clone()),
            ("POST", "/mcp", modern("tools/call", Some("other")), call.clone()),
            ("POST", "/mcp", modern("tools/call", None), call.clone()),
            (
                "POST",
                "/mcp",
                modern("tools/list", None),
                format!(r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{{{MODERN_META}}}}}"#),
            ),
            (
                "POST",
                "/mcp",
                modern("nope/x", None),
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"nope/x","params":{{{MODERN_META}}}}}"#),
            ),
            ("POST", "/mcp", modern("tools/call", Some("echo")), "{not json".to_owned()),
            ("POST", "/mcp", modern("tools/call", Some("echo")), "[]".to_owned()),
            (
                "POST",
                "/mcp",
                modern("tools/call", Some("echo")),
                r#"{"jsonrpc":"2.0","method":"notifications/x"}"#.to_owned(),
            ),
            ("POST", "/mcp", legacy.clone(), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()),
            (
                "POST",
                "/mcp",
                legacy.clone(),
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}"#
                    .to_owned(),
            ),
            ("POST", "/mcp", legacy.clone(), r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_owned()),
            ("POST", "/mcp", legacy.clone(), r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#.to_owned()),
            ("POST", "/other", modern("tools/call", Some("echo")), call.clone()),
            ("POST", "/mcp/", modern("tools/call", Some("echo")), call.clone()),
            ("GET", "/mcp", vec![], String::new()),
            ("GET", "/mcp", vec![("mcp-protocol-version", "2026-07-28".to_owned())], String::new()),
            ("HEAD", "/mcp", vec![], String::new()),
            ("HEAD", "/mcp", vec![("mcp-protocol-version", "2026-07-28".to_owned())], String::new()),
            ("HEAD", "/nowhere", vec![], String::new()),
            ("OPTIONS", "/mcp", vec![], String::new()),
            ("PUT", "/mcp", legacy.clone(), String::new()),
            ("POST", "/mcp", vec![("host", "evil.example".to_owned())], call.clone()),
            // A refusal with a JSON body: the reply to HEAD keeps its length and loses the body.
            ("HEAD", "/mcp", vec![("host", "evil.example".to_owned())], String::new()),
            ("POST", "/mcp", vec![("authorization", "Bearer wrong".to_owned())], call.clone()),
            ("HEAD", "/mcp", vec![("authorization", "Bearer wrong".to_owned())], String::new()),
            ("POST", "/mcp", vec![("authorization", "Basic abc".to_owned())], call.clone()),
            ("DELETE", "/mcp", legacy.clone(), String::new()),
            ("DELETE", "/mcp", legacy.clone(), String::new()),
        ]
    }

    fn request(spec: &Spec, session: &str) -> Request<Body> {
        let (method, path, headers, body) = spec;
        let mut b = Request::builder().method(*method).uri(*path);
        if !headers.iter().any(|(n, _)| *n == "host") {
            b = b.header("host", "localhost");
        }
        if !headers.iter().any(|(n, _)| *n == "authorization") {
            b = b.header("authorization", "Bearer good");
        }
        for (name, value) in headers {
            b = b.header(*name, value.replace("{session}", session));
        }
        b.body(Body::from(body.replace("{session}", session))).expect("a valid request")
    }

    /// Status, headers and body of `resp`, with `session` written as `{session}`.
    ///
    /// `Content-Length` counts only on a reply to HEAD: axum's router sets it on every reply
    /// whose body size is known, the endpoint leaves that to hyper, which writes it from the
    /// same size when it sends the reply (over HTTP/2 only for a non-empty body: an empty one
    /// is a HEADERS frame that ends the stream).
    async fn seen(resp: Response<Body>, session: &str, head: bool) -> String {
        let (parts, body) = resp.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX).await.expect("a body that ends");
        let mut headers: Vec<String> = parts
            .headers
            .iter()
            .filter(|(n, _)| head || *n != http::header::CONTENT_LENGTH)
            .map(|(n, v)| format!("{n}: {}", String::from_utf8_lossy(v.as_bytes())))
            .collect();
        headers.sort();
        let text = format!("{} {headers:?} {}", parts.status, String::from_utf8_lossy(&body));
        if session.is_empty() { text } else { text.replace(session, "{session}") }
    }

    /// Every answer of `service`: a legacy `initialize` first (its session id is `{session}`
    /// afterwards), then [`specs`] in order.
    async fn answers<S>(service: S) -> Vec<String>
    where
        S: tower::Service<Request<Body>, Response = Response<Body>, Error = std::convert::Infallible> + Clone,
    {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let first = Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("host", "localhost")
            .header("authorization", "Bearer good")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(Body::from(init))
            .expect("a valid request");
        let Ok(resp) = service.clone().oneshot(first).await;
        let session = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        assert!(!session.is_empty(), "initialize opened a session");
        let mut out = vec![seen(resp, &session, false).await];
        for spec in specs() {
            let Ok(resp) = service.clone().oneshot(request(&spec, &session)).await;
            out.push(format!("{} {}: {}", spec.0, spec.1, seen(resp, &session, spec.0 == "HEAD").await));
        }
        out
    }

    fn endpoint() -> Endpoint<Handler> {
        let state = http_state(server(), HttpConfig::default(), None);
        Endpoint::new(&state.config.path.clone(), None, Handler::new(state))
    }

    fn auth() -> BearerAuth {
        BearerAuth::new(StaticTokens::new().with("good", Principal::new("alice", ["user"])))
    }

    /// Alike but for one difference: a request with a body for a path outside the router is
    /// axum's 404, which cannot say `Connection: close` (a fallback of ours would stop
    /// applications merging the router into theirs); the endpoint's own 404 says it.
    fn assert_same(via_router: &[String], direct: &[String]) {
        assert_eq!(via_router.len(), direct.len());
        for (r, d) in via_router.iter().zip(direct) {
            let closing_404 = d.replacen("404 Not Found [\"connection: close\"]", "404 Not Found []", 1);
            if closing_404 != *d {
                assert_eq!(r, &closing_404);
            } else {
                assert_eq!(r, d);
            }
        }
    }

    /// The endpoint answers every request as the axum router around the same handler does,
    /// also with bearer authentication between them (the CLI's `--auth`).
    #[tokio::test]
    async fn the_endpoint_answers_as_the_router_does() {
        let via_router = answers(router(server(), HttpConfig::default())).await;
        let direct = answers(endpoint()).await;
        assert_same(&via_router, &direct);
        let state = http_state(server(), HttpConfig::default(), None);
        let path = state.config.path.clone();
        let authenticated =
            answers(Endpoint::new(&path, None, tower::Layer::layer(&auth(), Handler::new(state)))).await;
        assert_same(&answers(router(server(), HttpConfig::default()).layer(auth())).await, &authenticated);
        let refused = authenticated.iter().filter(|a| a.contains(": 401 ")).collect::<Vec<_>>();
        assert_eq!(refused.len(), 3, "{authenticated:#?}");
        assert!(refused.iter().any(|a| a.starts_with("HEAD ") && a.ends_with(' ')), "{refused:#?}");
        // The cases mean something: the call was answered, the other path was not found, and
        // a reply to HEAD has no body.
        assert!(direct[1].starts_with("POST /mcp: 200 ") && direct[1].contains("hé"), "{}", direct[1]);
        assert!(direct.iter().any(|a| a.starts_with("POST /other: 404 ")));
        assert!(direct.iter().filter(|a| a.starts_with("HEAD ")).all(|a| a.ends_with(' ')), "{direct:#?}");
        assert!(
            direct.iter().any(|a| a.starts_with("HEAD /mcp: 403 ") && a.contains("content-length: ")),
            "{direct:#?}"
        );
    }

    /// The protected resource metadata is answered alike by both, outside the authentication
    /// layer and the host check, at both well-known paths; other well-known paths are 404.
    #[tokio::test]
    async fn both_serve_the_protected_resource_metadata_publicly() {
        use crate::auth::ProtectedResource;
        let resource = ProtectedResource::new("https://mcp.example.com/mcp")
            .and_then(|r| r.authorization_server("https://auth.example.com"))
            .expect("a resource");
        let config = || HttpConfig::default().protected_resource(resource.clone());
        let auth = || auth().protected_resource(resource.clone());
        let state = http_state(server(), config(), None);
        let path = state.config.path.clone();
        let mut endpoint =
            Endpoint::new(&path, state.metadata.clone(), tower::Layer::layer(&auth(), Handler::new(state)));
        let mut router = router(server(), config()).layer(auth());
        let get = |method: &str, path: &str| {
            Request::builder()
                .method(method)
                .uri(path)
                .header("host", "evil.example")
                .header("origin", "https://app.example")
                .body(Body::empty())
                .expect("a request")
        };
        for (method, path, status) in [
            ("GET", "/.well-known/oauth-protected-resource/mcp", 200),
            ("GET", "/.well-known/oauth-protected-resource", 200),
            ("HEAD", "/.well-known/oauth-protected-resource/mcp", 200),
            ("OPTIONS", "/.well-known/oauth-protected-resource/mcp", 204),
            ("POST", "/.well-known/oauth-protected-resource/mcp", 405),
        ] {
            let Ok(a) = tower::ServiceExt::oneshot(&mut endpoint, get(method, path)).await;
            let Ok(b) = tower::ServiceExt::oneshot(&mut router, get(method, path)).await;
            assert_eq!((a.status().as_u16(), b.status().as_u16()), (status, status), "{method} {path}");
            if status == 200 {
                assert_eq!(a.headers()["access-control-allow-origin"], "*");
                let body = axum::body::to_bytes(a.into_body(), 1 << 16).await.expect("a body");
                let other = axum::body::to_bytes(b.into_body(), 1 << 16).await.expect("a body");
                assert_eq!(body, other);
                if method == "GET" {
                    let doc: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
                    assert_eq!(doc["resource"], "https://mcp.example.com/mcp");
                    assert_eq!(doc["authorization_servers"][0], "https://auth.example.com");
                } else {
                    assert!(body.is_empty());
                }
            }
        }
        let other = get("GET", "/.well-known/oauth-protected-resource/other");
        let Ok(resp) = tower::ServiceExt::oneshot(&mut endpoint, other).await;
        assert_eq!(resp.status(), 404);
        // The endpoint itself still wants a token, and says where to learn how to get one.
        let post = Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Body::from("{}"))
            .expect("a request");
        let Ok(resp) = tower::ServiceExt::oneshot(&mut endpoint, post).await;
        assert_eq!(resp.status(), 401);
        let challenge = resp.headers()["www-authenticate"].to_str().expect("ASCII");
        assert_eq!(
            challenge,
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\""
        );
    }
}
