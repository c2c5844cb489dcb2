//! Connections counted per client (`ConnectionLimits::max_connections_per_client`), over real
//! TCP connections from two loopback addresses.

use std::net::SocketAddr;
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::{ConnectionLimits, HttpConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection to `server` from the loopback address `from` (any port).
async fn connect_from(from: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.bind(format!("{from}:0").parse().expect("an address")).expect("bind a loopback address");
    socket.connect(server).await.expect("connect")
}

/// Sends a request on `s` and reads its answer's head, or `None` when the server closed the
/// connection without answering.
async fn answer(s: &mut TcpStream) -> Option<String> {
    // HEAD of another path: answered 404 with no body, so the head is the whole answer.
    if s.write_all(b"HEAD /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.is_err() {
        return None;
    }
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await.expect("no answer within 10 s") {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

#[tokio::test]
async fn connections_beyond_a_clients_cap_are_closed_and_other_clients_served() {
    let server = Server::builder("connections", "1").groups(["none"]).build().expect("builds");
    let limits = ConnectionLimits::default().max_connections_per_client(2);
    let http = HttpTestServer::start(server, HttpConfig::default().connections(limits)).await.expect("a port");
    let addr = http.addr();

    // Two connections from 127.0.0.1, answered and kept open.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = connect_from("127.0.0.1", addr).await;
        let head = answer(&mut s).await.expect("within the cap: answered");
        assert!(head.starts_with("HTTP/1.1 404"), "{head}");
        held.push(s);
    }
    // A third from the same address is closed unanswered.
    let mut third = connect_from("127.0.0.1", addr).await;
    assert_eq!(answer(&mut third).await, None, "beyond the cap: closed");

    // Another address has a count of its own.
    let mut other = connect_from("127.0.0.2", addr).await;
    assert!(answer(&mut other).await.is_some(), "another client is served");
    // The connections within the cap still work.
    for s in &mut held {
        assert!(answer(s).await.is_some(), "a held connection keeps being served");
    }

    // Once one of its connections closes, the client may open another.
    drop(held.remove(0));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut s = connect_from("127.0.0.1", addr).await;
        if answer(&mut s).await.is_some() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the closed connection's slot was never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn without_a_cap_per_client_one_address_opens_many() {
    let server = Server::builder("connections", "1").groups(["none"]).build().expect("builds");
    assert_eq!(ConnectionLimits::default().max_connections_per_client, None, "no cap by default");
    let http = HttpTestServer::start(server, HttpConfig::default()).await.expect("a port");
    let mut held = Vec::new();
    for _ in 0..20 {
        let mut s = connect_from("127.0.0.1", http.addr()).await;
        assert!(answer(&mut s).await.is_some(), "answered");
        held.push(s);
    }
}

/// A refused connection gives back its place in `max_connections` at once: with room for two
/// connections in all and one per client, a client refused again and again leaves the second
/// place to another client.
#[tokio::test]
async fn a_refused_connection_does_not_keep_a_place_in_max_connections() {
    let server = Server::builder("connections", "1").groups(["none"]).build().expect("builds");
    let limits = ConnectionLimits::default().max_connections(2).max_connections_per_client(1);
    let http = HttpTestServer::start(server, HttpConfig::default().connections(limits)).await.expect("a port");
    let addr = http.addr();
    let mut held = connect_from("127.0.0.1", addr).await;
    assert!(answer(&mut held).await.is_some(), "the first connection is served");
    for _ in 0..3 {
        let mut refused = connect_from("127.0.0.1", addr).await;
        assert_eq!(answer(&mut refused).await, None, "beyond the client's cap: closed");
    }
    // Were the refused connections holding places, this one would wait in the backlog and get
    // no answer.
    let mut other = connect_from("127.0.0.2", addr).await;
    assert!(answer(&mut other).await.is_some(), "the second place went to another client");
    assert!(answer(&mut held).await.is_some(), "the first connection is still served");
}
