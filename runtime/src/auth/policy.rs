use super::Principal;

/// What a caller wants to use, as the [`Policy`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Primitive<'a> {
    /// A tool, by name.
    Tool(&'a str),
    /// A prompt, by name.
    Prompt(&'a str),
    /// A resource or resource template, by URI (template).
    Resource(&'a str),
    /// A typed RPC, by method.
    Method(&'a str),
}

/// Decides whether a caller may use a primitive. `roles` are the roles its registration
/// declares (`roles = [...]`, empty when none); [`grants`](Self::grants) decides which OAuth
/// scopes a token stands for (`scopes = [...]`: every one must be granted). Must be cheap:
/// lists call it once per item.
pub trait Policy: Send + Sync + 'static {
    /// True when `principal` (`None`: anonymous) may list and use `primitive`.
    fn allows(&self, principal: Option<&Principal>, primitive: Primitive<'_>, roles: &[&str]) -> bool;

    /// True when `principal`'s token grants `scope`, which a primitive declares with
    /// `scopes = [...]`. Default: the token's scopes hold it literally. Override for scope
    /// hierarchies, e.g. `files:write` also granting `files:read`, or `admin` granting all.
    fn grants(&self, principal: &Principal, scope: &str) -> bool {
        principal.has_scope(scope)
    }

    /// True when lists may differ between callers, so that they must be cached `private`.
    /// `any_roles` tells whether any primitive declares roles. Default: true (a custom policy
    /// is assumed to depend on the caller).
    fn lists_vary(&self, any_roles: bool) -> bool {
        let _ = any_roles;
        true
    }
}

/// The default policy: a primitive without declared roles is open to everyone, one with roles
/// needs a principal holding at least one of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct RolePolicy;

impl Policy for RolePolicy {
    fn allows(&self, principal: Option<&Principal>, _: Primitive<'_>, roles: &[&str]) -> bool {
        roles.is_empty() || principal.is_some_and(|p| roles.iter().any(|r| p.has_role(r)))
    }

    fn lists_vary(&self, any_roles: bool) -> bool {
        any_roles
    }
}

/// Allows everything, ignoring declared roles (for servers that authorize elsewhere).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Policy for AllowAll {
    fn allows(&self, _: Option<&Principal>, _: Primitive<'_>, _: &[&str]) -> bool {
        true
    }

    fn lists_vary(&self, _: bool) -> bool {
        false
    }
}
