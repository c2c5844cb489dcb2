//! The attribute arguments of each macro, parsed into typed structs.
//!
//! Parsing never stops at the first problem: an unknown key, a key given twice or a value of the
//! wrong kind is reported at its own tokens and the remaining keys are still read.

use crate::ctxt::Ctxt;
use crate::symbol::{
    ARGUMENT, DESCRIPTION, DESTRUCTIVE, GROUP, IDEMPOTENT, INPUT_SCHEMA, MIME_TYPE, NAME, OPEN_WORLD, PROMPT,
    READ_ONLY, RESOURCE, Symbol, TITLE, URI,
};
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Meta, Token};

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
}

const COMMON_KEYS: [Symbol; 4] = [NAME, TITLE, DESCRIPTION, GROUP];

impl Common {
    /// Takes `key` if it is a common one; false otherwise.
    fn accept(&mut self, cx: &Ctxt, key: Symbol, meta: &Meta) -> bool {
        let slot = match key {
            k if k == NAME => &mut self.name,
            k if k == TITLE => &mut self.title,
            k if k == DESCRIPTION => &mut self.description,
            k if k == GROUP => &mut self.group,
            _ => return false,
        };
        *slot = string(cx, key, meta);
        true
    }
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
}

impl ToolAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> ToolAttrs {
        let mut attrs = ToolAttrs::default();
        let keys: Vec<Symbol> = COMMON_KEYS.into_iter().chain([INPUT_SCHEMA]).chain(HINTS.map(|h| h.0)).collect();
        for_each_key(cx, "mcp_tool", tokens, &keys, |key, meta| {
            if attrs.common.accept(cx, key, meta) {
                return;
            }
            if key == INPUT_SCHEMA {
                attrs.input_schema = string(cx, key, meta);
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
}

impl ResourceAttrs {
    pub fn parse(cx: &Ctxt, tokens: TokenStream) -> ResourceAttrs {
        let mut attrs = ResourceAttrs::default();
        let keys: Vec<Symbol> = [URI].into_iter().chain(COMMON_KEYS).chain([MIME_TYPE]).collect();
        for_each_key(cx, "mcp_resource", tokens, &keys, |key, meta| {
            if attrs.common.accept(cx, key, meta) {
                return;
            }
            if key == URI {
                attrs.uri = string(cx, key, meta);
            } else if key == MIME_TYPE {
                attrs.mime_type = string(cx, key, meta);
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

/// Calls `f` once for each well-formed, allowed, first-time key.
fn for_each_key(
    cx: &Ctxt,
    macro_name: &str,
    tokens: TokenStream,
    allowed: &[Symbol],
    mut f: impl FnMut(Symbol, &Meta),
) {
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(metas) => metas,
        Err(err) => {
            cx.syn_error(err);
            return;
        }
    };
    let mut seen: Vec<Symbol> = Vec::new();
    for meta in &metas {
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
    fn typo_suggestions_stay_close() {
        assert_eq!(closest("readonly", &["read_only", "title"]), Some("read_only"));
        assert_eq!(closest("mimetype", &["mime_type", "uri"]), Some("mime_type"));
        assert_eq!(closest("mime", &["name", "mime_type"]), Some("mime_type"));
        assert_eq!(closest("desc", &["description", "group"]), Some("description"));
        assert_eq!(closest("colour", &["name", "title"]), None);
    }
}
