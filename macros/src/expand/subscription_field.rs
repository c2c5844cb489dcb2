//! `#[subscription_field("key")]`: a `SubscriptionFieldRegistration` whose shim decodes the
//! requested value through `grant_shim`, builds the extractors, awaits the processor and maps its
//! error into `McpError`.

use super::{Guarded, duplicate_guard, extractor, group, lit_value, opt_str, private, site};
use crate::ast::{self, ArgRules, Handler, Role};
use crate::attr::{Named, SubscriptionFieldAttrs};
use crate::check::{self, GrantTypes};
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;
use syn::spanned::Spanned;

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let attrs = SubscriptionFieldAttrs::parse(cx, attr);
    let handler = Handler::from_fn(cx, func, &ArgRules::Grant);
    let types = check::check_subscription_field(cx, &attrs, &handler, func);
    if cx.has_errors() {
        return TokenStream::new();
    }
    let (Some(GrantTypes { requested, granted, error }), Some(key_lit)) = (types, &attrs.key) else {
        // `check_subscription_field` and the attribute parser reported both cases.
        return TokenStream::new();
    };
    let p = private();
    let key = key_lit.value();
    let group = group(attrs.group.as_ref());
    let extension = opt_str(lit_value(attrs.extension.as_ref()));
    let site = site(handler.ident);
    let guard =
        duplicate_guard(Guarded::SubscriptionField, &group, &Named { value: key.clone(), span: key_lit.span() });

    // The processor's arguments in signature order: the requested value, and extractors built
    // from `&__ctx` (a failing one returns its error).
    let mut lets = TokenStream::new();
    let mut names = Vec::new();
    for (i, arg) in handler.args.iter().enumerate() {
        let var = format_ident!("__arg{}", i);
        let value = match arg.role {
            Role::Params => quote!(__requested),
            _ => extractor(arg.ty),
        };
        lets.extend(quote!(let #var = { #value };));
        names.push(var);
    }
    let uses_ctx = handler.args.iter().any(|a| a.role == Role::Extractor);
    let ctx = if uses_ctx { quote!(__ctx) } else { quote!(_) };
    let ident = handler.ident;
    let into_error = if ast::is_unnameable(error) {
        quote!(#p::RpcError::into_mcp_error(__error))
    } else {
        quote_spanned!(error.span()=> <#error as #p::RpcError>::into_mcp_error(__error))
    };

    // Named through the identity projections `RpcParams` and `RpcResult`, spanned at the user's
    // types, so a type lacking serde support is one error there.
    let requested = quote_spanned!(requested.span()=> <#requested as #p::RpcParams>::Checked);
    let granted = quote_spanned!(granted.span()=> <#granted as #p::RpcResult>::Checked);

    let state = super::state_requirements(&handler);
    quote! {
        fn __grant(
            __ctx: #p::RequestContext,
            __requested: #p::serde_json::Value,
        ) -> #p::BoxFuture<#p::Result<#p::Option<#p::serde_json::Value>, #p::McpError>> {
            #p::grant_shim::<#requested, #granted, _, _>(__ctx, __requested, #key, |__requested, #ctx| async move {
                #lets
                #p::Result::map_err(#ident(#(#names),*).await, |__error| #into_error)
            })
        }

        #p::inventory::submit! {
            #p::SubscriptionFieldRegistration {
                key: #key,
                extension: #extension,
                group: #group,
                handler: __grant,
                state: #state,
                site: #site,
            }
        }

        #guard
    }
}
