//! How many `subscriptions/listen` subscriptions one connection and one caller may hold open,
//! and the slots that count them.

use crate::auth::Principal;
use crate::context::Connection;
use crate::jsonrpc::McpError;
use serde_json::json;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Caps on open `subscriptions/listen` subscriptions
/// ([subscriptions](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)),
/// so that one client cannot hold an unbounded share of the server's memory with streams it
/// never closes. Set with [`ServerBuilder::listen_limits`](crate::ServerBuilder::listen_limits);
/// the command line's `--listen-max-per-connection` and `--listen-max-per-principal` override
/// them ([`cli`](crate::cli)).
///
/// A subscription holds its slots from the moment its filter is accepted until it ends for any
/// reason: its result is sent (server shutdown, a subscriber that fell too far behind), the
/// client cancels it (`notifications/cancelled` on stdio, closing the response stream over
/// HTTP), or its connection closes. Subscriptions served by a
/// [`replace_listen`](crate::ServerBuilder::replace_listen) handler count too.
///
/// A listen request over either limit fails with `-32603` (HTTP 200 with the JSON-RPC error,
/// before any stream opens) and
/// `data: {"reason": "listenLimit", "limit": N, "scope": "connection" | "principal"}`; the
/// connection stays usable, and the next listen succeeds once the client closed another
/// subscription in that scope. MCP defines no error code for a refused resource, so the code is
/// the generic internal error and `data.reason` tells clients what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListenLimits {
    /// Most subscriptions open at once on one transport connection (default 1 000): the stdio
    /// connection, or one HTTP connection, all of whose HTTP/2 streams count together. 0
    /// refuses every subscription. Requests without a known
    /// [`Connection`](crate::context::Connection) (a router served by a server of your own)
    /// are held to [`per_principal`](Self::per_principal) only.
    pub per_connection: usize,
    /// Most subscriptions open at once for one caller over all its connections (default
    /// 10 000). The caller is the authenticated principal (its `id`) when there is one; an
    /// anonymous caller is its peer's IPv4 address or IPv6 /64 prefix over HTTP (the client's,
    /// behind a [trusted proxy](crate::context::Connection::forwarded_for)), the one peer on
    /// stdio, and one shared "anonymous" caller where the transport names no connection. 0
    /// refuses every subscription.
    pub per_principal: usize,
}

impl Default for ListenLimits {
    fn default() -> Self {
        ListenLimits { per_connection: 1_000, per_principal: 10_000 }
    }
}

impl ListenLimits {
    /// Sets [`per_connection`](Self::per_connection).
    pub fn per_connection(mut self, subscriptions: usize) -> Self {
        self.per_connection = subscriptions;
        self
    }

    /// Sets [`per_principal`](Self::per_principal).
    pub fn per_principal(mut self, subscriptions: usize) -> Self {
        self.per_principal = subscriptions;
        self
    }
}

/// Who a subscription is counted against for [`ListenLimits::per_principal`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Caller {
    Principal(String),
    Peer(IpAddr),
    Anonymous,
}

impl Caller {
    fn of(connection: Option<&Connection>, principal: Option<&Principal>) -> Caller {
        match (principal, connection.and_then(Connection::peer)) {
            (Some(p), _) => Caller::Principal(p.id.clone()),
            (None, Some(peer)) => Caller::Peer(crate::context::connection::peer_network(peer.ip())),
            (None, None) => Caller::Anonymous,
        }
    }
}

/// Which limit refused a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Connection,
    Principal,
}

/// A listen request over a limit: which one, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) scope: Scope,
    pub(crate) limit: usize,
}

impl Refused {
    /// The `-32603` error a refused listen is answered with. A method rather than a `From`
    /// impl: a `From` for the public `McpError` would show in rustc's suggestions to users.
    pub(crate) fn into_error(self) -> McpError {
        let r = self;
        let (scope, message) = match r.scope {
            Scope::Connection => (
                "connection",
                format!(
                    "subscriptions/listen: this connection already has {} open subscription(s), its limit; \
                     close one (cancel it or close its stream) before opening another",
                    r.limit
                ),
            ),
            Scope::Principal => (
                "principal",
                format!(
                    "subscriptions/listen: this caller already has {} open subscription(s) over all its \
                     connections, its limit; close one (cancel it or close its stream) before opening another",
                    r.limit
                ),
            ),
        };
        tracing::debug!(scope, limit = r.limit, "subscriptions/listen refused: limit reached");
        McpError::internal(message).with_data(json!({ "reason": "listenLimit", "limit": r.limit, "scope": scope }))
    }
}

#[derive(Debug, Default)]
struct Counts {
    /// Open subscriptions by connection id; an entry goes when its count reaches 0.
    by_connection: HashMap<u64, usize>,
    by_caller: HashMap<Caller, usize>,
}

/// The open subscriptions of a server, counted per connection and per caller against its
/// [`ListenLimits`] (which the command line may change after the server is built).
#[derive(Debug)]
pub(crate) struct ListenSlots {
    per_connection: AtomicUsize,
    per_principal: AtomicUsize,
    counts: Mutex<Counts>,
}

impl ListenSlots {
    pub(crate) fn new(limits: ListenLimits) -> Self {
        ListenSlots {
            per_connection: AtomicUsize::new(limits.per_connection),
            per_principal: AtomicUsize::new(limits.per_principal),
            counts: Mutex::default(),
        }
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> ListenLimits {
        ListenLimits {
            per_connection: self.per_connection.load(Ordering::Relaxed),
            per_principal: self.per_principal.load(Ordering::Relaxed),
        }
    }

    /// Replaces the limits; subscriptions already open keep their slots even above new limits.
    pub(crate) fn set_limits(&self, limits: ListenLimits) {
        self.per_connection.store(limits.per_connection, Ordering::Relaxed);
        self.per_principal.store(limits.per_principal, Ordering::Relaxed);
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        // Nothing panics while the lock is held (counts and map updates only), and every update
        // leaves the maps consistent, so a poisoned lock is still usable.
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a slot on `connection` (when known) and for the caller, held until the returned
    /// guard is dropped; refuses when either is at its limit, the connection's checked first.
    pub(crate) fn acquire(
        self: &Arc<Self>,
        connection: Option<&Connection>,
        principal: Option<&Principal>,
    ) -> Result<ListenSlot, Refused> {
        let limits = self.limits();
        let caller = Caller::of(connection, principal);
        let connection = connection.map(Connection::id);
        let mut counts = self.lock();
        if let Some(id) = connection
            && counts.by_connection.get(&id).copied().unwrap_or(0) >= limits.per_connection
        {
            return Err(Refused { scope: Scope::Connection, limit: limits.per_connection });
        }
        if counts.by_caller.get(&caller).copied().unwrap_or(0) >= limits.per_principal {
            return Err(Refused { scope: Scope::Principal, limit: limits.per_principal });
        }
        if let Some(id) = connection {
            *counts.by_connection.entry(id).or_default() += 1;
        }
        *counts.by_caller.entry(caller.clone()).or_default() += 1;
        drop(counts);
        Ok(ListenSlot { slots: self.clone(), connection, caller })
    }

    /// Open subscriptions counted on connection `id`.
    #[cfg(test)]
    fn on_connection(&self, id: u64) -> usize {
        self.lock().by_connection.get(&id).copied().unwrap_or(0)
    }

    /// Entries in both maps: what the counting itself holds in memory.
    #[cfg(test)]
    fn entries(&self) -> usize {
        let counts = self.lock();
        counts.by_connection.len() + counts.by_caller.len()
    }
}

/// One open subscription's place in [`ListenSlots`], given back when dropped: the subscription
/// holds it in its future, which is dropped however it ends.
#[derive(Debug)]
pub(crate) struct ListenSlot {
    slots: Arc<ListenSlots>,
    connection: Option<u64>,
    caller: Caller,
}

/// Takes one from `key`'s count, removing the entry at 0 so that closed connections and gone
/// callers leave nothing behind.
fn release<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = map.get_mut(key) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            map.remove(key);
        }
    }
}

impl Drop for ListenSlot {
    fn drop(&mut self) {
        let mut counts = self.slots.lock();
        if let Some(id) = &self.connection {
            release(&mut counts.by_connection, id);
        }
        release(&mut counts.by_caller, &self.caller);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(per_connection: usize, per_principal: usize) -> Arc<ListenSlots> {
        Arc::new(ListenSlots::new(ListenLimits::default().per_connection(per_connection).per_principal(per_principal)))
    }

    fn peer(ip: &str) -> Connection {
        Connection::new(Some(format!("{ip}:40000").parse().expect("an address")))
    }

    #[test]
    fn the_defaults_are_a_thousand_per_connection_and_ten_thousand_per_caller() {
        let d = ListenLimits::default();
        assert_eq!((d.per_connection, d.per_principal), (1_000, 10_000));
    }

    #[test]
    fn a_connection_at_its_limit_is_refused_until_one_of_its_slots_is_released() {
        let s = slots(2, 100);
        let c = peer("10.0.0.1");
        let a = s.acquire(Some(&c), None).expect("first");
        let _b = s.acquire(Some(&c), None).expect("second");
        assert_eq!(s.acquire(Some(&c), None).err(), Some(Refused { scope: Scope::Connection, limit: 2 }));
        // Another connection of the same address has slots of its own.
        let other = peer("10.0.0.1");
        let _c = s.acquire(Some(&other), None).expect("another connection");
        drop(a);
        assert_eq!(s.on_connection(c.id()), 1);
        s.acquire(Some(&c), None).expect("a slot was freed");
    }

    #[test]
    fn a_caller_is_counted_over_all_its_connections() {
        let s = slots(10, 3);
        let alice = Principal::new("alice", ["user"]);
        let held: Vec<_> = (0..3).map(|_| s.acquire(Some(&peer("10.0.0.1")), Some(&alice)).expect("under")).collect();
        let refused = s.acquire(Some(&peer("10.0.0.2")), Some(&alice)).err();
        assert_eq!(refused, Some(Refused { scope: Scope::Principal, limit: 3 }), "the principal, whatever its address");
        // Others from the same address are other callers: anonymous ones count by address.
        let bob = Principal::new("bob", ["user"]);
        let _bob = s.acquire(Some(&peer("10.0.0.1")), Some(&bob)).expect("bob");
        let anonymous: Vec<_> = (0..3).map(|_| s.acquire(Some(&peer("10.0.0.1")), None).expect("address")).collect();
        assert_eq!(s.acquire(Some(&peer("10.0.0.1")), None).err().map(|r| r.scope), Some(Scope::Principal));
        s.acquire(Some(&peer("10.0.0.9")), None).expect("another address");
        drop((held, anonymous));
        s.acquire(Some(&peer("10.0.0.2")), Some(&alice)).expect("alice's slots were freed");
    }

    /// Anonymous IPv6 callers count by /64 (rotating addresses inside one does not help), and
    /// IPv4 peers seen through a dual-stack listener count as their IPv4 address.
    #[test]
    fn anonymous_ipv6_callers_count_by_their_64_prefix() {
        let s = slots(10, 2);
        let _a = s.acquire(Some(&peer("[2001:db8:1:2::1]")), None).expect("first");
        let _b = s.acquire(Some(&peer("[2001:db8:1:2:ffff::9]")), None).expect("second, same /64");
        let refused = s.acquire(Some(&peer("[2001:db8:1:2::3]")), None).err().map(|r| r.scope);
        assert_eq!(refused, Some(Scope::Principal), "a third address of the same /64");
        s.acquire(Some(&peer("[2001:db8:1:3::1]")), None).expect("another /64");
        let _v4 = s.acquire(Some(&peer("10.0.0.5")), None).expect("ipv4");
        let _mapped = s.acquire(Some(&peer("[::ffff:10.0.0.5]")), None).expect("the same caller, second slot");
        let refused = s.acquire(Some(&peer("10.0.0.5")), None).err().map(|r| r.scope);
        assert_eq!(refused, Some(Scope::Principal), "mapped and plain IPv4 are one caller");
    }

    #[test]
    fn without_a_connection_only_the_caller_limit_applies() {
        let s = slots(1, 2);
        let a = s.acquire(None, None).expect("first");
        let _b = s.acquire(None, None).expect("no connection limit to hit");
        assert_eq!(s.acquire(None, None).err(), Some(Refused { scope: Scope::Principal, limit: 2 }));
        drop(a);
        s.acquire(None, None).expect("freed");
    }

    #[test]
    fn every_slot_given_back_leaves_no_entry_behind() {
        let s = slots(1_000, 10_000);
        let alice = Principal::new("alice", ["user"]);
        let held: Vec<_> = (0..500)
            .map(|i| {
                let c = peer(&format!("10.0.{}.{}", i / 200, i % 200));
                s.acquire(Some(&c), if i % 2 == 0 { Some(&alice) } else { None }).expect("under the limits")
            })
            .collect();
        assert!(s.entries() > 0);
        drop(held);
        assert_eq!(s.entries(), 0);
    }

    #[test]
    fn zero_refuses_every_subscription_and_new_limits_apply_to_the_next_request() {
        let s = slots(0, 5);
        let c = peer("10.0.0.1");
        assert_eq!(s.acquire(Some(&c), None).err(), Some(Refused { scope: Scope::Connection, limit: 0 }));
        s.set_limits(ListenLimits::default().per_connection(1).per_principal(5));
        let _a = s.acquire(Some(&c), None).expect("raised");
        s.set_limits(ListenLimits::default().per_connection(1).per_principal(0));
        assert_eq!(s.acquire(None, None).err(), Some(Refused { scope: Scope::Principal, limit: 0 }));
    }

    #[test]
    fn the_refusal_says_which_limit_and_how_to_free_a_slot() {
        let e = Refused { scope: Scope::Connection, limit: 7 }.into_error();
        assert_eq!(e.code(), crate::ErrorCode::INTERNAL_ERROR);
        assert_eq!(e.data(), Some(&json!({ "reason": "listenLimit", "limit": 7, "scope": "connection" })));
        assert!(e.message().contains("7") && e.message().contains("close one"), "{}", e.message());
        let e = Refused { scope: Scope::Principal, limit: 3 }.into_error();
        assert_eq!(e.data().as_ref().map(|d| d["scope"].clone()), Some(json!("principal")));
    }
}
