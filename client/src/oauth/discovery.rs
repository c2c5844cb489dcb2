//! Where to sign in: the protected resource metadata of the MCP server
//! ([RFC 9728](https://www.rfc-editor.org/rfc/rfc9728)) names its authorization server, whose
//! metadata ([RFC 8414](https://www.rfc-editor.org/rfc/rfc8414), or OpenID Connect discovery)
//! names the endpoints, in the order the MCP
//! [authorization spec](https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-server-metadata-discovery)
//! gives.

use super::{AuthFailure, fail};
use oauth2::url::Url;
use serde::Deserialize;
use serde_json::Value;

/// The largest metadata document read: 1 MiB.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// A protected resource metadata document (the fields the client uses).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    /// The resource identifier, sent verbatim as `resource` (RFC 8707).
    pub(crate) resource: String,
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Vec<String>,
    /// The resource accepts only DPoP-bound tokens (RFC 9728 §2).
    #[serde(default)]
    pub(crate) dpop_bound_access_tokens_required: bool,
}

/// An authorization server metadata document (the fields the client uses).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Vec<String>,
    #[serde(default)]
    pub(crate) response_types_supported: Vec<String>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    /// The proof algorithms the server accepts (RFC 9449 §5.1); absent: no DPoP.
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// The protected resource metadata of the MCP server at `server`: from the challenge's
/// `resource_metadata` URL alone when it gave one, else the path-aware well-known URL and then
/// the root one. `None` when the server publishes none (a 2025-03-26 server).
///
/// Errors: a document that does not decode, or whose `resource` is not this server (RFC 9728
/// §3.3: a client must not send its tokens to a resource that names another).
pub(crate) async fn resource_metadata(
    http: &reqwest::Client,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, AuthFailure> {
    let candidates = match from_challenge {
        Some(url) => vec![url.to_owned()],
        None => {
            let origin = origin(server);
            let path = server.path().trim_end_matches('/');
            let mut urls = Vec::new();
            if !path.is_empty() {
                urls.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
            }
            urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
            urls
        }
    };
    let Some(document) = first_document(http, &candidates).await? else { return Ok(None) };
    let metadata: ResourceMetadata = serde_json::from_value(document)
        .map_err(|e| fail(format!("the protected resource metadata does not decode: {e}")))?;
    if !resource_allowed(&metadata.resource, server) {
        return Err(fail(format!(
            "the protected resource metadata is for {}, not for {server}; no token is sent there",
            metadata.resource
        )));
    }
    Ok(Some(metadata))
}

/// The metadata of the authorization server `issuer`: RFC 8414 first, then OpenID Connect
/// discovery, path-aware for an issuer with a path (never the root document for such an
/// issuer). `None` when no candidate has one (then the default endpoints apply).
///
/// Errors: a document that does not decode, or whose `issuer` is not exactly `issuer` (RFC
/// 8414 §3.3).
pub(crate) async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<Option<ServerMetadata>, AuthFailure> {
    let url = Url::parse(issuer).map_err(|e| fail(format!("the authorization server {issuer:?} is no URL: {e}")))?;
    let origin = origin(&url);
    let path = url.path().trim_end_matches('/');
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    let Some(document) = first_document(http, &candidates).await? else { return Ok(None) };
    let metadata: ServerMetadata = serde_json::from_value(document)
        .map_err(|e| fail(format!("the authorization server metadata does not decode: {e}")))?;
    if metadata.issuer != issuer {
        return Err(fail(format!(
            "the authorization server metadata names issuer {:?}, not {issuer:?}",
            metadata.issuer
        )));
    }
    Ok(Some(metadata))
}

/// Whether the authorization code flow may run at this server: it offers the `code` response
/// type, and says it supports PKCE with S256 (the MCP spec has clients refuse one that does
/// not).
///
/// Errors: the reason it may not.
pub(crate) fn check_code_flow(metadata: &ServerMetadata) -> Result<(), AuthFailure> {
    if !metadata.response_types_supported.is_empty() && !metadata.response_types_supported.iter().any(|t| t == "code") {
        return Err(fail("the authorization server does not offer the authorization code flow"));
    }
    if !metadata.code_challenge_methods_supported.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256")) {
        return Err(fail("the authorization server does not list PKCE with S256 in code_challenge_methods_supported"));
    }
    Ok(())
}

/// The first of `urls` that answers with a JSON document: a 4xx moves on to the next, a 5xx or
/// a transport failure stops.
async fn first_document(http: &reqwest::Client, urls: &[String]) -> Result<Option<Value>, AuthFailure> {
    for url in urls {
        let response = http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| AuthFailure::with_source(format!("GET {url}"), e))?;
        let status = response.status();
        if status.is_client_error() {
            continue;
        }
        if !status.is_success() {
            return Err(fail(format!("GET {url}: HTTP {status}")));
        }
        let body = read_limited(response, MAX_DOCUMENT_BYTES).await?;
        let document = serde_json::from_slice(&body).map_err(|e| fail(format!("GET {url}: no JSON document: {e}")))?;
        return Ok(Some(document));
    }
    Ok(None)
}

/// A response body, at most `max` bytes.
///
/// Errors: a body over `max`, or one that breaks off.
pub(crate) async fn read_limited(response: reqwest::Response, max: usize) -> Result<Vec<u8>, AuthFailure> {
    use futures::StreamExt;
    let url = response.url().to_string();
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| AuthFailure::with_source(format!("reading {url}"), e))?;
        if body.len() + chunk.len() > max {
            return Err(fail(format!("{url} answered with more than {max} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `scheme://host[:port]`, with no trailing slash.
pub(crate) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Whether a resource identifier covers the server URL: same origin, and the server's path at
/// or below the resource's (`https://h/mcp` covers `https://h/mcp` and `https://h/mcp/x`;
/// `https://h` covers every path of `h`). Looser than RFC 9728 §3.3's identical URL, as the
/// official SDKs are: servers publish their origin as the resource, and the conformance suite
/// expects such metadata to be accepted.
fn resource_allowed(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else { return false };
    if origin(&resource) != origin(server) {
        return false;
    }
    let with_slash = |p: &str| if p.ends_with('/') { p.to_owned() } else { format!("{p}/") };
    with_slash(server.path()).starts_with(&with_slash(resource.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_covers_its_own_path_and_below_on_the_same_origin() {
        let server = Url::parse("http://localhost:3000/mcp").expect("a URL");
        assert!(resource_allowed("http://localhost:3000/mcp", &server));
        assert!(resource_allowed("http://localhost:3000", &server));
        assert!(resource_allowed("http://localhost:3000/", &server));
        assert!(!resource_allowed("http://localhost:3000/mcp/other", &server));
        assert!(!resource_allowed("http://localhost:3000/mc", &server));
        assert!(!resource_allowed("https://evil.example.com/mcp", &server));
        assert!(!resource_allowed("http://localhost:3001/mcp", &server));
        assert!(!resource_allowed("not a url", &server));
    }
}
