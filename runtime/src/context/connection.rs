//! Which transport connection a request came on.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};

/// The transport connection a request arrived on: an opaque id, unique within the process, and
/// the peer's address when the transport knows one.
///
/// One stdio connection ([`transport::stdio::serve_io`](crate::transport::stdio::serve_io)) is
/// one `Connection`, without a peer address. Over HTTP,
/// [`transport::http::serve`](crate::transport::http::serve) and
/// [`serve_app`](crate::transport::http::serve_app) make one per accepted TCP connection (every
/// HTTP/2 stream of that connection shares it). `serve` hands it to its endpoint with each
/// request; `serve_app` puts it in each request's [`http::Extensions`], next to axum's
/// `ConnectInfo<SocketAddr>`, for the application's layers too. A router served by a server
/// of your own has none, unless a layer of yours inserts one.
///
/// Behind a reverse proxy listed in
/// [`HttpConfig::trusted_proxies`](crate::transport::http::HttpConfig::trusted_proxies), the
/// HTTP transport hands each request the connection [as forwarded](Self::forwarded_for): the
/// same id, the client's address as [`peer`](Self::peer) and the proxy's as
/// [`proxy`](Self::proxy).
///
/// The server counts open `subscriptions/listen` subscriptions per connection
/// ([`ListenLimits`](crate::subscriptions::ListenLimits)) and per anonymous peer address.
/// Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Connection {
    id: u64,
    peer: Option<SocketAddr>,
    /// The trusted proxy the peer address was forwarded by.
    proxy: Option<SocketAddr>,
}

impl Connection {
    /// A connection with a new id (never handed out before in this process), from `peer` when
    /// known. A transport makes one when it accepts a connection and passes it with every
    /// request of that connection ([`Origin::connection`](super::Origin::connection)).
    pub fn new(peer: Option<SocketAddr>) -> Self {
        // Relaxed: only uniqueness matters, and a fetch_add is unique whatever the ordering.
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Connection { id: NEXT.fetch_add(1, Ordering::Relaxed), peer, proxy: None }
    }

    /// This connection as a trusted proxy at its peer address says it was for `client`: the
    /// same [`id`](Self::id), `client` as [`peer`](Self::peer), and the address the
    /// connection really came from as [`proxy`](Self::proxy). A transport calls it per request
    /// once it has checked that the peer is a proxy it trusts; nothing here checks that.
    pub fn forwarded_for(&self, client: SocketAddr) -> Connection {
        Connection { id: self.id, peer: Some(client), proxy: self.proxy.or(self.peer) }
    }

    /// The id, unique among the connections of this process. Opaque: it says nothing about
    /// order or time, and another process may use the same number.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The peer's address: over HTTP the TCP peer, or, when that is a trusted proxy, the client
    /// address it forwarded (port 0 where the proxy named no port); `None` on stdio. Behind a
    /// proxy that is not trusted, the proxy's address.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// The trusted proxy's address when [`peer`](Self::peer) is the client address it
    /// forwarded ([`forwarded_for`](Self::forwarded_for)); `None` otherwise.
    pub fn proxy(&self) -> Option<SocketAddr> {
        self.proxy
    }
}

/// The network an anonymous peer is counted by in per-caller limits: its IPv4 address, or its
/// IPv6 address cut to the /64 prefix (one host usually holds a whole /64, so counting single
/// IPv6 addresses would let it rotate past any limit). A dual-stack listener sees IPv4 peers
/// as `::ffff:a.b.c.d`: those count as their IPv4 address.
pub(crate) fn peer_network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::Connection;

    #[test]
    fn every_connection_gets_its_own_id() {
        let peer = "127.0.0.1:9".parse().ok();
        let (a, b) = (Connection::new(peer), Connection::new(peer));
        assert_ne!(a.id(), b.id());
        assert_ne!(a, b, "the same peer twice is two connections");
        assert_eq!(a.clone(), a);
        assert_eq!((a.peer(), Connection::new(None).peer()), (peer, None));
    }

    #[test]
    fn a_forwarded_connection_keeps_its_id_and_names_the_proxy() {
        let proxy = "10.0.0.1:9".parse().ok();
        let client = "203.0.113.5:0".parse().expect("an address");
        let c = Connection::new(proxy);
        let f = c.forwarded_for(client);
        assert_eq!((f.id(), f.peer(), f.proxy()), (c.id(), Some(client), proxy));
        assert_eq!(c.proxy(), None);
        // Forwarded twice (a transport of its own, say): still the connection's real peer.
        assert_eq!(f.forwarded_for(client).proxy(), proxy);
    }
}
