//! The rules a view and a link must follow, checked when the server is built: what one view
//! shows on its own (its URI, its CSP origins), and what only the whole dispatch table shows
//! (the linked tool and the linked view exist, the view is HTML for MCP Apps).

use crate::negotiate::MIME_TYPE;
use crate::view::AppView;
use switchyard::BuildError;
use switchyard::registry::DispatchTable;

/// One tool linked to one view, as [`Apps::link_tool`](crate::Apps::link_tool) recorded it.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) tool: String,
    pub(crate) view: String,
    pub(crate) visibility: crate::Visibility,
    pub(crate) site: String,
}

pub(crate) fn view_error(view: &AppView, reason: String) -> BuildError {
    BuildError::Invalid { kind: "resource", name: view.uri.clone(), site: format!("AppView at {}", view.site), reason }
}

/// The problems of `view` alone: a URI outside `ui://`, a CSP entry that is no origin, an
/// empty dedicated domain.
pub(crate) fn check_view(view: &AppView) -> Vec<BuildError> {
    let mut errors = Vec::new();
    if let Err(reason) = check_ui_uri(&view.uri) {
        errors.push(view_error(view, reason));
    }
    if let Some(csp) = &view.csp {
        for (list, entries) in csp.lists() {
            // WebSockets are network requests of `connect-src` (the spec's own example lists a
            // `wss://` origin there); other directives load documents and files over HTTP.
            let schemes: &[&str] =
                if list == "connectDomains" { &["https", "http", "wss", "ws"] } else { &["https", "http"] };
            for entry in entries {
                if let Err(reason) = check_origin(entry, schemes) {
                    errors.push(view_error(view, format!("`_meta.ui.csp.{list}` entry {entry:?} {reason}")));
                }
            }
        }
    }
    if view.domain.as_deref().is_some_and(|d| d.trim().is_empty()) {
        errors.push(view_error(view, "`_meta.ui.domain` is empty; leave it unset for the host's default".into()));
    }
    errors
}

/// A view URI: `ui://` followed by something (SEP-1865: "URI MUST start with `ui://`").
fn check_ui_uri(uri: &str) -> Result<(), String> {
    match uri.strip_prefix("ui://") {
        Some(rest) if !rest.is_empty() && !rest.chars().any(char::is_whitespace) => Ok(()),
        Some(_) => Err("a view URI needs a name after `ui://` and no whitespace, e.g. `ui://dice/roller`".into()),
        None => Err("a view's URI must use the `ui://` scheme (SEP-1865), e.g. `ui://dice/roller`".into()),
    }
}

/// An origin of a CSP source list: `scheme://host[:port]`, scheme among `schemes`, host a DNS
/// name (optionally `*.`-prefixed), IPv4 or bracketed IPv6 address; nothing after it.
///
/// Errors: the rest of a sentence saying what is wrong ("is not an origin: ...").
pub(crate) fn check_origin(entry: &str, schemes: &[&str]) -> Result<(), String> {
    let bad = |why: &str| Err(format!("is not an origin (`scheme://host[:port]`): {why}"));
    let Some((scheme, rest)) = entry.split_once("://") else {
        return bad("it has no `scheme://`");
    };
    if !schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
        return Err(format!("uses the scheme `{scheme}`; allowed here: {}", schemes.join(", ")));
    }
    if let Some(at) = rest.find(['/', '?', '#']) {
        return bad(&format!("drop the path, query or fragment `{}`", &rest[at..]));
    }
    if rest.contains('@') {
        return bad("it carries user information");
    }
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let Some((addr, after)) = v6.split_once(']') else {
            return bad("an IPv6 address needs its closing `]`");
        };
        if addr.parse::<std::net::Ipv6Addr>().is_err() {
            return bad(&format!("`[{addr}]` is not an IPv6 address"));
        }
        match after {
            "" => (None, None),
            p => match p.strip_prefix(':') {
                Some(port) => (None, Some(port)),
                None => return bad("only `:port` may follow the IPv6 address"),
            },
        }
    } else {
        match rest.rsplit_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(rest), None),
        }
    };
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return bad(&format!("`{port}` is not a port (1-65535)"));
    }
    if let Some(host) = host
        && !is_host(host)
    {
        return bad(&format!("`{host}` is not a host name (letters, digits and `-` between dots, `*.` first at most)"));
    }
    Ok(())
}

/// A DNS name or IPv4 address, optionally with a leading wildcard label (`*.example.com`, the
/// spec's "wildcard subdomains").
fn is_host(host: &str) -> bool {
    let name = host.strip_prefix("*.").unwrap_or(host);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            let bytes = label.as_bytes();
            !bytes.is_empty()
                && bytes.len() <= 63
                && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
                && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
                && bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        })
}

/// What only the finished table shows: each view is served as HTML for MCP Apps (a resource
/// registered after it with the same URI replaces it), each link names a tool and a view that
/// are served, and the view is one.
pub(crate) fn check_table(table: &DispatchTable, views: &[AppView], links: &[Link]) -> Vec<BuildError> {
    let mut errors = Vec::new();
    for view in views {
        // A view that failed its own checks was not registered; its error is reported already.
        if table.resource(&view.uri).is_some() {
            let mime = served_mime(table, &view.uri);
            if mime != Some(MIME_TYPE) {
                errors.push(view_error(
                    view,
                    format!(
                        "another resource with this URI replaced the view and is served as {}; a view \
                         resource must be `{MIME_TYPE}`",
                        describe(mime)
                    ),
                ));
            }
        }
    }
    for link in links {
        let error = |reason: String| BuildError::Invalid {
            kind: "tool",
            name: link.tool.clone(),
            site: format!("Apps::link_tool at {}", link.site),
            reason,
        };
        if table.tool(&link.tool).is_none() {
            errors.push(error(format!(
                "is linked to the view `{}` but the server has no tool `{}` (is its group selected?)",
                link.view, link.tool
            )));
        }
        match table.resource(&link.view) {
            None => errors.push(error(format!(
                "is linked to the view `{}`, which is no resource of the server; declare it with \
                 `Apps::view(AppView::html(..))`",
                link.view
            ))),
            Some(_) => match served_mime(table, &link.view) {
                Some(MIME_TYPE) => {}
                other => errors.push(error(format!(
                    "is linked to `{}`, which is served as {} rather than `{MIME_TYPE}`, so no host \
                     can render it",
                    link.view,
                    describe(other)
                ))),
            },
        }
    }
    errors
}

fn describe(mime: Option<&str>) -> String {
    mime.map_or_else(|| "a resource without a MIME type".to_owned(), |m| format!("`{m}`"))
}

/// The listed `mimeType` of the static resource `uri`, when it is served and has one.
fn served_mime<'t>(table: &'t DispatchTable, uri: &str) -> Option<&'t str> {
    table.resource(uri)?.definition.get("mimeType")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WEB: &[&str] = &["https", "http"];

    #[test]
    fn origins_are_accepted() {
        for ok in [
            "https://api.example.com",
            "http://localhost:8080",
            "https://*.cloudflare.com",
            "HTTPS://CDN.example.com",
            "http://127.0.0.1:3000",
            "https://[::1]:8443",
            "https://[2001:db8::1]",
        ] {
            assert_eq!(check_origin(ok, WEB), Ok(()), "{ok}");
        }
        assert_eq!(check_origin("wss://realtime.example.com", &["https", "wss"]), Ok(()));
    }

    #[test]
    fn non_origins_are_refused_with_the_reason() {
        for (bad, says) in [
            ("api.example.com", "no `scheme://`"),
            ("https://api.example.com/", "drop the path"),
            ("https://api.example.com/v1", "`/v1`"),
            ("https://api.example.com?x=1", "query"),
            ("ftp://files.example.com", "scheme `ftp`"),
            ("wss://realtime.example.com", "scheme `wss`"),
            ("https://user@example.com", "user information"),
            ("https://example.com:0", "not a port"),
            ("https://example.com:99999", "not a port"),
            ("https://example.com:", "not a port"),
            ("https://", "not a host name"),
            ("https://exa mple.com", "not a host name"),
            ("https://example..com", "not a host name"),
            ("https://a.*.example.com", "not a host name"),
            ("https://[::1", "closing `]`"),
            ("https://[nothost]", "not an IPv6"),
            ("https://[::1]x", "only `:port`"),
        ] {
            let err = check_origin(bad, WEB).expect_err(bad);
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn view_uris_use_the_ui_scheme() {
        assert_eq!(check_ui_uri("ui://dice/roller"), Ok(()));
        assert!(check_ui_uri("https://dice/roller").is_err());
        assert!(check_ui_uri("ui://").is_err());
        assert!(check_ui_uri("ui://a b").is_err());
    }
}
