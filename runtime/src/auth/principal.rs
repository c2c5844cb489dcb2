use serde_json::Value;
use std::collections::BTreeSet;

/// An authenticated caller: an id, its roles, and the verified token claims.
///
/// Read it in a handler with [`RequestContext::principal`](crate::RequestContext::principal);
/// `None` there means an anonymous caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Who it is (a JWT's `sub`, or the name configured for a static token).
    pub id: String,
    /// Its roles.
    pub roles: BTreeSet<String>,
    /// The verified claims (`{}` for static tokens).
    pub claims: Value,
}

impl Principal {
    /// A principal with an id and roles and no claims.
    pub fn new<I, S>(id: impl Into<String>, roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Principal {
            id: id.into(),
            roles: roles.into_iter().map(Into::into).collect(),
            claims: Value::Object(Default::default()),
        }
    }

    /// True when it holds `role`.
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.contains(role)
    }
}
