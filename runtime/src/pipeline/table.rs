use super::{RpcRegistration, TypedChain, TypedFilterRegistration};
use crate::registry::BuildError;
use std::collections::HashMap;

/// Method names MCP owns: no `#[mcp_rpc]` may take them (the Tasks extension's `tasks/*`
/// methods are declared by that extension itself through the same seam).
fn is_reserved(method: &str) -> bool {
    const EXACT: &[&str] = &[
        "initialize",
        "ping",
        "server/discover",
        "subscriptions/listen",
        "completion/complete",
        "logging/setLevel",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
    ];
    const PREFIXES: &[&str] = &["tools/", "prompts/", "resources/", "notifications/"];
    EXACT.contains(&method) || PREFIXES.iter().any(|p| method.starts_with(p))
}

/// A typed RPC with its sorted typed filters.
pub(crate) struct RpcEntry {
    pub(crate) reg: &'static RpcRegistration,
    pub(crate) chain: TypedChain,
}

fn in_groups(groups: Option<&[String]>, group: &str) -> bool {
    groups.is_none_or(|g| g.iter().any(|x| x == group))
}

/// Collects the typed RPCs and typed filters of the selected groups.
///
/// Errors: two RPCs with one method (both sites named); an RPC on a name MCP reserves or with
/// an empty name or routing name; a typed filter for a method no RPC of these groups serves; a
/// typed filter whose params or result type differs from its method's.
pub(crate) fn build_rpcs(groups: Option<&[String]>) -> Result<HashMap<&'static str, RpcEntry>, BuildError> {
    let mut rpcs: HashMap<&'static str, &'static RpcRegistration> = HashMap::new();
    for reg in inventory::iter::<RpcRegistration> {
        if !in_groups(groups, reg.group) {
            continue;
        }
        let invalid = |reason: String| BuildError::Invalid {
            kind: "method",
            name: reg.method.to_owned(),
            site: reg.site.to_string(),
            reason,
        };
        if reg.method.is_empty() || reg.routing_name == Some("") {
            return Err(invalid("the method name and the routing name must not be empty".to_owned()));
        }
        if is_reserved(reg.method) && !reg.method.starts_with("tasks/") {
            return Err(invalid("this method name belongs to MCP itself".to_owned()));
        }
        if let Some(prev) = rpcs.insert(reg.method, reg) {
            let (a, b) = ordered(prev.site.to_string(), reg.site.to_string());
            return Err(BuildError::Duplicate { kind: "method", name: reg.method.to_owned(), first: a, second: b });
        }
    }
    let mut filters: HashMap<&'static str, Vec<&'static TypedFilterRegistration>> = HashMap::new();
    for f in inventory::iter::<TypedFilterRegistration> {
        if !in_groups(groups, f.group) {
            continue;
        }
        let Some(rpc) = rpcs.get(f.method) else {
            return Err(BuildError::Invalid {
                kind: "filter",
                name: f.name.to_owned(),
                site: f.site.to_string(),
                reason: format!("it filters `{}`, which no registered method serves", f.method),
            });
        };
        if (f.params_type)() != (rpc.params_type)() || (f.result_type)() != (rpc.result_type)() {
            return Err(BuildError::Invalid {
                kind: "filter",
                name: f.name.to_owned(),
                site: f.site.to_string(),
                reason: format!("its params or result type differs from those of `{}` at {}", f.method, rpc.site),
            });
        }
        filters.entry(f.method).or_default().push(f);
    }
    Ok(rpcs
        .into_iter()
        .map(|(m, reg)| (m, RpcEntry { reg, chain: TypedChain::new(filters.remove(m).unwrap_or_default()) }))
        .collect())
}

fn ordered(a: String, b: String) -> (String, String) {
    if a <= b { (a, b) } else { (b, a) }
}
