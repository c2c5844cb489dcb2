use super::respond;
use crate::jsonrpc::McpError;
use axum::response::Response;
use http::HeaderMap;

/// Which `Host` and `Origin` values the HTTP transport accepts: the defence against DNS rebinding
/// ([security](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).
/// Hosts are compared without the port, case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    hosts: Vec<String>,
    any: bool,
}

impl HostPolicy {
    /// Accepts `localhost`, `127.0.0.1` and `\[::1\]` on any port (the default). A request whose
    /// host (the `Host` header, or on HTTP/2 the `:authority` pseudo-header) is another, or
    /// with an `Origin` that is not `http(s)://` plus an allowed host and optional port (so also
    /// `Origin: null`), is refused with 403 and `-32600`; one with no host at all with 400.
    pub fn localhost() -> Self {
        HostPolicy { hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()], any: false }
    }

    /// Accepts the given host names (without ports; IPv6 in brackets, e.g. `[::1]`).
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(hosts: I) -> Self {
        HostPolicy { hosts: hosts.into_iter().map(|h| h.into().to_ascii_lowercase()).collect(), any: false }
    }

    /// Accepts every host and origin. Only for servers behind a proxy that checks them itself.
    pub fn any() -> Self {
        HostPolicy { hosts: Vec::new(), any: true }
    }

    fn allows_host(&self, host_port: &str) -> bool {
        self.any || split_host(host_port).is_some_and(|h| self.hosts.iter().any(|a| h.eq_ignore_ascii_case(a)))
    }
}

/// The host part of `host[:port]` (IPv6 in brackets); `None` unless the rest is empty or a
/// valid port (1–5 digits, at most 65535).
fn split_host(host_port: &str) -> Option<&str> {
    let (host, rest) = if host_port.starts_with('[') {
        let end = host_port.find(']')?;
        (&host_port[..=end], &host_port[end + 1..])
    } else {
        match host_port.rsplit_once(':') {
            Some((h, _)) => (h, &host_port[h.len()..]),
            None => (host_port, ""),
        }
    };
    let port_ok = match rest.strip_prefix(':') {
        None => rest.is_empty(),
        Some(p) => {
            (1..=5).contains(&p.len())
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|n| n <= 65535)
        }
    };
    (port_ok && !host.is_empty()).then_some(host)
}

/// The refusal of a request whose host or (when present) `Origin` is not allowed: 403 with an
/// id-less JSON-RPC `-32600` naming the header, the value and what the server accepts; a request
/// with no host at all is 400 (RFC 9112 §3.2: an HTTP/1.1 request without `Host` is malformed).
/// `None` when both are fine.
///
/// The host is the `Host` header or, when there is none, the request's authority: HTTP/2
/// carries the host in its `:authority` pseudo-header, which arrives as the URI's authority.
pub(crate) fn reject(policy: &HostPolicy, headers: &HeaderMap, uri: &http::Uri) -> Option<Response> {
    if policy.any {
        return None;
    }
    // When both a `Host` header and an authority came (HTTP/2 with both, or an absolute-form
    // HTTP/1.1 target), both must pass: otherwise an allowed one could vouch for a foreign one.
    let header = headers.get(http::header::HOST);
    let authority = uri.authority().map(|a| a.as_str());
    if header.is_none() && authority.is_none() {
        let err = McpError::invalid_request("missing Host header: every request must name the host it is sent to");
        return Some(respond::error(400, None, &err));
    }
    let header_ok = header.is_none_or(|h| h.to_str().is_ok_and(|h| policy.allows_host(h)));
    let refused_host = if !header_ok {
        header.map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned())
    } else {
        authority.filter(|a| !policy.allows_host(a)).map(str::to_owned)
    };
    if let Some(host) = refused_host {
        return Some(policy.forbidden("Host", &host));
    }
    if let Some(origin) = headers.get(http::header::ORIGIN) {
        let ok = origin.to_str().ok().and_then(|o| o.split_once("://")).is_some_and(|(scheme, rest)| {
            matches!(scheme, "http" | "https") && !rest.contains('/') && policy.allows_host(rest)
        });
        if !ok {
            return Some(policy.forbidden("Origin", &String::from_utf8_lossy(origin.as_bytes())));
        }
    }
    None
}

impl HostPolicy {
    /// 403 for `header: value`, saying what is accepted and where that is configured.
    fn forbidden(&self, header: &str, value: &str) -> Response {
        let what = if header == "Origin" { "http(s)://HOST[:PORT] with HOST one of" } else { "one of" };
        let err = McpError::invalid_request(format!(
            "{header} {value:?} is not allowed (a DNS-rebinding defence): this server accepts {what} {} \
             (HttpConfig::hosts)",
            self.hosts.join(", ")
        ));
        respond::error(403, None, &err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_compared_without_ports() {
        let p = HostPolicy::localhost();
        assert!(p.allows_host("localhost:3000"));
        assert!(p.allows_host("127.0.0.1"));
        assert!(p.allows_host("[::1]:8080"));
        assert!(!p.allows_host("evil.example.com"));
        assert!(!p.allows_host("localhost.evil.com:80"));
        assert!(!p.allows_host("[::1]evil.com"));
        assert!(!p.allows_host("localhost:99999999"));
        assert!(!p.allows_host("localhost:"));
        assert!(!p.allows_host(":80"));
        assert!(p.allows_host("LOCALHOST:80"));
    }

    #[test]
    fn without_a_host_header_the_authority_is_checked() {
        let p = HostPolicy::localhost();
        let none = HeaderMap::new();
        let local: http::Uri = "http://127.0.0.1:8080/mcp".parse().expect("a URI");
        let evil: http::Uri = "http://evil.example.com/mcp".parse().expect("a URI");
        let bare: http::Uri = "/mcp".parse().expect("a URI");
        assert!(reject(&p, &none, &local).is_none());
        assert_eq!(reject(&p, &none, &evil).map(|r| r.status().as_u16()), Some(403));
        // No host at all is a malformed request, not a foreign one.
        assert_eq!(reject(&p, &none, &bare).map(|r| r.status().as_u16()), Some(400));
        // With both, both must pass.
        let mut evil_host = HeaderMap::new();
        evil_host.insert(http::header::HOST, http::HeaderValue::from_static("evil.example.com"));
        assert_eq!(reject(&p, &evil_host, &local).map(|r| r.status().as_u16()), Some(403));
        let mut local_host = HeaderMap::new();
        local_host.insert(http::header::HOST, http::HeaderValue::from_static("localhost:80"));
        assert_eq!(reject(&p, &local_host, &evil).map(|r| r.status().as_u16()), Some(403));
        assert!(reject(&p, &local_host, &local).is_none());
    }
}
