//! The client's address behind reverse proxies the server trusts
//! ([`HttpConfig::trusted_proxies`](super::HttpConfig::trusted_proxies)).
//!
//! Every proxy appends the address it received the request from to the forwarding header, so
//! the list reads `client, proxy 1, ..., proxy n` and the TCP peer is the last proxy. Only the
//! entries appended by trusted proxies can be believed: anything to their left may have been
//! written by the client itself. The client is therefore found by walking from the right,
//! starting at the peer, past every address that is itself a trusted proxy; the first one that
//! is not is the client. A client that sends its own header only adds entries to the left of
//! that point, which are never read.
//!
//! Nothing here refuses a request: a header that cannot be read, or a hop whose address the
//! proxy hid (`unknown`, an obfuscated identifier), leaves the client unknown, and the request
//! counts as coming from the peer (the proxy), as it would without the setting.

use http::HeaderMap;
use ipnet::IpNet;
use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Which request header the [trusted proxies](super::HttpConfig::trusted_proxies) name the
/// client in; part of [`HttpConfig`](super::HttpConfig) (`HttpConfig::forwarded_header`).
///
/// Only this header is read: a proxy passes the other one through as the client sent it, so
/// reading both would let a client name any address it likes. Pick the one your proxy writes,
/// and have the proxy append to it (or replace it), never pass the client's along unchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (the default): a comma-separated list of IP
    /// addresses, each optionally with a port (`192.0.2.1:4711`, `[2001:db8::1]:4711`). What
    /// nginx (`$proxy_add_x_forwarded_for`), HAProxy (`option forwardfor`), cloud load
    /// balancers, Traefik and Caddy write.
    #[default]
    XForwardedFor,
    /// `Forwarded: for=192.0.2.1, for="[2001:db8::1]:4711"`
    /// ([RFC 7239](https://www.rfc-editor.org/rfc/rfc7239)): the `for` parameter of each
    /// element (§5.2); nodes named `unknown` or by an obfuscated identifier (§6.2, §6.3) hide
    /// the client, which then counts as the proxy. What HAProxy writes with `option forwarded`.
    Forwarded,
}

impl ForwardedHeader {
    /// The header's name.
    fn name(self) -> &'static http::HeaderName {
        static XFF: http::HeaderName = http::HeaderName::from_static("x-forwarded-for");
        match self {
            ForwardedHeader::XForwardedFor => &XFF,
            ForwardedHeader::Forwarded => &http::header::FORWARDED,
        }
    }
}

/// Parses a trusted network: CIDR notation (`10.0.0.0/8`, `2001:db8::/32`) or a single address
/// (`127.0.0.1`, `::1`, meaning /32 or /128). Host bits below the prefix are ignored
/// (`10.1.2.3/8` is `10.0.0.0/8`). `Err` says what is wrong with `s`.
#[cfg(any(feature = "cli", test))]
pub(crate) fn parse_network(s: &str) -> Result<IpNet, String> {
    let s = s.trim();
    if let Ok(net) = s.parse::<IpNet>() {
        return Ok(net.trunc());
    }
    s.parse::<IpAddr>()
        .map(IpNet::from)
        .map_err(|_| format!("{s:?} is not an IP network (CIDR such as 10.0.0.0/8 or 2001:db8::/32) or IP address"))
}

/// Whether `ip` lies in one of `trusted`. An IPv4 address a dual-stack listener reports as
/// `::ffff:a.b.c.d` matches the IPv4 networks too.
pub(super) fn is_trusted(ip: IpAddr, trusted: &[IpNet]) -> bool {
    let canonical = ip.to_canonical();
    trusted.iter().any(|n| n.contains(&ip) || n.contains(&canonical))
}

/// The address of the client of a request that arrived from `peer` with `headers`: `peer`
/// itself unless it is one of `trusted`; otherwise the rightmost address in `header` that is
/// not a trusted proxy (port 0 where the entry names none), or the leftmost entry when all of
/// them are trusted. `peer` again when the header is absent, cannot be read, or the walk meets
/// a hop whose address is not given (`unknown`, obfuscated, garbage) before it finds the client.
pub(crate) fn client_address(
    peer: SocketAddr,
    headers: &HeaderMap,
    trusted: &[IpNet],
    header: ForwardedHeader,
) -> SocketAddr {
    if !is_trusted(peer.ip(), trusted) {
        return peer;
    }
    let mut walk = Walk { trusted, leftmost: None };
    // Several header lines are one list, in order (RFC 9110 §5.3): the last line's last entry
    // is the nearest hop.
    for line in headers.get_all(header.name()).iter().rev() {
        let Ok(line) = line.to_str() else { return peer };
        let step = match header {
            ForwardedHeader::XForwardedFor => walk.line(line.rsplit(',').map(|e| Some(Cow::Borrowed(e)))),
            ForwardedHeader::Forwarded => match forwarded_for(line) {
                Some(nodes) => walk.line(nodes.into_iter().rev()),
                None => Step::Unknown,
            },
        };
        match step {
            Step::Client(client) => return client,
            Step::Unknown => return peer,
            Step::Proxies => {}
        }
    }
    walk.leftmost.unwrap_or(peer)
}

/// The walk from the right through the entries of a forwarding header.
struct Walk<'a> {
    trusted: &'a [IpNet],
    /// The leftmost trusted proxy passed so far: the client if every entry is a proxy.
    leftmost: Option<SocketAddr>,
}

/// Where one header line left the walk.
enum Step {
    /// The client is found.
    Client(SocketAddr),
    /// A hop that names no address: the client cannot be known.
    Unknown,
    /// Every entry of the line was a trusted proxy (or empty): go on to the line before.
    Proxies,
}

impl Walk<'_> {
    /// Walks `entries`, right to left (`None`: an element without a node).
    fn line<'e>(&mut self, entries: impl Iterator<Item = Option<Cow<'e, str>>>) -> Step {
        for entry in entries {
            let Some(entry) = entry else { return Step::Unknown };
            let entry = entry.trim();
            // An empty list element is allowed and means nothing (RFC 9110 §5.6.1.2).
            if entry.is_empty() {
                continue;
            }
            let Some(addr) = node(entry) else { return Step::Unknown };
            if !is_trusted(addr.ip(), self.trusted) {
                return Step::Client(addr);
            }
            self.leftmost = Some(addr);
        }
        Step::Proxies
    }
}

/// The address a node names (RFC 7239 §6: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`,
/// `[2001:db8::1]:4711`), also written as `X-Forwarded-For` entries are (an IPv6 address
/// without brackets); port 0 when there is none or it is obfuscated (`_abc`). `None` for
/// `unknown`, obfuscated names and anything that is not an address.
fn node(s: &str) -> Option<SocketAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(SocketAddr::new(ip, 0));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Some(addr);
    }
    // What is left: `[v6]`, and an address with an obfuscated port (`[v6]:_x`, `v4:_x`).
    let host = match s.rsplit_once(':') {
        Some((host, port)) if is_obfuscated(port) => host,
        _ => s,
    };
    let ip = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => IpAddr::V6(v6.parse::<Ipv6Addr>().ok()?),
        None => IpAddr::V4(host.parse::<Ipv4Addr>().ok()?),
    };
    Some(SocketAddr::new(ip, 0))
}

/// An obfuscated identifier (RFC 7239 §6.3): `_` then letters, digits, `.`, `_`, `-`.
fn is_obfuscated(s: &str) -> bool {
    s.strip_prefix('_').is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    })
}

/// The `for` value of each element of one `Forwarded` line, in order (`None` for an element
/// without one), unquoted; `None` when the line does not parse (RFC 7239 §4:
/// `1#forwarded-element`, each `[pair] *( ";" [pair] )`, a pair `token "=" ( token /
/// quoted-string )`).
fn forwarded_for(line: &str) -> Option<Vec<Option<Cow<'_, str>>>> {
    let mut elements = Vec::new();
    let mut current: Option<Cow<'_, str>> = None;
    // Whether the element being read has a pair: an empty element is no hop (RFC 9110 §5.6.1.2).
    let mut pairs = false;
    let mut rest = line;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        // A pair, or an empty one between separators.
        if !rest.is_empty() && !rest.starts_with([';', ',']) {
            let (name, after) = rest.split_once('=')?;
            let name = name.trim_end_matches([' ', '\t']);
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return None;
            }
            pairs = true;
            let (value, after) = pair_value(after.trim_start_matches([' ', '\t']))?;
            if name.eq_ignore_ascii_case("for") {
                // A second `for` in one element is malformed (§4: each parameter at most once).
                if current.replace(value).is_some() {
                    return None;
                }
            }
            rest = after.trim_start_matches([' ', '\t']);
        }
        match rest.as_bytes().first() {
            None => {
                if std::mem::take(&mut pairs) {
                    elements.push(current.take());
                }
                return Some(elements);
            }
            Some(b';') => rest = &rest[1..],
            Some(b',') => {
                if std::mem::take(&mut pairs) {
                    elements.push(current.take());
                }
                rest = &rest[1..];
            }
            Some(_) => return None,
        }
    }
}

/// A pair's value at the start of `s` (a token, or a quoted-string with its escapes undone)
/// and what follows it; `None` when it is neither.
fn pair_value(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let Some(quoted) = s.strip_prefix('"') else {
        let end = s.bytes().position(|b| !is_tchar(b)).unwrap_or(s.len());
        return (end > 0).then(|| (Cow::Borrowed(&s[..end]), &s[end..]));
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((Cow::Owned(value), &quoted[i + 1..])),
            '\\' => value.push(chars.next()?.1),
            c => value.push(c),
        }
    }
    // No closing quote.
    None
}

/// A token character (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::{ForwardedHeader, client_address, forwarded_for, node, parse_network};
    use http::HeaderMap;
    use ipnet::IpNet;
    use std::net::SocketAddr;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|s| parse_network(s).expect("a network")).collect()
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("an address")
    }

    /// The client of a request from `peer` with `lines` of `header`, `trusted` trusted.
    fn client(peer: &str, header: ForwardedHeader, lines: &[&[u8]], trusted: &[&str]) -> SocketAddr {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(header.name(), http::HeaderValue::from_bytes(line).expect("a header value"));
        }
        client_address(addr(peer), &headers, &nets(trusted), header)
    }

    fn xff(peer: &str, lines: &[&str], trusted: &[&str]) -> SocketAddr {
        let lines: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        client(peer, ForwardedHeader::XForwardedFor, &lines, trusted)
    }

    fn fwd(peer: &str, lines: &[&str], trusted: &[&str]) -> SocketAddr {
        let lines: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        client(peer, ForwardedHeader::Forwarded, &lines, trusted)
    }

    const PROXY: &str = "10.0.0.1:5000";

    #[test]
    fn networks_parse_as_cidr_or_single_addresses() {
        assert_eq!(parse_network("10.1.2.3/8"), Ok("10.0.0.0/8".parse().expect("net")));
        assert_eq!(parse_network(" 127.0.0.1 "), Ok("127.0.0.1/32".parse().expect("net")));
        assert_eq!(parse_network("::1"), Ok("::1/128".parse().expect("net")));
        assert_eq!(parse_network("2001:db8::/32"), Ok("2001:db8::/32".parse().expect("net")));
        for bad in ["", "10.0.0.0/33", "localhost", "10.0.0/8", "::1/129", "1.2.3.4/"] {
            assert!(parse_network(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_untrusted_peer_s_headers_are_ignored() {
        assert_eq!(xff("192.0.2.7:1", &["198.51.100.1"], &["10.0.0.0/8"]), addr("192.0.2.7:1"));
        assert_eq!(fwd("192.0.2.7:1", &["for=198.51.100.1"], &["10.0.0.0/8"]), addr("192.0.2.7:1"));
        assert_eq!(xff("192.0.2.7:1", &["198.51.100.1"], &[]), addr("192.0.2.7:1"));
    }

    #[test]
    fn a_trusted_peer_names_the_client() {
        assert_eq!(xff(PROXY, &["198.51.100.1"], &["10.0.0.0/8"]), addr("198.51.100.1:0"));
        assert_eq!(xff(PROXY, &[" 198.51.100.1:4711 "], &["10.0.0.0/8"]), addr("198.51.100.1:4711"));
        // Without a header the peer is all there is.
        assert_eq!(xff(PROXY, &[], &["10.0.0.0/8"]), addr(PROXY));
    }

    /// A client that sends its own header adds entries to the left of what the proxy
    /// appended; the walk stops at the proxy's entry.
    #[test]
    fn a_client_cannot_spoof_through_the_proxy() {
        let trusted = ["10.0.0.0/8"];
        assert_eq!(xff(PROXY, &["10.0.0.9, 203.0.113.5"], &trusted), addr("203.0.113.5:0"));
        assert_eq!(xff(PROXY, &["1.1.1.1, 2.2.2.2, 203.0.113.5"], &trusted), addr("203.0.113.5:0"));
        assert_eq!(xff(PROXY, &["garbage", "203.0.113.5"], &trusted), addr("203.0.113.5:0"));
        assert_eq!(fwd(PROXY, &["for=10.0.0.9, for=203.0.113.5"], &trusted), addr("203.0.113.5:0"));
        // The header the server does not read passes through the proxy as the client wrote it.
        let mut headers = HeaderMap::new();
        headers.insert("forwarded", http::HeaderValue::from_static("for=10.0.0.9"));
        headers.insert("x-forwarded-for", http::HeaderValue::from_static("203.0.113.5"));
        let found = client_address(addr(PROXY), &headers, &nets(&trusted), ForwardedHeader::XForwardedFor);
        assert_eq!(found, addr("203.0.113.5:0"));
    }

    #[test]
    fn many_hops_are_walked_past_every_trusted_proxy() {
        let trusted = ["10.0.0.0/8", "192.168.0.0/16"];
        let chain = "203.0.113.5, 10.9.9.9, 192.168.1.1, 10.0.0.2";
        assert_eq!(xff(PROXY, &[chain], &trusted), addr("203.0.113.5:0"));
        // A long chain of proxies and one client at its left end.
        let long = std::iter::once("203.0.113.5".to_owned())
            .chain((0..200).map(|i| format!("10.0.{}.{}", i / 250, i % 250)))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(xff(PROXY, &[&long], &trusted), addr("203.0.113.5:0"));
        // Every entry a proxy: the request began inside, at the leftmost one.
        assert_eq!(xff(PROXY, &["10.1.1.1, 10.2.2.2"], &trusted), addr("10.1.1.1:0"));
    }

    #[test]
    fn several_header_lines_are_one_list_in_order() {
        let trusted = ["10.0.0.0/8"];
        assert_eq!(xff(PROXY, &["198.51.100.1", "203.0.113.5, 10.0.0.3"], &trusted), addr("203.0.113.5:0"));
        assert_eq!(xff(PROXY, &["198.51.100.1", "10.0.0.3"], &trusted), addr("198.51.100.1:0"));
        assert_eq!(fwd(PROXY, &["for=198.51.100.1", "for=10.0.0.3;proto=https"], &trusted), addr("198.51.100.1:0"));
    }

    #[test]
    fn ipv6_with_and_without_brackets_and_ports() {
        let trusted = ["10.0.0.0/8", "fd00::/8"];
        assert_eq!(xff(PROXY, &["2001:db8::1"], &trusted), addr("[2001:db8::1]:0"));
        assert_eq!(xff(PROXY, &["[2001:db8::1]:4711"], &trusted), addr("[2001:db8::1]:4711"));
        assert_eq!(xff(PROXY, &["[2001:db8::1]"], &trusted), addr("[2001:db8::1]:0"));
        assert_eq!(xff("[fd00::5]:80", &["2001:db8::1, fd00::9"], &trusted), addr("[2001:db8::1]:0"));
        assert_eq!(fwd(PROXY, &[r#"for="[2001:db8::1]:4711""#], &trusted), addr("[2001:db8::1]:4711"));
        assert_eq!(fwd(PROXY, &[r#"For="[2001:db8::1]""#], &trusted), addr("[2001:db8::1]:0"));
        assert_eq!(fwd(PROXY, &[r#"for="192.0.2.43:47011""#], &trusted), addr("192.0.2.43:47011"));
        // A dual-stack listener reports an IPv4 proxy as ::ffff:a.b.c.d.
        assert_eq!(xff("[::ffff:10.0.0.1]:80", &["198.51.100.1"], &trusted), addr("198.51.100.1:0"));
    }

    #[test]
    fn rfc_7239_examples_and_parameters() {
        let trusted = ["10.0.0.0/8"];
        // §4 and §7.1 examples.
        assert_eq!(fwd(PROXY, &["for=192.0.2.60;proto=http;by=203.0.113.43"], &trusted), addr("192.0.2.60:0"));
        assert_eq!(fwd(PROXY, &["for=192.0.2.43, for=198.51.100.17"], &trusted), addr("198.51.100.17:0"));
        assert_eq!(fwd(PROXY, &["proto=https; for = 192.0.2.43 ; by=_x"], &trusted), addr("192.0.2.43:0"));
        assert_eq!(fwd(PROXY, &[r#"for="192.0.2.43:_hidden""#], &trusted), addr("192.0.2.43:0"));
        assert_eq!(fwd(PROXY, &[r#"for="\1\9\2.0.2.43""#], &trusted), addr("192.0.2.43:0"));
        assert_eq!(forwarded_for("for=a,,for=b").map(|v| v.len()), Some(2));
        assert_eq!(fwd(PROXY, &["for=203.0.113.5,, "], &trusted), addr("203.0.113.5:0"));
    }

    #[test]
    fn hidden_hops_and_garbage_fall_back_to_the_peer() {
        let trusted = ["10.0.0.0/8"];
        for line in ["unknown", "_hidden", "not an address", "203.0.113.5, unknown", "999.1.1.1", "[10.0.0.5]"] {
            assert_eq!(xff(PROXY, &[line], &trusted), addr(PROXY), "{line:?}");
        }
        for line in [
            "for=unknown",
            "for=_gazonk",
            "for=\"_gazonk\"",
            "for=203.0.113.5, proto=https",
            "for=",
            "for=\"unterminated",
            "for=1.2.3.4 garbage",
            "for=1.2.3.4;for=5.6.7.8",
            "=1.2.3.4",
            "f(r=1.2.3.4",
            "for=[2001:db8::1]",
        ] {
            assert_eq!(fwd(PROXY, &[line], &trusted), addr(PROXY), "{line:?}");
        }
        // A hidden hop left of the client does not matter: the walk stopped before it.
        assert_eq!(xff(PROXY, &["unknown, 203.0.113.5"], &trusted), addr("203.0.113.5:0"));
        assert_eq!(xff(PROXY, &[",, 203.0.113.5 ,"], &trusted), addr("203.0.113.5:0"));
        // A value that is not visible ASCII.
        let latin1: &[u8] = b"203.0.113.5\xe9";
        assert_eq!(client(PROXY, ForwardedHeader::XForwardedFor, &[latin1], &trusted), addr(PROXY));
    }

    /// A request to the router's endpoint from `peer` (as axum's `ConnectInfo`) with
    /// `X-Forwarded-For: xff`, in legacy session `session` when given.
    fn request(peer: &str, xff: &str, session: Option<&str>, body: &str) -> http::Request<axum::body::Body> {
        let mut rb = http::Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("x-forwarded-for", xff);
        if let Some(id) = session {
            rb = rb.header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25");
        }
        let mut req = rb.body(axum::body::Body::from(body.to_owned())).expect("a request");
        req.extensions_mut().insert(axum::extract::ConnectInfo(addr(peer)));
        req
    }

    /// Under [`router`](super::super::router), with one legacy session per client: two clients
    /// behind one trusted proxy keep a session each; behind an untrusted one the second
    /// client's session closes the first one's.
    #[tokio::test]
    async fn under_a_router_each_forwarded_client_has_its_own_session_quota() {
        use super::super::{HttpConfig, SessionLimits, router};
        const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        for (trusted, kept) in [(&["10.0.0.0/8"][..], true), (&[][..], false)] {
            let server = crate::server::Server::builder("t", "1").groups(["none"]).build().expect("builds");
            let config = HttpConfig::default()
                .session_limits(SessionLimits::default().per_client(1))
                .trusted_proxies(nets(trusted));
            let mut app = router(server, config);
            let mut open = async |client: &str| {
                let Ok(resp) = tower::ServiceExt::oneshot(&mut app, request(PROXY, client, None, INIT)).await;
                assert_eq!(resp.status(), 200);
                resp.headers()["mcp-session-id"].to_str().expect("ASCII").to_owned()
            };
            let first = open("203.0.113.5").await;
            open("198.51.100.1, 203.0.113.6").await;
            let ping = request(PROXY, "203.0.113.5", Some(&first), PING);
            let Ok(resp) = tower::ServiceExt::oneshot(&mut app, ping).await;
            let expected = if kept { 200 } else { 404 };
            assert_eq!(resp.status(), expected, "trusted: {trusted:?}");
        }
    }

    #[test]
    fn nodes() {
        assert_eq!(node("192.0.2.1:80"), Some(addr("192.0.2.1:80")));
        assert_eq!(node("[::1]:_x"), Some(addr("[::1]:0")));
        assert_eq!(node("192.0.2.1:_x"), Some(addr("192.0.2.1:0")));
        assert_eq!(node("[192.0.2.1]"), None);
        assert_eq!(node("192.0.2.1:99999"), None);
        assert_eq!(node("[::1]:"), None);
        assert_eq!(node("_"), None);
    }
}
