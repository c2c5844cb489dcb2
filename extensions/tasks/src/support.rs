//! What the Tasks filter and escalation both ask of a request: whether it declares the
//! extension, and how the called tool may run as a task.

use crate::EXTENSION;
use serde_json::Value;
use switchyard::RequestContext;
use switchyard::registry::TaskSupport;

/// True when this request's own `_meta` client capabilities declare the Tasks extension (only a
/// 2026-07-28 request can: legacy requests carry the session's capabilities, which never count).
pub fn declares_tasks(ctx: &RequestContext) -> bool {
    ctx.era().is_modern()
        && ctx.client_capabilities().get("extensions").and_then(|e| e.get(EXTENSION)).is_some_and(Value::is_object)
}

/// The declared `task_support` of `tool` on `ctx`'s server (`Forbidden` for an unknown tool).
pub(crate) fn task_support(ctx: &RequestContext, tool: &str) -> TaskSupport {
    ctx.server().table().tool(tool).map(|t| t.task_support).unwrap_or_default()
}
