//! The legacy sessions of one HTTP endpoint, bounded in total and per client.
//!
//! Every session counts against a client ([`Client`]): the authenticated principal, else the
//! peer's address. Each client may hold [`SessionLimits::per_client`] sessions and create them
//! at a rate kept by a token bucket of its own, so that one client flooding `initialize` spends
//! its own quota and never closes the sessions of others. The bucket is a few lines here rather
//! than `governor`: that crate would bring about seven crates for one counter per client, and
//! the counter has to live in the store's per-client entry anyway (it is pruned with it).

use crate::auth::Principal;
use crate::jsonrpc::RequestId;
use crate::server::LegacySession;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How many legacy sessions one client may hold and how fast it may create them; part of
/// [`HttpConfig`](super::HttpConfig) (`HttpConfig::session_limits`).
///
/// A client is the authenticated principal (its [`Principal::id`], set by an authentication
/// layer such as [`BearerAuth`](crate::auth::BearerAuth)) or, for anonymous requests, the peer
/// address that [`serve`](super::serve) and [`serve_app`](super::serve_app) record: the IPv4
/// address, or the /64 prefix of an IPv6 address (one host usually holds a whole /64). Where
/// no address is known ([`router`](super::router) served without axum's
/// `ConnectInfo<SocketAddr>`), all anonymous clients are one client. Behind a reverse proxy
/// they are one client too (the proxy's address), unless the proxy is listed in
/// [`HttpConfig::trusted_proxies`](super::HttpConfig::trusted_proxies): then each counts by the
/// address the proxy forwarded. Otherwise the proxy should authenticate, or the limits be raised
/// to what all clients together need.
///
/// Refusals of `initialize` (legacy sessions, 2025-11-25 and earlier,
/// [lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization)):
///
/// - more than [`creation_burst`](Self::creation_burst) sessions at once, or more than
///   [`creations_per_second`](Self::creations_per_second) after that: HTTP 429 with
///   `Retry-After` (whole seconds until the next session may be created, rounded up) and
///   `-32600`;
/// - [`per_client`](Self::per_client) sessions already: the client's own least recently used
///   idle session (no request in flight, no open GET stream) is closed to make room; when all
///   of them are in use, HTTP 429 with `Retry-After: 5` and `-32600`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionLimits {
    /// Most sessions one client holds at once (default 64; 0 counts as 1).
    pub per_client: usize,
    /// Sessions a client may create in a burst, the size of its token bucket (default 64; 0
    /// counts as 1). A client that has not created sessions for a while may create this many
    /// at once.
    pub creation_burst: u32,
    /// Sessions a client may create per second after its burst, the refill rate of its token
    /// bucket (default 10). 0 turns the rate limit off (only
    /// [`per_client`](Self::per_client) and `max_sessions` bound the sessions).
    pub creations_per_second: u32,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits { per_client: 64, creation_burst: 64, creations_per_second: 10 }
    }
}

impl SessionLimits {
    /// Sets [`per_client`](Self::per_client) (0 counts as 1).
    pub fn per_client(mut self, sessions: usize) -> Self {
        self.per_client = sessions;
        self
    }

    /// Sets [`creation_burst`](Self::creation_burst) (0 counts as 1).
    pub fn creation_burst(mut self, sessions: u32) -> Self {
        self.creation_burst = sessions;
        self
    }

    /// Sets [`creations_per_second`](Self::creations_per_second) (0: no rate limit).
    pub fn creations_per_second(mut self, sessions: u32) -> Self {
        self.creations_per_second = sessions;
        self
    }

    fn per_client_max(&self) -> usize {
        self.per_client.max(1)
    }

    fn burst(&self) -> f64 {
        f64::from(self.creation_burst.max(1))
    }

    /// The refill rate in tokens per second; `None` without a rate limit.
    fn rate(&self) -> Option<f64> {
        (self.creations_per_second > 0).then(|| f64::from(self.creations_per_second))
    }
}

/// Who a session counts against (see [`SessionLimits`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    /// An authenticated principal, by id.
    Principal(String),
    /// An anonymous peer: its IPv4 address, or its IPv6 address cut to the /64 prefix.
    Peer(IpAddr),
    /// Anonymous, with no peer address known: every such request is this one client.
    Unknown,
}

impl Client {
    /// The client of a request by `principal` (if authenticated) from `peer` (if known: the
    /// TCP peer, or the client a trusted proxy forwarded).
    pub(crate) fn of(principal: Option<&Principal>, peer: Option<SocketAddr>) -> Client {
        if let Some(p) = principal {
            return Client::Principal(p.id.clone());
        }
        match peer {
            None => Client::Unknown,
            Some(a) => Client::Peer(crate::context::connection::peer_network(a.ip())),
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Client::Principal(id) => write!(f, "principal {id:?}"),
            Client::Peer(IpAddr::V4(a)) => write!(f, "address {a}"),
            Client::Peer(IpAddr::V6(a)) => write!(f, "address prefix {a}/64"),
            Client::Unknown => f.write_str("the anonymous clients (no peer address known)"),
        }
    }
}

/// A token bucket: `tokens` at instant `at`, refilled at the limits' rate up to their burst.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(limits: &SessionLimits, now: Instant) -> Self {
        Bucket { tokens: limits.burst(), at: now }
    }

    fn refill(&mut self, limits: &SessionLimits, now: Instant) {
        let Some(rate) = limits.rate() else { return };
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate).min(limits.burst());
        self.at = self.at.max(now);
    }

    /// `None` when a session may be created now; otherwise how long until one may.
    fn wait(&self, limits: &SessionLimits) -> Option<Duration> {
        let rate = limits.rate()?;
        (self.tokens < 1.0).then(|| Duration::from_secs_f64((1.0 - self.tokens) / rate))
    }

    fn take(&mut self, limits: &SessionLimits) {
        if limits.rate().is_some() {
            self.tokens -= 1.0;
        }
    }

    /// Whether the bucket is full again at `now` (then forgetting it loses nothing).
    fn is_full(&self, limits: &SessionLimits, now: Instant) -> bool {
        let mut b = *self;
        b.refill(limits, now);
        limits.rate().is_none() || b.tokens >= limits.burst()
    }
}

/// A session's requests in flight, by the client's request id: what `notifications/cancelled`
/// cancels, and what keeps the session busy.
///
/// The client chooses the ids and inserts them, as many as it keeps requests running: SipHash
/// (std's keyed hasher), not the faster foldhash of the maps whose keys the server draws or
/// bounds, which does not claim to resist a client that times its lookups. Entries are
/// numbered rather than shared (`Arc`), so that a request removes only its own without an
/// allocation of its token.
#[derive(Default)]
pub(crate) struct InFlight {
    next: u64,
    by_id: HashMap<RequestId, (u64, CancellationToken)>,
}

impl InFlight {
    /// Enters request `id` with its `token` (replacing an entry of the same id, which is then
    /// no longer cancellable by id); returns the entry's number for [`remove_own`](Self::remove_own).
    pub(crate) fn insert(&mut self, id: RequestId, token: CancellationToken) -> u64 {
        let number = self.next;
        self.next += 1;
        self.by_id.insert(id, (number, token));
        number
    }

    /// Removes the entry of `id` if it is entry `number`: a later request may hold the id after
    /// this one was cancelled.
    pub(crate) fn remove_own(&mut self, id: &RequestId, number: u64) {
        // One lookup in the usual case; the rare entry of another request goes back.
        if let Some((id, entry)) = self.by_id.remove_entry(id)
            && entry.0 != number
        {
            self.by_id.insert(id, entry);
        }
    }

    /// Removes request `id` and cancels it (`notifications/cancelled`); no-op for an id not in
    /// flight.
    pub(crate) fn cancel(&mut self, id: &RequestId) {
        if let Some((_, token)) = self.by_id.remove(id) {
            token.cancel();
        }
    }

    /// No request is in flight.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// One legacy HTTP session: the protocol session plus what HTTP needs (in-flight requests for
/// `notifications/cancelled`, a cancellation token for DELETE).
pub(crate) struct HttpSession {
    pub(crate) legacy: Arc<LegacySession>,
    pub(crate) in_flight: Mutex<InFlight>,
    pub(crate) closed: CancellationToken,
    pub(crate) streams: super::resume::Streams,
    /// The principal id that created the session (`None`: anonymous); only it may use it.
    pub(crate) owner: Option<String>,
    /// Whose quota the session counts against.
    client: Client,
    last_used: Mutex<Instant>,
    /// Open server-to-client GET streams.
    listeners: AtomicUsize,
}

impl HttpSession {
    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(*self.last_used.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A session with a request in flight or an open GET stream is in use: it is never
    /// evicted to make room, and never expires.
    fn busy(&self) -> bool {
        self.listeners.load(Ordering::Relaxed) > 0
            || !self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// Counts an open GET stream until the guard drops.
    pub(crate) fn listening(self: &Arc<Self>) -> ListenerGuard {
        self.listeners.fetch_add(1, Ordering::Relaxed);
        ListenerGuard(self.clone())
    }
}

/// Held by the task serving a session's GET stream.
pub(crate) struct ListenerGuard(Arc<HttpSession>);

impl Drop for ListenerGuard {
    fn drop(&mut self) {
        self.0.listeners.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// Why `initialize` could not create a session.
#[derive(Debug, PartialEq)]
pub(crate) enum Refused {
    /// The client's token bucket is empty; a session may be created after `retry_after`.
    RateLimited { client: Client, retry_after: Duration, limits: SessionLimits },
    /// The client holds `per_client` sessions and every one is in use.
    ClientBusy { client: Client, per_client: usize },
    /// The store holds `max` sessions and none may be closed for this client.
    Full { max: usize },
}

/// What the store knows of one client: its sessions and its token bucket.
struct ClientEntry {
    sessions: HashSet<String>,
    bucket: Bucket,
}

struct Inner {
    /// By id. Looked up with the client's `Mcp-Session-Id` on every request, but only ids the
    /// server drew are inserted, so a client cannot crowd a bucket: foldhash rather than
    /// SipHash, which cost ~250 instructions a lookup of a 32-character id.
    sessions: HashMap<String, Arc<HttpSession>, foldhash::fast::RandomState>,
    clients: HashMap<Client, ClientEntry>,
    /// `initialize` attempts since `clients` was last pruned.
    since_prune: usize,
}

impl Inner {
    /// Removes session `id` (and from its client's entry) and cancels its work.
    fn take(&mut self, id: &str) -> Option<Arc<HttpSession>> {
        let s = self.sessions.remove(id)?;
        if let Some(c) = self.clients.get_mut(&s.client) {
            c.sessions.remove(id);
        }
        s.closed.cancel();
        Some(s)
    }

    fn count(&self, client: &Client) -> usize {
        self.clients.get(client).map_or(0, |c| c.sessions.len())
    }

    /// The least recently used idle session of `client`.
    fn lru_idle_of(&self, client: &Client, now: Instant) -> Option<String> {
        let entry = self.clients.get(client)?;
        entry
            .sessions
            .iter()
            .filter_map(|id| self.sessions.get(id).map(|s| (id, s)))
            .filter(|(_, s)| !s.busy())
            .max_by_key(|(_, s)| s.idle_for(now))
            .map(|(id, _)| id.clone())
    }

    /// The session to close so that `requester` may add one to a full store: the least
    /// recently used idle session of the client with the most sessions, where only clients
    /// with more sessions than the requester (or the requester itself) qualify.
    fn fair_victim(&self, requester: &Client, now: Instant) -> Option<String> {
        let mine = self.count(requester);
        let mut best: Option<((usize, Duration), &String)> = None;
        for (id, s) in &self.sessions {
            let n = self.count(&s.client);
            if (&s.client != requester && n <= mine) || s.busy() {
                continue;
            }
            let key = (n, s.idle_for(now));
            if best.as_ref().is_none_or(|(b, _)| key > *b) {
                best = Some((key, id));
            }
        }
        best.map(|(_, id)| id.clone())
    }

    /// Drops the entries of clients that hold no session and whose bucket is full again:
    /// recreating one later gives the same answer. Runs once per as many `initialize`
    /// attempts as there are entries, so the cost per attempt stays constant while the map
    /// stays within about twice the clients seen recently.
    fn prune_clients(&mut self, limits: &SessionLimits, now: Instant) {
        self.since_prune += 1;
        if self.since_prune < self.clients.len().max(64) {
            return;
        }
        self.since_prune = 0;
        self.clients.retain(|_, c| !c.sessions.is_empty() || !c.bucket.is_full(limits, now));
    }
}

/// The legacy sessions of one HTTP endpoint, bounded.
///
/// A session unused for `idle_timeout` (no request, no open stream) expires. Each client
/// creates sessions within its [`SessionLimits`] and, at its `per_client` limit, replaces its
/// own least recently used idle session. When `max` sessions exist, expired ones go first,
/// then the least recently used idle session of the client holding the most sessions, but
/// never one of a client that holds no more than the requester. Sessions in use are never
/// closed to make room.
pub(crate) struct SessionStore {
    inner: Mutex<Inner>,
    max: usize,
    idle_timeout: Duration,
    limits: SessionLimits,
}

impl SessionStore {
    pub(crate) fn new(max: usize, idle_timeout: Duration, limits: SessionLimits) -> Self {
        let inner = Inner { sessions: HashMap::default(), clients: HashMap::new(), since_prune: 0 };
        SessionStore { inner: Mutex::new(inner), max: max.max(1), idle_timeout, limits }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn expired(&self, s: &HttpSession, now: Instant) -> bool {
        !s.busy() && s.idle_for(now) >= self.idle_timeout
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let mut inner = self.lock();
        let s = inner.sessions.get(id).cloned()?;
        if self.expired(&s, Instant::now()) {
            inner.take(id);
            return None;
        }
        s.touch();
        Some(s)
    }

    /// Adds a session for `legacy`, created by principal `owner` and counted against `client`,
    /// closing another to make room when the limits call for it ([`SessionStore`]).
    pub(crate) fn insert(
        &self,
        legacy: Arc<LegacySession>,
        parent: &CancellationToken,
        owner: Option<String>,
        client: Client,
    ) -> Result<Arc<HttpSession>, Refused> {
        self.insert_at(legacy, parent, owner, client, None)
    }

    fn insert_at(
        &self,
        legacy: Arc<LegacySession>,
        parent: &CancellationToken,
        owner: Option<String>,
        client: Client,
        at: Option<Instant>,
    ) -> Result<Arc<HttpSession>, Refused> {
        let limits = &self.limits;
        let mut inner = self.lock();
        // Read under the lock: a request that waited for it must see the time that passed, or
        // the bucket would refuse it a token that came due meanwhile.
        let now = at.unwrap_or_else(Instant::now);
        inner.prune_clients(limits, now);
        let entry = inner
            .clients
            .entry(client.clone())
            .or_insert_with(|| ClientEntry { sessions: HashSet::new(), bucket: Bucket::full(limits, now) });
        entry.bucket.refill(limits, now);
        if let Some(retry_after) = entry.bucket.wait(limits) {
            return Err(Refused::RateLimited { client, retry_after, limits: limits.clone() });
        }
        let victim = if entry.sessions.len() >= limits.per_client_max() {
            match inner.lru_idle_of(&client, now) {
                Some(id) => Some(id),
                None => return Err(Refused::ClientBusy { client, per_client: limits.per_client_max() }),
            }
        } else if inner.sessions.len() >= self.max {
            let expired: Vec<String> =
                inner.sessions.iter().filter(|(_, s)| self.expired(s, now)).map(|(id, _)| id.clone()).collect();
            for id in &expired {
                inner.take(id);
            }
            if inner.sessions.len() >= self.max {
                match inner.fair_victim(&client, now) {
                    Some(id) => Some(id),
                    None => return Err(Refused::Full { max: self.max }),
                }
            } else {
                None
            }
        } else {
            None
        };
        if let Some(id) = victim {
            inner.take(&id);
        }
        let session = Arc::new(HttpSession {
            legacy,
            in_flight: Mutex::new(InFlight::default()),
            closed: parent.child_token(),
            streams: Default::default(),
            owner,
            client: client.clone(),
            last_used: Mutex::new(now),
            listeners: AtomicUsize::new(0),
        });
        let id = session.legacy.id.clone();
        // `take` never drops entries, so the requester's is still there.
        if let Some(entry) = inner.clients.get_mut(&client) {
            entry.bucket.take(limits);
            entry.sessions.insert(id.clone());
        }
        inner.sessions.insert(id, session.clone());
        Ok(session)
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.lock().take(id)
    }
}

/// A new session id: 128 random bits as 32 hex digits (visible ASCII, unguessable).
pub(crate) fn new_session_id() -> String {
    let bits: u128 = rand::random();
    format!("{bits:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn store(max: usize, limits: SessionLimits) -> SessionStore {
        SessionStore::new(max, 30 * MINUTE, limits)
    }

    fn peer(last: u8) -> Client {
        Client::of(None, Some(SocketAddr::from(([127, 0, 0, last], 4000))))
    }

    /// Creates a session `id` for `client` at `at`, its last use at `at` too.
    fn add(s: &SessionStore, client: &Client, id: &str, at: Instant) -> Result<Arc<HttpSession>, Refused> {
        let legacy = Arc::new(LegacySession::new(id.to_owned(), "2025-11-25", serde_json::json!({}), None));
        s.insert_at(legacy, &CancellationToken::new(), None, client.clone(), Some(at))
    }

    fn refusal(r: Result<Arc<HttpSession>, Refused>) -> Refused {
        match r {
            Ok(s) => panic!("session {} created, a refusal expected", s.legacy.id),
            Err(e) => e,
        }
    }

    fn ids(s: &SessionStore) -> Vec<String> {
        let mut ids: Vec<String> = s.lock().sessions.keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Marks `session` busy as a request in flight does.
    fn busy(session: &HttpSession) {
        let id = RequestId::from_value(&serde_json::json!(1)).expect("an id");
        session.in_flight.lock().expect("lock").insert(id, CancellationToken::new());
    }

    /// A request removes only its own entry: after `notifications/cancelled` took it, a later
    /// request may have entered the same id, and that one stays cancellable.
    #[test]
    fn a_request_removes_only_its_own_in_flight_entry() {
        let id = RequestId::from_value(&serde_json::json!("r")).expect("an id");
        let other_id = RequestId::from_value(&serde_json::json!(7)).expect("an id");
        let mut in_flight = InFlight::default();
        let other = CancellationToken::new();
        let other_number = in_flight.insert(other_id.clone(), other.clone());
        let (first, second) = (CancellationToken::new(), CancellationToken::new());
        let first_number = in_flight.insert(id.clone(), first.clone());
        in_flight.cancel(&id);
        assert!(first.is_cancelled() && !other.is_cancelled(), "cancelled the wrong request");
        let second_number = in_flight.insert(id.clone(), second.clone());
        // The first request ends after the second entered its id: the second's entry stays,
        // under its own number, so that its own end removes it.
        in_flight.remove_own(&id, first_number);
        in_flight.remove_own(&other_id, other_number);
        assert!(!in_flight.is_empty(), "the first request removed the second's entry");
        in_flight.remove_own(&id, second_number);
        assert!(in_flight.is_empty(), "an entry was left behind");
        assert!(!second.is_cancelled());
        let third = CancellationToken::new();
        let third_number = in_flight.insert(id.clone(), third.clone());
        assert_ne!(third_number, second_number);
        in_flight.cancel(&id);
        assert!(third.is_cancelled() && in_flight.is_empty());
        in_flight.remove_own(&id, third_number);
        in_flight.cancel(&id);
    }

    #[test]
    fn clients_are_principals_else_ipv4_addresses_else_ipv6_prefixes() {
        let admin = Principal::new("admin", ["admin"]);
        let v6 = |s: &str| Some(SocketAddr::new(s.parse().expect("an address"), 1));
        assert_eq!(Client::of(Some(&admin), v6("10.0.0.1")), Client::Principal("admin".into()));
        assert_eq!(Client::of(None, v6("10.0.0.1")), Client::of(None, v6("::ffff:10.0.0.1")));
        assert_ne!(Client::of(None, v6("10.0.0.1")), Client::of(None, v6("10.0.0.2")));
        assert_eq!(Client::of(None, v6("2001:db8:1:2:aaaa::1")), Client::of(None, v6("2001:db8:1:2:bbbb::9")));
        assert_ne!(Client::of(None, v6("2001:db8:1:2::1")), Client::of(None, v6("2001:db8:1:3::1")));
        assert_eq!(Client::of(None, None), Client::Unknown);
        assert_eq!(Client::of(None, v6("2001:db8:1:2::7")).to_string(), "address prefix 2001:db8:1:2::/64");
    }

    #[test]
    fn at_its_limit_a_client_replaces_its_own_least_recently_used_idle_session() {
        let s = store(100, SessionLimits::default().per_client(2));
        let (a, b) = (peer(1), peer(2));
        let t = Instant::now();
        add(&s, &b, "b1", t).expect("b1");
        add(&s, &a, "a1", t + Duration::from_secs(1)).expect("a1");
        let a2 = add(&s, &a, "a2", t + Duration::from_secs(2)).expect("a2");
        // b1 is the oldest of all, but a's own oldest idle session makes room.
        add(&s, &a, "a3", t + Duration::from_secs(3)).expect("a3 replaces a1");
        assert_eq!(ids(&s), ["a2", "a3", "b1"]);
        assert!(!a2.closed.is_cancelled());
    }

    #[test]
    fn a_client_whose_sessions_are_all_busy_is_refused() {
        let s = store(100, SessionLimits::default().per_client(2));
        let a = peer(1);
        let t = Instant::now();
        busy(&add(&s, &a, "a1", t).expect("a1"));
        busy(&add(&s, &a, "a2", t).expect("a2"));
        let refused = refusal(add(&s, &a, "a3", t + Duration::from_secs(1)));
        assert_eq!(refused, Refused::ClientBusy { client: a, per_client: 2 });
        add(&s, &peer(2), "b1", t).expect("another client is not limited");
        assert_eq!(ids(&s), ["a1", "a2", "b1"]);
    }

    #[test]
    fn the_bucket_refuses_beyond_the_burst_and_refills_at_the_rate() {
        let limits = SessionLimits::default().creation_burst(2).creations_per_second(4);
        let s = store(100, limits.clone());
        let a = peer(1);
        let t = Instant::now();
        add(&s, &a, "a1", t).expect("a1");
        add(&s, &a, "a2", t).expect("a2");
        let refused = refusal(add(&s, &a, "a3", t));
        let expected =
            Refused::RateLimited { client: a.clone(), retry_after: Duration::from_millis(250), limits: limits.clone() };
        assert_eq!(refused, expected);
        add(&s, &peer(2), "b1", t).expect("another client has its own bucket");
        add(&s, &a, "a3", t + Duration::from_millis(250)).expect("one token back after 1/4 s");
        assert!(matches!(add(&s, &a, "a4", t + Duration::from_millis(250)), Err(Refused::RateLimited { .. })));
        // A long pause refills to the burst, no further.
        let later = t + MINUTE;
        add(&s, &a, "a4", later).expect("a4");
        add(&s, &a, "a5", later).expect("a5");
        assert!(matches!(add(&s, &a, "a6", later), Err(Refused::RateLimited { .. })));
    }

    #[test]
    fn without_a_rate_only_the_counts_limit() {
        let s = store(100, SessionLimits::default().creation_burst(1).creations_per_second(0).per_client(3));
        let a = peer(1);
        let t = Instant::now();
        for i in 0..10 {
            add(&s, &a, &format!("a{i:02}"), t + Duration::from_millis(i)).expect("no rate limit");
        }
        assert_eq!(ids(&s), ["a07", "a08", "a09"]);
    }

    #[test]
    fn a_full_store_closes_the_biggest_client_s_least_recently_used_idle_session() {
        let s = store(5, SessionLimits::default());
        let (big, small, newcomer) = (peer(1), peer(2), peer(3));
        let t = Instant::now();
        let at = |secs| t + Duration::from_secs(secs);
        add(&s, &small, "s1", at(0)).expect("s1");
        add(&s, &big, "b1", at(1)).expect("b1");
        busy(&add(&s, &big, "b2", at(2)).expect("b2"));
        add(&s, &big, "b3", at(3)).expect("b3");
        add(&s, &small, "s2", at(4)).expect("s2");
        // s1 is the least recently used, but `big` holds the most: its oldest idle one goes.
        add(&s, &newcomer, "n1", at(5)).expect("room made");
        assert_eq!(ids(&s), ["b2", "b3", "n1", "s1", "s2"]);
        // Now big and small hold two each: the oldest idle of either.
        add(&s, &newcomer, "n2", at(6)).expect("room made");
        assert_eq!(ids(&s), ["b2", "b3", "n1", "n2", "s2"]);
    }

    #[test]
    fn a_full_store_never_closes_a_smaller_client_s_session() {
        let s = store(3, SessionLimits::default());
        let (a, b) = (peer(1), peer(2));
        let t = Instant::now();
        let at = |secs| t + Duration::from_secs(secs);
        add(&s, &b, "b1", at(0)).expect("b1");
        add(&s, &a, "a1", at(1)).expect("a1");
        add(&s, &a, "a2", at(2)).expect("a2");
        // a holds the most: it replaces its own oldest, never b's older session.
        add(&s, &a, "a3", at(3)).expect("a3");
        assert_eq!(ids(&s), ["a2", "a3", "b1"]);
        busy(&s.get("a2").expect("a2"));
        busy(&s.get("a3").expect("a3"));
        assert_eq!(refusal(add(&s, &a, "a4", at(4))), Refused::Full { max: 3 });
        assert_eq!(ids(&s), ["a2", "a3", "b1"]);
    }

    #[test]
    fn a_full_store_drops_expired_sessions_first() {
        let s = store(2, SessionLimits::default());
        let (a, b) = (peer(1), peer(2));
        let t = Instant::now();
        add(&s, &a, "a1", t).expect("a1");
        add(&s, &a, "a2", t + 29 * MINUTE).expect("a2");
        // a1 expired: it goes, and b (with fewer sessions) does not have to wait for room.
        add(&s, &b, "b1", t + 31 * MINUTE).expect("b1");
        assert_eq!(ids(&s), ["a2", "b1"]);
    }

    #[test]
    fn client_entries_are_pruned_when_empty_and_refilled() {
        let s = store(100, SessionLimits::default().creation_burst(1).creations_per_second(1));
        let t = Instant::now();
        for i in 0..200u8 {
            let c = peer(i);
            add(&s, &c, &format!("c{i}"), t).expect("one each");
            s.remove(&format!("c{i}")).expect("removed");
        }
        // Their buckets are still empty: forgetting them would hand out new tokens.
        assert_eq!(s.lock().clients.len(), 200);
        assert!(matches!(add(&s, &peer(0), "again", t), Err(Refused::RateLimited { .. })));
        // Once refilled, a pass over the entries (one per as many attempts) drops them.
        let later = t + MINUTE;
        for i in 0..500 {
            let _ = add(&s, &peer(250), &format!("k{i}"), later);
        }
        let clients = s.lock().clients.keys().cloned().collect::<Vec<_>>();
        assert_eq!(clients, [peer(250)]);
    }
}
