//! Validation: one small function per rule. Pure rules return `Result<(), String>` (unit-tested
//! below); the `check_*` functions apply them to a parsed attribute and report into the
//! [`Ctxt`] at the offending token.

use crate::ast::Handler;
use crate::attr::{Common, CompletionAttrs, Named, PromptAttrs, ResourceAttrs, ToolAttrs};
use crate::ctxt::Ctxt;
use crate::symbol::{ARGUMENT, DESCRIPTION, DESTRUCTIVE, GROUP, NAME, PROMPT, READ_ONLY, TITLE, URI};
use crate::uri_template;
use proc_macro2::Span;
use syn::LitStr;

/// Methods of the MCP protocol itself (both eras) and of the Tasks extension. A tool, prompt or
/// RPC may not take one of these names: clients and the dispatcher already give them a meaning.
const CORE_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
];

/// Who owns `name` when it is a reserved MCP method name.
pub fn reserved_method_owner(name: &str) -> Option<&'static str> {
    if CORE_METHODS.contains(&name) {
        Some("the MCP protocol")
    } else if name.starts_with("tasks/") {
        Some("the MCP Tasks extension")
    } else if name.starts_with("notifications/") {
        Some("the MCP protocol (notifications)")
    } else {
        None
    }
}

/// MCP tool names: 1–128 characters of `[A-Za-z0-9_.-]`, and not a method name of the protocol.
pub fn tool_name(name: &str) -> Result<(), String> {
    if let Some(owner) = reserved_method_owner(name) {
        return Err(format!("`{name}` is a reserved MCP method name owned by {owner}; choose another tool name"));
    }
    if name.is_empty() {
        return Err("tool names must not be empty".to_owned());
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Err(format!(
            "tool name `{name}` contains {bad:?}; tool names use only A-Z, a-z, 0-9, `_`, `.` and `-`"
        ));
    }
    let len = name.chars().count();
    if len > 128 {
        return Err(format!("tool name `{name}` is {len} characters long; the limit is 128"));
    }
    Ok(())
}

/// A hand-written input schema: valid JSON with `"type": "object"` at the root.
pub fn raw_input_schema(text: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("`input_schema` is not valid JSON: {e}"))?;
    match value.get("type") {
        Some(serde_json::Value::String(t)) if t == "object" => Ok(()),
        _ => {
            Err("`input_schema` must have `\"type\": \"object\"` at its root: tool arguments are a JSON object"
                .to_owned())
        }
    }
}

/// A MIME type of the form `type/subtype`.
pub fn mime_type(text: &str) -> Result<(), String> {
    match text.split_once('/') {
        Some((kind, sub)) if !kind.is_empty() && !sub.is_empty() && !text.contains(char::is_whitespace) => Ok(()),
        _ => Err(format!("`mime_type` {text:?} is not of the form `type/subtype`, e.g. `text/plain`")),
    }
}

fn report(cx: &Ctxt, span: Span, rule: Result<(), String>) {
    if let Err(msg) = rule {
        cx.error_at(span, msg);
    }
}

/// An explicit but blank value is a mistake, never a request for the default.
/// Tool names are left to [`tool_name`], which says more.
fn common_non_empty(cx: &Ctxt, common: &Common, with_name: bool) {
    if with_name {
        non_empty(cx, common.name.as_ref(), NAME.as_str());
    }
    non_empty(cx, common.title.as_ref(), TITLE.as_str());
    non_empty(cx, common.description.as_ref(), DESCRIPTION.as_str());
    non_empty(cx, common.group.as_ref(), GROUP.as_str());
}

fn non_empty(cx: &Ctxt, lit: Option<&LitStr>, what: &str) {
    if let Some(lit) = lit.filter(|l| l.value().trim().is_empty()) {
        cx.error_spanned_by(lit, format!("`{what}` must not be empty"));
    }
}

/// Tools and prompts are listed for a model to choose from, so they need a description.
fn description_required(cx: &Ctxt, kind: &str, name: &Named, explicit: Option<&LitStr>, handler: &Handler<'_>) {
    if explicit.is_none() && handler.docs.is_none() {
        cx.error_spanned_by(
            handler.ident,
            format!(
                "{kind} `{}` has no description: add a doc comment (`/// What it does`) or `description = \"...\"`",
                name.value
            ),
        );
    }
}

/// A read-only tool cannot also declare itself destructive.
fn hints_agree(cx: &Ctxt, attrs: &ToolAttrs) {
    if let (Some(read_only), Some(destructive)) = (attrs.hint(READ_ONLY), attrs.hint(DESTRUCTIVE))
        && read_only.value
        && destructive.value
    {
        cx.error_at(destructive.span, "a `read_only` tool cannot be `destructive`: it does not modify anything");
    }
}

pub fn check_tool(cx: &Ctxt, attrs: &ToolAttrs, name: &Named, handler: &Handler<'_>) {
    report(cx, name.span, tool_name(&name.value));
    common_non_empty(cx, &attrs.common, false);
    description_required(cx, "tool", name, attrs.common.description.as_ref(), handler);
    if let Some(schema) = &attrs.input_schema {
        report(cx, schema.span(), raw_input_schema(&schema.value()));
    }
    hints_agree(cx, attrs);
}

pub fn check_prompt(cx: &Ctxt, attrs: &PromptAttrs, name: &Named, handler: &Handler<'_>) {
    common_non_empty(cx, &attrs.common, true);
    description_required(cx, "prompt", name, attrs.common.description.as_ref(), handler);
}

/// Checks the resource keys; returns the template variables (empty for a static URI).
pub fn check_resource(cx: &Ctxt, attrs: &ResourceAttrs) -> Vec<String> {
    let Some(uri) = &attrs.uri else {
        cx.error_at(Span::call_site(), "`#[mcp_resource]` needs `uri = \"...\"` (a URI or a `{var}` template)");
        return Vec::new();
    };
    non_empty(cx, Some(uri), URI.as_str());
    common_non_empty(cx, &attrs.common, true);
    if let Some(mime) = &attrs.mime_type {
        report(cx, mime.span(), mime_type(&mime.value()));
    }
    match uri_template::variables(&uri.value()) {
        Ok(vars) => vars,
        Err(msg) => {
            cx.error_spanned_by(uri, format!("invalid URI template: {msg}"));
            Vec::new()
        }
    }
}

pub fn check_completion(cx: &Ctxt, attrs: &CompletionAttrs) {
    match (&attrs.prompt, &attrs.resource) {
        (Some(_), Some(resource)) => {
            cx.error_spanned_by(
                resource,
                "give either `prompt` or `resource`, not both: a handler completes one target",
            );
        }
        (None, None) => cx.error_at(
            Span::call_site(),
            "`#[mcp_completion]` needs a target: `prompt = \"prompt-name\"` or `resource = \"uri://{template}\"`",
        ),
        (Some(prompt), None) => non_empty(cx, Some(prompt), PROMPT.as_str()),
        (None, Some(resource)) => match uri_template::variables(&resource.value()) {
            Err(msg) => cx.error_spanned_by(resource, format!("invalid URI template: {msg}")),
            Ok(vars) if vars.is_empty() => cx.error_spanned_by(
                resource,
                "`resource` must be a URI template with `{variables}` to complete; a static URI has none",
            ),
            Ok(vars) => {
                if let Some(arg) = attrs.argument.as_ref().filter(|a| !vars.contains(&a.value())) {
                    let list: Vec<String> = vars.iter().map(|v| format!("`{v}`")).collect();
                    cx.error_spanned_by(
                        arg,
                        format!(
                            "`{}` is not a variable of this template (variables: {})",
                            arg.value(),
                            list.join(", ")
                        ),
                    );
                }
            }
        },
    }
    non_empty(cx, attrs.argument.as_ref(), ARGUMENT.as_str());
    non_empty(cx, attrs.group.as_ref(), GROUP.as_str());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_tool_names_pass() {
        for name in ["echo", "get_weather", "files.read-v2", "A", &"x".repeat(128)] {
            assert_eq!(tool_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn invalid_tool_names_say_why() {
        assert!(tool_name("").expect_err("empty").contains("must not be empty"));
        assert!(tool_name("get weather").expect_err("space").contains("contains ' '"));
        assert!(tool_name("wetter/heute").expect_err("slash").contains("contains '/'"));
        assert!(tool_name("café").expect_err("accent").contains("contains 'é'"));
        assert!(tool_name(&"x".repeat(129)).expect_err("long").contains("129 characters"));
    }

    #[test]
    fn reserved_method_names_name_their_owner() {
        for name in ["tools/call", "initialize", "ping", "server/discover", "subscriptions/listen"] {
            let err = tool_name(name).expect_err("reserved");
            assert!(err.contains("reserved MCP method name owned by the MCP protocol"), "{err}");
        }
        let err = tool_name("tasks/get").expect_err("reserved");
        assert!(err.contains("owned by the MCP Tasks extension"), "{err}");
        assert_eq!(reserved_method_owner("tools"), None);
        assert_eq!(reserved_method_owner("pings"), None);
    }

    #[test]
    fn raw_schema_must_be_an_object_schema() {
        assert_eq!(raw_input_schema(r#"{"type":"object","properties":{}}"#), Ok(()));
        assert!(raw_input_schema(r#"{"type":"object""#).expect_err("json").contains("not valid JSON"));
        assert!(raw_input_schema(r#"{"type":"string"}"#).expect_err("root").contains("\"type\": \"object\""));
        assert!(raw_input_schema("[]").expect_err("root").contains("\"type\": \"object\""));
    }

    #[test]
    fn mime_types_need_a_subtype() {
        assert_eq!(mime_type("text/plain"), Ok(()));
        assert_eq!(mime_type("application/vnd.api+json"), Ok(()));
        assert!(mime_type("text").is_err());
        assert!(mime_type("text/").is_err());
        assert!(mime_type("text /plain").is_err());
    }
}
