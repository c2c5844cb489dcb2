//! A body-less `#[mcp_tool]` or `#[mcp_rpc]`: a declaration, for a crate that callers and the
//! server share. It emits what the calling side needs (the hidden type with its
//! `ToolDeclaration` impl, or the RPC marker with its `RpcMethod` impl and typed call) and no
//! function and no registration; the server implements it with `declared = path`.
//!
//! A declaration says only the name and the shapes: keys that describe the served tool (title,
//! description, hints, roles, ...) belong on the handler and are errors here, and so are
//! extractor arguments.

use super::{Kind, rpc, tool};
use crate::ast::{ArgRules, Handler};
use crate::attr::{Named, ToolAttrs};
use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Attribute, ItemFn};

pub fn expand(kind: Kind, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let cx = Ctxt::new();
    let cfgs: Vec<&Attribute> = func.attrs.iter().filter(|a| a.path().is_ident("cfg")).collect();
    let (beside, hidden) = match kind {
        Kind::Tool => tool_declaration(&cx, attr, func),
        Kind::Rpc => {
            let generated = rpc::expand(&cx, attr, func, true);
            (generated.beside, generated.hidden)
        }
        _ => {
            let msg = format!(
                "`#[{}]` needs a function body: only `#[mcp_tool]` and `#[mcp_rpc]` can be declared without one \
                 (a declaration a server implements with `declared = path`)",
                kind.macro_name()
            );
            cx.error_at(func.sig.span(), msg);
            (Vec::new(), TokenStream::new())
        }
    };
    let beside = beside.iter().map(|item| quote!(#(#cfgs)* #item));
    match cx.check() {
        Ok(()) => quote! {
            #(#beside)*
            #(#cfgs)*
            const _: () = { #hidden };
        },
        Err(err) => {
            let errors = err.to_compile_error();
            quote!(#(#beside)* #errors)
        }
    }
}

fn tool_declaration(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> (Vec<TokenStream>, TokenStream) {
    let attrs = ToolAttrs::parse(cx, attr);
    let handler = Handler::from_fn(cx, func, &ArgRules::Params { macro_name: "mcp_tool" });
    let name = Named::literal_or_ident(attrs.common.name.as_ref(), handler.ident);
    check::report(cx, name.span, check::tool_name(&name.value));
    let served: [(&str, Option<Span>); 11] = [
        ("title", attrs.common.title.as_ref().map(Spanned::span)),
        ("description", attrs.common.description.as_ref().map(Spanned::span)),
        ("group", attrs.common.group.as_ref().map(Spanned::span)),
        ("roles", attrs.common.roles.as_ref().map(|r| r.array.span())),
        ("scopes", attrs.common.scopes.as_ref().map(|r| r.array.span())),
        ("input_schema", attrs.input_schema.as_ref().map(Spanned::span)),
        ("task_support", attrs.task_support.as_ref().map(Spanned::span)),
        ("declared", attrs.declared.as_ref().map(|p| p.span())),
        ("timeout", attrs.timeout.as_ref().map(Spanned::span)),
        ("rate_limit", attrs.rate_limit.as_ref().map(Spanned::span)),
        ("max_concurrency", attrs.max_concurrency.as_ref().map(Spanned::span)),
    ];
    let hints = attrs.hints.iter().map(|h| (h.key.as_str(), Some(h.span)));
    for (key, span) in served.into_iter().chain(hints) {
        if let Some(span) = span {
            cx.error_at(
                span,
                format!(
                    "`{key}` describes the served tool: give it on the handler that implements this declaration \
                     (`#[mcp_tool(declared = ...)]`); a declaration takes only `name`"
                ),
            );
        }
    }
    super::extractors_are_errors(cx, &handler, "tool");
    if super::tool_declaration(func).is_none() {
        cx.error_at(
            handler.ident.span(),
            format!(
                "a declaration named like the primitive type `{0}` cannot have a typed call: rename the function \
                 and keep the tool's name with `name = \"{0}\"`",
                handler.ident
            ),
        );
    }
    let beside = super::name_as_type_documented(func, "tool", "ToolFunction", true);
    let declaration = tool::declaration_impl(func, &handler, &name.value);
    (beside, declaration)
}
