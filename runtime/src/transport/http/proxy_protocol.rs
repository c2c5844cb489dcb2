//! The PROXY protocol (HAProxy's
//! [specification](https://www.haproxy.org/download/3.0/doc/proxy-protocol.txt), versions 1
//! and 2): a layer-4 load balancer (HAProxy `send-proxy`, AWS NLB, Google Cloud's TCP proxy)
//! writes the client's address at the start of each TCP connection, where no HTTP header can
//! carry it. Read only from the peers listed in
//! [`ConnectionLimits::proxy_protocol`](super::ConnectionLimits::proxy_protocol): from them
//! the header is required, as the specification asks (a receiver must not guess whether one is
//! there); from any other peer nothing is parsed, so a client cannot name its own address.
//!
//! The header is read byte-exactly (the HTTP bytes after it stay in the socket) and parsed by
//! the `ppp` crate. TLVs of version 2 are skipped.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Version 2's signature, which starts every binary header.
const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The longest version 1 header, `\r\n` included (specification §2.1).
const V1_MAX: usize = 107;
/// Longest version 2 payload (addresses and TLVs) accepted: the addresses take at most 216
/// bytes (UNIX sockets); the rest leaves room for a balancer's TLVs (AWS adds a VPC endpoint
/// id, GCP a connection id) while bounding what a broken peer makes us buffer.
const V2_MAX_PAYLOAD: usize = 2048;

/// Why a connection from a PROXY protocol peer was closed.
#[derive(Debug, thiserror::Error)]
pub(super) enum HeaderError {
    #[error("the connection did not start with a PROXY protocol header")]
    Missing,
    #[error("the PROXY protocol header did not arrive within {0:?}")]
    Late(Duration),
    #[error("the PROXY protocol header is malformed: {0}")]
    Malformed(String),
    #[error("reading the PROXY protocol header failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads the header at the start of `tcp` within `within`. `Ok(Some(client))` for a proxied
/// TCP connection over IPv4 or IPv6; `Ok(None)` when the header says the connection is the
/// balancer's own (version 2 `LOCAL`, e.g. a health check; version 1 `UNKNOWN`) or carries no
/// IP addresses (UNIX sockets, unspecified): the TCP peer then stays the client.
pub(super) async fn read(tcp: &mut TcpStream, within: Duration) -> Result<Option<SocketAddr>, HeaderError> {
    match tokio::time::timeout(within, read_header(tcp)).await {
        Ok(read) => read,
        Err(_) => Err(HeaderError::Late(within)),
    }
}

async fn read_header(tcp: &mut TcpStream) -> Result<Option<SocketAddr>, HeaderError> {
    // 12 bytes: version 2's signature, or version 1's "PROXY " and the start of what follows
    // (its shortest header, "PROXY UNKNOWN\r\n", has 15).
    let mut head = vec![0u8; V2_SIGNATURE.len()];
    tcp.read_exact(&mut head).await.map_err(eof_is_missing)?;
    if head == V2_SIGNATURE {
        let mut fixed = [0u8; 4];
        tcp.read_exact(&mut fixed).await.map_err(eof_is_missing)?;
        let length = usize::from(u16::from_be_bytes([fixed[2], fixed[3]]));
        if length > V2_MAX_PAYLOAD {
            return Err(HeaderError::Malformed(format!(
                "a version 2 payload of {length} bytes (at most {V2_MAX_PAYLOAD} accepted)"
            )));
        }
        head.extend_from_slice(&fixed);
        let start = head.len();
        head.resize(start + length, 0);
        tcp.read_exact(&mut head[start..]).await.map_err(eof_is_missing)?;
        let header = ppp::v2::Header::try_from(head.as_slice()).map_err(|e| HeaderError::Malformed(e.to_string()))?;
        return Ok(match (header.command, header.addresses) {
            (ppp::v2::Command::Local, _) => None,
            (ppp::v2::Command::Proxy, ppp::v2::Addresses::IPv4(a)) => {
                Some(SocketAddr::from((a.source_address, a.source_port)))
            }
            (ppp::v2::Command::Proxy, ppp::v2::Addresses::IPv6(a)) => {
                Some(SocketAddr::from((a.source_address, a.source_port)))
            }
            (ppp::v2::Command::Proxy, ppp::v2::Addresses::Unix(_) | ppp::v2::Addresses::Unspecified) => None,
        });
    }
    if !head.starts_with(b"PROXY ") {
        return Err(HeaderError::Missing);
    }
    // Version 1 ends at "\r\n": read a byte at a time, so that nothing after it is taken.
    while !head.ends_with(b"\r\n") {
        if head.len() >= V1_MAX {
            return Err(HeaderError::Malformed(format!("a version 1 header longer than {V1_MAX} bytes")));
        }
        head.push(tcp.read_u8().await.map_err(eof_is_missing)?);
    }
    let header = ppp::v1::Header::try_from(head.as_slice()).map_err(|e| HeaderError::Malformed(e.to_string()))?;
    Ok(match header.addresses {
        ppp::v1::Addresses::Tcp4(a) => Some(SocketAddr::from((a.source_address, a.source_port))),
        ppp::v1::Addresses::Tcp6(a) => Some(SocketAddr::from((a.source_address, a.source_port))),
        ppp::v1::Addresses::Unknown => None,
    })
}

/// Logs a connection closed for its header: at `warn` at most once per 10 s (a balancer that
/// is not set to send the header has every connection closed), otherwise at `debug`.
pub(super) fn refused(peer: SocketAddr, error: &HeaderError) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST_WARNING_S: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let last = LAST_WARNING_S.load(Ordering::Relaxed);
    if now.saturating_sub(last) >= 10
        && LAST_WARNING_S.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    {
        tracing::warn!(
            %peer, %error,
            "http: closed a connection from a PROXY protocol peer (is the balancer set to send the header, \
             e.g. HAProxy `send-proxy-v2`?); more within 10 s are logged at debug"
        );
    } else {
        tracing::debug!(%peer, %error, "http: closed a connection from a PROXY protocol peer");
    }
}

/// A connection that ends before a whole header arrived did not send one.
fn eof_is_missing(e: std::io::Error) -> HeaderError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof { HeaderError::Missing } else { HeaderError::Io(e) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// What `read` makes of `bytes` sent on a fresh connection, and what is left after it.
    async fn parse(bytes: &[u8]) -> (Result<Option<SocketAddr>, String>, Vec<u8>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let bytes = bytes.to_vec();
        let writer = tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.expect("connect");
            c.write_all(&bytes).await.expect("write");
            c.shutdown().await.expect("shutdown");
            c
        });
        let (mut tcp, _) = listener.accept().await.expect("accept");
        let got = read(&mut tcp, Duration::from_secs(5)).await.map_err(|e| e.to_string());
        let mut rest = Vec::new();
        if got.is_ok() {
            tcp.read_to_end(&mut rest).await.expect("rest");
        }
        drop(writer.await);
        (got, rest)
    }

    fn v2(command: u8, family: u8, addresses: &[u8], tlvs: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.push(0x20 | command);
        h.push(family);
        let len = u16::try_from(addresses.len() + tlvs.len()).expect("short");
        h.extend_from_slice(&len.to_be_bytes());
        h.extend_from_slice(addresses);
        h.extend_from_slice(tlvs);
        h
    }

    #[tokio::test]
    async fn version_1_names_the_client_and_leaves_the_request() {
        let (got, rest) = parse(b"PROXY TCP4 192.0.2.7 198.51.100.1 40000 443\r\nGET / HTTP/1.1\r\n\r\n").await;
        assert_eq!(got, Ok(Some("192.0.2.7:40000".parse().expect("addr"))));
        assert_eq!(rest, b"GET / HTTP/1.1\r\n\r\n");
        let (got, _) = parse(b"PROXY TCP6 2001:db8::7 2001:db8::1 40000 443\r\n").await;
        assert_eq!(got, Ok(Some("[2001:db8::7]:40000".parse().expect("addr"))));
        let (got, rest) = parse(b"PROXY UNKNOWN\r\nX").await;
        assert_eq!((got, rest), (Ok(None), b"X".to_vec()));
    }

    #[tokio::test]
    async fn version_2_names_the_client_skips_tlvs_and_keeps_local_connections() {
        let ipv4 = [192, 0, 2, 7, 198, 51, 100, 1, 0x9c, 0x40, 0x01, 0xbb];
        let noop_tlv = [0x04, 0x00, 0x02, 0xAA, 0xBB];
        let mut bytes = v2(1, 0x11, &ipv4, &noop_tlv);
        bytes.extend_from_slice(b"PRI * HTTP/2.0");
        let (got, rest) = parse(&bytes).await;
        assert_eq!(got, Ok(Some("192.0.2.7:40000".parse().expect("addr"))));
        assert_eq!(rest, b"PRI * HTTP/2.0");
        let (got, rest) = parse(&[v2(0, 0x00, &[], &[]), b"GET".to_vec()].concat()).await;
        assert_eq!((got, rest), (Ok(None), b"GET".to_vec()));
        let mut ipv6 = Vec::new();
        ipv6.extend_from_slice(&"2001:db8::7".parse::<std::net::Ipv6Addr>().expect("v6").octets());
        ipv6.extend_from_slice(&"2001:db8::1".parse::<std::net::Ipv6Addr>().expect("v6").octets());
        ipv6.extend_from_slice(&[0x9c, 0x40, 0x01, 0xbb]);
        let (got, _) = parse(&v2(1, 0x21, &ipv6, &[])).await;
        assert_eq!(got, Ok(Some("[2001:db8::7]:40000".parse().expect("addr"))));
    }

    #[tokio::test]
    async fn anything_else_closes_the_connection() {
        for (bytes, says) in [
            (&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..], "did not start with"),
            (b"PROXY", "did not start with"),
            (b"PROXY TCP4 192.0.2.7\r\n", "malformed"),
            (b"PROXY TCP4 999.0.2.7 198.51.100.1 40000 443\r\n", "malformed"),
            (&[b"PROXY TCP4 ".as_slice(), &[b'1'; 120]].concat(), "longer than"),
        ] {
            let (got, _) = parse(bytes).await;
            let err = got.expect_err("refused");
            assert!(err.contains(says), "{:?}: {err}", String::from_utf8_lossy(bytes));
        }
        let mut huge = V2_SIGNATURE.to_vec();
        huge.extend_from_slice(&[0x21, 0x11, 0xFF, 0xFF]);
        let (got, _) = parse(&huge).await;
        assert!(got.expect_err("refused").contains("at most"));
        let truncated = &v2(1, 0x11, &[192, 0, 2, 7, 198, 51, 100, 1, 0x9c, 0x40, 0x01, 0xbb], &[])[..20];
        let (got, _) = parse(truncated).await;
        assert!(got.expect_err("refused").contains("did not start with"));
    }

    #[tokio::test]
    async fn a_peer_that_sends_nothing_is_closed_after_the_deadline() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let _silent = TcpStream::connect(addr).await.expect("connect");
        let (mut tcp, _) = listener.accept().await.expect("accept");
        let got = read(&mut tcp, Duration::from_millis(50)).await;
        assert!(matches!(got, Err(HeaderError::Late(_))), "{got:?}");
    }
}
