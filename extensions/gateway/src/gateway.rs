//! [`Gateway`]: the upstreams of one server, each kept connected by a supervisor task that
//! mirrors its listings and follows their changes.

use crate::mirror::{Kind, Mirror};
use crate::relay::Link;
use crate::updates::ResourceUpdates;
use crate::upstream::Upstream;
use futures::stream::{self, BoxStream, StreamExt};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use switchyard::Server;
use switchyard::jsonrpc::Notification;
use switchyard_client::{CancellationToken, Client, SubscriptionFilter};
use tokio::sync::{oneshot, watch};

/// The upstreams one server serves from.
///
/// ```no_run
/// # async fn run(server: switchyard::Server) -> Result<(), switchyard_gateway::GatewayError> {
/// use switchyard_gateway::{Gateway, Upstream};
///
/// let gateway = Gateway::new()
///     .upstream(Upstream::stdio("py", "python3", ["server.py"]).prefix("py_"))
///     .upstream(Upstream::http("ours", "http://127.0.0.1:8080/mcp").prefix("ours_"))
///     .attach(&server)
///     .await?;
/// for status in gateway.statuses() {
///     println!("{}: {:?}", status.name, status.state);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
pub struct Gateway {
    upstreams: Vec<Upstream>,
}

/// What [`Gateway::attach`] refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayError {
    /// Two upstreams have this name: errors and logs could not tell them apart.
    DuplicateName(String),
    /// An upstream's name is empty.
    EmptyName,
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GatewayError::DuplicateName(name) => write!(f, "two upstreams are named {name:?}"),
            GatewayError::EmptyName => f.write_str("an upstream has an empty name"),
        }
    }
}

impl std::error::Error for GatewayError {}

impl Gateway {
    /// A gateway without upstreams.
    pub fn new() -> Self {
        Gateway::default()
    }

    /// Adds an upstream.
    pub fn upstream(mut self, upstream: Upstream) -> Self {
        self.upstreams.push(upstream);
        self
    }

    /// Starts serving the upstreams through `server`: one supervisor task each (on the
    /// current Tokio runtime) connects, lists the upstream's tools, prompts, resources and
    /// resource templates, and adds them to `server` as run-time items
    /// ([`Server::add_tool`] and its siblings), which publishes our
    /// `notifications/*/list_changed`
    /// ([tools](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#list-changed-notification)).
    /// The items go through the server's pipeline like its own: its policy (roles, scopes),
    /// raw and message filters apply to them.
    ///
    /// The supervisor then follows the upstream's list changes (`notifications/*/list_changed`
    /// on a session, a `subscriptions/listen` stream on 2026-07-28) and lists that kind again.
    /// While a client of ours is subscribed to a resource served from the upstream
    /// ([`Server::subscribed_resources`]), the supervisor is subscribed to it upstream, and
    /// its `notifications/resources/updated` is published under our URI. When
    /// the connection ends (the child exited, the HTTP server went away), the upstream's items
    /// are removed and it is connected again after the backoff
    /// ([`Upstream::reconnect_backoff`]); an upstream that cannot be reached at first is
    /// retried the same way.
    ///
    /// Returns once every upstream's first attempt is over (connected and listed, or failed),
    /// so a server started next serves what could be reached. The supervisors run until
    /// [`GatewayHandle::stop`] or the server's shutdown; dropping the handle leaves them
    /// running.
    ///
    /// Errors: [`GatewayError`] when two upstreams share a name or one has none; nothing is
    /// started then. An upstream that is down is no error (see [`GatewayHandle::statuses`]).
    pub async fn attach(self, server: &Server) -> Result<GatewayHandle, GatewayError> {
        let mut names = std::collections::HashSet::new();
        for upstream in &self.upstreams {
            if upstream.name().is_empty() {
                return Err(GatewayError::EmptyName);
            }
            if !names.insert(upstream.name().to_owned()) {
                return Err(GatewayError::DuplicateName(upstream.name().to_owned()));
            }
        }
        let stop = server.shutdown_token().child_token();
        let mut upstreams = Vec::with_capacity(self.upstreams.len());
        let mut first_attempts = Vec::with_capacity(self.upstreams.len());
        for upstream in self.upstreams {
            let name = upstream.name().to_owned();
            let link = Link::new(upstream);
            let (status, state) = watch::channel(UpstreamState::Connecting);
            let (first, first_done) = oneshot::channel();
            let supervisor =
                Supervisor { server: server.clone(), link, status, stop: stop.clone(), first: Some(first) };
            tokio::spawn(supervisor.run());
            first_attempts.push(first_done);
            upstreams.push((name, state));
        }
        for first in first_attempts {
            // An error only means the supervisor is gone (the runtime is shutting down).
            let _ = first.await;
        }
        Ok(GatewayHandle { upstreams, stop })
    }
}

/// The running gateway: its upstreams' states, and a way to stop it.
#[derive(Debug, Clone)]
pub struct GatewayHandle {
    upstreams: Vec<(String, watch::Receiver<UpstreamState>)>,
    stop: CancellationToken,
}

/// One upstream's name and state ([`GatewayHandle::statuses`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UpstreamStatus {
    /// The upstream's name.
    pub name: String,
    /// Its state now.
    pub state: UpstreamState,
}

/// Where an upstream's supervisor is.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UpstreamState {
    /// Connecting (and listing) now.
    Connecting,
    /// Connected: its items are served.
    Connected {
        /// The revision negotiated (`2026-07-28`, `2025-11-25`, ...).
        protocol_version: String,
        /// How many tools, prompts, resources and templates of it are served.
        items: usize,
    },
    /// Not connected: its items are not served; the next attempt comes after `retry_in`.
    Down {
        /// Why: the connection's error, or that it closed.
        error: String,
        /// The wait before the next attempt.
        retry_in: Duration,
    },
    /// Stopped ([`GatewayHandle::stop`] or the server's shutdown).
    Stopped,
}

impl GatewayHandle {
    /// Each upstream's state, in the order they were added.
    pub fn statuses(&self) -> Vec<UpstreamStatus> {
        self.upstreams
            .iter()
            .map(|(name, state)| UpstreamStatus { name: name.clone(), state: state.borrow().clone() })
            .collect()
    }

    /// Stops every supervisor: the upstreams' items are removed and their connections closed
    /// (a stdio child is killed). Returns at once; the supervisors finish in the background.
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

/// One upstream's supervisor task.
struct Supervisor {
    server: Server,
    link: Arc<Link>,
    status: watch::Sender<UpstreamState>,
    stop: CancellationToken,
    /// Told when the first attempt is over.
    first: Option<oneshot::Sender<()>>,
}

impl Supervisor {
    async fn run(mut self) {
        let (min, max) = self.link.upstream.reconnect;
        let mut backoff = min;
        let mut mirror = Mirror::default();
        while !self.stop.is_cancelled() {
            self.status.send_replace(UpstreamState::Connecting);
            let connected = tokio::select! {
                _ = self.stop.cancelled() => break,
                connected = self.link.upstream.connect() => connected,
            };
            let error = match connected {
                Ok(client) => {
                    let connected = tokio::time::Instant::now();
                    let why = self.serve(&client, &mut mirror).await;
                    // A connection that lasted resets the backoff; one that died at once (an
                    // upstream crashing after its handshake) keeps it growing.
                    if connected.elapsed() >= max {
                        backoff = min;
                    }
                    self.link.set_client(None);
                    mirror.clear(&self.server, &self.link);
                    client.close().await;
                    why
                }
                Err(e) => format!("connecting failed: {e}"),
            };
            if self.stop.is_cancelled() {
                break;
            }
            tracing::warn!(target: "switchyard_gateway", upstream = self.link.name(), "{error}; retrying in {backoff:?}");
            self.status.send_replace(UpstreamState::Down { error, retry_in: backoff });
            self.first_attempt_over();
            tokio::select! {
                _ = self.stop.cancelled() => break,
                _ = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(max);
        }
        self.link.set_client(None);
        mirror.clear(&self.server, &self.link);
        self.status.send_replace(UpstreamState::Stopped);
        self.first_attempt_over();
    }

    fn first_attempt_over(&mut self) {
        if let Some(first) = self.first.take() {
            let _ = first.send(());
        }
    }

    /// Serves one connection until it ends or the gateway stops; returns why it ended.
    async fn serve(&mut self, client: &Client, mirror: &mut Mirror) -> String {
        // Listening first: a change between the listing and the listening is not missed.
        let mut events = self.events(client).await;
        self.link.set_client(Some(client.clone()));
        for kind in [Kind::Tools, Kind::Prompts, Kind::Resources, Kind::Templates] {
            if let Err(e) = mirror.sync(&self.server, &self.link, client, kind).await {
                if client.is_closed() {
                    return format!("the connection closed while listing: {e}");
                }
                tracing::warn!(target: "switchyard_gateway", upstream = self.link.name(), "listing {kind:?} failed: {e}");
            }
        }
        // Our clients' resource subscriptions: those to URIs served from this upstream are
        // followed upstream, for as long as someone of ours is subscribed.
        let mut subscribed = self.server.subscribed_resources();
        let mut updates = ResourceUpdates::new();
        updates.follow(self.link.name(), client, self.wanted(&mut subscribed)).await;
        let protocol_version = client.protocol_version().to_owned();
        self.status
            .send_replace(UpstreamState::Connected { protocol_version: protocol_version.clone(), items: mirror.len() });
        tracing::info!(
            target: "switchyard_gateway",
            upstream = self.link.name(),
            protocol_version,
            items = mirror.len(),
            "upstream connected"
        );
        self.first_attempt_over();
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return "stopped".to_owned(),
                _ = client.closed() => return "the upstream closed the connection".to_owned(),
                event = events.next() => match event {
                    Some(note) => self.on_event(client, mirror, &mut updates, &note).await,
                    // The events ended (a listen stream that could not be reopened): the
                    // connection still serves calls, without live changes.
                    None => events = stream::pending().boxed(),
                },
                note = updates.next() => self.on_event(client, mirror, &mut updates, &note).await,
                changed = subscribed.changed() => {
                    if changed.is_err() {
                        // The server is gone; its shutdown stops this supervisor.
                        return "the server stopped".to_owned();
                    }
                    updates.follow(self.link.name(), client, self.wanted(&mut subscribed)).await;
                }
            }
        }
    }

    /// The upstream's URIs of the resources of ours that our clients are subscribed to now and
    /// that are served from this upstream (mirrored, or matching a mirrored template).
    fn wanted(&self, subscribed: &mut watch::Receiver<BTreeSet<String>>) -> BTreeSet<String> {
        subscribed.borrow_and_update().iter().filter_map(|ours| self.link.upstream_uri(ours)).collect()
    }

    /// The upstream's change events: its notifications on a session, a
    /// `subscriptions/listen` stream on 2026-07-28 (none when it refuses one).
    async fn events(&self, client: &Client) -> BoxStream<'static, Notification> {
        if client.protocol_version() != switchyard::protocol::MODERN_VERSION {
            return client.notifications().boxed();
        }
        let filter = SubscriptionFilter::new().tools().prompts().resources();
        match client.listen(filter).await {
            Ok(subscription) => subscription.filter_map(|event| async move { event.ok() }).boxed(),
            Err(e) => {
                tracing::info!(
                    target: "switchyard_gateway",
                    upstream = self.link.name(),
                    "no list changes will be followed: subscriptions/listen failed: {e}"
                );
                stream::pending().boxed()
            }
        }
    }

    async fn on_event(
        &mut self,
        client: &Client,
        mirror: &mut Mirror,
        updates: &mut ResourceUpdates,
        note: &Notification,
    ) {
        let kinds: &[Kind] = match note.method.as_str() {
            "notifications/tools/list_changed" => &[Kind::Tools],
            "notifications/prompts/list_changed" => &[Kind::Prompts],
            "notifications/resources/list_changed" => &[Kind::Resources, Kind::Templates],
            "notifications/resources/updated" => {
                let uri = note.params.as_ref().and_then(|p| p.get("uri")).and_then(|u| u.as_str());
                if let Some(ours) = uri.and_then(|uri| self.link.our_uri(uri)) {
                    self.server.publisher().resource_updated(ours);
                }
                return;
            }
            _ => return,
        };
        for kind in kinds {
            if let Err(e) = mirror.sync(&self.server, &self.link, client, *kind).await {
                tracing::warn!(target: "switchyard_gateway", upstream = self.link.name(), "listing {kind:?} again failed: {e}");
            }
        }
        if kinds.contains(&Kind::Resources) {
            // What is served from the upstream changed: so may what is followed.
            let wanted = self.wanted(&mut self.server.subscribed_resources());
            updates.follow(self.link.name(), client, wanted).await;
        }
        let protocol_version = client.protocol_version().to_owned();
        self.status.send_replace(UpstreamState::Connected { protocol_version, items: mirror.len() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server::builder("gateway-test", "0").groups(["none"]).build().expect("builds")
    }

    #[tokio::test]
    async fn upstreams_need_distinct_names() {
        let twice = Gateway::new()
            .upstream(Upstream::stdio("a", "true", [""; 0]))
            .upstream(Upstream::stdio("a", "true", [""; 0]));
        assert_eq!(twice.attach(&server()).await.err(), Some(GatewayError::DuplicateName("a".into())));
        let unnamed = Gateway::new().upstream(Upstream::stdio("", "true", [""; 0]));
        assert_eq!(unnamed.attach(&server()).await.err(), Some(GatewayError::EmptyName));
    }

    #[tokio::test]
    async fn an_upstream_that_cannot_start_is_down_and_the_server_serves_on() {
        let server = server();
        let missing = Upstream::stdio("gone", "/nonexistent/switchyard-gateway-upstream", [""; 0])
            .reconnect_backoff(Duration::from_secs(60), Duration::from_secs(60));
        let gateway = Gateway::new().upstream(missing).attach(&server).await.expect("attaches");
        let statuses = gateway.statuses();
        assert_eq!(statuses.len(), 1);
        assert_eq!(statuses[0].name, "gone");
        match &statuses[0].state {
            UpstreamState::Down { error, retry_in } => {
                assert!(error.starts_with("connecting failed: transport: starting the server"), "{error}");
                assert_eq!(*retry_in, Duration::from_secs(60));
            }
            other => panic!("not down: {other:?}"),
        }
        assert!(server.table().tools().next().is_none(), "nothing mirrored");
        gateway.stop();
        let mut state = gateway.upstreams[0].1.clone();
        state.wait_for(|s| *s == UpstreamState::Stopped).await.expect("the supervisor reports its stop");
    }
}
