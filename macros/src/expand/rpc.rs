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

/// `declaration`: the function has no body (see `declaration.rs`): only the marker, its impl
/// and its typed call are emitted.
pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn, declaration: bool) -> Generated {
    let attrs = RpcAttrs::parse(cx, attr);
    let handler = Handler::from_fn(cx, func, &ArgRules::Params { macro_name: "mcp_rpc" });
    let returns = check::check_rpc(cx, &attrs, &handler);
    if declaration {
        served_keys_are_errors(cx, &attrs);
        super::extractors_are_errors(cx, &handler, "method");
    }
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
    let unit: Type = syn::parse_quote!(());
    let call_types =
        returns.filter(|_| impl_items.is_some()).map(|(result, _)| (handler.params().unwrap_or(&unit), result));
    let beside = marker(func, impl_items, call_types, &method);
    if cx.has_errors() {
        return Generated { beside, hidden: TokenStream::new() };
    }
    if declaration {
        // The error type is named nowhere else, and its import must not be reported unused.
        let output = handler.output.map(|ty| quote!(#[allow(dead_code)] type __Declared = #ty;));
        return Generated { beside, hidden: output.unwrap_or_default() };
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
    let implements = attrs.declared.as_ref().map(|path| implements_declaration(path, &params, result, &method));

    Generated {
        beside,
        hidden: quote! {
            #implements
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
///
/// With the types, the marker also gets the typed call: `handler::call(&caller, params)` (`()`
/// without params) returning the handler's `T` of `Result<T, E>`. Its serde bounds are
/// higher-ranked so that they are checked where `call` is used, not here: a server's types need
/// only what serving needs.
fn marker(
    func: &ItemFn,
    types: Option<TokenStream>,
    call_types: Option<(&Type, &Type)>,
    method: &str,
) -> Vec<TokenStream> {
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
    if let Some((params, result)) = call_types {
        items.push(quote! {
            const _: () = {
                impl #ident {
                    /// The typed call of this method (see `switchyard::call`).
                    #[allow(dead_code, private_interfaces)]
                    #vis fn call<'__c, __C: #p::Caller>(
                        caller: &'__c __C,
                        params: #params,
                    ) -> impl #p::Future<Output = #p::Result<#result, __C::Error>> + #p::Send + '__c
                    where
                        for<'__a> #params: #p::CallParams,
                        for<'__a> #result: #p::CallOutput,
                    {
                        #p::call_rpc::<#params, #result, __C>(caller, #method, params)
                    }
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

/// Each key of a body-less declaration besides the method, reported: they describe how the
/// method is served, which is the handler's to say.
fn served_keys_are_errors(cx: &Ctxt, attrs: &RpcAttrs) {
    let spans = [
        ("routing_name", attrs.routing_name.as_ref().map(Spanned::span)),
        ("capability", attrs.capability.as_ref().map(Spanned::span)),
        ("extension", attrs.extension.as_ref().map(Spanned::span)),
        ("client_declares", attrs.client_declares.map(|(_, span)| span)),
        ("eras", attrs.eras.as_ref().map(|e| e.span)),
        ("group", attrs.group.as_ref().map(Spanned::span)),
        ("roles", attrs.roles.as_ref().map(|r| r.array.span())),
        ("scopes", attrs.scopes.as_ref().map(|r| r.array.span())),
        ("declared", attrs.declared.as_ref().map(Spanned::span)),
    ];
    for (key, span) in spans {
        if let Some(span) = span {
            cx.error_at(
                span,
                format!(
                    "`{key}` describes how the method is served: give it on the handler that implements this \
                     declaration (`#[mcp_rpc(\"...\", declared = ...)]`); a declaration takes only the method name"
                ),
            );
        }
    }
}

/// The checks of `declared = path`: the method name, the params type and the result type are
/// the declaration's, each a compile error at the part that differs.
fn implements_declaration(path: &syn::Path, params: &TokenStream, result: &Type, method: &str) -> TokenStream {
    let p = private();
    let declaration = quote_spanned!(path.span()=> <#path as #p::TypedMethod>);
    let method_check = quote_spanned! {path.span()=>
        const _: () = #p::assert_declared_method(#declaration::METHOD, #method);
    };
    let params_check = quote_spanned! {params.span()=>
        fn __declared_params(params: #params) -> #declaration::Params { params }
    };
    let result_check = quote_spanned! {result.span()=>
        fn __declared_result(result: #result) -> #declaration::Result { result }
    };
    quote!(#method_check #params_check #result_check)
}
