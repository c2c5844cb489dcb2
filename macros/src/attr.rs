//! The attribute arguments of each macro, parsed into typed structs.
//!
//! Parsing never stops at the first problem: an unknown key, a key given twice or a value of the
//! wrong kind is reported at its own tokens and the remaining keys are still read.

use crate::ctxt::Ctxt;
use crate::symbol::{
    ALTERNATE, ARGUMENT, CAPABILITY, CLIENT_DECLARES, DECLARED, DESCRIPTION, DESTRUCTIVE, ERAS, EXTENSION, GROUP,
    ICONS, IDEMPOTENT, INPUT_SCHEMA, KEY, MAX_CONCURRENCY, META, METHOD, MIME_TYPE, NAME, OPEN_WORLD, ORDER, PROMPT,
    RATE_LIMIT, READ_ONLY, RESOURCE, ROLES, ROUTING_NAME, RPC, SCOPES, SIZE, SIZES, SRC, Symbol, TASK_SUPPORT, THEME,
    TIMEOUT, TITLE, URI,
};
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, ExprPath, ExprUnary, Ident, Lit, LitInt, LitStr, Meta, Path, Token, UnOp};

/// A name-like value after defaults: the literal when given, else the function's name.
pub struct Named {
    pub value: String,
    /// The literal's span, or the function name's when defaulted: errors and the crate-wide
    /// duplicate guard point there.
    pub span: Span,
}

impl Named {
    pub fn literal_or_ident(lit: Option<&LitStr>, ident: &Ident) -> Named {
        match lit {
            Some(lit) => Named { value: lit.value(), span: lit.span() },
            None => Named { value: ident.unraw().to_string(), span: ident.span() },
        }
    }
}

/// Keys shared by tools, prompts and resources.
#[derive(Default)]
pub struct Common {
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub group: Option<LitStr>,
    pub roles: Option<Roles>,
    pub scopes: Option<Roles>,
    /// `icons = [...]`, each element parsed; checked by `check::check_decoration`.
    pub icons: Option<Vec<IconLit>>,
    /// `meta = r#"{...}"#`: a JSON object as text; checked by `check::check_decoration`.
    pub meta: Option<LitStr>,
}

const COMMON_KEYS: [Symbol; 8] = [NAME, TITLE, DESCRIPTION, GROUP, ROLES, SCOPES, ICONS, META];

impl Common {
    /// Takes `key` if it is a common one; false otherwise.
    fn accept(&mut self, cx: &Ctxt, key: Symbol, meta: &Meta) -> bool {
        if key == ROLES {
            self.roles = names(cx, meta, ListKind::Roles);
            return true;
        }
        if key == SCOPES {
            self.scopes = names(cx, meta, ListKind::Scopes);
            return true;
        }
        if key == ICONS {
            self.icons = icons(cx, meta);
            return true;
        }
        let slot = match key {
            k if k == NAME => &mut self.name,
            k if k == TITLE => &mut self.title,
            k if k == DESCRIPTION => &mut self.description,
            k if k == GROUP => &mut self.group,
            k if k == META => &mut self.meta,
            _ => return false,
        };
        *slot = string(cx, key, meta);
        true
    }
}

/// `roles = ["admin", ...]` or `scopes = ["files:read", ...]` as written. Only its form is
/// checked here; the names are checked by `check::check_roles` and `check::check_scopes`.
pub struct Roles {
    /// The elements that are string literals, in order (any other element is reported).
    pub names: Vec<LitStr>,
    /// The whole `[...]`, for errors about the list itself.
    pub array: ExprArray,
}

impl Roles {
    /// The role names, in the order written.
    pub fn values(&self) -> Vec<String> {
        self.names.iter().map(LitStr::value).collect()
    }
}

/// Which list of names a key holds.
#[derive(Clone, Copy)]
enum ListKind {
    Roles,
    Scopes,
}

impl ListKind {
    /// The key, a name of it, and an example list.
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            ListKind::Roles => ("roles", "role", "[\"admin\", \"ops\"]"),
            ListKind::Scopes => ("scopes", "scope", "[\"files:read\", \"files:write\"]"),
        }
    }
}

/// The array of `roles = [...]` or `scopes = [...]`; anything else, and any element that is not
/// a string literal, is reported.
fn names(cx: &Ctxt, meta: &Meta, kind: ListKind) -> Option<Roles> {
    let (key, one, example) = kind.words();
    let usage = format!("`{key}` takes an array of {one} names, e.g. `{key} = {example}`");
    let Meta::NameValue(nv) = meta else {
        cx.error_spanned_by(meta, usage);
        return None;
    };
    let array = match &nv.value {
        Expr::Array(array) if array.attrs.is_empty() => array,
        Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => {
            cx.error_spanned_by(
                lit,
                format!("`{key}` takes an array, also for a single {one}: `{key} = [{:?}]`", lit.value()),
            );
            return None;
        }
        Expr::Path(path) => {
            cx.error_spanned_by(
                path,
                format!(
                    "`{key}` lists the {one} names themselves, e.g. `{key} = {example}`: \
                     the macro checks them and cannot read a constant"
                ),
            );
            return None;
        }
        other => {
            cx.error_spanned_by(other, usage);
            return None;
        }
    };
    let mut names = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Lit(ExprLit { lit: Lit::Str(name), attrs }) if attrs.is_empty() => names.push(name.clone()),
            other => cx.error_spanned_by(other, format!("{one} names are string literals, e.g. `{key} = {example}`")),
        }
    }
    Some(Roles { names, array: array.clone() })
}

/// One element of `icons = [...]`: `"https://…"` (the `src` alone) or
/// `icon(src = "…", mime_type = "image/png", sizes = ["48x48"], theme = "dark")`.
pub struct IconLit {
    pub src: LitStr,
    pub mime_type: Option<LitStr>,
    pub sizes: Vec<LitStr>,
    pub theme: Option<LitStr>,
}

const ICON_USAGE: &str = "`icons` takes an array of URLs or `icon(...)` entries, e.g. \
     `icons = [\"https://example.com/a.png\", icon(src = \"data:image/svg+xml;base64,...\", mime_type = \"image/svg+xml\", sizes = [\"any\"], theme = \"dark\")]`";

/// The array of `icons = [...]`; a malformed element is reported and skipped.
fn icons(cx: &Ctxt, meta: &Meta) -> Option<Vec<IconLit>> {
    let array = match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Array(array) => array,
            other => {
                cx.error_spanned_by(other, ICON_USAGE);
                return None;
            }
        },
        other => {
            cx.error_spanned_by(other, ICON_USAGE);
            return None;
        }
    };
    let mut out = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Lit(ExprLit { lit: Lit::Str(src), .. }) => {
                out.push(IconLit { src: src.clone(), mime_type: None, sizes: Vec::new(), theme: None })
            }
            Expr::Call(call) if matches!(&*call.func, Expr::Path(p) if p.path.is_ident("icon")) => {
                if let Some(icon) = icon_call(cx, call) {
                    out.push(icon);
                }
            }
            other => cx.error_spanned_by(other, ICON_USAGE),
        }
    }
    Some(out)
}

/// `icon(src = "…", mime_type = "…", sizes = [...], theme = "…")`.
fn icon_call(cx: &Ctxt, call: &syn::ExprCall) -> Option<IconLit> {
    let (mut src, mut mime_type, mut sizes, mut theme) = (None, None, Vec::new(), None);
    let mut seen: Vec<String> = Vec::new();
    for arg in &call.args {
        let Expr::Assign(assign) = arg else {
            cx.error_spanned_by(arg, "`icon(...)` takes `key = value` arguments: src, mime_type, sizes, theme");
            continue;
        };
        let key = quote::ToTokens::to_token_stream(&assign.left).to_string();
        if seen.contains(&key) {
            cx.error_spanned_by(&assign.left, format!("`{key}` is given twice"));
            continue;
        }
        seen.push(key.clone());
        let lit = |cx: &Ctxt| match &*assign.right {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
            other => {
                cx.error_spanned_by(other, format!("`{key}` takes a string literal"));
                None
            }
        };
        match key.as_str() {
            k if k == SRC.as_str() => src = lit(cx),
            k if k == MIME_TYPE.as_str() => mime_type = lit(cx),
            k if k == THEME.as_str() => theme = lit(cx),
            k if k == SIZES.as_str() => match &*assign.right {
                Expr::Array(a) => {
                    for e in &a.elems {
                        match e {
                            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => sizes.push(s.clone()),
                            other => cx.error_spanned_by(other, "sizes are string literals, e.g. `[\"48x48\"]`"),
                        }
                    }
                }
                other => cx.error_spanned_by(other, "`sizes` takes an array, e.g. `sizes = [\"48x48\", \"any\"]`"),
            },
            _ => cx.error_spanned_by(
                &assign.left,
                format!("unknown `icon` key `{key}` (expected one of: src, mime_type, sizes, theme)"),
            ),
        }
    }
    if src.is_none() {
        cx.error_spanned_by(call, "`icon(...)` needs `src = \"https://...\"`");
    }
    Some(IconLit { src: src?, mime_type, sizes, theme })
}

/// One tool annotation hint (`read_only` → `readOnlyHint`).
pub struct Hint {
    pub key: Symbol,
    /// The property name in the MCP `ToolAnnotations` object.
    pub json_key: &'static str,
    pub value: bool,
    /// The key's tokens, for errors about combinations.
    pub span: Span,
}

const HINTS: [(Symbol, &str); 4] = [
    (READ_ONLY, "readOnlyHint"),
    (DESTRUCTIVE, "destructiveHint"),
    (IDEMPOTENT, "idempotentHint"),
    (OPEN_WORLD, "openWorldHint"),
];

/// `#[mcp_tool(...)]`.
#[derive(Default)]
pub struct ToolAttrs {
    pub common: Common,
    pub input_schema: Option<LitStr>,
    pub hints: Vec<Hint>,
    /// `task_support = "optional" | "required" | "escalate"` as written; checked by `check::check_tool`.
    pub task_support: Option<LitStr>,
    /// `declared = api::greet`: the body-less declaration this handler implements.
    pub declared: Option<Path>,
    /// `timeout = "30s"` as written; checked by `check::check_tool`.
    pub timeout: Option<LitStr>,
    /// `rate_limit = "10/min"` as written; checked by `check::check_tool`.
    pub rate_limit: Option<LitStr>,
    /// `max_concurrency = 4`.
    pub max_concurrency: Option<LitInt>,
}

impl ToolAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> ToolAttrs {
        let mut attrs = ToolAttrs::default();
        let keys: Vec<Symbol> = COMMON_KEYS
            .into_iter()
            .chain([INPUT_SCHEMA, TASK_SUPPORT, DECLARED, TIMEOUT, RATE_LIMIT, MAX_CONCURRENCY])
            .chain(HINTS.map(|h| h.0))
            .collect();
        for_each_key(cx, "mcp_tool", tokens, &keys, |key, meta| {
            if attrs.common.accept(cx, key, meta) {
                return;
            }
            if key == INPUT_SCHEMA {
                attrs.input_schema = string(cx, key, meta);
            } else if key == TASK_SUPPORT {
                attrs.task_support = string(cx, key, meta);
            } else if key == DECLARED {
                attrs.declared = declared_path(cx, meta, "mcp_tool");
            } else if key == TIMEOUT {
                attrs.timeout = string(cx, key, meta);
            } else if key == RATE_LIMIT {
                attrs.rate_limit = string(cx, key, meta);
            } else if key == MAX_CONCURRENCY {
                attrs.max_concurrency =
                    integer(cx, meta, "`max_concurrency` takes a number of calls, e.g. `max_concurrency = 4`");
            } else if let Some(&(_, json_key)) = HINTS.iter().find(|h| h.0 == key)
                && let Some(value) = flag(cx, key, meta)
            {
                attrs.hints.push(Hint { key, json_key, value, span: meta.span() });
            }
        });
        attrs
    }

    /// The hint given for `key`, if any.
    pub fn hint(&self, key: Symbol) -> Option<&Hint> {
        self.hints.iter().find(|h| h.key == key)
    }
}

/// `#[mcp_prompt(...)]`.
#[derive(Default)]
pub struct PromptAttrs {
    pub common: Common,
}

impl PromptAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> PromptAttrs {
        let mut attrs = PromptAttrs::default();
        for_each_key(cx, "mcp_prompt", tokens, &COMMON_KEYS, |key, meta| {
            attrs.common.accept(cx, key, meta);
        });
        attrs
    }
}

/// `#[mcp_resource(...)]`.
#[derive(Default)]
pub struct ResourceAttrs {
    pub uri: Option<LitStr>,
    pub common: Common,
    pub mime_type: Option<LitStr>,
    /// `size = 1024`: the contents' size in bytes (static resources).
    pub size: Option<LitInt>,
}

impl ResourceAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> ResourceAttrs {
        let mut attrs = ResourceAttrs::default();
        let keys: Vec<Symbol> = [URI].into_iter().chain(COMMON_KEYS).chain([MIME_TYPE, SIZE]).collect();
        for_each_key(cx, "mcp_resource", tokens, &keys, |key, meta| {
            if attrs.common.accept(cx, key, meta) {
                return;
            }
            if key == URI {
                attrs.uri = string(cx, key, meta);
            } else if key == MIME_TYPE {
                attrs.mime_type = string(cx, key, meta);
            } else if key == SIZE {
                attrs.size = integer(cx, meta, "`size` takes the size in bytes, e.g. `size = 1024`");
            }
        });
        attrs
    }
}

/// `#[mcp_completion(...)]`.
#[derive(Default)]
pub struct CompletionAttrs {
    pub prompt: Option<LitStr>,
    pub resource: Option<LitStr>,
    pub argument: Option<LitStr>,
    pub group: Option<LitStr>,
}

impl CompletionAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> CompletionAttrs {
        let mut attrs = CompletionAttrs::default();
        for_each_key(cx, "mcp_completion", tokens, &[PROMPT, RESOURCE, ARGUMENT, GROUP], |key, meta| {
            let slot = match key {
                k if k == PROMPT => &mut attrs.prompt,
                k if k == RESOURCE => &mut attrs.resource,
                k if k == ARGUMENT => &mut attrs.argument,
                k if k == GROUP => &mut attrs.group,
                _ => return,
            };
            *slot = string(cx, key, meta);
        });
        attrs
    }
}

/// One comma-separated attribute argument: a bare literal (the method name of `#[mcp_rpc]`) or
/// a key.
enum AttrArg {
    Positional(Lit),
    Key(Box<Meta>),
}

impl Parse for AttrArg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(Lit) {
            input.parse().map(AttrArg::Positional)
        } else {
            input.parse().map(|meta| AttrArg::Key(Box::new(meta)))
        }
    }
}

/// The comma-separated arguments; a syntax error is reported and yields none.
fn parse_args(cx: &Ctxt, tokens: TokenStream) -> Vec<AttrArg> {
    match Punctuated::<AttrArg, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(args) => args.into_iter().collect(),
        Err(err) => {
            cx.syn_error(err);
            Vec::new()
        }
    }
}

/// Calls `f` once for each well-formed, allowed, first-time key; a bare value is reported.
fn for_each_key(cx: &Ctxt, macro_name: &str, tokens: TokenStream, allowed: &[Symbol], f: impl FnMut(Symbol, &Meta)) {
    let mut metas = Vec::new();
    for arg in parse_args(cx, tokens) {
        match arg {
            AttrArg::Key(meta) => metas.push(*meta),
            AttrArg::Positional(lit) => cx.error_spanned_by(
                lit,
                format!("`#[{macro_name}]` takes only `key = value` arguments; this value has no key"),
            ),
        }
    }
    visit_keys(cx, macro_name, &metas, allowed, f);
}

/// Calls `f` once for each allowed, first-time key of `metas`; unknown and repeated keys are
/// reported.
fn visit_keys(cx: &Ctxt, macro_name: &str, metas: &[Meta], allowed: &[Symbol], mut f: impl FnMut(Symbol, &Meta)) {
    let mut seen: Vec<Symbol> = Vec::new();
    for meta in metas {
        let path = meta.path();
        let Some(key) = allowed.iter().copied().find(|k| path == *k) else {
            let written = quote::ToTokens::to_token_stream(path).to_string().replace(' ', "");
            let expected: Vec<&str> = allowed.iter().map(|k| k.as_str()).collect();
            let hint = match closest(&written, &expected) {
                Some(guess) => format!("; did you mean `{guess}`?"),
                None => String::new(),
            };
            cx.error_spanned_by(
                path,
                format!("unknown `{macro_name}` key `{written}`{hint} (expected one of: {})", expected.join(", ")),
            );
            continue;
        };
        if seen.contains(&key) {
            cx.error_spanned_by(path, format!("`{key}` is given twice"));
            continue;
        }
        seen.push(key);
        f(key, meta);
    }
}

/// Which protocol eras an RPC is served in (`eras = "..."`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Eras {
    Modern,
    Legacy,
    Both,
}

impl Eras {
    const ALL: [(&'static str, Eras); 3] = [("modern", Eras::Modern), ("legacy", Eras::Legacy), ("both", Eras::Both)];

    /// The value of `eras = "..."`, if it is one of the three words.
    pub fn from_word(word: &str) -> Option<Eras> {
        Eras::ALL.iter().find(|(w, _)| *w == word).map(|(_, e)| *e)
    }

    /// The name of the runtime's `Eras` variant.
    pub fn variant(self) -> &'static str {
        match self {
            Eras::Modern => "Modern",
            Eras::Legacy => "Legacy",
            Eras::Both => "Both",
        }
    }
}

/// `eras = "..."` as given.
pub struct ErasAttr {
    pub value: Eras,
    pub span: Span,
}

/// `#[mcp_rpc("vendor/method", ...)]`.
#[derive(Default)]
pub struct RpcAttrs {
    /// The positional method name.
    pub method: Option<LitStr>,
    pub routing_name: Option<LitStr>,
    pub capability: Option<LitStr>,
    pub extension: Option<LitStr>,
    /// `client_declares = false`: the request need not declare `extension`; with its span.
    pub client_declares: Option<(bool, Span)>,
    pub eras: Option<ErasAttr>,
    pub group: Option<LitStr>,
    pub roles: Option<Roles>,
    pub scopes: Option<Roles>,
    /// `declared = api::sum`: the body-less declaration this handler implements.
    pub declared: Option<Path>,
}

const RPC_EXAMPLE: &str = "`#[mcp_rpc(\"acme/sum\")]`";

impl RpcAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> RpcAttrs {
        let mut attrs = RpcAttrs::default();
        let mut metas = Vec::new();
        // Whether the method name was attempted at all, so that one mistake is one error.
        let mut method_attempted = false;
        for (i, arg) in parse_args(cx, tokens).into_iter().enumerate() {
            match arg {
                AttrArg::Positional(Lit::Str(lit)) if i == 0 => attrs.method = Some(lit),
                AttrArg::Positional(lit) if i == 0 => {
                    method_attempted = true;
                    cx.error_spanned_by(lit, format!("the method name is a string literal, e.g. {RPC_EXAMPLE}"));
                }
                AttrArg::Positional(lit) => {
                    method_attempted = true;
                    let msg = if attrs.method.is_some() {
                        "an RPC has one method name; the other arguments are `key = value`".to_owned()
                    } else {
                        "the method name comes first, e.g. `#[mcp_rpc(\"acme/sum\", group = \"...\")]`".to_owned()
                    };
                    cx.error_spanned_by(lit, msg);
                }
                AttrArg::Key(meta) if meta.path() == METHOD || meta.path() == NAME => {
                    method_attempted = true;
                    cx.error_spanned_by(
                        meta.path(),
                        format!("the method name is the first argument and takes no key: {RPC_EXAMPLE}"),
                    );
                }
                AttrArg::Key(meta) => metas.push(*meta),
            }
        }
        if attrs.method.is_none() && !method_attempted {
            cx.error_at(Span::call_site(), format!("`#[mcp_rpc]` needs the method name first: {RPC_EXAMPLE}"));
        }
        let keys = [ROUTING_NAME, CAPABILITY, EXTENSION, CLIENT_DECLARES, ERAS, GROUP, ROLES, SCOPES, DECLARED];
        visit_keys(cx, "mcp_rpc", &metas, &keys, |key, meta| {
            if key == DECLARED {
                attrs.declared = declared_path(cx, meta, "mcp_rpc");
                return;
            }
            if key == CLIENT_DECLARES {
                let span = meta.span();
                attrs.client_declares = flag(cx, key, meta).map(|v| (v, span));
                return;
            }
            if key == ERAS {
                attrs.eras = string(cx, key, meta).and_then(|lit| eras(cx, &lit));
                return;
            }
            if key == ROLES {
                attrs.roles = names(cx, meta, ListKind::Roles);
                return;
            }
            if key == SCOPES {
                attrs.scopes = names(cx, meta, ListKind::Scopes);
                return;
            }
            let slot = match key {
                k if k == ROUTING_NAME => &mut attrs.routing_name,
                k if k == CAPABILITY => &mut attrs.capability,
                k if k == EXTENSION => &mut attrs.extension,
                k if k == GROUP => &mut attrs.group,
                _ => return,
            };
            *slot = string(cx, key, meta);
        });
        attrs
    }

    /// The eras served: as given, else modern-only for an extension method, else both.
    pub fn eras(&self) -> Eras {
        match (&self.eras, &self.extension) {
            (Some(given), _) => given.value,
            (None, Some(_)) => Eras::Modern,
            (None, None) => Eras::Both,
        }
    }
}

/// `#[subscription_field("key", ...)]`.
#[derive(Default)]
pub struct SubscriptionFieldAttrs {
    /// The positional filter key.
    pub key: Option<LitStr>,
    pub extension: Option<LitStr>,
    pub group: Option<LitStr>,
}

const FIELD_EXAMPLE: &str = "`#[subscription_field(\"taskIds\")]`";

impl SubscriptionFieldAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> SubscriptionFieldAttrs {
        let mut attrs = SubscriptionFieldAttrs::default();
        let mut metas = Vec::new();
        // Whether the key was attempted at all, so that one mistake is one error.
        let mut key_attempted = false;
        for (i, arg) in parse_args(cx, tokens).into_iter().enumerate() {
            match arg {
                AttrArg::Positional(Lit::Str(lit)) if i == 0 => attrs.key = Some(lit),
                AttrArg::Positional(lit) if i == 0 => {
                    key_attempted = true;
                    cx.error_spanned_by(lit, format!("the filter key is a string literal, e.g. {FIELD_EXAMPLE}"));
                }
                AttrArg::Positional(lit) => {
                    key_attempted = true;
                    let msg = if attrs.key.is_some() {
                        "a subscription field has one key; the other arguments are `key = value`"
                    } else {
                        "the filter key comes first, e.g. `#[subscription_field(\"taskIds\", group = \"...\")]`"
                    };
                    cx.error_spanned_by(lit, msg);
                }
                AttrArg::Key(meta) if meta.path() == KEY || meta.path() == NAME => {
                    key_attempted = true;
                    cx.error_spanned_by(
                        meta.path(),
                        format!("the filter key is the first argument and takes no key: {FIELD_EXAMPLE}"),
                    );
                }
                AttrArg::Key(meta) => metas.push(*meta),
            }
        }
        if attrs.key.is_none() && !key_attempted {
            cx.error_at(
                Span::call_site(),
                format!("`#[subscription_field]` needs the filter key first: {FIELD_EXAMPLE}"),
            );
        }
        visit_keys(cx, "subscription_field", &metas, &[EXTENSION, GROUP], |key, meta| {
            let slot = match key {
                k if k == EXTENSION => &mut attrs.extension,
                k if k == GROUP => &mut attrs.group,
                _ => return,
            };
            *slot = string(cx, key, meta);
        });
        attrs
    }
}

fn eras(cx: &Ctxt, lit: &LitStr) -> Option<ErasAttr> {
    let word = lit.value();
    if let Some(value) = Eras::from_word(&word) {
        return Some(ErasAttr { value, span: lit.span() });
    }
    let words = Eras::ALL.map(|(w, _)| w);
    let hint = match closest(&word, &words) {
        Some(guess) => format!("; did you mean \"{guess}\"?"),
        None => String::new(),
    };
    cx.error_spanned_by(lit, format!("`eras` is \"modern\", \"legacy\" or \"both\"{hint}"));
    None
}

/// A flag key as given: `key` (true) or `key = true|false`.
pub struct Flag {
    pub value: bool,
    /// The key's span.
    pub span: Span,
}

/// `#[mcp_filter(...)]`.
#[derive(Default)]
pub struct FilterAttrs {
    /// `alternate`: an alternate-result filter (with `rpc`).
    pub alternate: Option<Flag>,
    pub order: Option<i32>,
    pub group: Option<LitStr>,
    /// The method of a typed filter: an `#[mcp_rpc]` handler (naming its marker type) or
    /// another `RpcMethod` type.
    pub rpc: Option<Path>,
    /// `method = "..."`: always an error, kept to say why.
    pub method: Option<LitStr>,
    /// Whether `rpc` or `method` was written, valid or not: the filter is meant to be typed.
    pub typed: bool,
    /// Whether `alternate` was written with a value that is no flag (reported): the filter is
    /// still meant to be an alternate-result one.
    pub alternate_malformed: bool,
}

impl FilterAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> FilterAttrs {
        let mut attrs = FilterAttrs::default();
        let keys = [RPC, ALTERNATE, ORDER, GROUP, METHOD];
        for_each_key(cx, "mcp_filter", tokens, &keys, |key, meta| match key {
            k if k == RPC => {
                attrs.typed = true;
                attrs.rpc = rpc_path(cx, meta);
            }
            k if k == ALTERNATE => {
                attrs.alternate = flag(cx, key, meta).map(|value| Flag { value, span: meta.path().span() });
                attrs.alternate_malformed = attrs.alternate.is_none();
            }
            k if k == ORDER => attrs.order = order(cx, meta),
            k if k == GROUP => attrs.group = string(cx, key, meta),
            k if k == METHOD => {
                attrs.typed = true;
                attrs.method = string(cx, key, meta);
            }
            _ => {}
        });
        attrs
    }

    /// Whether this is an alternate-result filter (`alternate` or `alternate = true`).
    pub fn is_alternate(&self) -> bool {
        self.alternate.as_ref().is_some_and(|flag| flag.value)
    }

    /// Whether the filter is meant to be an alternate-result one: `alternate` with a valid or a
    /// malformed value (`alternate = "yes"`), so that its signature is judged as one.
    pub fn meant_alternate(&self) -> bool {
        self.is_alternate() || self.alternate_malformed
    }
}

/// The path of `rpc = handler`.
fn rpc_path(cx: &Ctxt, meta: &Meta) -> Option<Path> {
    let Meta::NameValue(nv) = meta else {
        cx.error_spanned_by(meta, "`rpc` names the `#[mcp_rpc]` handler function: `rpc = handler`");
        return None;
    };
    match &nv.value {
        Expr::Path(ExprPath { attrs, qself: None, path }) if attrs.is_empty() => Some(path.clone()),
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
            cx.error_spanned_by(
                s,
                format!(
                    "`rpc` names the `#[mcp_rpc]` handler function, not the method: write `rpc = handler` \
                     for the function annotated `#[mcp_rpc(\"{}\")]`",
                    s.value()
                ),
            );
            None
        }
        other => {
            cx.error_spanned_by(other, "`rpc` names the `#[mcp_rpc]` handler function: `rpc = handler`");
            None
        }
    }
}

/// The path of `declared = api::greet`.
fn declared_path(cx: &Ctxt, meta: &Meta, macro_name: &str) -> Option<Path> {
    let usage = format!(
        "`declared` names the body-less `#[{macro_name}]` declaration this handler implements, e.g. \
         `declared = api::greet`"
    );
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Path(ExprPath { attrs, qself: None, path }) if attrs.is_empty() => Some(path.clone()),
            other => {
                cx.error_spanned_by(other, usage);
                None
            }
        },
        _ => {
            cx.error_spanned_by(meta, usage);
            None
        }
    }
}

/// The `i32` of `order = 10` or `order = -10`.
fn order(cx: &Ctxt, meta: &Meta) -> Option<i32> {
    let usage = "`order` takes an integer literal, e.g. `order = 10` or `order = -10`; lower runs outside higher";
    let Meta::NameValue(nv) = meta else {
        cx.error_spanned_by(meta, usage);
        return None;
    };
    let (negative, lit) = match &nv.value {
        Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) => (false, lit),
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => match &**expr {
            Expr::Lit(ExprLit { lit: Lit::Int(lit), .. }) => (true, lit),
            _ => {
                cx.error_spanned_by(&nv.value, usage);
                return None;
            }
        },
        other => {
            cx.error_spanned_by(other, usage);
            return None;
        }
    };
    match order_value(negative, lit) {
        Ok(value) => Some(value),
        Err(msg) => {
            cx.error_spanned_by(&nv.value, msg);
            None
        }
    }
}

/// The value of an `order` literal (with a leading `-` when `negative`): a plain or `i32`
/// integer that fits in an `i32`.
fn order_value(negative: bool, lit: &LitInt) -> Result<i32, String> {
    if !matches!(lit.suffix(), "" | "i32") {
        return Err(format!("`order` is an `i32`; remove the `{}` suffix", lit.suffix()));
    }
    let sign = if negative { "-" } else { "" };
    format!("{sign}{}", lit.base10_digits())
        .parse::<i32>()
        .map_err(|_| format!("`order` must fit in an `i32` ({}..={})", i32::MIN, i32::MAX))
}

/// The string literal of `key = "..."`; anything else is reported.
fn string(cx: &Ctxt, key: Symbol, meta: &Meta) -> Option<LitStr> {
    if let Meta::NameValue(nv) = meta {
        if let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &nv.value {
            return Some(s.clone());
        }
        cx.error_spanned_by(&nv.value, format!("`{key}` takes a string literal, e.g. `{key} = \"...\"`"));
    } else {
        cx.error_spanned_by(meta, format!("`{key}` takes a string literal, e.g. `{key} = \"...\"`"));
    }
    None
}

/// The integer literal of `key = N`; anything else is reported with `usage`.
fn integer(cx: &Ctxt, meta: &Meta, usage: &str) -> Option<LitInt> {
    if let Meta::NameValue(nv) = meta
        && let Expr::Lit(ExprLit { lit: Lit::Int(n), .. }) = &nv.value
    {
        return Some(n.clone());
    }
    cx.error_spanned_by(meta, usage);
    None
}

/// `key` alone (true) or `key = true|false`; anything else is reported.
fn flag(cx: &Ctxt, key: Symbol, meta: &Meta) -> Option<bool> {
    match meta {
        Meta::Path(_) => return Some(true),
        Meta::NameValue(nv) => {
            if let Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) = &nv.value {
                return Some(b.value);
            }
            cx.error_spanned_by(&nv.value, format!("`{key}` is a flag: write `{key}` or `{key} = false`"));
        }
        Meta::List(_) => cx.error_spanned_by(meta, format!("`{key}` is a flag: write `{key}` or `{key} = false`")),
    }
    None
}

/// The allowed key nearest to a misspelt one, if it is close enough to be a typo.
fn closest<'k>(written: &str, allowed: &[&'k str]) -> Option<&'k str> {
    let written = written.to_ascii_lowercase();
    // A shortened key (`mime` for `mime_type`) is far in edit distance but an obvious intent.
    if written.len() >= 3
        && let Some(key) = allowed.iter().find(|k| k.starts_with(written.as_str()))
    {
        return Some(key);
    }
    allowed
        .iter()
        .map(|k| (edit_distance(&written, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != *cb);
            row.push(substitute.min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn errors(cx: Ctxt) -> Vec<String> {
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn tool_keys_are_read() {
        let cx = Ctxt::new();
        let attrs = ToolAttrs::parse(
            &cx,
            quote!(name = "echo", description = "Echo", group = "g", read_only, destructive = false),
        );
        assert_eq!(attrs.common.name.map(|s| s.value()).as_deref(), Some("echo"));
        assert_eq!(attrs.common.group.map(|s| s.value()).as_deref(), Some("g"));
        let hints: Vec<(&str, bool)> = attrs.hints.iter().map(|h| (h.json_key, h.value)).collect();
        assert_eq!(hints, [("readOnlyHint", true), ("destructiveHint", false)]);
        assert!(errors(cx).is_empty());
    }

    #[test]
    fn every_bad_key_is_reported() {
        let cx = Ctxt::new();
        let _ = ToolAttrs::parse(&cx, quote!(nmae = "x", name = 3, title = "a", title = "b", read_only = "yes"));
        let errors = errors(cx);
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].contains("unknown `mcp_tool` key `nmae`; did you mean `name`?"), "{errors:?}");
        assert!(errors[1].contains("`name` takes a string literal"), "{errors:?}");
        assert!(errors[2].contains("`title` is given twice"), "{errors:?}");
        assert!(errors[3].contains("`read_only` is a flag"), "{errors:?}");
    }

    #[test]
    fn keys_of_other_macros_are_unknown() {
        let cx = Ctxt::new();
        let _ = PromptAttrs::parse(&cx, quote!(uri = "x://y"));
        let errors = errors(cx);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("unknown `mcp_prompt` key `uri`"), "{errors:?}");
    }

    #[test]
    fn rpc_method_comes_first_and_keys_follow() {
        let cx = Ctxt::new();
        let attrs = RpcAttrs::parse(
            &cx,
            quote!("acme/sum", routing_name = "id", capability = "sampling", extension = "io.x/y", group = "g"),
        );
        assert_eq!(attrs.method.map(|s| s.value()).as_deref(), Some("acme/sum"));
        assert_eq!(attrs.routing_name.map(|s| s.value()).as_deref(), Some("id"));
        assert_eq!(attrs.capability.map(|s| s.value()).as_deref(), Some("sampling"));
        assert_eq!(attrs.group.map(|s| s.value()).as_deref(), Some("g"));
        assert!(errors(cx).is_empty());
    }

    #[test]
    fn rpc_client_declares_is_a_flag() {
        let cx = Ctxt::new();
        let attrs = RpcAttrs::parse(&cx, quote!("skills/list", extension = "io.x/skills", client_declares = false));
        assert_eq!(attrs.client_declares.map(|(v, _)| v), Some(false));
        assert_eq!(RpcAttrs::parse(&cx, quote!("a/b")).client_declares.map(|(v, _)| v), None);
        assert!(errors(cx).is_empty());
        let cx = Ctxt::new();
        RpcAttrs::parse(&cx, quote!("a/b", extension = "x/y", client_declares = "no"));
        assert_eq!(errors(cx).len(), 1, "a string is no flag");
    }

    #[test]
    fn rpc_eras_default_to_modern_only_for_extensions() {
        let cx = Ctxt::new();
        assert_eq!(RpcAttrs::parse(&cx, quote!("a/b")).eras(), Eras::Both);
        assert_eq!(RpcAttrs::parse(&cx, quote!("a/b", extension = "x/y")).eras(), Eras::Modern);
        assert_eq!(RpcAttrs::parse(&cx, quote!("a/b", extension = "x/y", eras = "both")).eras(), Eras::Both);
        assert_eq!(RpcAttrs::parse(&cx, quote!("a/b", eras = "legacy")).eras(), Eras::Legacy);
        assert!(errors(cx).is_empty());
    }

    #[test]
    fn rpc_method_mistakes_are_one_error_each() {
        let cases = [
            (quote!(), "needs the method name first"),
            (quote!(group = "g"), "needs the method name first"),
            (quote!(name = "a/b"), "takes no key"),
            (quote!(method = "a/b"), "takes no key"),
            (quote!(3), "is a string literal"),
            (quote!(group = "g", "a/b"), "comes first"),
            (quote!("a/b", "c/d"), "one method name"),
            (quote!("a/b", eras = "moden"), "did you mean \"modern\"?"),
            (quote!("a/b", eras = "all"), "`eras` is \"modern\", \"legacy\" or \"both\""),
        ];
        for (tokens, expected) in cases {
            let cx = Ctxt::new();
            let _ = RpcAttrs::parse(&cx, tokens.clone());
            let errors = errors(cx);
            assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
            assert!(errors[0].contains(expected), "{tokens}: {errors:?}");
        }
    }

    #[test]
    fn filter_keys_are_read() {
        let cx = Ctxt::new();
        let attrs = FilterAttrs::parse(&cx, quote!(rpc = crate::rpcs::sum, order = -20, group = "g"));
        let rpc = attrs.rpc.as_ref().map(|p| quote::ToTokens::to_token_stream(p).to_string());
        assert_eq!(rpc.as_deref(), Some("crate :: rpcs :: sum"));
        assert_eq!(attrs.order, Some(-20));
        assert!(attrs.typed);
        assert!(errors(cx).is_empty());

        let cx = Ctxt::new();
        let attrs = FilterAttrs::parse(&cx, quote!(order = 7i32));
        assert_eq!((attrs.order, attrs.typed), (Some(7), false));
        assert!(errors(cx).is_empty());
    }

    #[test]
    fn filter_alternate_is_a_flag() {
        for (tokens, expected) in [
            (quote!(alternate, rpc = sum), true),
            (quote!(rpc = sum, alternate = true), true),
            (quote!(alternate = false, rpc = sum), false),
            (quote!(rpc = sum), false),
        ] {
            let cx = Ctxt::new();
            let attrs = FilterAttrs::parse(&cx, tokens.clone());
            assert_eq!(attrs.is_alternate(), expected, "{tokens}");
            assert!(attrs.typed, "{tokens}");
            assert!(errors(cx).is_empty(), "{tokens}");
        }
        for tokens in [quote!(alternate = "yes", rpc = sum), quote!(alternate(x), rpc = sum)] {
            let cx = Ctxt::new();
            let attrs = FilterAttrs::parse(&cx, tokens.clone());
            assert!(!attrs.is_alternate() && attrs.meant_alternate(), "{tokens}");
            let errors = errors(cx);
            assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
            assert!(errors[0].contains("`alternate` is a flag"), "{tokens}: {errors:?}");
        }
    }

    #[test]
    fn roles_are_an_array_of_string_literals() {
        let cx = Ctxt::new();
        let attrs = ToolAttrs::parse(&cx, quote!(roles = ["admin", "ops"]));
        assert_eq!(attrs.common.roles.map(|r| r.values()), Some(vec!["admin".to_owned(), "ops".to_owned()]));
        let attrs = RpcAttrs::parse(&cx, quote!("acme/x", roles = ["admin"]));
        assert_eq!(attrs.roles.map(|r| r.values()), Some(vec!["admin".to_owned()]));
        assert!(errors(cx).is_empty());

        for (tokens, expected) in [
            (quote!(roles = "admin"), "also for a single role: `roles = [\"admin\"]`"),
            (quote!(roles = ADMINS), "cannot read a constant"),
            (quote!(roles = &["admin"]), "takes an array of role names"),
            (quote!(roles), "takes an array of role names"),
            (quote!(roles("admin")), "takes an array of role names"),
            (quote!(roles = ["admin", 7]), "role names are string literals"),
        ] {
            let cx = Ctxt::new();
            let _ = ResourceAttrs::parse(&cx, tokens.clone());
            let errors = errors(cx);
            assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
            assert!(errors[0].contains(expected), "{tokens}: {errors:?}");
        }
    }

    #[test]
    fn filter_order_is_an_i32_literal() {
        let lit = |text: &str| syn::parse_str::<LitInt>(text).expect("literal");
        assert_eq!(order_value(true, &lit("2147483648")), Ok(i32::MIN));
        assert_eq!(order_value(false, &lit("0x10")), Ok(16));
        assert!(order_value(false, &lit("2147483648")).expect_err("range").contains("must fit in an `i32`"));
        assert!(order_value(false, &lit("5u8")).expect_err("suffix").contains("remove the `u8` suffix"));
        for (tokens, expected) in [
            (quote!(order = "1"), "takes an integer literal"),
            (quote!(order = -x), "takes an integer literal"),
            (quote!(order), "takes an integer literal"),
            (quote!(rpc = "acme/sum"), "not the method"),
            (quote!(rpc = 1 + 2), "names the `#[mcp_rpc]` handler"),
        ] {
            let cx = Ctxt::new();
            let _ = FilterAttrs::parse(&cx, tokens.clone());
            let errors = errors(cx);
            assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
            assert!(errors[0].contains(expected), "{tokens}: {errors:?}");
        }
    }

    #[test]
    fn positional_values_need_a_key_outside_mcp_rpc() {
        let cx = Ctxt::new();
        let _ = ToolAttrs::parse(&cx, quote!("echo"));
        let errors = errors(cx);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("takes only `key = value` arguments"), "{errors:?}");
    }

    #[test]
    fn subscription_field_key_comes_first_and_keys_follow() {
        let cx = Ctxt::new();
        let attrs = SubscriptionFieldAttrs::parse(&cx, quote!("taskIds", extension = "io.x/tasks", group = "g"));
        assert_eq!(attrs.key.map(|s| s.value()).as_deref(), Some("taskIds"));
        assert_eq!(attrs.extension.map(|s| s.value()).as_deref(), Some("io.x/tasks"));
        assert_eq!(attrs.group.map(|s| s.value()).as_deref(), Some("g"));
        assert!(errors(cx).is_empty());

        let cases = [
            (quote!(), "needs the filter key first"),
            (quote!(group = "g"), "needs the filter key first"),
            (quote!(key = "taskIds"), "takes no key"),
            (quote!(3), "is a string literal"),
            (quote!(group = "g", "taskIds"), "comes first"),
            (quote!("a", "b"), "has one key"),
            (quote!("a", extenson = "x/y"), "did you mean `extension`?"),
            (quote!("a", group = "g", group = "h"), "`group` is given twice"),
        ];
        for (tokens, expected) in cases {
            let cx = Ctxt::new();
            let _ = SubscriptionFieldAttrs::parse(&cx, tokens.clone());
            let errors = errors(cx);
            assert_eq!(errors.len(), 1, "{tokens}: {errors:?}");
            assert!(errors[0].contains(expected), "{tokens}: {errors:?}");
        }
    }

    #[test]
    fn typo_suggestions_stay_close() {
        assert_eq!(closest("readonly", &["read_only", "title"]), Some("read_only"));
        assert_eq!(closest("mimetype", &["mime_type", "uri"]), Some("mime_type"));
        assert_eq!(closest("mime", &["name", "mime_type"]), Some("mime_type"));
        assert_eq!(closest("desc", &["description", "group"]), Some("description"));
        assert_eq!(closest("colour", &["name", "title"]), None);
    }
}
