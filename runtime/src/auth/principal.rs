use serde_json::Value;
use std::collections::BTreeSet;

/// An authenticated caller: an id, its roles and OAuth scopes, and the verified token claims.
///
/// Read it in a handler with [`RequestContext::principal`](crate::RequestContext::principal);
/// `None` there means an anonymous caller. The bearer token itself is not kept: nothing passes a
/// client's token on to another service (the MCP authorization spec forbids token passthrough).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Principal {
    /// Who it is (a JWT's `sub`, or the name configured for a static token).
    pub id: String,
    /// Its roles.
    pub roles: BTreeSet<String>,
    /// The OAuth scopes the token grants (RFC 6749 §3.3; a JWT's `scope` claim, RFC 9068 §2.2.3).
    pub scopes: BTreeSet<String>,
    /// The verified claims (`{}` for static tokens).
    pub claims: Value,
}

impl Principal {
    /// A principal with an id and roles, no scopes and no claims.
    pub fn new<I, S>(id: impl Into<String>, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Principal {
            id: id.into(),
            roles: roles.into_iter().map(Into::into).collect(),
            scopes: BTreeSet::new(),
            claims: Value::Object(Default::default()),
        }
    }

    /// This principal holding `scopes` as well.
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// True when it holds `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.contains(role)
    }

    /// True when its token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The principal the verified JWT or introspection `claims` describe: id from `sub`, roles
    /// from `roles_claim` (an array of strings, or a space-separated string), scopes from
    /// `scope` (space-separated, RFC 9068 §2.2.3 and RFC 7662 §2.2) or `scp` (an array or a
    /// string, as some providers write it).
    ///
    /// Errors: `None` when there is no string `sub`.
    #[cfg(any(feature = "auth-jwt", test))]
    pub(crate) fn from_claims(claims: Value, roles_claim: &str) -> Option<Principal> {
        let id = claims.get("sub").and_then(Value::as_str)?.to_owned();
        let words = |v: Option<&Value>| -> BTreeSet<String> {
            match v {
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
                _ => BTreeSet::new(),
            }
        };
        let roles = words(claims.get(roles_claim));
        let mut scopes = words(claims.get("scope"));
        scopes.extend(words(claims.get("scp")));
        Some(Principal { id, roles, scopes, claims })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claims_give_id_roles_and_scopes() {
        let p = Principal::from_claims(
            json!({ "sub": "ada", "roles": ["admin"], "scope": "files:read  files:write", "scp": ["x"] }),
            "roles",
        )
        .expect("a principal");
        assert_eq!(p.id, "ada");
        assert!(p.has_role("admin"));
        assert!(p.has_scope("files:read") && p.has_scope("files:write") && p.has_scope("x"));
        let groups = Principal::from_claims(json!({ "sub": "b", "groups": "a b" }), "groups").expect("a principal");
        assert_eq!(groups.roles.len(), 2);
        assert!(Principal::from_claims(json!({ "sub": 7 }), "roles").is_none());
        assert!(Principal::from_claims(json!({}), "roles").is_none());
    }
}
