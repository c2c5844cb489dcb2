//! Validation: one small function per rule. Pure rules return `Result<(), String>` (unit-tested
//! below); the `check_*` functions apply them to a parsed attribute and report into the
//! [`Ctxt`] at the offending token.

use crate::ast::{self, FilterFn, FilterKind, Handler};
use crate::attr::{
    Common, CompletionAttrs, Eras, FilterAttrs, Named, PromptAttrs, ResourceAttrs, Roles, RpcAttrs,
    SubscriptionFieldAttrs, ToolAttrs,
};
use crate::ctxt::Ctxt;
use crate::symbol::{ARGUMENT, DESCRIPTION, DESTRUCTIVE, GROUP, NAME, PROMPT, READ_ONLY, ROUTING_NAME, TITLE, URI};
use crate::uri_template;
use crate::vocab::definitions::mime_type;
pub use crate::vocab::definitions::tool_name;
use crate::vocab::metadata::{check_icon_mime_type, check_icon_size, check_icon_src, check_icon_theme, check_meta_key};
use crate::vocab::methods::{self, LISTEN_KEYS};
use proc_macro2::Span;
use syn::{ItemFn, LitStr, Type};

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

/// An `#[mcp_rpc]` method name: vendor-prefixed (`acme/sum`) unless it is an official
/// extension's method in an MCP namespace (see [`methods::rpc_may_take`]), without whitespace,
/// not JSON-RPC's reserved `rpc.` prefix.
pub fn rpc_method_name(name: &str, extension: Option<&str>) -> Result<(), String> {
    if name.is_empty() {
        return Err("the method name must not be empty; RPC methods are vendor-prefixed, e.g. `acme/sum`".to_owned());
    }
    methods::rpc_may_take(name, extension)?;
    if name.contains(char::is_whitespace) {
        return Err(format!("method name {name:?} contains whitespace"));
    }
    if name.starts_with("rpc.") {
        return Err(format!("`{name}`: method names beginning with `rpc.` are reserved by JSON-RPC 2.0"));
    }
    if !name.contains('/') {
        return Err(format!("RPC method names are vendor-prefixed: write `vendor/{name}`, e.g. `acme/{name}`"));
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Err(format!("method name `{name}` has an empty segment; write `vendor/method`, e.g. `acme/sum`"));
    }
    Ok(())
}

/// `routing_name`: the params field that the HTTP `Mcp-Name` header mirrors.
pub fn routing_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("`routing_name` must not be empty: it names a field of the params, e.g. `taskId`".to_owned());
    }
    if name.contains(char::is_whitespace) {
        return Err(format!("`routing_name` {name:?} contains whitespace; it names a field of the params"));
    }
    Ok(())
}

/// `capability`: one top-level client capability such as `sampling`.
pub fn capability_name(name: &str) -> Result<(), String> {
    if name == "extensions" {
        return Err(
            "require an extension with `extension = \"vendor/name\"` (e.g. `extension = \"io.example/ext\"`), \
             not as a capability"
                .to_owned(),
        );
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-')) {
        return Err(format!(
            "`capability` {name:?} is not a client capability name; name one top-level capability, \
             e.g. `sampling`, `elicitation` or `roots`"
        ));
    }
    Ok(())
}

/// `extension`: an extension identifier `vendor-prefix/name`.
pub fn extension_id(id: &str) -> Result<(), String> {
    methods::extension_id(id).map_err(|msg| format!("`extension` {msg}"))
}

/// The marker types of the built-in methods that take typed filters.
const BUILTIN_MARKERS: &[(&str, &str)] =
    &[("tools/call", "ToolsCall"), ("prompts/get", "PromptsGet"), ("resources/read", "ResourcesRead")];

/// Why a filter cannot name `method` as a string: MCP's own methods are filtered through the
/// built-in filter kinds, and an RPC's types can only be checked through its handler.
pub fn filter_method(method: &str) -> String {
    let builtin = BUILTIN_MARKERS.iter().find(|(m, _)| *m == method);
    match (methods::method_owner(method), builtin) {
        (Some(_), Some((_, marker))) => format!(
            "filters on MCP's own methods come with the built-in filter kinds; `{method}` cannot be named here: \
             write `rpc = switchyard::methods::{marker}` for a typed filter on it, or leave `rpc` out for a raw \
             filter, which sees every request (`req.ctx.method()`)"
        ),
        (Some(_), None) => format!(
            "filters on MCP's own methods come with the built-in filter kinds; `{method}` cannot be named here: \
             leave `rpc` out for a raw filter, which sees every request (`req.ctx.method()`)"
        ),
        (None, _) => format!(
            "name the RPC's handler instead of its method: `rpc = <handler fn>` (the `async fn` annotated \
             `#[mcp_rpc(\"{method}\")]`), so that the filter's types can be checked against the method's"
        ),
    }
}

/// One name of `roles`: not blank and without surrounding whitespace (role names are compared
/// exactly, so `" admin"` would never match).
pub fn role_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("a role name must not be empty".to_owned());
    }
    if name.trim() != name {
        return Err(format!("role name {name:?} has leading or trailing whitespace; roles are compared exactly"));
    }
    Ok(())
}

/// `roles = [...]`: at least one role, each well-formed and listed once.
pub fn check_roles(cx: &Ctxt, roles: Option<&Roles>) {
    let empty = "`roles = []` names no role, and an empty list lets anyone in, which is the default: \
                 omit `roles`, or name at least one role";
    check_names(cx, roles, empty, "role", role_name);
}

/// A `roles` or `scopes` list: not empty (`empty` says why), each name passing `check` and
/// given once (`what` names one in the message).
fn check_names(cx: &Ctxt, list: Option<&Roles>, empty: &str, what: &str, check: fn(&str) -> Result<(), String>) {
    let Some(list) = list else {
        return;
    };
    if list.array.elems.is_empty() {
        cx.error_spanned_by(&list.array, empty);
        return;
    }
    let mut seen: Vec<String> = Vec::new();
    for lit in &list.names {
        let value = lit.value();
        if let Err(msg) = check(&value) {
            cx.error_spanned_by(lit, msg);
        } else if seen.contains(&value) {
            cx.error_spanned_by(lit, format!("{what} {value:?} is listed twice"));
        } else {
            seen.push(value);
        }
    }
}

/// One OAuth scope: a non-empty `scope-token` of RFC 6749 §3.3 (printable ASCII but space, `"`
/// and `\`), as it appears in a token's `scope` and in a `WWW-Authenticate` challenge.
pub fn scope_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a scope must not be empty".to_owned());
    }
    match name.chars().find(|c| !(('!'..='~').contains(c) && *c != '"' && *c != '\\')) {
        Some(' ') => {
            Err(format!("scope {name:?} holds a space, which separates scopes in a token: list each scope on its own"))
        }
        Some(c) => Err(format!(
            "scope {name:?} holds {c:?}; a scope is printable ASCII without spaces, `\"` or `\\` (RFC 6749 §3.3)"
        )),
        None => Ok(()),
    }
}

/// `scopes = [...]`: at least one scope, each a valid scope-token and listed once.
pub fn check_scopes(cx: &Ctxt, scopes: Option<&Roles>) {
    let empty = "`scopes = []` requires nothing, which is the default: omit `scopes`, or name at least one scope";
    check_names(cx, scopes, empty, "scope", scope_name);
}

/// Checks the `#[mcp_rpc]` keys against each other and the handler; returns the `T` and `E`
/// of the handler's `Result<T, E>` when it has that form.
pub fn check_rpc<'a>(cx: &Ctxt, attrs: &RpcAttrs, handler: &Handler<'a>) -> Option<(&'a Type, &'a Type)> {
    let extension = lit_value(attrs.extension.as_ref());
    if let Some(method) = &attrs.method {
        report(cx, method.span(), rpc_method_name(&method.value(), extension.as_deref()));
    }
    if let Some(params) = handler.params().filter(|ty| ast::is_unnameable(ty)) {
        cx.error_spanned_by(params, "the params type of an RPC is part of its declaration: name it, without `impl`");
    }
    if let Some(routing) = &attrs.routing_name {
        report(cx, routing.span(), routing_name(&routing.value()));
        if handler.params().is_none() && !routing.value().is_empty() {
            cx.error_spanned_by(
                routing,
                format!(
                    "`{ROUTING_NAME}` names a field of the params, but `{}` takes no params argument",
                    handler.ident
                ),
            );
        }
    }
    if let Some(capability) = &attrs.capability {
        report(cx, capability.span(), capability_name(&capability.value()));
    }
    if let (Some((_, span)), None) = (attrs.client_declares, &attrs.extension) {
        cx.error_at(span, "`client_declares` says whether requests must declare the `extension`, which is not given");
    }
    if let Some(ext) = &attrs.extension {
        report(cx, ext.span(), extension_id(&ext.value()));
        if let Some(eras) = attrs.eras.as_ref().filter(|e| e.value == Eras::Legacy) {
            cx.error_at(
                eras.span,
                "an `extension` method cannot be legacy-only: the extension is checked on 2026-07-28 requests \
                 only; use `eras = \"modern\"` (the default with `extension`) or `\"both\"`",
            );
        }
    }
    non_empty(cx, attrs.group.as_ref(), GROUP.as_str());
    check_roles(cx, attrs.roles.as_ref());
    check_scopes(cx, attrs.scopes.as_ref());
    rpc_return(cx, handler)
}

/// The `T` and `E` of an RPC handler's `Result<T, E>`; anything else is reported at the return
/// type.
fn rpc_return<'a>(cx: &Ctxt, handler: &Handler<'a>) -> Option<(&'a Type, &'a Type)> {
    const FORM: &str = "RPC handlers return `Result<T, McpError>` where `T: Serialize`";
    let Some(output) = handler.output else {
        cx.error_spanned_by(handler.ident, format!("{FORM}; this one returns nothing"));
        return None;
    };
    match ast::result_parts(output) {
        Some((result, _)) if ast::is_unnameable(result) => {
            cx.error_spanned_by(
                result,
                "the result type of an RPC is part of its declaration: name it, without `impl` or `_`",
            );
            None
        }
        Some(parts) => Some(parts),
        None if ast::last_segment_name(output).as_deref() == Some("Result") => {
            cx.error_spanned_by(
                output,
                format!("{FORM}; write both type arguments out (the macro reads `T` from the signature, and this `Result` alias hides the error type)"),
            );
            None
        }
        None => {
            cx.error_spanned_by(output, FORM);
            None
        }
    }
}

/// `#[mcp_filter]` keys: `method` is never accepted (see [`filter_method`]); `alternate` needs
/// the method, `rpc`.
pub fn check_filter(cx: &Ctxt, attrs: &FilterAttrs) {
    if let Some(method) = &attrs.method {
        cx.error_spanned_by(method, filter_method(&method.value()));
    }
    // With `method = ".."` instead of `rpc`, the error above already says how to name it.
    if let Some(flag) = attrs.alternate.as_ref().filter(|f| f.value && !attrs.typed) {
        cx.error_at(
            flag.span,
            "an alternate-result filter wraps the typed filters of one method; name the method with `rpc`: \
             `#[mcp_filter(alternate, rpc = handler)]` for an `#[mcp_rpc]` handler, or e.g. \
             `rpc = switchyard::methods::PromptsGet` for `prompts/get`",
        );
    }
    non_empty(cx, attrs.group.as_ref(), GROUP.as_str());
}

/// A typed filter taking `AltNext` is an alternate-result filter without its flag: one error
/// saying so, rather than the type errors at its `next` and return type that would follow.
pub fn check_filter_fn(cx: &Ctxt, kind: FilterKind, filter: &FilterFn<'_>) {
    if kind != FilterKind::Typed {
        return;
    }
    if let Some((_, next)) = filter.args
        && ast::last_segment_name(next).as_deref() == Some("AltNext")
    {
        cx.error_spanned_by(
            next,
            "`AltNext` is the `next` of alternate-result filters: mark this one \
             `#[mcp_filter(alternate, rpc = ...)]`, or take `Next<P, R>` for a typed filter",
        );
    }
}

/// A `#[subscription_field]` key: non-empty, without whitespace, and not one of the core keys.
pub fn subscription_field_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("the filter key must not be empty, e.g. `#[subscription_field(\"taskIds\")]`".to_owned());
    }
    if key.contains(char::is_whitespace) {
        return Err(format!("the filter key {key:?} must not contain whitespace"));
    }
    if LISTEN_KEYS.contains(&key) {
        return Err(format!(
            "`{key}` is a core key of the `subscriptions/listen` filter, answered by the runtime itself; \
             a subscription field processor takes a key of its own extension (the core keys are {})",
            LISTEN_KEYS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(())
}

/// The types of a subscription field processor: the requested value `T`, and the `G` and `E`
/// of its `Result<G, E>`. Every problem is reported; `None` when any part is missing.
pub struct GrantTypes<'a> {
    pub requested: &'a Type,
    pub granted: &'a Type,
    pub error: &'a Type,
}

/// `#[subscription_field]` keys and signature.
pub fn check_subscription_field<'a>(
    cx: &Ctxt,
    attrs: &SubscriptionFieldAttrs,
    handler: &Handler<'a>,
    func: &ItemFn,
) -> Option<GrantTypes<'a>> {
    if let Some(key) = &attrs.key {
        report(cx, key.span(), subscription_field_key(&key.value()));
    }
    if let Some(ext) = &attrs.extension {
        report(cx, ext.span(), extension_id(&ext.value()));
    }
    non_empty(cx, attrs.group.as_ref(), GROUP.as_str());
    let requested = match handler.params() {
        Some(ty) if ast::is_unnameable(ty) => {
            cx.error_spanned_by(
                ty,
                "the requested type of a subscription field processor must be named, without `impl`",
            );
            None
        }
        Some(ty) => Some(ty),
        None => {
            cx.error_at(
                func.sig.paren_token.span.join(),
                "a subscription field processor takes the value requested for its key as one argument \
                 (any `T: Deserialize`), e.g. `async fn grant(requested: Vec<String>, ctx: RequestContext)`",
            );
            None
        }
    };
    let returns = grant_return(cx, handler);
    let (requested, (granted, error)) = (requested?, returns?);
    Some(GrantTypes { requested, granted, error })
}

/// The `G` and `E` of a processor's `Result<G, E>`; anything else is reported at the return type.
fn grant_return<'a>(cx: &Ctxt, handler: &Handler<'a>) -> Option<(&'a Type, &'a Type)> {
    const FORM: &str = "subscription field processors return `Result<G, E>` where `G: Serialize` (the value \
                        granted) and `E: Into<McpError>`";
    let Some(output) = handler.output else {
        cx.error_spanned_by(handler.ident, format!("{FORM}; this one returns nothing"));
        return None;
    };
    match ast::result_parts(output) {
        Some((granted, _)) if ast::is_unnameable(granted) => {
            cx.error_spanned_by(granted, "name the granted type, without `impl` or `_`");
            None
        }
        Some(parts) => Some(parts),
        None if ast::last_segment_name(output).as_deref() == Some("Result") => {
            cx.error_spanned_by(
                output,
                format!("{FORM}; write both type arguments out (this `Result` alias hides the error type)"),
            );
            None
        }
        None => {
            cx.error_spanned_by(output, FORM);
            None
        }
    }
}

fn lit_value(lit: Option<&LitStr>) -> Option<String> {
    lit.map(LitStr::value)
}

pub fn report(cx: &Ctxt, span: Span, rule: Result<(), String>) {
    if let Err(msg) = rule {
        cx.error_at(span, msg);
    }
}

/// `icons` and `meta`: every icon field and every top-level `_meta` key by the rules the runtime
/// applies to run-time definitions, each error at its literal.
fn check_decoration(cx: &Ctxt, common: &Common) {
    for icon in common.icons.iter().flatten() {
        report(cx, icon.src.span(), check_icon_src(&icon.src.value()));
        if let Some(mime) = &icon.mime_type {
            report(cx, mime.span(), check_icon_mime_type(&mime.value()));
        }
        for size in &icon.sizes {
            report(cx, size.span(), check_icon_size(&size.value()));
        }
        if let Some(theme) = &icon.theme {
            report(cx, theme.span(), check_icon_theme(&theme.value()));
        }
    }
    if let Some(meta) = &common.meta {
        report(cx, meta.span(), meta_object(&meta.value()).map(drop));
    }
}

/// The text of `meta = "..."` as a JSON object whose keys follow the `_meta` naming rules.
pub fn meta_object(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("`meta` is not valid JSON: {e}"))?;
    let serde_json::Value::Object(map) = value else {
        return Err("`meta` must be a JSON object, e.g. `meta = r#\"{\"com.example/rank\": 1}\"#`".to_owned());
    };
    map.keys().try_for_each(|k| check_meta_key(k))?;
    Ok(map)
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
    check_decoration(cx, &attrs.common);
    description_required(cx, "tool", name, attrs.common.description.as_ref(), handler);
    if let Some(schema) = &attrs.input_schema {
        report(cx, schema.span(), raw_input_schema(&schema.value()));
    }
    hints_agree(cx, attrs);
    check_roles(cx, attrs.common.roles.as_ref());
    check_scopes(cx, attrs.common.scopes.as_ref());
    if let Some(mode) = &attrs.task_support {
        report(cx, mode.span(), task_support(&mode.value()).map(|_| ()));
    }
    if let Some(timeout) = &attrs.timeout {
        report(cx, timeout.span(), tool_timeout(&timeout.value()).map(|_| ()));
    }
    if let Some(rate) = &attrs.rate_limit {
        report(cx, rate.span(), rate_limit(&rate.value()).map(|_| ()));
    }
    if let Some(n) = &attrs.max_concurrency {
        report(cx, n.span(), max_concurrency(n).map(|_| ()));
    }
}

/// `timeout = "30s"`: the timeout in milliseconds, within the runtime's bounds.
pub fn tool_timeout(text: &str) -> Result<u64, String> {
    let ms = duration_ms(text).ok_or_else(|| {
        format!(
            "`timeout` takes a number and a unit (ms, s, min or h), e.g. \"500ms\", \"30s\", \"5min\"; not {text:?}"
        )
    })?;
    crate::vocab::limits::timeout(u128::from(ms))?;
    Ok(ms)
}

/// `rate_limit = "10/min"` (or `"100/15min"`): the calls and the period in milliseconds, within
/// the runtime's bounds.
pub fn rate_limit(text: &str) -> Result<(u32, u64), String> {
    let usage = || {
        format!(
            "`rate_limit` takes calls per period: \"10/s\", \"10/min\", \"100/h\", \"1000/day\" or \"100/15min\"; not {text:?}"
        )
    };
    let (calls, per) = text.split_once('/').ok_or_else(usage)?;
    let calls: u32 = calls.trim().parse().map_err(|_| usage())?;
    let per = per.trim();
    let per_ms = match per {
        "s" | "sec" | "second" => Some(1_000),
        "m" | "min" | "minute" => Some(60_000),
        "h" | "hour" => Some(3_600_000),
        "d" | "day" => Some(86_400_000),
        _ => duration_ms(per),
    }
    .ok_or_else(usage)?;
    crate::vocab::limits::rate_limit(calls, u128::from(per_ms))?;
    Ok((calls, per_ms))
}

/// `max_concurrency = 4`: at least 1, a `u32`.
pub fn max_concurrency(n: &syn::LitInt) -> Result<u32, String> {
    let n = n.base10_parse::<u32>().map_err(|e| format!("`max_concurrency` is a number of calls: {e}"))?;
    crate::vocab::limits::max_concurrency(n)?;
    Ok(n)
}

/// A whole number followed by a unit: `ms`, `s`, `m`/`min` or `h`, in milliseconds; `None` for
/// anything else (a fraction, a missing or unknown unit, an overflow).
fn duration_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// The `TaskSupport` variant named by `task_support = "..."`.
pub fn task_support(value: &str) -> Result<&'static str, String> {
    match value {
        "optional" => Ok("Optional"),
        "required" => Ok("Required"),
        "escalate" => Ok("Escalate"),
        other => Err(format!(
            "`task_support` takes \"optional\", \"required\" or \"escalate\", not {other:?}; \
             leave it out for a tool that never runs as a task"
        )),
    }
}

pub fn check_prompt(cx: &Ctxt, attrs: &PromptAttrs, name: &Named, handler: &Handler<'_>) {
    common_non_empty(cx, &attrs.common, true);
    check_decoration(cx, &attrs.common);
    description_required(cx, "prompt", name, attrs.common.description.as_ref(), handler);
    check_roles(cx, attrs.common.roles.as_ref());
    check_scopes(cx, attrs.common.scopes.as_ref());
}

/// Checks the resource keys; returns the template variables (empty for a static URI).
pub fn check_resource(cx: &Ctxt, attrs: &ResourceAttrs) -> Vec<String> {
    let Some(uri) = &attrs.uri else {
        cx.error_at(
            Span::call_site(),
            "`#[mcp_resource]` needs `uri = \"...\"` (a URI, or a template with `{var}` or `{+var}`)",
        );
        return Vec::new();
    };
    non_empty(cx, Some(uri), URI.as_str());
    common_non_empty(cx, &attrs.common, true);
    check_decoration(cx, &attrs.common);
    if let Some(size) = &attrs.size {
        if let Err(e) = size.base10_parse::<u64>() {
            cx.error_spanned_by(size, format!("`size` is a number of bytes: {e}"));
        } else if uri_template::is_template(&uri.value()) {
            cx.error_spanned_by(size, "`size` is for a static resource; a template's resources have their own sizes");
        }
    }
    if let Some(mime) = &attrs.mime_type {
        report(cx, mime.span(), mime_type(&mime.value()));
    }
    check_roles(cx, attrs.common.roles.as_ref());
    check_scopes(cx, attrs.common.scopes.as_ref());
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
    fn tool_limits_read_units_and_keep_the_runtime_bounds() {
        assert_eq!(tool_timeout("500ms"), Ok(500));
        assert_eq!(tool_timeout("30s"), Ok(30_000));
        assert_eq!(tool_timeout(" 5 min "), Ok(300_000));
        assert_eq!(tool_timeout("24h"), Ok(86_400_000));
        for bad in ["30", "1.5s", "s", "-1s", "30 seconds", "", "99999999999999999999h"] {
            assert!(tool_timeout(bad).expect_err(bad).contains("number and a unit"), "{bad}");
        }
        assert!(tool_timeout("0s").expect_err("zero").contains("at least 1 ms"));
        assert!(tool_timeout("25h").expect_err("long").contains("one day"));
        assert_eq!(rate_limit("10/min"), Ok((10, 60_000)));
        assert_eq!(rate_limit("10 / s"), Ok((10, 1_000)));
        assert_eq!(rate_limit("1000/day"), Ok((1000, 86_400_000)));
        assert_eq!(rate_limit("100/15min"), Ok((100, 900_000)));
        for bad in ["10", "ten/min", "10/fortnight", "10/", "/min", "-1/s"] {
            assert!(rate_limit(bad).expect_err(bad).contains("calls per period"), "{bad}");
        }
        assert!(rate_limit("0/min").expect_err("zero").contains("at least 1 call"));
        assert!(rate_limit("10/2d").expect_err("unit").contains("calls per period"));
        assert!(rate_limit("4000000000/1ms").expect_err("dense").contains("nanosecond"));
        let lit = |text: &str| syn::parse_str::<syn::LitInt>(text).expect("literal");
        assert_eq!(max_concurrency(&lit("4")), Ok(4));
        assert!(max_concurrency(&lit("0")).expect_err("zero").contains("at least 1"));
        assert!(max_concurrency(&lit("5000000000")).is_err());
    }

    #[test]
    fn subscription_field_keys() {
        assert!(subscription_field_key("taskIds").is_ok());
        assert!(subscription_field_key("io.example/jobs").is_ok());
        assert!(subscription_field_key("").expect_err("empty").contains("must not be empty"));
        assert!(subscription_field_key("task ids").expect_err("space").contains("whitespace"));
        for key in LISTEN_KEYS {
            assert!(subscription_field_key(key).expect_err("core").contains("is a core key"), "{key}");
        }
    }

    #[test]
    fn vendor_rpc_names_pass() {
        for name in ["acme/sum", "io.example/ext/run", "acme/jobs/status", "tools.acme/x", "acme/get-job_2"] {
            assert_eq!(rpc_method_name(name, None), Ok(()), "{name}");
        }
    }

    #[test]
    fn official_extensions_take_rpc_names_in_mcp_namespaces() {
        assert_eq!(rpc_method_name("tasks/get", Some("io.modelcontextprotocol/tasks")), Ok(()));
        assert_eq!(rpc_method_name("resources/directory/read", Some("io.modelcontextprotocol/skills")), Ok(()));
    }

    #[test]
    fn mcp_method_names_are_refused_with_their_owner() {
        for name in ["tools/call", "resources/templates/list", "ping", "initialize", "roots/list"] {
            let err = rpc_method_name(name, None).expect_err("core");
            assert!(
                err.contains("is a method of MCP itself; choose a vendor-prefixed name such as `acme/...`"),
                "{err}"
            );
            let err = rpc_method_name(name, Some("io.modelcontextprotocol/tasks")).expect_err("core");
            assert!(err.contains("which no extension may take"), "{err}");
        }
        for name in ["tools/anything", "notifications/progress", "tasks/get", "skills/list"] {
            let err = rpc_method_name(name, None).expect_err("namespace");
            assert!(
                err.contains("namespace") && err.contains("`extension = \"io.modelcontextprotocol/...\"`"),
                "{err}"
            );
            let err = rpc_method_name(name, Some("io.example/ext")).expect_err("vendor extension");
            assert!(err.contains("`io.example/ext` is not one of them"), "{err}");
        }
    }

    #[test]
    fn malformed_rpc_names_say_why() {
        let cases = [
            ("", "must not be empty"),
            ("sum", "write `vendor/sum`"),
            ("acme/get job", "contains whitespace"),
            ("rpc.acme/x", "reserved by JSON-RPC 2.0"),
            ("/sum", "empty segment"),
            ("acme/", "empty segment"),
            ("acme//sum", "empty segment"),
        ];
        for (name, expected) in cases {
            let err = rpc_method_name(name, None).expect_err(name);
            assert!(err.contains(expected), "{name}: {err}");
        }
    }

    #[test]
    fn rpc_key_values_are_checked() {
        assert_eq!(routing_name("taskId"), Ok(()));
        assert!(routing_name("").is_err());
        assert!(routing_name("task id").is_err());
        assert_eq!(capability_name("sampling"), Ok(()));
        assert_eq!(capability_name("x-vendor_cap"), Ok(()));
        assert!(capability_name("").is_err());
        assert!(capability_name("sampling.tools").is_err());
        assert!(capability_name("extensions").expect_err("ext").contains("`extension = "));
        assert_eq!(extension_id("io.modelcontextprotocol/tasks"), Ok(()));
        for bad in ["", "ext", "/ext", "io.x/", "io.x/a b"] {
            let err = extension_id(bad).expect_err(bad);
            assert!(err.starts_with(&format!("`extension` {bad:?} is not an extension identifier")), "{err}");
        }
    }

    #[test]
    fn filters_cannot_name_methods_as_strings() {
        let msg = filter_method("tools/call");
        assert!(msg.starts_with("filters on MCP's own methods come with the built-in filter kinds"), "{msg}");
        assert!(msg.contains("`tools/call` cannot be named here"), "{msg}");
        assert!(msg.contains("`rpc = switchyard::methods::ToolsCall`"), "{msg}");
        for method in ["ping", "tasks/get"] {
            let msg = filter_method(method);
            assert!(msg.contains("cannot be named here") && msg.contains("raw filter"), "{msg}");
        }
        let msg = filter_method("acme/sum");
        assert!(msg.contains("`rpc = <handler fn>`") && msg.contains("#[mcp_rpc(\"acme/sum\")]"), "{msg}");
    }

    #[test]
    fn role_names_are_exact_and_not_blank() {
        assert_eq!(role_name("admin"), Ok(()));
        assert_eq!(role_name("billing:read"), Ok(()));
        assert!(role_name("").expect_err("empty").contains("must not be empty"));
        assert!(role_name("  ").expect_err("blank").contains("must not be empty"));
        assert!(role_name(" admin").expect_err("space").contains("leading or trailing whitespace"));
    }

    fn role_errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
        let cx = Ctxt::new();
        let attrs = crate::attr::PromptAttrs::parse(&cx, tokens);
        check_roles(&cx, attrs.common.roles.as_ref());
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn roles_are_listed_once_and_not_empty() {
        use quote::quote;
        assert!(role_errors(quote!(roles = ["admin", "ops"])).is_empty());
        let errors = role_errors(quote!(roles = []));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("omit `roles`"), "{errors:?}");
        let errors = role_errors(quote!(roles = ["a", "", "a", " b", "a"]));
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].contains("must not be empty"), "{errors:?}");
        assert!(errors[1].contains("\"a\" is listed twice"), "{errors:?}");
        assert!(errors[2].contains("leading or trailing whitespace"), "{errors:?}");
        assert!(errors[3].contains("\"a\" is listed twice"), "{errors:?}");
    }

    #[test]
    fn typed_filter_taking_alt_next_is_told_to_add_alternate() {
        let func: syn::ItemFn = syn::parse_quote! {
            async fn f(r: TypedRequest<P>, n: switchyard::AltNext<P, R>) -> Result<Alternate<R>, McpError> {}
        };
        for (kind, expected) in [(FilterKind::Typed, 1), (FilterKind::Alternate, 0), (FilterKind::Raw, 0)] {
            let cx = Ctxt::new();
            let filter = FilterFn::from_fn(&cx, &func, kind);
            check_filter_fn(&cx, kind, &filter);
            let errors: Vec<String> = match cx.check() {
                Ok(()) => Vec::new(),
                Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
            };
            assert_eq!(errors.len(), expected, "{kind:?}: {errors:?}");
            if let Some(error) = errors.first() {
                assert!(error.contains("mark this one `#[mcp_filter(alternate, rpc = ...)]`"), "{error}");
            }
        }
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

    #[test]
    fn task_support_names_three_modes() {
        assert_eq!(task_support("optional"), Ok("Optional"));
        assert_eq!(task_support("required"), Ok("Required"));
        assert_eq!(task_support("escalate"), Ok("Escalate"));
        for bad in ["forbidden", "Optional", "", "always"] {
            assert!(task_support(bad).expect_err(bad).contains("\"optional\", \"required\" or \"escalate\""), "{bad}");
        }
    }
}
