//! The entries of a [`HostPolicy`](super::HostPolicy): which `Host` and which `Origin` values a
//! server accepts, parsed from the text an operator writes on the command line or in code.

use std::fmt;
use std::str::FromStr;

/// One entry of the `Host` allow-list
/// ([DNS rebinding](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#security-warning)),
/// parsed from text with [`FromStr`]:
///
/// | text | matches a request `Host` (or HTTP/2 `:authority`) of |
/// |---|---|
/// | `mcp.example.com` | `mcp.example.com` on any port (or none) |
/// | `mcp.example.com:8443` | `mcp.example.com:8443` only |
/// | `*.example.com` | any name ending in `.example.com` (`a.example.com`, `a.b.example.com`), any port; not `example.com` itself |
/// | `*.example.com:443` | the same, only with port 443 |
/// | `10.0.0.5`, `[2001:db8::1]`, `[::1]:3000` | that IP address (IPv6 in brackets), any port or the one given |
/// | `*` | every host |
///
/// Names are compared case-insensitively (RFC 3986 §3.2.2) and a port is compared as written
/// in the request: a `Host` without a port matches no entry that names one.
///
/// Errors ([`PatternError`]): empty text; a scheme, path, user or query (`https://a.example`,
/// `a.example/mcp`); characters a host name cannot hold; a `*` anywhere but as the whole text
/// or as a leading `*.` label; a port that is not 1–65535.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPattern {
    host: HostMatch,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HostMatch {
    Any,
    /// A lower-cased name or IP address (IPv6 with its brackets).
    Exact(String),
    /// A lower-cased suffix with its leading dot: `.example.com` for `*.example.com`.
    Subdomains(String),
}

/// One entry of the `Origin` allow-list, parsed from text with [`FromStr`]: browsers send
/// `Origin: SCHEME://HOST[:PORT]` with every POST (WHATWG Fetch), so this list says which web
/// pages may call the server.
///
/// | text | matches `Origin` |
/// |---|---|
/// | `https://app.example.com` | exactly that origin (no port: the scheme's default, as browsers write it) |
/// | `http://localhost:6274` | that origin with that port |
/// | `https://*.example.com` | any `https` origin whose host ends in `.example.com`, without a port |
/// | `null` | the opaque origin `null` (sandboxed frames, `file:` pages); refused unless listed |
/// | `*` | every origin |
///
/// The scheme and host are compared case-insensitively; the port as written.
///
/// Errors ([`PatternError`]): no `SCHEME://`, a path, query or fragment (`https://a.example/`),
/// a host as [`HostPattern`] refuses it (`*` alone included: write `*` for the whole origin).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OriginPattern {
    kind: OriginMatch,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum OriginMatch {
    Any,
    Null,
    /// A lower-cased scheme and a host pattern that is never [`HostMatch::Any`].
    Site {
        scheme: String,
        host: HostPattern,
    },
}

/// Why a [`HostPattern`] or [`OriginPattern`] could not be parsed: the text and what is wrong
/// with it, in a sentence that ends in an example of the right form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {reason}")]
pub struct PatternError {
    text: String,
    reason: String,
}

impl PatternError {
    fn new(text: &str, reason: impl Into<String>) -> Self {
        PatternError { text: text.to_owned(), reason: reason.into() }
    }
}

impl FromStr for HostPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<Self, PatternError> {
        let s = text.trim();
        if s.is_empty() {
            return Err(PatternError::new(text, "an empty host; write a name such as mcp.example.com"));
        }
        if s == "*" {
            return Ok(HostPattern { host: HostMatch::Any, port: None });
        }
        if s.contains("://") {
            return Err(PatternError::new(
                text,
                "a host has no scheme; write mcp.example.com (origins go in the allowed origins)",
            ));
        }
        if let Some(c) = s.chars().find(|c| matches!(c, '/' | '?' | '#' | '@')) {
            return Err(PatternError::new(text, format!("a host has no {c:?}; write mcp.example.com[:PORT]")));
        }
        let (host, port) = split_port(s).ok_or_else(|| {
            PatternError::new(text, "not HOST or HOST:PORT with a port of 1-65535; write e.g. mcp.example.com:8443")
        })?;
        let host = host.to_ascii_lowercase();
        let host = if let Some(suffix) = host.strip_prefix("*.") {
            check_name(text, suffix)?;
            HostMatch::Subdomains(format!(".{suffix}"))
        } else {
            check_name(text, &host)?;
            HostMatch::Exact(host)
        };
        Ok(HostPattern { host, port })
    }
}

/// Accepts a DNS name, an IPv4 address, or an IPv6 address in brackets.
fn check_name(text: &str, host: &str) -> Result<(), PatternError> {
    if let Some(inner) = host.strip_prefix('[') {
        let ok = inner.strip_suffix(']').is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok());
        return if ok {
            Ok(())
        } else {
            Err(PatternError::new(text, "not an IPv6 address in brackets; write e.g. [2001:db8::1]"))
        };
    }
    if host.contains('*') {
        return Err(PatternError::new(
            text,
            "a `*` stands only as the whole host or as the first label; write *.example.com",
        ));
    }
    let valid = !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if valid {
        Ok(())
    } else {
        Err(PatternError::new(
            text,
            "not a host name (letters, digits, `-`, `_` in dot-separated labels) or IP address; write e.g. mcp.example.com",
        ))
    }
}

/// `host[:port]` split, the port checked (1–65535); IPv6 keeps its brackets. `None` for a bad
/// port or an unclosed bracket.
pub(crate) fn split_port(s: &str) -> Option<(&str, Option<u16>)> {
    let (host, rest) = if s.starts_with('[') {
        let end = s.find(']')?;
        (&s[..=end], &s[end + 1..])
    } else {
        // A byte scan: `rsplit_once` costs more than the whole check on names this short.
        match s.bytes().rposition(|b| b == b':') {
            Some(colon) => (&s[..colon], &s[colon..]),
            None => (s, ""),
        }
    };
    let port = match rest.strip_prefix(':') {
        None if rest.is_empty() => None,
        None => return None,
        Some(p) => Some(parse_port(p)?),
    };
    (!host.is_empty()).then_some((host, port))
}

fn parse_port(p: &str) -> Option<u16> {
    if !(1..=5).contains(&p.len()) {
        return None;
    }
    let mut port = 0u32;
    for b in p.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        port = port * 10 + u32::from(b - b'0');
    }
    u16::try_from(port).ok().filter(|n| *n != 0)
}

impl HostPattern {
    /// `*`: every host.
    pub fn any() -> Self {
        HostPattern { host: HostMatch::Any, port: None }
    }

    /// Whether the request authority `host_port` (`Host` header or `:authority`, with an
    /// optional port; IPv6 in brackets) is one this entry accepts. A malformed value is
    /// accepted by `*` alone.
    pub(crate) fn matches(&self, host_port: &str) -> bool {
        self.matches_split(split_port(host_port))
    }

    /// [`matches`](Self::matches) for an authority already split by [`split_port`], so that
    /// a list of patterns splits it once.
    pub(crate) fn matches_split(&self, split: Option<(&str, Option<u16>)>) -> bool {
        if self.host == HostMatch::Any {
            return true;
        }
        let Some((host, port)) = split else { return false };
        if self.port.is_some() && self.port != port {
            return false;
        }
        match &self.host {
            HostMatch::Any => true,
            HostMatch::Exact(name) => host.eq_ignore_ascii_case(name),
            HostMatch::Subdomains(suffix) => {
                host.len() > suffix.len()
                    && host.is_char_boundary(host.len() - suffix.len())
                    && host[host.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
            }
        }
    }

    /// True for `*`.
    pub(crate) fn is_any(&self) -> bool {
        self.host == HostMatch::Any
    }
}

impl fmt::Display for HostPattern {
    /// The canonical text: lower case, `*.` for subdomains, `:PORT` when one was given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostMatch::Any => f.write_str("*")?,
            HostMatch::Exact(name) => f.write_str(name)?,
            HostMatch::Subdomains(suffix) => write!(f, "*{suffix}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

impl FromStr for OriginPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<Self, PatternError> {
        let s = text.trim();
        if s == "*" {
            return Ok(OriginPattern { kind: OriginMatch::Any });
        }
        if s.eq_ignore_ascii_case("null") {
            return Ok(OriginPattern { kind: OriginMatch::Null });
        }
        let (scheme, rest) = s.split_once("://").ok_or_else(|| {
            PatternError::new(text, "an origin is SCHEME://HOST[:PORT]; write e.g. https://app.example.com")
        })?;
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !scheme_ok {
            return Err(PatternError::new(text, "not a URI scheme before `://`; write e.g. https://app.example.com"));
        }
        if rest.contains(['/', '?', '#']) {
            return Err(PatternError::new(
                text,
                "an origin has no path, query or fragment; write e.g. https://app.example.com",
            ));
        }
        let host: HostPattern = rest.parse().map_err(|e: PatternError| PatternError::new(text, e.reason))?;
        if host.is_any() {
            return Err(PatternError::new(text, "write `*` alone to allow every origin"));
        }
        Ok(OriginPattern { kind: OriginMatch::Site { scheme: scheme.to_ascii_lowercase(), host } })
    }
}

impl OriginPattern {
    /// `*`: every origin.
    pub fn any() -> Self {
        OriginPattern { kind: OriginMatch::Any }
    }

    /// Whether the `Origin` header value `origin` is one this entry accepts.
    pub(crate) fn matches(&self, origin: &str) -> bool {
        match &self.kind {
            OriginMatch::Any => true,
            OriginMatch::Null => origin == "null",
            OriginMatch::Site { scheme, host } => match origin.split_once("://") {
                Some((s, authority)) if s.eq_ignore_ascii_case(scheme) && !authority.contains(['/', '?', '#']) => {
                    // An origin without a port is the scheme's default: only an entry without
                    // a port takes it, as written.
                    let has_port = split_port(authority).is_some_and(|(_, port)| port.is_some());
                    (host.port.is_some() == has_port) && host.matches(authority)
                }
                _ => false,
            },
        }
    }
}

impl fmt::Display for OriginPattern {
    /// The canonical text: `*`, `null` or `scheme://host[:port]` in lower case.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            OriginMatch::Any => f.write_str("*"),
            OriginMatch::Null => f.write_str("null"),
            OriginMatch::Site { scheme, host } => write!(f, "{scheme}://{host}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(s: &str) -> HostPattern {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn origin(s: &str) -> OriginPattern {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// `split_port` as it was written first, with the standard library's splitting and parsing.
    fn split_port_by_std(s: &str) -> Option<(&str, Option<u16>)> {
        let (host, rest) = if s.starts_with('[') {
            let end = s.find(']')?;
            (&s[..=end], &s[end + 1..])
        } else {
            match s.rsplit_once(':') {
                Some((h, _)) => (h, &s[h.len()..]),
                None => (s, ""),
            }
        };
        let port = match rest.strip_prefix(':') {
            None if rest.is_empty() => None,
            None => return None,
            Some(p) if (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => {
                Some(p.parse::<u16>().ok().filter(|n| *n != 0)?)
            }
            Some(_) => return None,
        };
        (!host.is_empty()).then_some((host, port))
    }

    #[test]
    fn split_port_splits_as_the_standard_library_does() {
        let hosts = ["", "a", "localhost", "127.0.0.1", "[::1]", "[::1", "é.example", "例", "a:b", "[::1]x"];
        let ports = [
            "", ":", ":0", ":1", ":80", ":00080", ":65535", ":65536", ":99999", ":100000", ":+1", ":-1", ": 1", ":1a",
            "::80", ":٣",
        ];
        for host in hosts {
            for port in ports {
                let text = format!("{host}{port}");
                assert_eq!(split_port(&text), split_port_by_std(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn exact_names_match_on_any_port_and_in_any_case() {
        let p = host("MCP.example.com");
        assert!(p.matches("mcp.example.com"));
        assert!(p.matches("mcp.example.com:443"));
        assert!(p.matches("Mcp.Example.Com:8080"));
        assert!(!p.matches("mcp.example.com.evil.net"));
        assert!(!p.matches("evil-mcp.example.com"));
        assert!(!p.matches("mcp.example.com:99999"));
        assert!(!p.matches("mcp.example.com:"));
        assert_eq!(p.to_string(), "mcp.example.com");
    }

    #[test]
    fn a_port_in_the_entry_must_be_the_request_s() {
        let p = host("mcp.example.com:8443");
        assert!(p.matches("mcp.example.com:8443"));
        assert!(!p.matches("mcp.example.com"));
        assert!(!p.matches("mcp.example.com:443"));
        let v6 = host("[::1]:3000");
        assert!(v6.matches("[::1]:3000"));
        assert!(!v6.matches("[::1]:3001"));
        assert!(!v6.matches("[::2]:3000"));
    }

    #[test]
    fn a_wildcard_takes_subdomains_only() {
        let p = host("*.example.com");
        assert!(p.matches("a.example.com"));
        assert!(p.matches("a.b.example.com:80"));
        assert!(!p.matches("example.com"));
        assert!(!p.matches(".example.com"));
        assert!(!p.matches("evilexample.com"));
        assert!(!p.matches("a.example.com.evil.net"));
        assert_eq!(p.to_string(), "*.example.com");
        assert!(host("*").matches("anything:1"));
        assert!(host("*").matches("not a host"));
    }

    #[test]
    fn bad_entries_say_what_to_write() {
        for (text, says) in [
            ("", "empty"),
            ("https://mcp.example.com", "no scheme"),
            ("mcp.example.com/mcp", "no '/'"),
            ("user@mcp.example.com", "no '@'"),
            ("mcp.example.com:0", "1-65535"),
            ("mcp.example.com:70000", "1-65535"),
            ("mcp.example.com:http", "1-65535"),
            ("a*.example.com", "first label"),
            ("*.*.example.com", "first label"),
            ("exa mple.com", "not a host name"),
            ("a..b", "not a host name"),
            ("[::zz]", "IPv6"),
            ("[::1", "HOST:PORT"),
        ] {
            let err = text.parse::<HostPattern>().expect_err(text).to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn origins_match_scheme_host_and_port_as_browsers_write_them() {
        let p = origin("https://App.example.com");
        assert!(p.matches("https://app.example.com"));
        assert!(p.matches("HTTPS://APP.EXAMPLE.COM"));
        assert!(!p.matches("http://app.example.com"));
        assert!(!p.matches("https://app.example.com:8443"));
        assert!(!p.matches("https://app.example.com/"));
        assert!(!p.matches("https://app.example.com.evil.net"));
        let local = origin("http://localhost:6274");
        assert!(local.matches("http://localhost:6274"));
        assert!(!local.matches("http://localhost"));
        let wild = origin("https://*.example.com");
        assert!(wild.matches("https://a.example.com"));
        assert!(!wild.matches("https://example.com"));
        assert!(origin("*").matches("https://anything"));
        assert!(origin("null").matches("null"));
        assert!(!origin("https://a.example").matches("null"));
        assert_eq!(origin("HTTP://LOCALHOST:6274").to_string(), "http://localhost:6274");
    }

    #[test]
    fn bad_origins_say_what_to_write() {
        for (text, says) in [
            ("app.example.com", "SCHEME://"),
            ("https://app.example.com/", "no path"),
            ("https://*", "`*` alone"),
            ("1http://a", "scheme"),
            ("https://a b", "not a host name"),
        ] {
            let err = text.parse::<OriginPattern>().expect_err(text).to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }
}
