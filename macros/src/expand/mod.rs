//! Code generation, one file per macro; this module holds the driver and the pieces they share
//! (argument extraction, source site, crate-wide duplicate guard).
//!
//! Every expansion is the user's function, unchanged except for our `#[extract]` markers,
//! followed by `const _: () = { ... };` holding the shim, the check calls and the `inventory`
//! submission, so no helper name leaks into the user's module. The exceptions are what
//! `#[mcp_filter(rpc = function)]` names and so must live beside the function: the marker type
//! of `#[mcp_rpc]`, and the hidden type that makes naming a tool, prompt or resource there an
//! error that says how to filter it. With errors, the function (and those types) is still
//! emitted (IDEs and type checking keep working) and the errors follow it.

mod completion;
mod declaration;
mod filter;
mod prompt;
mod resource;
mod rpc;
mod subscription_field;
mod tool;

use crate::ast::{self, Arg, Handler, Role};
use crate::attr::{Named, Roles};
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ItemFn, LitStr, Type};

/// The macro being expanded.
#[derive(Clone, Copy)]
pub enum Kind {
    Tool,
    Prompt,
    Resource,
    Completion,
    Rpc,
    Filter,
    SubscriptionField,
}

impl Kind {
    fn macro_name(self) -> &'static str {
        match self {
            Kind::Tool => "mcp_tool",
            Kind::Prompt => "mcp_prompt",
            Kind::Resource => "mcp_resource",
            Kind::Completion => "mcp_completion",
            Kind::Rpc => "mcp_rpc",
            Kind::Filter => "mcp_filter",
            Kind::SubscriptionField => "subscription_field",
        }
    }
}

/// What one macro generates besides the user's function.
struct Generated {
    /// Items emitted next to the function even when the annotation has errors, because other
    /// code names them (the RPC marker type, the hidden types of tools, prompts and resources):
    /// without them one mistake would cascade.
    beside: Vec<TokenStream>,
    /// The contents of the hidden `const _` block (shim, checks, registration), emitted only
    /// when there are no errors.
    hidden: TokenStream,
}

impl From<TokenStream> for Generated {
    fn from(hidden: TokenStream) -> Self {
        Generated { beside: Vec::new(), hidden }
    }
}

/// Expands one attribute invocation.
pub fn expand(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => match syn::parse2::<syn::ForeignItemFn>(item.clone()) {
            Ok(decl) => {
                let func =
                    ItemFn { attrs: decl.attrs, vis: decl.vis, sig: decl.sig, block: Box::new(syn::parse_quote!({})) };
                return declaration::expand(kind, attr, &func);
            }
            Err(_) => {
                let msg = format!("`#[{}]` applies to a free `async fn`", kind.macro_name());
                let err = syn::Error::new(Span::call_site(), msg).to_compile_error();
                return quote!(#item #err);
            }
        },
    };
    let cx = Ctxt::new();
    let Generated { beside, hidden } = match kind {
        Kind::Tool => {
            Generated { beside: name_as_type(&func, "tool", "ToolFunction"), hidden: tool::expand(&cx, attr, &func) }
        }
        Kind::Prompt => Generated {
            beside: name_as_type(&func, "prompt", "PromptFunction"),
            hidden: prompt::expand(&cx, attr, &func),
        },
        Kind::Resource => Generated {
            beside: name_as_type(&func, "resource", "ResourceFunction"),
            hidden: resource::expand(&cx, attr, &func),
        },
        Kind::Completion => completion::expand(&cx, attr, &func).into(),
        Kind::Rpc => rpc::expand(&cx, attr, &func, false),
        Kind::Filter => filter::expand(&cx, attr, &func).into(),
        Kind::SubscriptionField => subscription_field::expand(&cx, attr, &func).into(),
    };
    ast::strip_extract_attrs(&mut func);
    // A `#[cfg]` written below our attribute reaches us unevaluated; the registration must
    // disappear together with the function it names.
    let cfgs: Vec<&Attribute> = func.attrs.iter().filter(|a| a.path().is_ident("cfg")).collect();
    let beside = beside.iter().map(|item| quote!(#(#cfgs)* #item));
    match cx.check() {
        Ok(()) => quote! {
            #func
            #(#beside)*
            #(#cfgs)*
            const _: () = { #hidden };
        },
        Err(err) => {
            let errors = err.to_compile_error();
            let keep_alive = keep_alive(&func);
            quote!(#func #(#beside)* #(#cfgs)* #keep_alive #errors)
        }
    }
}

/// Rust's primitive types: an item of the module named like one would shadow it there.
const PRIMITIVE_TYPES: &[&str] = &[
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
    "f16", "f32", "f64", "f128",
];

/// A hidden alias of `__private::{runtime_type}<NoMethod>` named like the function, so that
/// `#[mcp_filter(rpc = function)]` names a type whose error says how calls of this kind are
/// filtered (see `ToolFunction` in the runtime), not rustc's "expected type, found function".
/// Emitted even when the annotation has errors, like the RPC marker.
///
/// The alias lives in a module of its own and reaches the function's module through a glob
/// import with the function's visibility, because a glob import yields to every other name:
/// a module, an import or a type named like the function (`mod search;` beside
/// `async fn search`, `use std::env;` beside `async fn env`) keeps compiling and wins, where an
/// alias declared beside the function would be "defined multiple times". A function named like
/// a primitive type gets none, since even a glob import would shadow the primitive.
///
/// A tool's alias names a marker type of its own instead of `NoMethod`, declared in the same
/// module: the generated `ToolDeclaration` impl (see [`tool_declaration`]) gives it the tool's
/// name and types, which `greet::call` and `declared = greet` read.
fn name_as_type(func: &ItemFn, kind: &str, runtime_type: &str) -> Vec<TokenStream> {
    name_as_type_documented(func, kind, runtime_type, false)
}

/// [`name_as_type`]; for a body-less declaration (`documented`), the alias is what the
/// declarations crate's users see in its docs, so it carries the function's doc comment and is
/// not hidden.
fn name_as_type_documented(func: &ItemFn, kind: &str, runtime_type: &str, documented: bool) -> Vec<TokenStream> {
    let ident = &func.sig.ident;
    if PRIMITIVE_TYPES.contains(&ident.unraw().to_string().as_str()) {
        return Vec::new();
    }
    let p = private();
    let vis = &func.vis;
    let module = format_ident!("__mcp_{}_{}", kind, ident.unraw(), span = Span::call_site());
    let runtime_type = Ident::new(runtime_type, Span::call_site());
    let (alias_docs, use_docs) = if documented {
        let docs = func.attrs.iter().filter(|a| a.path().is_ident("doc"));
        (quote!(#(#docs)*), TokenStream::new())
    } else {
        (quote!(#[doc(hidden)]), quote!(#[doc(hidden)]))
    };
    let (marker_item, parameter) = match tool_declaration(func).filter(|_| kind == "tool") {
        Some((_, marker)) => (
            {
                let marker_vis = if documented { marker_visibility(vis) } else { quote!(pub(super)) };
                quote! {
                    #[doc(hidden)]
                    #[allow(non_camel_case_types, dead_code, unreachable_pub)]
                    #marker_vis enum #marker {}
                }
            },
            quote!(#marker),
        ),
        None => (TokenStream::new(), quote!(#p::NoMethod)),
    };
    vec![
        quote! {
            #[doc(hidden)]
            mod #module {
                #marker_item
                #alias_docs
                #[allow(non_camel_case_types, dead_code, unreachable_pub, private_interfaces)]
                pub type #ident = #p::#runtime_type<#parameter>;
            }
        },
        quote! {
            #use_docs
            #[allow(unused_imports)]
            #vis use #module::*;
        },
    ]
}

/// The visibility of a body-less declaration's marker type, declared in the alias's module one
/// level below the function: the function's own, as seen from there, so that other crates can
/// call it. A handler's marker is `pub(super)` instead (the function's module and its children):
/// its impl names the handler's types, which rustc requires to be as visible as the marker
/// (E0446, an error even where the function itself only warns), and a server whose public
/// handler takes a private type must keep compiling. A `pub(in path)` not starting at `crate`
/// becomes the function's module.
fn marker_visibility(vis: &syn::Visibility) -> TokenStream {
    match vis {
        syn::Visibility::Public(_) => quote!(pub),
        syn::Visibility::Inherited => quote!(pub(super)),
        syn::Visibility::Restricted(r) => {
            let first = r.path.segments.first().map(|s| s.ident.to_string());
            match first.as_deref() {
                Some("crate") => quote!(#vis),
                Some("super") if r.path.segments.len() == 1 => quote!(pub(in super::super)),
                _ => quote!(pub(super)),
            }
        }
    }
}

/// The module and the marker type that a tool's hidden alias names (see [`name_as_type`]), or
/// `None` for a function named like a primitive type, which gets no alias. The marker's name
/// is the function's, prefixed: the glob import also brings it into the function's module, where
/// only another tool of the same name could clash with it.
pub(crate) fn tool_declaration(func: &ItemFn) -> Option<(Ident, Ident)> {
    let ident = func.sig.ident.unraw();
    if PRIMITIVE_TYPES.contains(&ident.to_string().as_str()) {
        return None;
    }
    let module = format_ident!("__mcp_tool_{}", ident, span = Span::call_site());
    let marker = format_ident!("__mcp_tool_declaration_{}", ident, span = Span::call_site());
    Some((module, marker))
}

/// Refers to the function so that a registration rejected for an attribute error does not add a
/// "never used" warning to the real errors. Skipped where such a reference could itself fail
/// (generic functions, including those with `impl Trait` arguments, and methods).
fn keep_alive(func: &ItemFn) -> TokenStream {
    let skip = func.sig.inputs.iter().any(|i| match i {
        FnArg::Receiver(_) => true,
        FnArg::Typed(arg) => ast::is_unnameable(&arg.ty),
    });
    if skip || !func.sig.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = &func.sig.ident;
    quote!(const _: () = { let _ = #ident; };)
}

/// The runtime's hidden re-export module: the only path generated code names, so that user
/// crates need no dependency besides `switchyard`.
fn private() -> TokenStream {
    quote!(::switchyard::__private)
}

/// [`private`] with every token at `span`. A path's span runs from its first token, so a path
/// into the runtime that must be reported at a user's token starts with this.
fn private_at(span: Span) -> TokenStream {
    quote_spanned!(span=> ::switchyard::__private)
}

/// `Some("..")` or `None` as an `Option<&'static str>` expression.
fn opt_str(value: Option<String>) -> TokenStream {
    let p = private();
    match value {
        Some(v) => quote!(#p::Some(#v)),
        None => quote!(#p::None),
    }
}

/// The `icons` and `meta` fields of a registration: JSON text the runtime parses at `build()`
/// (`None` when the key is absent or, after an error already reported, unreadable).
fn decoration(common: &crate::attr::Common) -> (TokenStream, TokenStream) {
    let icons = common.icons.as_ref().map(|icons| {
        let list: Vec<serde_json::Value> = icons
            .iter()
            .map(|icon| {
                let mut obj = serde_json::Map::new();
                obj.insert("src".into(), icon.src.value().into());
                if let Some(m) = &icon.mime_type {
                    obj.insert("mimeType".into(), m.value().into());
                }
                if !icon.sizes.is_empty() {
                    obj.insert("sizes".into(), icon.sizes.iter().map(LitStr::value).collect::<Vec<_>>().into());
                }
                if let Some(t) = &icon.theme {
                    obj.insert("theme".into(), t.value().into());
                }
                serde_json::Value::Object(obj)
            })
            .collect();
        serde_json::Value::Array(list).to_string()
    });
    let meta = common
        .meta
        .as_ref()
        .and_then(|m| crate::check::meta_object(&m.value()).ok())
        .map(|m| serde_json::Value::Object(m).to_string());
    (opt_str(icons), opt_str(meta))
}

fn lit_value(lit: Option<&LitStr>) -> Option<String> {
    lit.map(LitStr::value)
}

/// `&["admin", ..]` as a `&'static [&'static str]` expression: the `roles` or `scopes` key,
/// `&[]` (no requirement) when absent.
fn names(list: Option<&Roles>) -> TokenStream {
    let names = list.map(Roles::values).unwrap_or_default();
    quote!(&[#(#names),*])
}

/// The `group` key, `"default"` when absent.
fn group(lit: Option<&LitStr>) -> String {
    lit_value(lit).unwrap_or_else(|| "default".to_owned())
}

/// `Site { .. }` of the function named `ident`; `line!()` carries the name's span so the line
/// is the name's, not the attribute's.
fn site(ident: &Ident) -> TokenStream {
    let p = private();
    let function = ident.unraw().to_string();
    let line = quote_spanned!(ident.span()=> ::core::line!());
    quote! {
        #p::Site {
            module_path: ::core::module_path!(),
            file: ::core::file!(),
            line: #line,
            function: #function,
        }
    }
}

/// What the shim has in scope for building arguments.
struct ShimInputs<'a> {
    /// `tool `echo``, for decode errors.
    what: &'a str,
    /// The tool's name when this is a tool shim, whose argument decoding errors are
    /// `isError: true` results rather than protocol errors.
    tool: Option<&'a str>,
    /// The raw arguments value (tools: `ToolArguments`, prompts: a `Value::Object` expression).
    params_value: TokenStream,
}

/// `let __argN = ...;` for each argument, in signature order (an extractor that fails stops the
/// call before later arguments are built), and the call expression `user_fn(__arg0, ..)`.
///
/// Each user type is first passed to its assertion helper with the same tokens as its use, so
/// rustc reports one product-level error at the user's type and suppresses the follow-on errors
/// it implies.
fn bind_args(handler: &Handler<'_>, inputs: &ShimInputs<'_>, raw_schema: bool) -> (TokenStream, TokenStream) {
    let p = private();
    let mut lets = TokenStream::new();
    let mut names = Vec::new();
    for (i, Arg { ty, role }) in handler.args.iter().enumerate() {
        let var = format_ident!("__arg{}", i);
        let span = ty.span();
        let value = match role {
            Role::Extractor => extractor(ty),
            Role::Params => {
                let (what, value) = (inputs.what, &inputs.params_value);
                let assertion = params_assertion(ty, raw_schema);
                match inputs.tool {
                    Some(tool) => quote_spanned! {span=>
                        #assertion
                        match #p::decode_tool_arguments::<#ty>(#tool, #value) {
                            #p::Ok(__decoded) => __decoded,
                            #p::Err(__rejected) => return #p::Ok(*__rejected),
                        }
                    },
                    None => quote_spanned! {span=>
                        #assertion
                        #p::decode_arguments::<#ty>(#what, #value)?
                    },
                }
            }
            Role::TemplateVar(name) => quote_spanned! {span=>
                #p::assert_template_var::<#ty>();
                #p::template_var::<#ty>(&__req, #name)?
            },
            Role::ResourceRequest => quote_spanned! {span=>
                ::core::clone::Clone::clone(&__req)
            },
            Role::CompletionRequest => quote_spanned! {span=>
                { let __request: #ty = __req; __request }
            },
        };
        lets.extend(quote!(let #var = { #value };));
        names.push(var);
    }
    let ident = handler.ident;
    (lets, quote!(#ident(#(#names),*)))
}

/// The extractor of type `ty`, built from `__ctx: RequestContext` (a failure returns the
/// error with `?`), after the check that `ty` is an extractor, both at the user's type.
fn extractor(ty: &Type) -> TokenStream {
    let p = private();
    quote_spanned! {ty.span()=>
        #p::assert_extractor::<#ty>();
        <#ty as #p::FromRequestContext>::from_request_context(&__ctx)?
    }
}

/// `assert_params::<T>();`, or `assert_deserialize::<T>();` when a hand-written schema replaces
/// the generated one (the type then needs no `JsonSchema`).
fn params_assertion(ty: &Type, raw_schema: bool) -> TokenStream {
    let p = private();
    let helper = if raw_schema { quote!(assert_deserialize) } else { quote!(assert_params) };
    quote_spanned!(ty.span()=> #p::#helper::<#ty>();)
}

/// `&[<T as FromRequestContext>::required_state, ..]`, one per extractor argument, so `build()`
/// can refuse a handler whose `State<T>` was never provided.
fn state_requirements(handler: &Handler<'_>) -> TokenStream {
    let p = private();
    let items = handler.args.iter().filter(|a| a.role == Role::Extractor).map(|a| {
        let ty = a.ty;
        quote_spanned!(ty.span()=> #p::assert_extractor::<#ty>)
    });
    quote!(&[#(#items),*])
}

/// True when any argument reads the shim input of this role.
fn uses(handler: &Handler<'_>, pred: impl Fn(&Role) -> bool) -> bool {
    handler.args.iter().any(|a| pred(&a.role))
}

/// The shim's parameter pattern: the name when used, `_` otherwise (no unused-variable lint in
/// the user's crate).
fn shim_param(used: bool, name: &str) -> TokenStream {
    if used {
        let ident = Ident::new(name, Span::call_site());
        quote!(#ident)
    } else {
        quote!(_)
    }
}

/// The conversion of the awaited return value `value` with `Trait::method(value, extra..)`,
/// preceded by the check that the return type implements `Trait` (`assert_helper`), both at the
/// return type (at the function name when there is no `->`).
///
/// The conversion names the return type as `<R as Trait>`, with the same tokens as the check, so
/// a bad return type is one error at the user's `R`, not a second one at the attribute. Types
/// that cannot be named (`impl Trait`) are left to the conversion alone.
fn convert_return(
    handler: &Handler<'_>,
    conversion: (&str, &str, &str),
    value: TokenStream,
    extra: TokenStream,
) -> TokenStream {
    let p = private();
    let (assert_helper, trait_name, method) = conversion;
    let assert_helper = Ident::new(assert_helper, Span::call_site());
    let trait_name = Ident::new(trait_name, Span::call_site());
    let method = Ident::new(method, Span::call_site());
    let (ty, span) = match handler.output {
        Some(ty) if ast::is_unnameable(ty) => return quote!(#p::#trait_name::#method(#value #extra)),
        Some(ty) => (quote!(#ty), ty.span()),
        None => (quote_spanned!(handler.ident.span()=> ()), handler.ident.span()),
    };
    quote_spanned! {span=>
        #p::#assert_helper::<#ty>();
        <#ty as #p::#trait_name>::#method(#value #extra)
    }
}

/// The registrations that are unique per crate and group, for [`duplicate_guard`].
#[derive(Clone, Copy)]
enum Guarded {
    Tool,
    Prompt,
    Resource,
    Completion,
    Rpc,
    SubscriptionField,
}

impl Guarded {
    /// What the guard's name says before the key, the fix it ends with, and the text that makes
    /// the kinds' keys distinct in the hash.
    fn wording(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Guarded::Tool => ("mcp_tool_named", "rename_one", "tool"),
            Guarded::Prompt => ("mcp_prompt_named", "rename_one", "prompt"),
            Guarded::Resource => ("mcp_resource_with_uri", "change_one", "resource"),
            Guarded::Completion => ("mcp_completion_for", "remove_one", "completion"),
            Guarded::Rpc => ("mcp_rpc_for_method", "remove_one", "rpc"),
            Guarded::SubscriptionField => ("subscription_field_for_key", "remove_one", "subscription_field"),
        }
    }
}

/// A `#[macro_export]` macro named after the registration's key. `#[macro_export]` puts every
/// such macro at the crate root whatever module it is written in, so two registrations of one
/// key in one crate are rustc's "defined multiple times" error (E0428), which shows both
/// definitions; the name is spanned on the user's name literal (or function name) so those two
/// places are the user's. The key includes the group, since equal names in different groups are
/// legitimate (a binary may host several servers).
///
/// rustc's text cannot be changed, so the name is written to read as the problem and its fix:
/// "the name `mcp_tool_named_echo_is_declared_twice_in_this_crate_rename_one` is defined
/// multiple times". See [`guard_name`].
fn duplicate_guard(kind: Guarded, group: &str, name: &Named) -> TokenStream {
    let ident = Ident::new(&guard_name(kind, group, &name.value), name.span);
    quote_spanned! {name.span=>
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #ident { () => {} }
    }
}

/// The longest key, and group, a guard's name spells out; longer ones are cut and hashed.
const GUARD_KEY_CHARS: usize = 40;
const GUARD_GROUP_CHARS: usize = 24;

/// The guard's name: `{prefix}_{key}[_in_group_{group}]_is_declared_twice_in_this_crate_{fix}`,
/// followed by `__{hash}` unless the key is spelled out exactly in the default group.
///
/// Names must be equal exactly when (kind, group, key) are. A key of identifier characters,
/// short enough to keep whole, in the default group is its own proof: the rest of the name is
/// fixed per kind. Anything else loses information on the way to identifier text (`files.read`
/// and `files-read` both read `files_read`; a group's words could be part of a key), so the
/// 64-bit hash of the exact kind, group and key tells them apart.
fn guard_name(kind: Guarded, group: &str, key: &str) -> String {
    let (prefix, fix, hashed_kind) = kind.wording();
    let (key_text, key_exact) = identifier_text(key, GUARD_KEY_CHARS);
    let mut name = format!("{prefix}_{key_text}");
    let default_group = group == "default";
    if !default_group {
        name.push_str("_in_group_");
        name.push_str(&identifier_text(group, GUARD_GROUP_CHARS).0);
    }
    name.push_str("_is_declared_twice_in_this_crate_");
    name.push_str(fix);
    if !(key_exact && default_group) {
        name.push_str(&format!("__{:016x}", fnv1a(&[hashed_kind, group, key])));
    }
    name
}

/// `text` as identifier characters, at most `max` of them, and whether that is `text` itself.
/// Otherwise each run of other characters becomes one `_`, without `_` at either end: the text
/// is only for reading.
fn identifier_text(text: &str, max: usize) -> (String, bool) {
    let ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if !text.is_empty() && text.chars().count() <= max && text.chars().all(ident_char) {
        return (text.to_owned(), true);
    }
    let mut out = String::new();
    for c in text.chars() {
        if ident_char(c) {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let cut: String = out.trim_matches('_').chars().take(max).collect();
    (cut.trim_end_matches('_').to_owned(), false)
}

/// 64-bit FNV-1a over the parts, each followed by a 0 byte so that part boundaries count.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// Each extractor argument of a declaration, reported: a declaration has no request to extract
/// from.
fn extractors_are_errors(cx: &Ctxt, handler: &Handler<'_>, what: &str) {
    for arg in handler.args.iter().filter(|a| a.role == Role::Extractor) {
        cx.error_spanned_by(
            quote::ToTokens::to_token_stream(arg.ty),
            format!(
                "a {what} declaration takes only its params: `{}` is an extractor, which belongs on the handler \
                 that implements the declaration",
                quote::ToTokens::to_token_stream(arg.ty)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_keys_differ_by_kind_group_and_name() {
        let a = fnv1a(&["tool", "default", "echo"]);
        assert_ne!(a, fnv1a(&["prompt", "default", "echo"]));
        assert_ne!(a, fnv1a(&["tool", "other", "echo"]));
        assert_ne!(a, fnv1a(&["tool", "default", "echo2"]));
        assert_ne!(fnv1a(&["tool", "ab", "c"]), fnv1a(&["tool", "a", "bc"]));
        assert_eq!(a, fnv1a(&["tool", "default", "echo"]));
    }

    /// Every absolute path in `tokens` (`::krate::..`), recursing into groups.
    fn absolute_roots(tokens: TokenStream, roots: &mut Vec<String>) {
        use proc_macro2::TokenTree;
        let flat: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, tt) in flat.iter().enumerate() {
            match tt {
                TokenTree::Group(g) => absolute_roots(g.stream(), roots),
                TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == proc_macro2::Spacing::Joint => {
                    // A leading `::` follows a keyword, an operator or the `->` arrow, but not a
                    // path segment or the `>` closing generics (`Vec::<T>::new`).
                    let prev = |k: usize| i.checked_sub(k).map(|j| &flat[j]);
                    let leading = match prev(1) {
                        Some(TokenTree::Ident(id)) => {
                            ["as", "dyn", "impl", "in", "let", "mut", "return"].contains(&id.to_string().as_str())
                        }
                        Some(TokenTree::Punct(q)) if q.as_char() == '>' => {
                            matches!(prev(2), Some(TokenTree::Punct(d)) if d.as_char() == '-')
                        }
                        _ => true,
                    };
                    if let (true, Some(TokenTree::Ident(root))) = (leading, flat.get(i + 2)) {
                        roots.push(root.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn absolute_roots_finds_every_leading_path() {
        let mut roots = Vec::new();
        absolute_roots(
            quote!(let x: <T as ::serde_json::X>::Y = ::inventory::a(Vec::<u8>::new()); fn f() -> ::schemars::S { a::b }),
            &mut roots,
        );
        assert_eq!(roots, ["serde_json", "inventory", "schemars"]);
    }

    /// Generated code reaches dependencies only through `::switchyard::__private` (and `::core`):
    /// a user crate without serde_json, schemars or inventory must compile.
    #[test]
    fn expansions_name_only_switchyard_and_core() {
        let cases = [
            (
                Kind::Tool,
                quote!(read_only),
                quote! {
                    /// Doc.
                    async fn t(a: Args, c: RequestContext) -> Result<Json<Out>, ToolError> { todo!() }
                },
            ),
            (
                Kind::Tool,
                quote!(input_schema = r#"{"type":"object"}"#),
                quote!(
                    /// Doc.
                    async fn t(a: Args) {}
                ),
            ),
            (
                Kind::Prompt,
                quote!(),
                quote!(
                    /// Doc.
                    async fn p(a: Args) -> String {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Resource,
                quote!(uri = "x://{id}"),
                quote!(
                    async fn r(id: u32, req: ResourceRequest) -> String {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Completion,
                quote!(prompt = "p"),
                quote!(
                    async fn c(r: CompletionRequest) -> Vec<String> {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Rpc,
                quote!("acme/sum", capability = "sampling", extension = "io.x/y", routing_name = "id"),
                quote!(
                    async fn sum(p: Params, c: State<Db>) -> Result<Sum, McpError> {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Rpc,
                quote!("acme/none"),
                quote!(
                    async fn none() -> Result<(), Error> {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Filter,
                quote!(order = -1),
                quote!(
                    async fn raw(r: RawRequest, n: RawNext) -> RawResponse {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Filter,
                quote!(alternate, rpc = switchyard::methods::PromptsGet, order = 3),
                quote!(
                    async fn alt(r: TypedRequest<P>, n: AltNext<P, R>) -> Result<Alternate<R>, McpError> {
                        todo!()
                    }
                ),
            ),
            (
                Kind::Filter,
                quote!(rpc = sum),
                quote!(
                    async fn typed(r: TypedRequest<P>, n: Next<P, R>) -> Result<R, McpError> {
                        todo!()
                    }
                ),
            ),
            (
                Kind::SubscriptionField,
                quote!("taskIds", extension = "io.x/tasks", group = "g"),
                quote!(
                    async fn grant(requested: Vec<String>, ctx: RequestContext) -> Result<Vec<String>, McpError> {
                        todo!()
                    }
                ),
            ),
        ];
        for (kind, attr, item) in cases {
            let out = expand(kind, attr, item);
            assert!(!out.to_string().contains("compile_error"), "{out}");
            let mut roots = Vec::new();
            absolute_roots(out, &mut roots);
            assert!(roots.iter().any(|r| r == "switchyard"));
            assert!(roots.iter().all(|r| r == "switchyard" || r == "core"), "{roots:?}");
        }
    }

    /// The marker type survives attribute errors, so filters naming the RPC add no errors of
    /// their own; its `RpcMethod` impl needs a `Result<T, E>` return type.
    #[test]
    fn rpc_marker_is_emitted_despite_errors() {
        let out = expand(
            Kind::Rpc,
            quote!("tools/call"),
            quote!(
                async fn sum() -> Result<u32, McpError> {
                    todo!()
                }
            ),
        );
        let text = out.to_string();
        assert!(text.contains("compile_error"), "{text}");
        assert!(text.contains("enum sum { }"), "{text}");
        assert!(text.contains("RpcMethod for sum"), "{text}");
        assert!(!text.contains("inventory"), "no registration: {text}");

        let out = expand(
            Kind::Rpc,
            quote!("acme/sum"),
            quote!(
                async fn sum() -> u32 {
                    1
                }
            ),
        );
        let text = out.to_string();
        assert!(text.contains("enum sum { }") && !text.contains("RpcMethod for sum"), "{text}");
    }

    /// Tools, prompts and resources give their name a type (for filters naming them by mistake)
    /// despite attribute errors, through a glob import with the function's visibility; a name
    /// that is a primitive type gets none.
    #[test]
    fn handler_type_is_emitted_despite_errors_except_for_primitive_names() {
        let out = expand(
            Kind::Tool,
            quote!(unknown = 1),
            quote!(
                /// Doc.
                pub(crate) async fn echo() -> String {
                    todo!()
                }
            ),
        );
        let text = out.to_string();
        assert!(text.contains("compile_error"), "{text}");
        assert!(text.contains("mod __mcp_tool_echo"), "{text}");
        assert!(text.contains("pub type echo = :: switchyard :: __private :: ToolFunction"), "{text}");
        assert!(text.contains("pub (crate) use __mcp_tool_echo :: * ;"), "{text}");

        let out = expand(
            Kind::Prompt,
            quote!(),
            quote!(
                /// Doc.
                async fn str() -> String {
                    todo!()
                }
            ),
        );
        let text = out.to_string();
        assert!(!text.contains("compile_error") && !text.contains("__mcp_prompt_str"), "{text}");
    }

    /// The expansion of `#[attr] item` as formatted source, compared with
    /// `snapshots/switchyard_macros__expand__tests__{name}.snap`; the snapshot's description is
    /// the attribute, so a reviewer sees what was expanded. A changed expansion fails the test
    /// (in CI, a missing snapshot too); `INSTA_UPDATE=always` rewrites the snapshots, to be read
    /// before they are committed.
    fn assert_expansion(name: &str, kind: Kind, attr: TokenStream, item: TokenStream) {
        let invocation = attribute_text(kind, &attr);
        let out = expand(kind, attr, item);
        assert!(!out.to_string().contains("compile_error"), "{out}");
        let file: syn::File = syn::parse2(out.clone()).unwrap_or_else(|e| panic!("not a file of items: {e}\n{out}"));
        let pretty = prettyplease::unparse(&file);
        insta::with_settings!({ description => invocation, omit_expression => true }, {
            insta::assert_snapshot!(name, pretty);
        });
    }

    /// `#[mcp_tool(..)]` as prettyplease writes it, on one line (a snapshot's description is one
    /// line of its header).
    fn attribute_text(kind: Kind, attr: &TokenStream) -> String {
        let name = Ident::new(kind.macro_name(), Span::call_site());
        let file: syn::File = syn::parse_quote!(#[#name(#attr)] fn f() {});
        let text = prettyplease::unparse(&file);
        let attribute = text.split("\nfn f()").next().unwrap_or_default();
        attribute.split_whitespace().collect::<Vec<_>>().join(" ").replace("( ", "(").replace(" )", ")")
    }

    #[test]
    fn tool_derives_its_input_and_output_schemas_from_its_types() {
        assert_expansion(
            "tool_derives_its_input_and_output_schemas_from_its_types",
            Kind::Tool,
            quote!(),
            quote! {
                /// Searches the catalogue.
                async fn search(args: SearchArgs, db: State<Db>) -> Result<Json<Hits>, ToolError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn tool_with_a_written_schema_uses_it_and_needs_only_deserialize() {
        assert_expansion(
            "tool_with_a_written_schema_uses_it_and_needs_only_deserialize",
            Kind::Tool,
            quote!(input_schema = r#"{"type":"object","properties":{"q":{"type":"string"}}}"#),
            quote! {
                /// Looks something up.
                async fn lookup(args: LookupArgs) -> String {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn tool_carries_its_keys_roles_annotations_and_task_support() {
        assert_expansion(
            "tool_carries_its_keys_roles_annotations_and_task_support",
            Kind::Tool,
            quote!(
                name = "files.purge",
                title = "Purge",
                description = "Deletes old files.",
                group = "admin",
                destructive,
                idempotent = true,
                open_world = false,
                roles = ["admin", "ops"],
                task_support = "optional",
                timeout = "30s",
                rate_limit = "10/min",
                max_concurrency = 4
            ),
            quote! {
                async fn purge(cancel: CancellationToken) -> Result<CallToolResult, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn prompt_lists_its_params_fields_as_arguments() {
        assert_expansion(
            "prompt_lists_its_params_fields_as_arguments",
            Kind::Prompt,
            quote!(name = "review", title = "Code review", roles = ["editor"]),
            quote! {
                /// Asks for a code review.
                async fn review(args: ReviewArgs, ctx: RequestContext) -> Vec<PromptMessage> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn prompt_without_params_has_no_arguments() {
        assert_expansion(
            "prompt_without_params_has_no_arguments",
            Kind::Prompt,
            quote!(),
            quote! {
                /// Says hello.
                async fn hello() -> String {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn static_resource_registers_its_uri_and_mime_type() {
        assert_expansion(
            "static_resource_registers_its_uri_and_mime_type",
            Kind::Resource,
            quote!(uri = "config://app", mime_type = "application/json", roles = ["reader"]),
            quote! {
                /// The current configuration.
                async fn config(cfg: State<Config>) -> Result<String, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn resource_template_parses_its_variables_into_arguments() {
        assert_expansion(
            "resource_template_parses_its_variables_into_arguments",
            Kind::Resource,
            quote!(uri = "users://{org}/{id}/profile", name = "user-profile", group = "users"),
            quote! {
                async fn profile(org: String, id: u64, req: ResourceRequest) -> Result<ResourceContents, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn completion_of_one_prompt_argument() {
        assert_expansion(
            "completion_of_one_prompt_argument",
            Kind::Completion,
            quote!(prompt = "review", argument = "language"),
            quote! {
                async fn languages(req: CompletionRequest) -> Vec<String> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn completion_of_every_template_variable_with_an_extractor() {
        assert_expansion(
            "completion_of_every_template_variable_with_an_extractor",
            Kind::Completion,
            quote!(resource = "users://{org}/{id}/profile", group = "users"),
            quote! {
                async fn users(db: State<Db>, req: CompletionRequest) -> Result<Completion, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn rpc_decodes_its_params_and_is_served_in_both_eras() {
        assert_expansion(
            "rpc_decodes_its_params_and_is_served_in_both_eras",
            Kind::Rpc,
            quote!("acme/sum"),
            quote! {
                async fn sum(params: SumParams, db: State<Db>) -> Result<SumResult, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn rpc_without_params_carries_its_roles_and_era() {
        assert_expansion(
            "rpc_without_params_carries_its_roles_and_era",
            Kind::Rpc,
            quote!("acme/reset", roles = ["admin"], eras = "legacy"),
            quote! {
                async fn reset() -> Result<(), AcmeError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn rpc_of_an_extension_requires_its_capabilities_and_is_modern_only() {
        assert_expansion(
            "rpc_of_an_extension_requires_its_capabilities_and_is_modern_only",
            Kind::Rpc,
            quote!("io.x/run", capability = "sampling", extension = "io.x/ext", routing_name = "id", group = "g"),
            quote! {
                pub async fn run(p: P) -> Result<R, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn rpc_of_an_official_extension_takes_a_name_in_an_mcp_namespace() {
        assert_expansion(
            "rpc_of_an_official_extension_takes_a_name_in_an_mcp_namespace",
            Kind::Rpc,
            quote!("tasks/get", extension = "io.modelcontextprotocol/tasks", routing_name = "taskId"),
            quote! {
                async fn tasks_get(params: TaskRef, ctx: RequestContext) -> Result<Value, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn raw_filter_wraps_every_request() {
        assert_expansion(
            "raw_filter_wraps_every_request",
            Kind::Filter,
            quote!(order = -1),
            quote! {
                async fn audit(req: RawRequest, next: RawNext) -> RawResponse {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn typed_filter_takes_the_types_of_its_rpc() {
        assert_expansion(
            "typed_filter_takes_the_types_of_its_rpc",
            Kind::Filter,
            quote!(rpc = crate::rpcs::sum, order = 20, group = "typed"),
            quote! {
                async fn limit(req: TypedRequest<SumParams>, next: Next<SumParams, SumResult>) -> Result<SumResult, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn alternate_filter_registers_an_alternate_registration() {
        assert_expansion(
            "alternate_filter_registers_an_alternate_registration",
            Kind::Filter,
            quote!(alternate, rpc = switchyard::methods::PromptsGet, order = -2, group = "g"),
            quote! {
                async fn deferred(
                    req: TypedRequest<GetPromptParams>,
                    next: AltNext<GetPromptParams, GetPromptResult>,
                ) -> Result<Alternate<GetPromptResult>, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn alternate_filter_without_rpc_is_an_error_and_keeps_the_function() {
        let out = expand(
            Kind::Filter,
            quote!(alternate),
            quote!(
                async fn alt(r: TypedRequest<P>, n: AltNext<P, R>) -> Result<Alternate<R>, McpError> {
                    todo!()
                }
            ),
        );
        let text = out.to_string();
        assert!(text.contains("compile_error") && text.contains("name the method with `rpc`"), "{text}");
        assert!(text.contains("async fn alt"), "the function stays: {text}");
        assert!(!text.contains("inventory"), "{text}");
    }

    #[test]
    fn subscription_field_processor_grants_its_key_for_its_extension() {
        assert_expansion(
            "subscription_field_processor_grants_its_key_for_its_extension",
            Kind::SubscriptionField,
            quote!("taskIds", extension = "io.x/tasks"),
            quote! {
                async fn grant(ctx: RequestContext, requested: Vec<String>) -> Result<Vec<String>, E> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn subscription_field_processor_without_extension_serves_any_client() {
        assert_expansion(
            "subscription_field_processor_without_extension_serves_any_client",
            Kind::SubscriptionField,
            quote!("io.example/jobs", group = "jobs"),
            quote! {
                async fn jobs(requested: JobFilter) -> Result<JobFilter, McpError> {
                    todo!()
                }
            },
        );
    }

    #[test]
    fn subscription_field_signature_errors_keep_the_function() {
        let out = expand(
            Kind::SubscriptionField,
            quote!("taskIds"),
            quote!(
                fn grant(a: Vec<String>, b: Vec<String>) -> Vec<String> {
                    todo!()
                }
            ),
        );
        let text = out.to_string();
        // Not async, a second requested value, not a `Result`.
        assert_eq!(text.matches("compile_error").count(), 3, "{text}");
        assert!(text.contains("fn grant"), "the function stays: {text}");
        assert!(!text.contains("inventory"), "{text}");
    }

    #[test]
    fn guard_names_read_as_the_problem_and_hash_only_lossy_keys() {
        assert_eq!(
            guard_name(Guarded::Tool, "default", "echo"),
            "mcp_tool_named_echo_is_declared_twice_in_this_crate_rename_one"
        );
        assert_eq!(
            guard_name(Guarded::SubscriptionField, "default", "taskIds"),
            "subscription_field_for_key_taskIds_is_declared_twice_in_this_crate_remove_one"
        );
        let dotted = guard_name(Guarded::Tool, "default", "files.read-v2");
        assert!(dotted.starts_with("mcp_tool_named_files_read_v2_is_declared_twice_in_this_crate_rename_one__"));
        let grouped = guard_name(Guarded::Prompt, "admin", "echo");
        assert!(
            grouped.starts_with("mcp_prompt_named_echo_in_group_admin_is_declared_twice_in_this_crate_rename_one__")
        );
        let uri = guard_name(Guarded::Resource, "default", "files://{path}");
        assert!(uri.starts_with("mcp_resource_with_uri_files_path_is_declared_twice_in_this_crate_change_one__"));
        let long = guard_name(Guarded::Tool, "default", &"a".repeat(128));
        assert!(long.starts_with(&format!("mcp_tool_named_{}_is", "a".repeat(GUARD_KEY_CHARS))), "{long}");
        let longest = guard_name(Guarded::SubscriptionField, &"g".repeat(100), &"k".repeat(500));
        for name in [dotted, grouped, uri, long, longest] {
            assert!(syn::parse_str::<Ident>(&name).is_ok(), "{name}");
            assert!(name.len() <= 170, "{name}");
        }
    }

    /// Distinct (kind, group, key) never share a guard name, even where the readable parts do.
    #[test]
    fn guard_names_differ_where_the_readable_text_does_not() {
        let names = [
            guard_name(Guarded::Tool, "default", "files.read"),
            guard_name(Guarded::Tool, "default", "files-read"),
            guard_name(Guarded::Tool, "default", "files_read"),
            guard_name(Guarded::Tool, "default", "echo_in_group_admin"),
            guard_name(Guarded::Tool, "admin", "echo"),
            guard_name(Guarded::Tool, "ad-min", "echo"),
            guard_name(Guarded::Tool, "ad_min", "echo"),
            guard_name(Guarded::Tool, "default", &format!("{}1", "a".repeat(GUARD_KEY_CHARS))),
            guard_name(Guarded::Tool, "default", &format!("{}2", "a".repeat(GUARD_KEY_CHARS))),
            guard_name(Guarded::Tool, "default", &"a".repeat(GUARD_KEY_CHARS)),
            guard_name(Guarded::Prompt, "default", "files_read"),
            guard_name(Guarded::Rpc, "default", "acme/sum"),
            guard_name(Guarded::Rpc, "default", "acme.sum"),
        ];
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn identifier_text_keeps_exact_names_and_squeezes_the_rest() {
        assert_eq!(identifier_text("echo_2", 40), ("echo_2".to_owned(), true));
        assert_eq!(identifier_text("files.read-v2", 40), ("files_read_v2".to_owned(), false));
        assert_eq!(identifier_text("file:///{id}", 40), ("file_id".to_owned(), false));
        assert_eq!(identifier_text("abcdef", 3), ("abc".to_owned(), false));
        assert_eq!(identifier_text("ab.cdef", 3), ("ab".to_owned(), false));
    }
}
