//! `build()` refuses a handler that takes shared state nobody provided: without this check the
//! mistake shows only at the first call, as a `-32603` the client cannot act on.

use crate::context::{StateMap, StateRequirement};
use crate::pipeline::RpcRegistration;
use crate::registry::{
    BuildError, CompletionRegistration, CompletionTarget, Groups, PromptRegistration, ResourceRegistration, Site,
    ToolRegistration,
};
use crate::subscriptions::SubscriptionFieldRegistration;

/// One problem per handler of the selected `groups` (`None`: all) and state type it needs
/// that `state` does not hold.
pub(crate) fn missing_state(state: &StateMap, groups: Option<&[String]>) -> Vec<BuildError> {
    let groups = Groups::new(groups);
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
    for r in groups.select::<ToolRegistration>() {
        check("tool", r.name.to_owned(), r.site, r.state);
    }
    for r in groups.select::<PromptRegistration>() {
        check("prompt", r.name.to_owned(), r.site, r.state);
    }
    for r in groups.select::<ResourceRegistration>() {
        check("resource", r.uri.to_owned(), r.site, r.state);
    }
    for r in groups.select::<CompletionRegistration>() {
        let target = match r.target {
            CompletionTarget::Prompt(p) => format!("prompt {p}"),
            CompletionTarget::ResourceTemplate(u) => format!("resource template {u}"),
        };
        check("completion", target, r.site, r.state);
    }
    for r in groups.select::<RpcRegistration>() {
        check("method", r.method.to_owned(), r.site, r.state);
    }
    for r in groups.select::<SubscriptionFieldRegistration>() {
        check("subscription field", r.key.to_owned(), r.site, r.state);
    }
    errors
}
