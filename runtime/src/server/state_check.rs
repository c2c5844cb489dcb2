//! `build()` refuses a handler that takes shared state nobody provided: without this check the
//! mistake shows only at the first call, as a `-32603` the client cannot act on.

use crate::context::{StateMap, StateRequirement};
use crate::pipeline::RpcRegistration;
use crate::registry::{
    BuildError, CompletionRegistration, CompletionTarget, PromptRegistration, ResourceRegistration, Site,
    ToolRegistration,
};
use crate::subscriptions::SubscriptionFieldRegistration;

/// One problem per handler of the selected `groups` (`None`: all) and state type it needs
/// that `state` does not hold.
pub(crate) fn missing_state(state: &StateMap, groups: Option<&[String]>) -> Vec<BuildError> {
    let selected = |group: &str| groups.is_none_or(|g| g.iter().any(|x| x == group));
    let mut errors = Vec::new();
    let mut check = |kind: &'static str, name: String, site: Site, needs: &[StateRequirement]| {
        for need in needs.iter().filter_map(|f| f()) {
            if !state.contains(need.type_id) {
                errors.push(BuildError::Invalid {
                    kind,
                    name: name.clone(),
                    site: site.to_string(),
                    reason: format!(
                        "takes State<{}>, which was never provided: give the server a value of that type with \
                         ServerBuilder::state",
                        need.type_name
                    ),
                });
            }
        }
    };
    for r in inventory::iter::<ToolRegistration>.into_iter().filter(|r| selected(r.group)) {
        check("tool", r.name.to_owned(), r.site, r.state);
    }
    for r in inventory::iter::<PromptRegistration>.into_iter().filter(|r| selected(r.group)) {
        check("prompt", r.name.to_owned(), r.site, r.state);
    }
    for r in inventory::iter::<ResourceRegistration>.into_iter().filter(|r| selected(r.group)) {
        check("resource", r.uri.to_owned(), r.site, r.state);
    }
    for r in inventory::iter::<CompletionRegistration>.into_iter().filter(|r| selected(r.group)) {
        let target = match r.target {
            CompletionTarget::Prompt(p) => format!("prompt {p}"),
            CompletionTarget::ResourceTemplate(u) => format!("resource template {u}"),
        };
        check("completion", target, r.site, r.state);
    }
    for r in inventory::iter::<RpcRegistration>.into_iter().filter(|r| selected(r.group)) {
        check("method", r.method.to_owned(), r.site, r.state);
    }
    for r in inventory::iter::<SubscriptionFieldRegistration>.into_iter().filter(|r| selected(r.group)) {
        check("subscription field", r.key.to_owned(), r.site, r.state);
    }
    errors
}
