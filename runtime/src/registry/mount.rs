//! Mounting: the registrations of one group served under a prefix, so that two crates may each
//! declare a `search` tool or a `config://settings` resource and be served side by side.
//!
//! Everything is rewritten once, when the dispatch table is built: the table holds the public
//! names and URIs, and each mounted handler is wrapped to see its own. A server that mounts
//! nothing builds the same table as before and pays nothing per request.

use std::borrow::Cow;

/// How [`ServerBuilder::mount`](crate::ServerBuilder::mount) serves one registration group:
/// its tool and prompt names get a prefix, and its resource URIs and URI templates a scheme
/// prefix.
///
/// | declared (group `billing`)        | served with `Mount::prefix("billing")` |
/// |-----------------------------------|----------------------------------------|
/// | tool `charge`                     | tool `billing_charge`                  |
/// | prompt `summary`                  | prompt `billing_summary`               |
/// | resource `invoice://latest`       | resource `billing+invoice://latest`    |
/// | template `invoice://{id}`         | template `billing+invoice://{id}`      |
/// | `#[mcp_rpc("acme/refund")]`       | `acme/refund` (unchanged, see below)   |
///
/// ```
/// # use switchyard::{Mount, Server};
/// // Then `build()`: it fails if group `billing` or `crm` has nothing registered.
/// let builder = Server::builder("shop", "1.0.0")
///     .mount("billing", Mount::prefix("billing"))
///     .mount("crm", Mount::new().name_prefix("crm.").keep_uris());
/// ```
///
/// **URIs.** A URI is prefixed in its scheme: `invoice://7` becomes `billing+invoice://7`.
/// RFC 3986 allows `+` in a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), so every
/// absolute URI stays a valid absolute URI, as the
/// [resources page](https://modelcontextprotocol.io/specification/2025-11-25/server/resources#resource-uris)
/// requires, whatever its scheme (`urn:`, `file:`, custom); a path prefix would need to know
/// each scheme's layout. The rewrite is reversible (strip the prefix), so the handler always
/// sees the URI it declared. A mounted `https:` resource is no longer one the client could
/// fetch itself, which is what a mount means: it is read through this server.
///
/// **Links.** A `resource_link` block or embedded `resource` in a mounted tool's result or
/// prompt's messages, and read contents, that name one of the group's own resources (declared,
/// or a match of its templates) are answered with the public URI; links elsewhere and text are
/// left as written.
///
/// **RPC methods** (`#[mcp_rpc]`) are served under their own names. A method name is a contract
/// with the clients of its extension (they call `tasks/get`, not `billing/tasks/get`), and
/// filters, capability gating and `Mcp-Method` routing key on it; two groups serving one method
/// still fail [`build`](crate::ServerBuilder::build) naming both.
///
/// **Events.** `list_changed` notifications carry no names and pass unchanged. A mounted group
/// announces `notifications/resources/updated` with the publisher of
/// [`Server::mounted_publisher`](crate::Server::mounted_publisher), which prefixes the URIs.
///
/// **Errors**, all from [`build`](crate::ServerBuilder::build) as
/// [`BuildError`](crate::BuildError): a name prefix with a character tool names may not have,
/// a scheme prefix that is not a scheme, a public tool name over 128 characters, a mounted URI
/// that does not start with a scheme, a group nobody registered into, and two definitions
/// that end with one public name or URI (`Duplicate`, naming both declarations).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mount {
    name_prefix: String,
    uri_scheme: Option<String>,
}

impl Mount {
    /// A mount that changes nothing yet; set [`name_prefix`](Self::name_prefix) and
    /// [`uri_scheme_prefix`](Self::uri_scheme_prefix).
    pub fn new() -> Self {
        Mount::default()
    }

    /// The usual mount: names get `{prefix}_`, URIs the scheme prefix `{prefix}+`
    /// (`Mount::prefix("billing")`: `billing_charge`, `billing+invoice://7`).
    pub fn prefix(prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        Mount { name_prefix: format!("{prefix}_"), uri_scheme: Some(prefix) }
    }

    /// The text put before every tool and prompt name, as written (`"billing_"`, `"crm."`):
    /// only `A-Z a-z 0-9 _ . -`, the characters of a
    /// [tool name](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names).
    pub fn name_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.name_prefix = prefix.into();
        self
    }

    /// The scheme prefix of every resource URI and URI template: `"billing"` serves
    /// `invoice://7` as `billing+invoice://7`. An RFC 3986 scheme: a letter, then letters,
    /// digits, `+`, `-` or `.`.
    pub fn uri_scheme_prefix(mut self, scheme: impl Into<String>) -> Self {
        self.uri_scheme = Some(scheme.into());
        self
    }

    /// Serves the group's resources under their own URIs (names are still prefixed).
    pub fn keep_uris(mut self) -> Self {
        self.uri_scheme = None;
        self
    }

    /// The public name of a tool or prompt declared as `name`.
    pub fn public_name(&self, name: &str) -> String {
        format!("{}{name}", self.name_prefix)
    }

    /// The public URI (or URI template) of one declared as `uri`.
    pub fn public_uri<'a>(&self, uri: &'a str) -> Cow<'a, str> {
        match &self.uri_scheme {
            Some(scheme) => Cow::Owned(format!("{scheme}+{uri}")),
            None => Cow::Borrowed(uri),
        }
    }

    /// Whether URIs are served under a scheme prefix (not [`keep_uris`](Self::keep_uris)).
    pub(crate) fn rewrites_uris(&self) -> bool {
        self.uri_scheme.is_some()
    }

    /// The declared URI of the public `uri`; `None` when `uri` does not carry this mount's
    /// scheme prefix.
    pub fn original_uri<'a>(&self, uri: &'a str) -> Option<&'a str> {
        match &self.uri_scheme {
            Some(scheme) => uri.strip_prefix(scheme.as_str())?.strip_prefix('+'),
            None => Some(uri),
        }
    }

    /// Checks the prefixes.
    ///
    /// Errors: a sentence naming the prefix that breaks its rule.
    pub(crate) fn check(&self) -> Result<(), String> {
        if let Some(bad) =
            self.name_prefix.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        {
            return Err(format!(
                "the name prefix {:?} contains {bad:?}; tool names use only A-Z, a-z, 0-9, `_`, `.` and `-`",
                self.name_prefix
            ));
        }
        if let Some(scheme) = &self.uri_scheme
            && !is_scheme(scheme)
        {
            return Err(format!(
                "the URI scheme prefix {scheme:?} is not an RFC 3986 scheme (a letter, then letters, digits, `+`, `-` \
                 or `.`)"
            ));
        }
        Ok(())
    }

    /// Checks that `uri` (a URI or URI template) can be served under the scheme prefix.
    ///
    /// Errors: a sentence when it does not start with a literal scheme.
    pub(crate) fn check_uri(&self, uri: &str) -> Result<(), String> {
        if self.uri_scheme.is_none() {
            return Ok(());
        }
        match uri.split_once(':') {
            Some((scheme, _)) if is_scheme(scheme) => Ok(()),
            _ => Err(format!(
                "`{uri}` cannot be mounted under a scheme prefix: it does not start with a literal scheme (`name:`); \
                 use Mount::keep_uris for this group"
            )),
        }
    }
}

/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The mounts of one server, by group, each with where it was declared
/// (`ServerBuilder::mount (file:line:col)`).
pub(crate) type Mounts = std::collections::HashMap<String, (Mount, String)>;

#[cfg(test)]
mod tests {
    use super::Mount;

    #[test]
    fn uris_round_trip_through_the_scheme_prefix() {
        let m = Mount::prefix("billing");
        assert_eq!(m.public_uri("invoice://7"), "billing+invoice://7");
        assert_eq!(m.original_uri("billing+invoice://7"), Some("invoice://7"));
        assert_eq!(m.original_uri("billingx+invoice://7"), None);
        assert_eq!(m.public_name("charge"), "billing_charge");
        assert!(m.check_uri("urn:x:y").is_ok());
        assert!(m.check_uri("{+path}").is_err());
        assert!(Mount::prefix("9x").check().is_err());
        assert!(Mount::new().name_prefix("a b").check().is_err());
        assert!(Mount::prefix("a.b-c").check().is_ok());
    }
}
