//! Open connections counted per client network, for
//! [`ConnectionLimits::max_connections_per_client`](super::ConnectionLimits::max_connections_per_client).
//!
//! A client is counted by the network its address belongs to (an IPv4 address, an IPv6 /64:
//! [`peer_network`]), the same key the other anonymous quotas use, so that one host cannot
//! rotate through the addresses of its /64 to open more. The count is taken when the
//! connection is accepted, before a byte of it is read: an authenticated principal is not known
//! yet, which is why this is a cap per address and not per caller.

use crate::context::connection::peer_network;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// How many connections each client network holds open, capped at `limit`.
#[derive(Debug)]
pub(super) struct ClientConnections {
    limit: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection's place in its client's count; given back when dropped.
#[derive(Debug)]
pub(super) struct ClientSlot {
    owner: Arc<ClientConnections>,
    network: IpAddr,
}

impl ClientConnections {
    /// Counts that let each client network hold `limit` connections (at least 1).
    pub(super) fn new(limit: usize) -> Arc<Self> {
        Arc::new(ClientConnections { limit: limit.max(1), open: Mutex::new(HashMap::new()) })
    }

    /// A slot for one more connection from `peer`; `Err` with `peer`'s network (for the
    /// refusal to name) when that network already holds `limit`.
    pub(super) fn try_open(self: &Arc<Self>, peer: IpAddr) -> Result<ClientSlot, IpAddr> {
        let network = peer_network(peer);
        // A panic while the lock was held cannot leave a count half-written (each update is
        // one store), so a poisoned map is still right.
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(network).or_insert(0);
        if *count >= self.limit {
            return Err(network);
        }
        *count += 1;
        Ok(ClientSlot { owner: Arc::clone(self), network })
    }

    /// The connections each network may hold (at least 1).
    pub(super) fn limit(&self) -> usize {
        self.limit
    }

    /// How many connections `peer`'s network holds now.
    #[cfg(test)]
    fn open_for(&self, peer: IpAddr) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(&peer_network(peer)).copied().unwrap_or(0)
    }

    /// How many client networks hold a connection now.
    #[cfg(test)]
    fn networks(&self) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut open = self.owner.open.lock().unwrap_or_else(PoisonError::into_inner);
        // A network without connections leaves the map, so it grows with the clients
        // connected now, not with every address ever seen.
        if let Some(count) = open.get_mut(&self.network) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.network);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ClientConnections;
    use std::net::IpAddr;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn each_network_holds_at_most_the_limit_until_a_slot_is_given_back() {
        let counts = ClientConnections::new(2);
        let a = counts.try_open(ip("192.0.2.1")).expect("first");
        let b = counts.try_open(ip("192.0.2.1")).expect("second");
        assert_eq!(counts.try_open(ip("192.0.2.1")).err(), Some(ip("192.0.2.1")), "a third is refused");
        let other = counts.try_open(ip("192.0.2.2")).expect("another address has its own count");
        drop(a);
        let c = counts.try_open(ip("192.0.2.1")).expect("a slot was given back");
        assert_eq!(counts.open_for(ip("192.0.2.1")), 2);
        drop((b, c, other));
        assert_eq!(counts.networks(), 0, "networks without connections leave the map");
    }

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4() {
        let counts = ClientConnections::new(1);
        let _v6 = counts.try_open(ip("2001:db8:1:2::7")).expect("first of the /64");
        assert_eq!(
            counts.try_open(ip("2001:db8:1:2:ffff::9")).err(),
            Some(ip("2001:db8:1:2::")),
            "another address of the same /64 shares its count"
        );
        let _next = counts.try_open(ip("2001:db8:1:3::1")).expect("another /64");
        let _v4 = counts.try_open(ip("198.51.100.4")).expect("IPv4");
        assert!(counts.try_open(ip("::ffff:198.51.100.4")).is_err(), "the mapped form is the same client");
    }

    #[test]
    fn a_limit_of_zero_counts_as_one() {
        let counts = ClientConnections::new(0);
        let _one = counts.try_open(ip("192.0.2.1")).expect("one connection");
        assert!(counts.try_open(ip("192.0.2.1")).is_err());
    }
}
