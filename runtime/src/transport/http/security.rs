use super::host_patterns::{HostPattern, OriginPattern};
use super::respond;
use crate::jsonrpc::McpError;
use axum::response::Response;
use http::HeaderMap;
use std::net::SocketAddr;
use std::sync::OnceLock;

/// Which `Host` and `Origin` values the HTTP transport accepts: the defence against DNS
/// rebinding the transport spec asks for
/// ([security warning](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#security-warning)).
///
/// A request passes when its host (the `Host` header, and on HTTP/2 or with an absolute
/// target also the authority: both must pass) matches a [`HostPattern`] of the policy, and, when
/// it carries an `Origin`, that origin is allowed: it matches an [`OriginPattern`] of the
/// policy, or its `host[:port]` matches one of the policy's named host entries (`*` is no such
/// entry, so a policy open to every host still refuses foreign web pages). A refused request
/// gets 403 with an id-less JSON-RPC `-32600` naming the header, its value, what is accepted and
/// the setting that widens it; a request with no host at all gets 400.
///
/// | policy | hosts | origins |
/// |---|---|---|
/// | [`automatic`](Self::automatic) (the default) | serving on a loopback address, or through [`router`](super::router): `localhost`, `127.0.0.1`, `[::1]`; on any other address: every host | those of the named hosts, plus [`origins`](Self::origins) |
/// | [`localhost`](Self::localhost) | `localhost`, `127.0.0.1`, `[::1]` | those of the named hosts, plus [`origins`](Self::origins) |
/// | [`hosts`](Self::hosts)`(list)` | the list | those of the named hosts, plus [`origins`](Self::origins) |
/// | [`any`](Self::any) | every host | every origin |
///
/// On the command line: `--allowed-hosts` and `--allowed-origins` (environment
/// `SWITCHYARD_ALLOWED_HOSTS`, `SWITCHYARD_ALLOWED_ORIGINS`), comma-separated.
///
/// ```
/// use switchyard::transport::http::{HostPattern, HostPolicy, OriginPattern, PatternError};
///
/// # fn main() -> Result<(), PatternError> {
/// let hosts: Vec<HostPattern> = ["mcp.example.com", "*.internal.example.com:8080"]
///     .into_iter()
///     .map(str::parse)
///     .collect::<Result<_, _>>()?;
/// let policy = HostPolicy::hosts(hosts).origins(["https://app.example.com".parse::<OriginPattern>()?]);
/// # let _ = policy;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    hosts: Hosts,
    origins: Vec<OriginPattern>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Hosts {
    /// Localhost on a loopback bind (or where the bind is unknown), every host elsewhere.
    Automatic,
    List(Vec<HostPattern>),
}

impl Default for HostPolicy {
    /// [`HostPolicy::automatic`].
    fn default() -> Self {
        HostPolicy::automatic()
    }
}

impl HostPolicy {
    /// The default: DNS-rebinding protection where it matters. A server listening on a
    /// loopback address (`127.0.0.0/8`, `::1`), which a web page can reach through a rebound
    /// name, accepts only the `localhost` names ([`localhost`](Self::localhost)); a server
    /// listening on any other address (e.g. `0.0.0.0` in a container) accepts every `Host`,
    /// and web pages only from [`origins`](Self::origins). Under [`router`](super::router),
    /// which does not know where it is served, this is `localhost`.
    pub fn automatic() -> Self {
        HostPolicy { hosts: Hosts::Automatic, origins: Vec::new() }
    }

    /// Accepts `localhost`, `127.0.0.1` and `[::1]` on any port, and web pages served from
    /// them.
    pub fn localhost() -> Self {
        HostPolicy { hosts: Hosts::List(localhost_patterns().to_vec()), origins: Vec::new() }
    }

    /// Accepts the hosts `patterns` match (see [`HostPattern`] for the forms, `*` for every
    /// host), and web pages served from the named ones. An empty list accepts no host.
    pub fn hosts(patterns: impl IntoIterator<Item = HostPattern>) -> Self {
        HostPolicy { hosts: Hosts::List(patterns.into_iter().collect()), origins: Vec::new() }
    }

    /// Accepts every host and every origin: for servers behind a proxy that checks both itself.
    pub fn any() -> Self {
        HostPolicy::hosts([HostPattern::any()]).origins([OriginPattern::any()])
    }

    /// Also accepts requests from web pages whose `Origin` one of `patterns` matches (see
    /// [`OriginPattern`]; `*` for every origin), beside those of the named hosts.
    pub fn origins(mut self, patterns: impl IntoIterator<Item = OriginPattern>) -> Self {
        self.origins.extend(patterns);
        self
    }

    /// The origins added with [`origins`](Self::origins).
    #[cfg(feature = "cli")]
    pub(crate) fn listed_origins(&self) -> &[OriginPattern] {
        &self.origins
    }

    /// The policy for a server listening on `bound` (`None`: not known, as under
    /// [`router`](super::router)): [`automatic`](Self::automatic) becomes the hosts it stands
    /// for there; other policies are returned as they are.
    pub(crate) fn resolve(&self, bound: Option<SocketAddr>) -> HostPolicy {
        match self.hosts {
            Hosts::Automatic => {
                let hosts = match bound {
                    Some(addr) if !addr.ip().is_loopback() => vec![HostPattern::any()],
                    _ => localhost_patterns().to_vec(),
                };
                HostPolicy { hosts: Hosts::List(hosts), origins: self.origins.clone() }
            }
            Hosts::List(_) => self.clone(),
        }
    }

    /// True for [`automatic`](Self::automatic) before it is resolved.
    pub(crate) fn is_automatic(&self) -> bool {
        self.hosts == Hosts::Automatic
    }

    /// True when every host passes: the startup log says so for an [`automatic`](Self::automatic)
    /// policy resolved on a public address.
    pub(crate) fn accepts_every_host(&self) -> bool {
        matches!(&self.hosts, Hosts::List(list) if list.iter().any(HostPattern::is_any))
    }

    fn host_list(&self) -> &[HostPattern] {
        match &self.hosts {
            Hosts::List(list) => list,
            // Not resolved: treated as the localhost list it stands for when the bind is unknown.
            Hosts::Automatic => &[],
        }
    }

    fn allows_host(&self, host_port: &str) -> bool {
        let split = super::host_patterns::split_port(host_port);
        match &self.hosts {
            Hosts::List(list) => list.iter().any(|p| p.matches_split(split)),
            Hosts::Automatic => localhost_patterns().iter().any(|p| p.matches_split(split)),
        }
    }

    fn allows_origin(&self, origin: &str) -> bool {
        if self.origins.iter().any(|p| p.matches(origin)) {
            return true;
        }
        // A page served from an allowed host may call it: `http(s)://` plus a named host.
        let Some((scheme, authority)) = origin.split_once("://") else { return false };
        let named = |p: &HostPattern| !p.is_any() && p.matches(authority);
        let by_host = match &self.hosts {
            Hosts::List(list) => list.iter().any(named),
            Hosts::Automatic => localhost_patterns().iter().any(named),
        };
        by_host && (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
    }
}

/// `localhost`, `127.0.0.1` and `[::1]` on any port, parsed once: an unresolved automatic
/// policy (a [`router`](super::router) whose address is not known) checks every request
/// against them.
fn localhost_patterns() -> &'static [HostPattern] {
    static PATTERNS: OnceLock<Vec<HostPattern>> = OnceLock::new();
    PATTERNS.get_or_init(|| ["localhost", "127.0.0.1", "[::1]"].iter().filter_map(|h| h.parse().ok()).collect())
}

/// The refusal of a request whose host or (when present) `Origin` is not allowed: 403 with an
/// id-less JSON-RPC `-32600` naming the header, the value and what the server accepts; a request
/// with no host at all is 400 (RFC 9112 §3.2: an HTTP/1.1 request without `Host` is malformed).
/// `None` when both are fine.
///
/// The host is the `Host` header or, when there is none, the request's authority: HTTP/2
/// carries the host in its `:authority` pseudo-header, which arrives as the URI's authority.
pub(crate) fn reject(policy: &HostPolicy, headers: &HeaderMap, uri: &http::Uri) -> Option<Response> {
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
        return Some(policy.forbidden_host(&host));
    }
    if let Some(origin) = headers.get(http::header::ORIGIN)
        && !origin.to_str().is_ok_and(|o| policy.allows_origin(o))
    {
        return Some(policy.forbidden_origin(&String::from_utf8_lossy(origin.as_bytes())));
    }
    None
}

impl HostPolicy {
    /// 403 for `Host: value`, saying what is accepted and where that is configured.
    fn forbidden_host(&self, value: &str) -> Response {
        let accepted = match &self.hosts {
            Hosts::List(list) => list.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            Hosts::Automatic => "localhost, 127.0.0.1, [::1]".to_owned(),
        };
        let accepted = if accepted.is_empty() { "no host".to_owned() } else { accepted };
        let err = McpError::invalid_request(format!(
            "Host {value:?} is not allowed (a DNS-rebinding defence): this server accepts {accepted}; \
             add the name clients use with --allowed-hosts or SWITCHYARD_ALLOWED_HOSTS \
             (HttpConfig::hosts in code)"
        ));
        respond::error(403, None, &err)
    }

    /// 403 for `Origin: value`, saying what is accepted and where that is configured.
    fn forbidden_origin(&self, value: &str) -> Response {
        let mut accepted: Vec<String> = self
            .host_list()
            .iter()
            .filter(|p| !p.is_any())
            .map(|p| format!("http(s)://{p}"))
            .chain(self.origins.iter().map(ToString::to_string))
            .collect();
        if matches!(self.hosts, Hosts::Automatic) {
            accepted.insert(0, "http(s)://localhost, 127.0.0.1 or [::1]".to_owned());
        }
        let accepted = if accepted.is_empty() { "no web page".to_owned() } else { accepted.join(", ") };
        let err = McpError::invalid_request(format!(
            "Origin {value:?} is not allowed (a DNS-rebinding and cross-site defence): this server accepts \
             requests from {accepted}; allow the page's origin with --allowed-origins or \
             SWITCHYARD_ALLOWED_ORIGINS (HostPolicy::origins in code)"
        ));
        respond::error(403, None, &err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(list: &[&str]) -> HostPolicy {
        HostPolicy::hosts(list.iter().map(|h| h.parse::<HostPattern>().expect("a pattern")))
    }

    fn with(pairs: &[(http::HeaderName, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(name.clone(), http::HeaderValue::from_static(value));
        }
        h
    }

    fn status(policy: &HostPolicy, headers: &HeaderMap) -> Option<u16> {
        let bare: http::Uri = "/mcp".parse().expect("a URI");
        reject(policy, headers, &bare).map(|r| r.status().as_u16())
    }

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
        let evil_host = with(&[(http::header::HOST, "evil.example.com")]);
        assert_eq!(reject(&p, &evil_host, &local).map(|r| r.status().as_u16()), Some(403));
        let local_host = with(&[(http::header::HOST, "localhost:80")]);
        assert_eq!(reject(&p, &local_host, &evil).map(|r| r.status().as_u16()), Some(403));
        assert!(reject(&p, &local_host, &local).is_none());
        // Even `any` needs a host.
        assert_eq!(reject(&HostPolicy::any(), &none, &bare).map(|r| r.status().as_u16()), Some(400));
    }

    #[test]
    fn automatic_is_localhost_on_loopback_and_open_to_hosts_elsewhere() {
        let auto = HostPolicy::automatic();
        let loopback: SocketAddr = "127.0.0.1:3000".parse().expect("an address");
        let v6_loopback: SocketAddr = "[::1]:3000".parse().expect("an address");
        let public: SocketAddr = "0.0.0.0:3000".parse().expect("an address");
        let public_name = with(&[(http::header::HOST, "mcp.example.com")]);
        for local in [auto.resolve(Some(loopback)), auto.resolve(Some(v6_loopback)), auto.resolve(None), auto.clone()] {
            assert_eq!(status(&local, &public_name), Some(403));
            assert_eq!(status(&local, &with(&[(http::header::HOST, "localhost:3000")])), None);
        }
        let open = auto.resolve(Some(public));
        assert!(open.accepts_every_host());
        assert_eq!(status(&open, &public_name), None);
        // Every host, but no web page: a browser always sends Origin with a POST.
        let page = with(&[(http::header::HOST, "mcp.example.com"), (http::header::ORIGIN, "https://mcp.example.com")]);
        assert_eq!(status(&open, &page), Some(403));
        let listed = HostPolicy::automatic()
            .origins(["https://mcp.example.com".parse().expect("an origin")])
            .resolve(Some(public));
        assert_eq!(status(&listed, &page), None);
        // Resolving keeps an explicit policy as it is.
        assert_eq!(HostPolicy::localhost().resolve(Some(public)), HostPolicy::localhost());
    }

    #[test]
    fn origins_pass_for_named_hosts_and_listed_origins_only() {
        let p =
            hosts(&["mcp.example.com", "*.example.org"]).origins(["http://localhost:6274".parse().expect("an origin")]);
        let from = |origin: &'static str| {
            status(&p, &with(&[(http::header::HOST, "mcp.example.com"), (http::header::ORIGIN, origin)]))
        };
        assert_eq!(from("https://mcp.example.com"), None);
        assert_eq!(from("http://mcp.example.com:8080"), None);
        assert_eq!(from("https://app.example.org"), None);
        assert_eq!(from("http://localhost:6274"), None);
        assert_eq!(from("http://localhost:6275"), Some(403));
        assert_eq!(from("https://evil.example"), Some(403));
        assert_eq!(from("null"), Some(403));
        assert_eq!(from("ftp://mcp.example.com"), Some(403));
        assert_eq!(from("https://mcp.example.com/path"), Some(403));
        // `*` opens hosts, not origins.
        let star = hosts(&["*"]);
        let page = with(&[(http::header::HOST, "x"), (http::header::ORIGIN, "https://x")]);
        assert_eq!(status(&star, &page), Some(403));
        assert_eq!(status(&HostPolicy::any(), &page), None);
    }

    #[test]
    fn refusals_name_the_setting_that_widens_them() {
        let p = HostPolicy::localhost();
        let body = |r: Response| {
            let bytes = futures::executor::block_on(axum::body::to_bytes(r.into_body(), 1 << 16)).expect("a body");
            String::from_utf8(bytes.to_vec()).expect("UTF-8")
        };
        let bare: http::Uri = "/mcp".parse().expect("a URI");
        let host = reject(&p, &with(&[(http::header::HOST, "mcp.example.com")]), &bare).expect("refused");
        let text = body(host);
        assert!(text.contains("--allowed-hosts") && text.contains("SWITCHYARD_ALLOWED_HOSTS"), "{text}");
        assert!(text.contains("localhost, 127.0.0.1, [::1]"), "{text}");
        let origin =
            reject(&p, &with(&[(http::header::HOST, "localhost"), (http::header::ORIGIN, "https://evil")]), &bare)
                .expect("refused");
        let text = body(origin);
        assert!(text.contains("--allowed-origins") && text.contains("SWITCHYARD_ALLOWED_ORIGINS"), "{text}");
    }
}
