//! The `Bearer` or `DPoP` challenge of a `WWW-Authenticate` header
//! ([RFC 6750 §3](https://www.rfc-editor.org/rfc/rfc6750#section-3),
//! [RFC 9449 §7.1](https://www.rfc-editor.org/rfc/rfc9449#section-7.1),
//! [RFC 9728 §5.1](https://www.rfc-editor.org/rfc/rfc9728#section-5.1)): `error`, `scope` and
//! `resource_metadata` tell the client where to sign in and what to ask for.

use std::collections::HashMap;

/// What a resource server's `Bearer` (or `DPoP`) challenge says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// `error`: `invalid_token`, `insufficient_scope`, ...
    pub(crate) error: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub(crate) scope: Option<String>,
    /// `resource_metadata`: the URL of the protected resource metadata (RFC 9728).
    pub(crate) resource_metadata: Option<String>,
    /// Whether the server offered the `DPoP` scheme (it wants tokens bound to a key).
    pub(crate) dpop: bool,
}

impl Challenge {
    /// The challenge among the header values `values`: the `DPoP` one when the server offers
    /// that scheme, else the `Bearer` one; an empty one when there is neither (a server may
    /// send a bare `401`).
    pub(crate) fn from_headers<'a>(values: impl IntoIterator<Item = &'a str>) -> Challenge {
        let all: Vec<_> = values.into_iter().flat_map(challenges).collect();
        let scheme = |name: &str| all.iter().find(|(scheme, _)| scheme.eq_ignore_ascii_case(name)).map(|(_, p)| p);
        let (dpop, bearer) = (scheme("dpop"), scheme("bearer"));
        // The error rides in the challenge of the scheme the refused token was sent with
        // (RFC 9449 §7.1, RFC 6750 §3): prefer the challenge that carries one, DPoP on a tie.
        let (primary, other) = match (dpop, bearer) {
            (Some(d), Some(b)) if !d.contains_key("error") && b.contains_key("error") => (b, Some(d)),
            (Some(d), b) => (d, b),
            (None, Some(b)) => (b, None),
            (None, None) => return Challenge::default(),
        };
        let get = |name: &str| primary.get(name).or_else(|| other.and_then(|o| o.get(name))).cloned();
        Challenge {
            error: primary.get("error").cloned(),
            scope: get("scope"),
            resource_metadata: get("resource_metadata"),
            dpop: dpop.is_some(),
        }
    }
}

/// Splits a header value into `(scheme, params)` pairs: auth-params are `name=token` or
/// `name="quoted \" string"` (RFC 9110 §11.2); names are lower-cased.
fn challenges(value: &str) -> Vec<(String, HashMap<String, String>)> {
    let mut out: Vec<(String, HashMap<String, String>)> = Vec::new();
    let mut rest = value.trim();
    while !rest.is_empty() {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        let word_end = rest.find(|c: char| c == '=' || c == ',' || c.is_whitespace()).unwrap_or(rest.len());
        let word = &rest[..word_end];
        let after = rest[word_end..].trim_start_matches([' ', '\t']);
        if word.is_empty() {
            break;
        }
        if let Some(value_part) = after.strip_prefix('=').filter(|_| !out.is_empty()) {
            // A parameter of the current challenge.
            let (param, remainder) = param_value(value_part.trim_start());
            if let Some((_, params)) = out.last_mut() {
                params.insert(word.to_ascii_lowercase(), param);
            }
            rest = remainder;
        } else {
            // A new scheme (a token68 after it is ignored: Bearer challenges use parameters).
            out.push((word.to_owned(), HashMap::new()));
            rest = after;
        }
    }
    out
}

/// A parameter value at the start of `s` (quoted or a token) and what follows it.
fn param_value(s: &str) -> (String, &str) {
    if let Some(quoted) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                other => value.push(other),
            }
        }
        (value, "")
    } else {
        let end = s.find([',', ' ', '\t']).unwrap_or(s.len());
        (s[..end].to_owned(), &s[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_parameters_are_read_quoted_or_not() {
        let c = Challenge::from_headers([
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp""#,
        ]);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        let c = Challenge::from_headers(["Bearer error=invalid_token,scope=a"]);
        assert_eq!((c.error.as_deref(), c.scope.as_deref()), (Some("invalid_token"), Some("a")));
    }

    #[test]
    fn other_schemes_escapes_and_garbage_are_survived() {
        let c = Challenge::from_headers([r#"Basic realm="x, y", Bearer realm="a\"b", scope="s""#]);
        assert_eq!(c.scope.as_deref(), Some("s"));
        assert_eq!(Challenge::from_headers(["Basic realm=x"]), Challenge::default());
        assert_eq!(Challenge::from_headers(["Bearer"]), Challenge::default());
        for garbage in ["", "=", "Bearer =x", "Bearer scope=\"unterminated", ",,,", "Bearer a=b=c"] {
            let _ = Challenge::from_headers([garbage]);
        }
        assert_eq!(Challenge::from_headers(["Bearer scope=\"open"]).scope.as_deref(), Some("open"));
    }

    #[test]
    fn a_dpop_challenge_is_read_and_preferred() {
        let c = Challenge::from_headers([
            r#"Bearer scope="a""#,
            r#"DPoP error="use_dpop_nonce", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp""#,
        ]);
        assert!(c.dpop);
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://h/.well-known/oauth-protected-resource/mcp"));
        assert!(!Challenge::from_headers([r#"Bearer scope="a""#]).dpop);
        let c = Challenge::from_headers([r#"dpop algs="ES256 PS256""#]);
        assert!(c.dpop);
        assert_eq!(c.scope, None);
    }

    // RFC 9449 §7.2 / RFC 6750 §3: a server that takes both schemes sends both challenges; the
    // error of a refused bearer token rides in the Bearer one.
    #[test]
    fn a_bearer_error_beside_a_dpop_offer_is_the_one_read() {
        let c = Challenge::from_headers([
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp""#,
            r#"DPoP algs="ES256 PS256""#,
        ]);
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"), "{c:?}");
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"), "{c:?}");
        assert!(c.resource_metadata.is_some(), "{c:?}");
    }

    #[test]
    fn hostile_dpop_headers_are_survived() {
        for h in [
            "DPoP",
            "DPoP =",
            "=,=,=",
            "DPoP a=\"",
            "DPoP a=\"\\",
            "\u{1F600} x=\u{1F600}",
            ",,,, ,",
            "DPoP \u{0}=\u{0}",
            "DPoP abc==, Bearer error=x",
        ] {
            let _ = Challenge::from_headers([h]);
        }
    }
}
