use super::alternate::{AlternateFilterRegistration, MethodChains};
use super::method;
use super::{RpcRegistration, TypedChain, TypedFilterRegistration};
use crate::registry::Site;
use crate::registry::{BuildError, Groups};
use crate::vocab::methods;
use std::any::TypeId;
use std::collections::HashMap;

/// The typed RPCs of a server and the filter chains of every method that has filters.
#[derive(Default)]
pub(crate) struct Pipelines {
    pub(crate) rpcs: HashMap<&'static str, &'static RpcRegistration>,
    pub(crate) chains: HashMap<&'static str, MethodChains>,
    /// Where each method's typed and alternate filters were declared.
    pub(crate) filter_sites: HashMap<&'static str, Vec<String>>,
}

/// The built-in methods that take typed and alternate filters, with their types.
fn builtin_types(method: &str) -> Option<(TypeId, TypeId)> {
    method::named(method)?.filter_types.map(|types| types())
}

/// Collects the typed RPCs, typed filters and alternate filters of the selected groups.
///
/// Errors: two RPCs with one method (both sites named); an RPC with an empty name or routing
/// name, a malformed extension identifier, or a name it may not take (one of MCP's own methods,
/// or a name in an MCP namespace without an official extension: see `vocab::methods`); a
/// filter for a method nobody serves; a filter whose params or result type differs from its
/// method's. Every one of them at once ([`BuildError::Several`]) when there are several.
pub(crate) fn build(groups: Option<&[String]>) -> Result<Pipelines, BuildError> {
    let mut errors = Vec::new();
    let mut rpcs: HashMap<&'static str, &'static RpcRegistration> = HashMap::new();
    let groups = Groups::new(groups);
    for reg in groups.select::<RpcRegistration>() {
        let invalid = |reason: String| BuildError::Invalid {
            kind: "method",
            name: reg.method.to_owned(),
            site: reg.site.to_string(),
            reason,
        };
        if reg.method.is_empty() || reg.routing_name == Some("") {
            errors.push(invalid("the method name and the routing name must not be empty".to_owned()));
            continue;
        }
        if let Some(Err(msg)) = reg.extension.map(methods::extension_id) {
            errors.push(invalid(format!("its extension {msg}")));
            continue;
        }
        if let Err(msg) = methods::rpc_may_take(reg.method, reg.extension) {
            errors.push(invalid(msg));
            continue;
        }
        if let Some(prev) = rpcs.insert(reg.method, reg) {
            let (a, b) = ordered(prev.site.to_string(), reg.site.to_string());
            errors.push(BuildError::Duplicate { kind: "method", name: reg.method.to_owned(), first: a, second: b });
        }
    }
    let types = |method: &str| -> Option<(TypeId, TypeId, String)> {
        match rpcs.get(method) {
            Some(r) => Some(((r.params_type)(), (r.result_type)(), r.site.to_string())),
            None => builtin_types(method).map(|(p, r)| (p, r, "the built-in method".to_owned())),
        }
    };
    let check = |method: &'static str, name: &'static str, site: &Site, p: TypeId, r: TypeId| {
        let invalid = |reason: String| BuildError::Invalid {
            kind: "filter",
            name: name.to_owned(),
            site: site.to_string(),
            reason,
        };
        match types(method) {
            None => Err(invalid(format!("it filters `{method}`, which no registered method serves"))),
            Some((mp, mr, at)) if mp != p || mr != r => {
                Err(invalid(format!("its params or result type differs from those of `{method}` ({at})")))
            }
            Some(_) => Ok(()),
        }
    };
    let mut typed: HashMap<&'static str, Vec<&'static TypedFilterRegistration>> = HashMap::new();
    for f in groups.select::<TypedFilterRegistration>() {
        match check(f.method, f.name, &f.site, (f.params_type)(), (f.result_type)()) {
            Ok(()) => typed.entry(f.method).or_default().push(f),
            Err(e) => errors.push(e),
        }
    }
    let mut alternate: HashMap<&'static str, Vec<&'static AlternateFilterRegistration>> = HashMap::new();
    for f in groups.select::<AlternateFilterRegistration>() {
        match check(f.method, f.name, &f.site, (f.params_type)(), (f.result_type)()) {
            Ok(()) => alternate.entry(f.method).or_default().push(f),
            Err(e) => errors.push(e),
        }
    }
    if let Some(e) = BuildError::from_all(errors) {
        return Err(e);
    }
    let mut filter_sites: HashMap<&'static str, Vec<String>> = HashMap::new();
    for (m, f) in typed.iter().flat_map(|(m, fs)| fs.iter().map(move |f| (*m, f.site.to_string()))) {
        filter_sites.entry(m).or_default().push(f);
    }
    for (m, f) in alternate.iter().flat_map(|(m, fs)| fs.iter().map(move |f| (*m, f.site.to_string()))) {
        filter_sites.entry(m).or_default().push(f);
    }
    let mut methods: Vec<&'static str> = typed.keys().chain(alternate.keys()).copied().collect();
    methods.sort_unstable();
    methods.dedup();
    let chains = methods
        .into_iter()
        .map(|m| {
            let t = TypedChain::new(typed.remove(m).unwrap_or_default());
            (m, MethodChains::new(alternate.remove(m).unwrap_or_default(), t))
        })
        .collect();
    Ok(Pipelines { rpcs, chains, filter_sites })
}

fn ordered(a: String, b: String) -> (String, String) {
    if a <= b { (a, b) } else { (b, a) }
}
