use super::respond;
use crate::jsonrpc::McpError;
use axum::response::Response;
use http::HeaderMap;

/// Which `Host` and `Origin` values the HTTP transport accepts: the defence against DNS
/// rebinding (spec digest §5.1). Hosts are compared without the port, case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    hosts: Vec<String>,
    any: bool,
}

impl HostPolicy {
    /// Accepts `localhost`, `127.0.0.1` and `[::1]` on any port (the default).
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
        self.any || self.hosts.iter().any(|h| strip_port(host_port).eq_ignore_ascii_case(h))
    }
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        // IPv6 literal: keep the brackets, drop ":port".
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit())).map_or(host, |(h, _)| h)
}

/// The 403 response for a request whose `Host` or (when present) `Origin` is not allowed, with
/// an id-less JSON-RPC error naming the header; `None` when both are fine.
pub(crate) fn reject(policy: &HostPolicy, headers: &HeaderMap) -> Option<Response> {
    let forbidden = |what: &str| {
        respond::error(None, &McpError::invalid_request(format!("{what} is not allowed")).with_http_status(403))
    };
    if let Some(host) = headers.get(http::header::HOST) {
        let ok = host.to_str().is_ok_and(|h| policy.allows_host(h));
        if !ok {
            return Some(forbidden("Host"));
        }
    }
    if let Some(origin) = headers.get(http::header::ORIGIN) {
        let ok = origin.to_str().ok().and_then(|o| o.split_once("://")).is_some_and(|(scheme, rest)| {
            matches!(scheme, "http" | "https") && !rest.contains('/') && policy.allows_host(rest)
        });
        if !ok {
            return Some(forbidden("Origin"));
        }
    }
    None
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
    }
}
