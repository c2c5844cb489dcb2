//! The server as an OAuth 2.0 protected resource: its metadata document (RFC 9728) and the
//! `WWW-Authenticate` challenges (RFC 6750 §3, RFC 9728 §5.1) that send a client to it
//! ([MCP authorization](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization)).

use super::AuthError;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The well-known path prefix of protected resource metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What the server tells clients about itself as a protected resource: its canonical URI (the
/// audience tokens must carry, RFC 8707), the authorization servers that issue them, and the
/// scopes it knows. The HTTP transport serves it as JSON (RFC 9728 §3.2) at the metadata URL
/// of the resource (`https://mcp.example.com/.well-known/oauth-protected-resource/mcp` for
/// `https://mcp.example.com/mcp`) and at the root form without the path; its challenges point
/// there.
///
/// ```
/// use switchyard::auth::ProtectedResource;
/// # fn main() -> Result<(), switchyard::auth::AuthError> {
/// let resource = ProtectedResource::new("https://mcp.example.com/mcp")?
///     .authorization_server("https://auth.example.com")?
///     .scopes_supported(["files:read", "files:write"])
///     .required_scopes(["mcp"]);
/// assert_eq!(
///     resource.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    resource: String,
    origin: String,
    path: String,
    authorization_servers: Vec<String>,
    scopes_supported: BTreeSet<String>,
    required_scopes: BTreeSet<String>,
    documentation: Option<String>,
    name: Option<String>,
    #[cfg(feature = "oauth")]
    dpop: Option<super::Dpop>,
}

/// `url` checked as an absolute `http(s)` URL without a fragment; returns it lower-casing the
/// scheme and host (RFC 3986 §6.2.2.1), with its origin and path.
fn absolute_url(url: &str, what: &str) -> Result<(String, String, String), AuthError> {
    let bad =
        |why: &str| AuthError::config_because(format!("{what} {url:?} {why}; write e.g. https://mcp.example.com/mcp"));
    if url.contains('#') {
        return Err(bad("has a fragment"));
    }
    let uri: http::Uri = url.parse().map_err(|_| bad("is not a URL"))?;
    let scheme = uri.scheme_str().map(str::to_ascii_lowercase).ok_or_else(|| bad("is not absolute"))?;
    if scheme != "https" && scheme != "http" {
        return Err(bad("is not an http(s) URL"));
    }
    let authority = uri.authority().ok_or_else(|| bad("has no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("carries user information"));
    }
    let origin = format!("{scheme}://{}", authority.as_str().to_ascii_lowercase());
    let path = match uri.path() {
        "/" => String::new(),
        p => p.trim_end_matches('/').to_owned(),
    };
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    Ok((format!("{origin}{path}{query}"), origin, path))
}

impl ProtectedResource {
    /// The resource at `resource`: the public URL of the MCP endpoint as clients reach it
    /// (behind a proxy, the proxy's URL, never taken from a request's `Host`).
    ///
    /// Errors: [`AuthError::Config`] unless it is an absolute `http(s)` URL without user
    /// information or fragment.
    pub fn new(resource: &str) -> Result<Self, AuthError> {
        let (resource, origin, path) = absolute_url(resource, "the resource")?;
        Ok(ProtectedResource {
            resource,
            origin,
            path,
            authorization_servers: Vec::new(),
            scopes_supported: BTreeSet::new(),
            required_scopes: BTreeSet::new(),
            documentation: None,
            name: None,
            #[cfg(feature = "oauth")]
            dpop: None,
        })
    }

    /// Adds an authorization server (its issuer identifier, RFC 8414 §2) that issues tokens
    /// for this resource.
    ///
    /// Errors: [`AuthError::Config`] unless it is an absolute `http(s)` URL.
    pub fn authorization_server(mut self, issuer: &str) -> Result<Self, AuthError> {
        absolute_url(issuer, "the authorization server")?;
        if !self.authorization_servers.iter().any(|a| a == issuer) {
            self.authorization_servers.push(issuer.to_owned());
        }
        Ok(self)
    }

    /// Adds to the scopes listed in `scopes_supported` (besides the required ones and those the
    /// server's primitives declare).
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes_supported.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Scopes every request needs, whatever it calls: a token without one of them is refused
    /// with 403 and `error="insufficient_scope"`, and the 401 challenge asks for them.
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.required_scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// A page for people about the server (`resource_documentation`).
    pub fn documentation(mut self, url: impl Into<String>) -> Self {
        self.documentation = Some(url.into());
        self
    }

    /// A name for people (`resource_name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Accepts DPoP-bound tokens with their proofs (RFC 9449), or with [`Dpop::required`](super::Dpop::required)
    /// only those: [`BearerAuth`](super::BearerAuth) checks the proofs, and the metadata lists
    /// `dpop_signing_alg_values_supported` and `dpop_bound_access_tokens_required`
    /// (RFC 9728 §2). With the `oauth` feature.
    #[cfg(feature = "oauth")]
    pub fn dpop(mut self, dpop: super::Dpop) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// The DPoP settings, when DPoP is on.
    #[cfg(feature = "oauth")]
    pub fn dpop_settings(&self) -> Option<&super::Dpop> {
        self.dpop.as_ref()
    }

    /// The canonical resource URI: the audience its tokens must carry.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization servers, as given.
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }

    /// The scopes every request needs.
    pub fn required(&self) -> &BTreeSet<String> {
        &self.required_scopes
    }

    /// Where the metadata is served, as RFC 9728 §3.1 derives it from the resource: the
    /// well-known prefix between its origin and its path.
    pub fn metadata_url(&self) -> String {
        format!("{}{METADATA_PATH}{}", self.origin, self.path)
    }

    /// The request paths the metadata is served at: the path-suffixed form and the root form
    /// (clients try both, in that order). One path when the resource has none.
    pub fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![format!("{METADATA_PATH}{}", self.path)];
        if !self.path.is_empty() {
            paths.push(METADATA_PATH.to_owned());
        }
        paths
    }

    /// The metadata document (RFC 9728 §2), `declared` scopes (those the server's primitives
    /// name) listed beside the configured and required ones.
    pub fn document<'a>(&'a self, declared: impl IntoIterator<Item = &'a str>) -> Value {
        let mut scopes: BTreeSet<&str> = self.scopes_supported.iter().map(String::as_str).collect();
        scopes.extend(self.required_scopes.iter().map(String::as_str));
        scopes.extend(declared);
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !scopes.is_empty() {
            doc["scopes_supported"] = json!(scopes);
        }
        if let Some(d) = &self.documentation {
            doc["resource_documentation"] = json!(d);
        }
        if let Some(n) = &self.name {
            doc["resource_name"] = json!(n);
        }
        #[cfg(feature = "oauth")]
        if let Some(dpop) = &self.dpop {
            doc["dpop_signing_alg_values_supported"] = json!(dpop.algorithm_names());
            doc["dpop_bound_access_tokens_required"] = json!(dpop.is_required());
        }
        doc
    }

    /// A `WWW-Authenticate` value: `Bearer` with `error` and `error_description` when given
    /// (RFC 6750 §3), `scope` when non-empty, and `resource_metadata` (RFC 9728 §5.1).
    pub fn challenge(&self, error: Option<(&str, &str)>, scope: &str) -> String {
        challenge(Some(&self.metadata_url()), error, scope)
    }
}

/// A `Bearer` challenge; `metadata` is the resource metadata URL when the server has one.
pub(crate) fn challenge(metadata: Option<&str>, error: Option<(&str, &str)>, scope: &str) -> String {
    challenge_in("Bearer", metadata, error, scope, None)
}

/// A challenge of `scheme` (`Bearer`, RFC 6750 §3; `DPoP`, RFC 9449 §7.1) with the error, the
/// scope, the resource metadata URL and, last, `extra` (a parameter already written out).
pub(crate) fn challenge_in(
    scheme: &str,
    metadata: Option<&str>,
    error: Option<(&str, &str)>,
    scope: &str,
    extra: Option<String>,
) -> String {
    let mut params = Vec::new();
    if let Some((code, description)) = error {
        params.push(format!("error=\"{code}\""));
        if !description.is_empty() {
            params.push(format!("error_description=\"{}\"", quotable(description)));
        }
    }
    if !scope.is_empty() {
        params.push(format!("scope=\"{}\"", quotable(scope)));
    }
    if let Some(url) = metadata {
        params.push(format!("resource_metadata=\"{}\"", quotable(url)));
    }
    params.extend(extra);
    if params.is_empty() { scheme.to_owned() } else { format!("{scheme} {}", params.join(", ")) }
}

/// `text` with only the characters RFC 6750 §3 allows inside its quoted values (printable
/// ASCII but `"` and `\`), at most 200 of them.
fn quotable(text: &str) -> String {
    text.chars().filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\').take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_prefix_before_the_path() {
        let r = ProtectedResource::new("HTTPS://MCP.Example.com/mcp/").expect("valid");
        assert_eq!(r.resource(), "https://mcp.example.com/mcp");
        assert_eq!(r.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            r.metadata_paths(),
            ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
        );
        let root = ProtectedResource::new("https://mcp.example.com").expect("valid");
        assert_eq!(root.metadata_url(), "https://mcp.example.com/.well-known/oauth-protected-resource");
        assert_eq!(root.metadata_paths().len(), 1);
    }

    #[test]
    fn bad_resources_and_servers_are_refused() {
        for bad in ["mcp.example.com/mcp", "ftp://x/mcp", "https://x/mcp#frag", "https://user@x/mcp", "/mcp", ""] {
            assert!(matches!(ProtectedResource::new(bad), Err(AuthError::Config { .. })), "{bad}");
        }
        let r = ProtectedResource::new("https://x/mcp").expect("valid");
        assert!(r.clone().authorization_server("not a url").is_err());
        assert!(r.authorization_server("http://localhost:3001").is_ok());
    }

    #[test]
    fn the_document_lists_servers_and_every_scope_once() {
        let r = ProtectedResource::new("https://x/mcp")
            .and_then(|r| r.authorization_server("https://as.example"))
            .expect("valid")
            .scopes_supported(["b", "a"])
            .required_scopes(["a"])
            .name("X");
        let doc = r.document(["c", "b"]);
        assert_eq!(doc["resource"], "https://x/mcp");
        assert_eq!(doc["authorization_servers"], json!(["https://as.example"]));
        assert_eq!(doc["scopes_supported"], json!(["a", "b", "c"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert_eq!(doc["resource_name"], "X");
    }

    #[test]
    fn challenges_quote_safely() {
        let r = ProtectedResource::new("https://x/mcp").expect("valid");
        assert_eq!(
            r.challenge(None, "files:read"),
            "Bearer scope=\"files:read\", resource_metadata=\"https://x/.well-known/oauth-protected-resource/mcp\""
        );
        let c = r.challenge(Some(("invalid_token", "bad \"sig\"\n\\ x")), "");
        assert!(c.starts_with("Bearer error=\"invalid_token\", error_description=\"bad sig x\""), "{c}");
        assert_eq!(challenge(None, None, ""), "Bearer");
    }
}
