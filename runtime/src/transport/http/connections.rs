//! Accepting and serving connections under limits, so that clients that open connections and
//! never finish a request, or send huge headers, cannot hold the server's memory or sockets:
//! a header-read timeout ([`head_deadline`](super::head_deadline)), hyper's head-size limit
//! and HTTP/2 settings, a cap on open connections that stops accepting (leaving the rest in
//! the kernel's backlog) while it is reached, and an optional cap per client address that
//! closes the connections beyond it.

use super::batched_writes::BatchedWrites;
use super::client_connections::ClientConnections;
use super::head_deadline::{Half, HalfBody, HeadClock, HeadDeadline};
use super::proxy_protocol;
use super::sessions::Client;
use crate::context::Connection;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::Response;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// The longest timeout honoured (a day); longer ones are cut to it.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Limits on the connections [`serve`](super::serve) and [`serve_app`](super::serve_app)
/// accept: what keeps a server reachable from untrusted networks usable when clients misbehave
/// (docs/security.md). Part of [`HttpConfig`](super::HttpConfig) (`HttpConfig::connections`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// How long a client may take to send a complete HTTP/1.1 request head, from the moment
    /// the connection is accepted (or, on a kept-alive connection, from the end of the
    /// previous response), and the first bytes of an HTTP/2 connection; the connection is
    /// closed without an answer after it (default 15 s).
    pub header_read_timeout: Duration,
    /// How long a request body may take to arrive once its head has (default 30 s): a POST
    /// whose body is not complete by then is answered 408 with `-32600`, and its connection
    /// closed. The timer starts only when the body did not come with the head. Applies wherever
    /// [`router`](super::router) runs, also under a server of your own. It also bounds the read
    /// of a body whose request is answered without it (see
    /// [`HttpConfig::max_body_bytes`](super::HttpConfig::max_body_bytes)).
    pub body_read_timeout: Duration,
    /// Largest request head, request line and headers together, in bytes (default 32 KiB; at
    /// least 8 KiB). A larger HTTP/1.1 head is answered `431 Request Header Fields Too Large`
    /// and the connection closed; over HTTP/2, the header list limit announced to the client
    /// (`SETTINGS_MAX_HEADER_LIST_SIZE`), beyond which the stream is refused.
    pub max_header_bytes: usize,
    /// Most connections open at once (default 10 000). At the limit no connection is accepted
    /// until one closes: new clients wait in the listen backlog, and existing connections are
    /// served as before. Keep it under the process's open-file limit (`ulimit -n`).
    pub max_connections: usize,
    /// Most connections one client address holds open at once, counted by its IPv4 address or
    /// IPv6 /64 prefix (an IPv4 address a dual-stack listener sees as `::ffff:a.b.c.d` counts
    /// as itself); `None` (the default) caps only the total, and `Some(0)` counts as 1. A
    /// connection beyond the cap is closed as soon as it is accepted, before anything is read
    /// from it, so the client sees the connection closed (no HTTP status: its protocol is not
    /// known yet) and can retry once one of its others has closed. Refusals are logged at
    /// `warn` at most once per 10 s, with the number refused since the previous such line
    /// (from every client) and the client refused last. Clients behind one NAT share an
    /// IPv4 address and its cap.
    ///
    /// Without it one address can take every one of [`max_connections`](Self::max_connections)
    /// (HTTP/1.1 `subscriptions/listen` streams and a legacy session's GET streams hold a
    /// connection each), after which everyone else waits in the backlog. Set it on a server
    /// that clients reach directly; behind a reverse proxy or load balancer every connection
    /// comes from the proxy's address, so leave it unset there and limit per client in the
    /// proxy. [`HttpConfig::trusted_proxies`](super::HttpConfig::trusted_proxies) does not
    /// change that: connections are counted when they are accepted, before any request
    /// header (and with it the forwarded client address) has been read.
    pub max_connections_per_client: Option<usize>,
    /// Most concurrent streams (requests, SSE replies, listen subscriptions) on one HTTP/2
    /// connection (default 1 000), announced as `SETTINGS_MAX_CONCURRENT_STREAMS`. hyper's
    /// protections against streams reset in a loop (CVE-2023-44487 "rapid reset") stay on with
    /// their defaults.
    pub max_concurrent_streams: u32,
    /// Peers (your layer-4 load balancers: HAProxy with `send-proxy`/`send-proxy-v2`, AWS NLB
    /// with proxy protocol v2 on, ...) whose connections start with a
    /// [PROXY protocol](https://www.haproxy.org/download/3.0/doc/proxy-protocol.txt) header,
    /// version 1 or 2 (default none). From these peers the header is required, as the
    /// specification asks: a connection without one, with a malformed one, or whose header
    /// has not arrived within [`header_read_timeout`](Self::header_read_timeout) is closed
    /// (warned about at most once per 10 s). The client address it names becomes the
    /// connection's [`Connection::peer`](crate::context::Connection::peer) (and, under
    /// [`serve_app`](super::serve_app), axum's `ConnectInfo`), with the balancer's address as
    /// [`Connection::proxy`](crate::context::Connection::proxy); a `LOCAL` (version 2) or
    /// `UNKNOWN` (version 1) header, a balancer's own health check, keeps the TCP peer. From
    /// every other peer nothing is parsed, so a client cannot name its own address.
    /// [`HttpConfig::trusted_proxies`](super::HttpConfig::trusted_proxies) is separate: it
    /// believes forwarding headers of HTTP proxies, here behind or in place of the balancer.
    /// [`max_connections_per_client`](Self::max_connections_per_client) still counts the TCP
    /// peer, since it counts before anything is read. CLI: `--proxy-protocol` (the
    /// `--trusted-proxies` networks).
    pub proxy_protocol: Vec<super::IpNet>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(15),
            body_read_timeout: Duration::from_secs(30),
            max_header_bytes: 32 * 1024,
            max_connections: 10_000,
            max_connections_per_client: None,
            max_concurrent_streams: 1_000,
            proxy_protocol: Vec::new(),
        }
    }
}

impl ConnectionLimits {
    /// Sets [`header_read_timeout`](Self::header_read_timeout).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets [`body_read_timeout`](Self::body_read_timeout).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Sets [`max_header_bytes`](Self::max_header_bytes) (values under 8 KiB count as 8 KiB).
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes;
        self
    }

    /// Sets [`max_connections`](Self::max_connections) (0 counts as 1).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// Sets [`max_connections_per_client`](Self::max_connections_per_client) to `connections`
    /// (0 counts as 1).
    pub fn max_connections_per_client(mut self, connections: usize) -> Self {
        self.max_connections_per_client = Some(connections.max(1));
        self
    }

    /// Sets [`max_concurrent_streams`](Self::max_concurrent_streams).
    pub fn max_concurrent_streams(mut self, streams: u32) -> Self {
        self.max_concurrent_streams = streams;
        self
    }

    /// Sets [`proxy_protocol`](Self::proxy_protocol): the networks whose connections start
    /// with a PROXY protocol header.
    pub fn proxy_protocol(mut self, networks: impl IntoIterator<Item = super::IpNet>) -> Self {
        self.proxy_protocol = networks.into_iter().collect();
        self
    }

    /// [`header_read_timeout`](Self::header_read_timeout), at most a day: it is added to the
    /// current instant, which a larger value would overflow.
    fn header_timeout(&self) -> Duration {
        self.header_read_timeout.min(MAX_TIMEOUT)
    }

    fn builder(&self) -> Builder<TokioExecutor> {
        // hyper refuses (panics on) a read buffer under 8 KiB.
        const MIN_HEAD: usize = 8 * 1024;
        let head = self.max_header_bytes.max(MIN_HEAD);
        let mut builder = Builder::new(TokioExecutor::new());
        // No hyper header-read timeout: `HeadDeadline` keeps it (one timer per connection,
        // where hyper's makes one per request), and hyper's is on by default once it has a timer.
        builder.http1().header_read_timeout(None).max_buf_size(head);
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(self.max_concurrent_streams)
            .max_header_list_size(u32::try_from(head).unwrap_or(u32::MAX));
        builder
    }
}

/// The stages of a server's stop that [`serve`] follows.
pub(super) struct Stages {
    /// While cancelled, HTTP/1.1 replies carry `Connection: close`. In an `Arc`: every request
    /// holds it, and cloning a `CancellationToken` locks the mutex of its node, which the
    /// requests of all connections share.
    draining: Option<Arc<CancellationToken>>,
    /// Stop accepting; close idle connections and let the rest finish.
    closing: CancellationToken,
    /// Requests are cancelled: wait for connections at most [`AFTER_SHUTDOWN`] more.
    shutdown: CancellationToken,
}

impl Stages {
    /// The stages of `server` ([`Server::drain`](crate::Server::drain)).
    pub(super) fn of(server: &crate::server::Server) -> Stages {
        Stages {
            draining: Some(Arc::new(server.draining_token().clone())),
            closing: server.closing_token().clone(),
            shutdown: server.shutdown_token().clone(),
        }
    }

    /// One token that closes and shuts down at once (an application's own server).
    pub(super) fn until(shutdown: CancellationToken) -> Stages {
        Stages { draining: None, closing: shutdown.clone(), shutdown }
    }
}

/// How long connections may take to end once requests were cancelled at shutdown. Cancelled
/// requests answer within milliseconds; what is left is a client that does not read its reply,
/// has sent half a request head or body, or does not answer HTTP/2's closing PING, and hyper
/// would wait for it indefinitely.
const AFTER_SHUTDOWN: Duration = Duration::from_secs(1);

/// Serves `app` on every connection `listener` accepts, within `limits`, until `stages.closing`
/// fires; then stops accepting and waits for the open connections to finish (hyper closes idle
/// ones at once and lets requests in flight end), at most [`AFTER_SHUTDOWN`] after
/// `stages.shutdown`. While `stages.draining` is cancelled, every HTTP/1.1 reply carries
/// `Connection: close`, so that a reverse proxy does not send another request on that
/// connection, which could arrive just as it closes.
///
/// Each connection is served by the service `serve_connection` makes from its [`Connection`]
/// (one per accepted connection, shared by its HTTP/2 streams) and the client's address (the
/// TCP peer, or the one a PROXY protocol header named): [`with_extensions`] for an application
/// that reads them from each request, as axum's `ConnectInfo<SocketAddr>` and a
/// [`Connection`] extension.
/// Accepted connections get `TCP_NODELAY`: SSE replies go out in several writes, and without
/// it a small write can wait for the peer's delayed ACK (~40 ms on Linux).
///
/// A connection from a client that holds
/// [`max_connections_per_client`](ConnectionLimits::max_connections_per_client) already is
/// closed at once.
///
/// Errors: none so far; a failed `accept` (e.g. out of file descriptors) is logged and retried
/// after 50 ms rather than ending the server.
pub(super) async fn serve<M, S>(
    listener: TcpListener,
    serve_connection: M,
    stages: Stages,
    limits: &ConnectionLimits,
) -> std::io::Result<()>
where
    M: Fn(Connection, std::net::SocketAddr) -> S + Clone + Send + 'static,
    S: tower::Service<http::Request<Body>, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let builder = Arc::new(limits.builder());
    let open = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let proxy_peers: Arc<[super::IpNet]> = limits.proxy_protocol.clone().into();
    let per_client = limits.max_connections_per_client.map(ClientConnections::new);
    let mut failed_accepts = Throttled::default();
    let mut refusals = Throttled::default();
    loop {
        let permit = tokio::select! {
            _ = stages.closing.cancelled() => break,
            permit = open.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break, // never closed
            },
        };
        let (tcp, peer) = tokio::select! {
            _ = stages.closing.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors, say: warn once in a while, not at every retry.
                    if let Some(failed) = failed_accepts.count() {
                        tracing::warn!(
                            error = %e,
                            failed,
                            "http: accept failed (raise `ulimit -n` or lower max_connections); retrying every 50 ms"
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let client_slot = match &per_client {
            None => None,
            Some(counts) => match counts.try_open(peer.ip()) {
                Ok(slot) => Some(slot),
                Err(network) => {
                    if let Some(refused) = refusals.count() {
                        tracing::warn!(
                            last_client = %Client::Peer(network),
                            refused_since_last_warning = refused,
                            limit = counts.limit(),
                            "http: closed connections from clients that held max_connections_per_client open already"
                        );
                    }
                    drop(tcp);
                    continue;
                }
            },
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "http: cannot set TCP_NODELAY");
        }
        // Read in the connection's own task: a slow balancer must not hold up `accept`.
        let header_within = (!proxy_peers.is_empty() && super::forwarded::is_trusted(peer.ip(), &proxy_peers))
            .then(|| limits.header_timeout());
        let (make, builder, watcher) = (serve_connection.clone(), builder.clone(), graceful.watcher());
        let (draining, header_timeout) = (stages.draining.clone(), limits.header_timeout());
        tokio::spawn(async move {
            let mut tcp = tcp;
            let identity = match header_within {
                None => Connection::new(Some(peer)),
                Some(within) => match proxy_protocol::read(&mut tcp, within).await {
                    Ok(Some(client)) => Connection::new(Some(peer)).forwarded_for(client),
                    Ok(None) => Connection::new(Some(peer)),
                    Err(e) => {
                        proxy_protocol::refused(peer, &e);
                        drop((permit, client_slot));
                        return;
                    }
                },
            };
            let client = identity.peer().unwrap_or(peer);
            let clock = HeadClock::new();
            let service = CloseWhileDraining { inner: make(identity, client), draining, clock: clock.clone() };
            let io = TokioIo::new(BatchedWrites::new(HeadDeadline::new(tcp, clock, header_timeout)));
            let connection = builder.serve_connection_with_upgrades(io, service).into_owned();
            if let Err(e) = watcher.watch(connection).await {
                tracing::debug!(error = %e, %peer, "http: connection ended with an error");
            }
            drop((permit, client_slot));
        });
    }
    drop(listener);
    let finished = graceful.shutdown();
    tokio::pin!(finished);
    tokio::select! {
        _ = &mut finished => return Ok(()),
        _ = stages.shutdown.cancelled() => {}
    }
    if tokio::time::timeout(AFTER_SHUTDOWN, finished).await.is_err() {
        tracing::warn!("http: connections still open {AFTER_SHUTDOWN:?} after shutdown were dropped");
    }
    Ok(())
}

/// Makes `app`'s service for each connection: [`WithExtensions`], what
/// [`serve_app`](super::serve_app) promises an application.
pub(super) fn with_extensions<S: Clone>(
    app: S,
) -> impl Fn(Connection, std::net::SocketAddr) -> WithExtensions<S> + Clone {
    move |connection, client| WithExtensions { inner: app.clone(), connection, client }
}

/// `inner` for one connection, its requests carrying `client` as axum's
/// [`ConnectInfo`]`<SocketAddr>` and `connection` as a [`Connection`] extension. That costs
/// five allocations and two hashed inserts per request, which the crate's own endpoint avoids
/// by holding the connection in its handler.
#[derive(Clone)]
pub(super) struct WithExtensions<S> {
    inner: S,
    connection: Connection,
    client: std::net::SocketAddr,
}

impl<S> tower::Service<http::Request<Body>> for WithExtensions<S>
where
    S: tower::Service<http::Request<Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> S::Future {
        req.extensions_mut().insert(ConnectInfo(self.client));
        req.extensions_mut().insert(self.connection.clone());
        self.inner.call(req)
    }
}

/// `inner` as the connection's hyper service: its HTTP/1.1 replies carry `Connection: close`
/// while `draining` is cancelled, and each request tells the connection's `clock` when its
/// head arrived (when hyper calls this, as soon as the head is parsed; a tower service adapted
/// by hyper-util would be called only when hyper first polls the answer) and when its body and
/// its answer are over.
#[derive(Clone)]
struct CloseWhileDraining<S> {
    inner: S,
    draining: Option<Arc<CancellationToken>>,
    clock: Arc<HeadClock>,
}

impl<S, B> hyper::service::Service<http::Request<B>> for CloseWhileDraining<S>
where
    S: tower::Service<http::Request<Body>, Response = Response, Error = Infallible> + Clone,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = http::Response<HalfBody<Body>>;
    type Error = Infallible;
    type Future = ClosingReply<tower::util::Oneshot<S, http::Request<Body>>>;

    fn call(&self, req: http::Request<B>) -> Self::Future {
        // HTTP/2 has no `Connection` header: its connections end with GOAWAY when closing.
        let draining = self.draining.clone().filter(|_| req.version() < http::Version::HTTP_2);
        let number = self.clock.head_arrived(req.version());
        let connect = req.method() == http::Method::CONNECT;
        let req = req.map(|body| Body::new(HalfBody::new(body, Half::of(&self.clock, number))));
        let inner = tower::ServiceExt::oneshot(self.inner.clone(), req);
        ClosingReply { inner, draining, answer: Half::of(&self.clock, number), connect }
    }
}

pin_project_lite::pin_project! {
    /// The reply of `inner`, marked `Connection: close` when `draining` has fired by then, its
    /// body carrying the answer's half of the request (dropped with this future, the half is
    /// over too).
    struct ClosingReply<F> {
        #[pin]
        inner: F,
        draining: Option<Arc<CancellationToken>>,
        answer: Half,
        // A `CONNECT`, which a 2xx answer turns into a tunnel.
        connect: bool,
    }
}

impl<F: std::future::Future<Output = Result<Response, Infallible>>> std::future::Future for ClosingReply<F> {
    type Output = Result<http::Response<HalfBody<Body>>, Infallible>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let this = self.project();
        let std::task::Poll::Ready(Ok(mut resp)) = this.inner.poll(cx) else { return std::task::Poll::Pending };
        if this.draining.as_deref().is_some_and(CancellationToken::is_cancelled) {
            resp.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
        }
        let mut answer = std::mem::take(this.answer);
        let status = resp.status();
        if status == http::StatusCode::SWITCHING_PROTOCOLS || (*this.connect && status.is_success()) {
            // The connection is handed over: what it reads from now on is not request heads.
            answer.stop_timing();
        }
        std::task::Poll::Ready(Ok(resp.map(|body| HalfBody::new(body, answer))))
    }
}

/// Events counted between `warn` lines, so that a condition that repeats (an `accept` that keeps
/// failing, a client that keeps reconnecting) logs one line per 10 s, not one per event.
#[derive(Default)]
struct Throttled {
    since_warning: u64,
    last_warning: Option<tokio::time::Instant>,
}

impl Throttled {
    /// Counts one event; `Some(events since the previous warning, this one included)` when a
    /// warning is due now.
    fn count(&mut self) -> Option<u64> {
        self.since_warning += 1;
        if self.last_warning.is_some_and(|at| at.elapsed() < Duration::from_secs(10)) {
            return None;
        }
        self.last_warning = Some(tokio::time::Instant::now());
        Some(std::mem::take(&mut self.since_warning))
    }
}

#[cfg(test)]
mod tests {
    use super::{CloseWhileDraining, Connection, HeadClock, with_extensions};
    use axum::body::Body;
    use axum::extract::ConnectInfo;
    use axum::response::Response;
    use std::convert::Infallible;
    use std::net::SocketAddr;
    use std::sync::{Arc, Mutex};
    use tower::{Service, ServiceExt};

    /// What `serve_app` promises an application: every request of a connection carries the
    /// client's address as `ConnectInfo` and the connection as a `Connection` extension.
    #[tokio::test]
    async fn with_extensions_gives_every_request_the_client_and_its_connection() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let app = tower::service_fn(move |req: http::Request<Body>| {
            let info = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
            let connection = req.extensions().get::<Connection>().map(|c| (c.id(), c.peer()));
            record.lock().expect("not poisoned").push((info, connection));
            async { Ok::<_, Infallible>(Response::new(Body::empty())) }
        });
        let client: SocketAddr = "192.0.2.7:4000".parse().expect("an address");
        let connection = Connection::new(Some(client));
        let mut service = with_extensions(app)(connection.clone(), client);
        for _ in 0..2 {
            let ready = service.ready().await.expect("ready");
            let Ok(_) = ready.call(http::Request::new(Body::empty())).await;
        }
        let expected = (Some(client), Some((connection.id(), Some(client))));
        assert_eq!(*seen.lock().expect("not poisoned"), vec![expected, expected]);
    }

    /// An answer that hands the connection to another protocol (`101`, a `CONNECT` tunnel)
    /// stops its head timing; an ordinary one, or a refused `CONNECT`, does not.
    #[tokio::test]
    async fn a_switch_of_protocols_stops_the_head_timing() {
        let cases = [
            (http::Method::GET, http::StatusCode::SWITCHING_PROTOCOLS, false),
            (http::Method::CONNECT, http::StatusCode::OK, false),
            (http::Method::CONNECT, http::StatusCode::FORBIDDEN, true),
            (http::Method::POST, http::StatusCode::OK, true),
        ];
        for (method, status, still_timed) in cases {
            let app = tower::service_fn(move |_req: http::Request<Body>| async move {
                let mut resp = Response::new(Body::empty());
                *resp.status_mut() = status;
                Ok::<_, Infallible>(resp)
            });
            let clock = HeadClock::new();
            let service = CloseWhileDraining { inner: app, draining: None, clock: clock.clone() };
            let req = http::Request::builder().method(method.clone()).body(Body::empty()).expect("a request");
            let Ok(answer) = hyper::service::Service::call(&service, req).await;
            drop(answer);
            assert_eq!(clock.timed(), still_timed, "{method} answered {status}");
            assert_eq!(clock.waiting(), still_timed, "{method} answered {status}: the request is over");
        }
    }

    /// A request is over once hyper has its answer's body and the request's body is gone,
    /// also when the answer is dropped before it was made; until then it is not.
    #[tokio::test]
    async fn a_request_is_over_when_its_body_and_its_answer_are() {
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let released = Arc::new(tokio::sync::Mutex::new(Some(released)));
        let app = tower::service_fn(move |req: http::Request<Body>| {
            let released = released.clone();
            async move {
                // Holds the request's body until told to let go.
                if let Some(rx) = released.lock().await.take() {
                    let _ = rx.await;
                }
                drop(req);
                Ok::<_, Infallible>(Response::new(Body::empty()))
            }
        });
        let clock = HeadClock::new();
        let service = CloseWhileDraining { inner: app, draining: None, clock: clock.clone() };
        let post = || http::Request::post("/mcp").body(Body::from("{}")).expect("a request");
        // Dropped before it answers: both halves end with it.
        let pending = hyper::service::Service::call(&service, post());
        assert!(!clock.waiting());
        drop(pending);
        assert!(clock.waiting(), "an answer dropped unmade ends the request");

        let answering = tokio::spawn(hyper::service::Service::call(&service, post()));
        tokio::task::yield_now().await;
        assert!(!clock.waiting());
        release.send(()).expect("the app waits");
        let Ok(answer) = answering.await.expect("answered");
        assert!(!clock.waiting(), "the answer's body is not taken yet");
        drop(answer);
        assert!(clock.waiting());

        // An application that keeps the request's body past its answer keeps the request.
        let (keep, mut kept) = tokio::sync::mpsc::unbounded_channel::<Body>();
        let app = tower::service_fn(move |req: http::Request<Body>| {
            let _ = keep.send(req.into_body());
            async { Ok::<_, Infallible>(Response::new(Body::empty())) }
        });
        let service = CloseWhileDraining { inner: app, draining: None, clock: clock.clone() };
        let Ok(answer) = hyper::service::Service::call(&service, post()).await;
        drop(answer);
        assert!(!clock.waiting(), "the body is still held");
        drop(kept.recv().await.expect("the body"));
        assert!(clock.waiting());
    }
}
