//! `#[mcp_rpc("vendor/method")]`: a marker type named after the handler implementing
//! `RpcMethod` (what `#[mcp_filter(rpc = handler)]` names), and an `RpcRegistration` whose shim
//! builds the extractors, awaits the function and maps its error into `McpError`.

use super::{Generated, Guarded, duplicate_guard, extractor, group, lit_value, names, opt_str, private, site};
use crate::ast::{self, ArgRules, Handler, Role};
use crate::attr::{Named, RpcAttrs};
use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, Type};

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> Generated {
    let attrs = RpcAttrs::parse(cx, attr);
    let handler = Handler::from_fn(cx, func, &ArgRules::Params { macro_name: "mcp_rpc" });
    let returns = check::check_rpc(cx, &attrs, &handler);
    let p = private();
    let group = group(attrs.group.as_ref());
    let method = lit_value(attrs.method.as_ref()).unwrap_or_default();
    // Where serde is required, the params and result types are named through `RpcParams` and
    // `RpcResult` (identity projections) spanned at the user's types, and so is the impl item
    // that rustc checks: a type lacking serde support is one error at that type.
    let (params, checked_params, params_item) = match handler.params() {
        Some(ty) => {
            let checked = quote_spanned!(ty.span()=> <#ty as #p::RpcParams>::Checked);
            let item = quote_spanned!(ty.span()=> type Params = #checked;);
            (quote!(#ty), checked, item)
        }
        None => (quote!(#p::NoParams), quote!(#p::NoParams), quote!(type Params = #p::NoParams;)),
    };
    let checked_result = returns.map(|(result, _)| {
        let checked = quote_spanned!(result.span()=> <#result as #p::RpcResult>::Checked);
        let item = quote_spanned!(result.span()=> type Result = #checked;);
        (checked, item)
    });
    // The types of a generic function, or `impl Trait` params, cannot be named outside it
    // (both reported already).
    let nameable = func.sig.generics.params.is_empty() && !handler.params().is_some_and(ast::is_unnameable);
    let impl_items =
        checked_result.as_ref().filter(|_| nameable).map(|(_, result_item)| quote!(#params_item #result_item));
    let beside = marker(func, impl_items, &method);
    if cx.has_errors() {
        return Generated { beside, hidden: TokenStream::new() };
    }
    let (Some((result, error)), Some((checked_result, _)), Some(method_lit)) = (returns, checked_result, &attrs.method)
    else {
        // `check_rpc` and the attribute parser reported both cases.
        return Generated { beside, hidden: TokenStream::new() };
    };

    let required = required_capabilities(&attrs);
    let (capabilities_fn, capabilities) = match required {
        Some(body) => (
            quote!(fn __required_capabilities() -> #p::serde_json::Value { #body }),
            quote!(#p::Some(__required_capabilities)),
        ),
        None => (TokenStream::new(), quote!(#p::None)),
    };
    let routing_name = match &attrs.routing_name {
        Some(lit) => quote!(#p::Some(#lit)),
        None => quote!(#p::None),
    };
    let extension = opt_str(lit_value(attrs.extension.as_ref()));
    let eras = format_ident!("{}", attrs.eras().variant());

    let call = shim_body(&handler, error);
    let uses_ctx = handler.args.iter().any(|a| a.role == Role::Extractor);
    let ctx = if uses_ctx { quote!(__ctx) } else { quote!(_) };
    let params_arg = if handler.params().is_some() { quote!(__params) } else { quote!(_) };
    let roles = names(attrs.roles.as_ref());
    let scopes = names(attrs.scopes.as_ref());
    let site = site(handler.ident);
    let state = super::state_requirements(&handler);
    let guard = duplicate_guard(Guarded::Rpc, &group, &Named { value: method.clone(), span: method_lit.span() });

    Generated {
        beside,
        hidden: quote! {
            #capabilities_fn

            fn __call(
                __ctx: #p::RequestContext,
                __params: #p::ErasedValue,
            ) -> #p::BoxFuture<#p::Result<#p::ErasedValue, #p::McpError>> {
                #p::rpc_shim::<#params, #result, _, _>(__ctx, __params, |#ctx, #params_arg| async move { #call })
            }

            #p::inventory::submit! {
                #p::RpcRegistration {
                    method: #method,
                    group: #group,
                    routing_name: #routing_name,
                    extension: #extension,
                    required_capabilities: #capabilities,
                    eras: #p::Eras::#eras,
                    decode: #p::decode_erased::<#checked_params>,
                    encode: #p::encode_erased::<#checked_result>,
                    params_type: #p::TypeId::of::<#params>,
                    result_type: #p::TypeId::of::<#result>,
                    roles: #roles,
                    scopes: #scopes,
                    handler: __call,
                    state: #state,
                    site: #site,
                }
            }

            #guard
        },
    }
}

/// `#[doc(hidden)] enum handler {}` (the type namespace, so it does not clash with the function)
/// and its `RpcMethod` impl, which filters name with `rpc = handler`.
///
/// Emitted even when the annotation has errors, so that filters naming the RPC do not add
/// "cannot find type" errors to the real ones. The impls need the result type: a handler whose
/// return type is not `Result<T, E>` (`types` is `None`) gets the bare marker.
fn marker(func: &ItemFn, types: Option<TokenStream>, method: &str) -> Vec<TokenStream> {
    let p = private();
    let ident = &func.sig.ident;
    let vis = &func.vis;
    let mut items = vec![quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis enum #ident {}
    }];
    if let Some(types) = types {
        items.push(quote! {
            const _: () = {
                impl #p::RpcMethod for #ident {
                    #types
                    const METHOD: &'static str = #method;
                }
            };
        });
    }
    items
}

/// The body of the closure given to `rpc_shim`: the extractors from `&__ctx` in signature order
/// (a failing one returns its error), the params from `__params`, the call, and the error
/// conversion, spanned at the user's error type so that a bad one is reported there once.
fn shim_body(handler: &Handler<'_>, error: &Type) -> TokenStream {
    let p = private();
    let mut lets = TokenStream::new();
    let mut names = Vec::new();
    for (i, arg) in handler.args.iter().enumerate() {
        let var = format_ident!("__arg{}", i);
        let ty = arg.ty;
        let value = match arg.role {
            Role::Params => quote!(__params),
            _ => extractor(ty),
        };
        lets.extend(quote!(let #var = { #value };));
        names.push(var);
    }
    let ident = handler.ident;
    let into_error = if ast::is_unnameable(error) {
        quote!(#p::RpcError::into_mcp_error(__error))
    } else {
        quote_spanned!(error.span()=> <#error as #p::RpcError>::into_mcp_error(__error))
    };
    quote! {
        #lets
        #p::Result::map_err(#ident(#(#names),*).await, |__error| #into_error)
    }
}

/// The `ClientCapabilities` object required by `capability` and `extension`, as a `json!`
/// expression, or `None` when neither is given.
fn required_capabilities(attrs: &RpcAttrs) -> Option<TokenStream> {
    let p = private();
    let capability = attrs.capability.as_ref().map(|c| {
        let key = c.value();
        quote!(#key: {})
    });
    let client_declares = attrs.client_declares.is_none_or(|(v, _)| v);
    let extension = attrs.extension.as_ref().filter(|_| client_declares).map(|e| {
        let key = e.value();
        quote!("extensions": { #key: {} })
    });
    let entries: Vec<TokenStream> = capability.into_iter().chain(extension).collect();
    if entries.is_empty() {
        return None;
    }
    Some(quote!(#p::serde_json::json!({ #(#entries),* })))
}
