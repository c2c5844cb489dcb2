//! `#[mcp_filter]`: a `RawFilterRegistration` around every request; with `rpc = handler`, a
//! `TypedFilterRegistration` on that method's decoded params and typed result; with
//! `alternate` as well, an `AlternateFilterRegistration`, which may answer with another shape.
//!
//! The shim hands the runtime's values to the user's function through identity conversion
//! traits (`RawFilterRequest`, `TypedFilterNext<M, P, R>`, `AltFilterReturn<M, R>`, ...) named
//! with the user's types and spanned at them: a wrong argument or return type is one error at
//! that token, whose message says what the filter's kind (and, for filters on a method, the
//! method's types) requires.

use super::{group, private, private_at, site};
use crate::ast::{self, FilterFn, FilterKind};
use crate::attr::FilterAttrs;
use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, Type};

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let attrs = FilterAttrs::parse(cx, attr);
    check::check_filter(cx, &attrs);
    let kind = if attrs.meant_alternate() {
        FilterKind::Alternate
    } else if attrs.typed {
        FilterKind::Typed
    } else {
        FilterKind::Raw
    };
    let filter = FilterFn::from_fn(cx, func, kind);
    check::check_filter_fn(cx, kind, &filter);
    if cx.has_errors() {
        return TokenStream::new();
    }
    let Some((request, next)) = filter.args else {
        // `FilterFn::from_fn` reported the argument count.
        return TokenStream::new();
    };
    let p = private();
    let order = attrs.order.unwrap_or(0);
    let function = filter.ident.to_string();
    let name = quote!(::core::concat!(::core::module_path!(), "::", #function));
    let site = site(filter.ident);
    let pin = quote_spanned!(filter.ident.span()=> #p::Box::pin);
    let ident = filter.ident;
    let group = group(attrs.group.as_ref());

    let Some(rpc) = &attrs.rpc else {
        let request = convert(request, quote!(#p::RawFilterRequest), quote!(from_raw), quote!(__req));
        let next = convert(next, quote!(#p::RawFilterNext), quote!(from_raw), quote!(__next));
        let returns =
            convert_return(&filter, quote!(#p::RawFilterReturn), quote!(into_raw), quote!(#ident(__a, __b).await));
        return quote! {
            fn __filter(__req: #p::RawRequest, __next: #p::RawNext) -> #p::BoxFuture<#p::RawResponse> {
                #pin(async move {
                    let __a = #request;
                    let __b = #next;
                    #returns
                })
            }

            #p::inventory::submit! {
                #p::RawFilterRegistration {
                    order: #order,
                    name: #name,
                    group: #group,
                    handler: __filter,
                    site: #site,
                }
            }
        };
    };

    // The user's path appears only as the qualified self type of `TypedMethod` (never as a bare
    // generic argument, which could be taken for a constant), with every token at the path:
    // naming a function without `#[mcp_rpc]` is one "not a type" error there. The shim names
    // `METHOD` first, so that a type that is no method is one "not a typed method" error, which
    // covers the shim's later uses, and the registration's are the same error again. rustc
    // deduplicates such errors only at equal spans, and reports some at the path and others at
    // the whole `<path as TypedMethod>::Item`: so the tokens before the path carry its first
    // token's span and those after it its last token's, making both spans the path's.
    let (first, last) = first_and_last_spans(rpc);
    let ps = private_at(first);
    let method_types = |item: &str| {
        let open = quote_spanned!(first=> <);
        let close = quote_spanned!(last=> >::);
        let item = Ident::new(item, last);
        quote_spanned!(first=> #open #rpc as #ps::TypedMethod #close #item)
    };
    let (marker, params, result, method) =
        (method_types("Marker"), method_types("Params"), method_types("Result"), method_types("METHOD"));
    // Typed and alternate-result filters differ only in the runtime items they go through.
    let (request_trait, next_trait, return_trait, from, into, erased_next, erased_out, shim, registration) =
        if kind == FilterKind::Alternate {
            (
                quote!(#p::AltFilterRequest<#marker, #params>),
                quote!(#p::AltFilterNext<#marker, #params, #result>),
                quote!(#p::AltFilterReturn<#marker, #result>),
                quote!(from_alt),
                quote!(into_alternate),
                quote!(#p::ErasedAltNext),
                quote!(#p::ErasedOutcome),
                quote!(#p::alternate_filter_shim),
                quote!(#p::AlternateFilterRegistration),
            )
        } else {
            (
                quote!(#p::TypedFilterRequest<#marker, #params>),
                quote!(#p::TypedFilterNext<#marker, #params, #result>),
                quote!(#p::TypedFilterReturn<#marker, #result>),
                quote!(from_typed),
                quote!(into_typed),
                quote!(#p::ErasedNext),
                quote!(#p::ErasedValue),
                quote!(#p::typed_filter_shim),
                quote!(#p::TypedFilterRegistration),
            )
        };
    let request = convert(request, request_trait, from.clone(), quote!(__req));
    let next = convert(next, next_trait, from, quote!(__next));
    let returns = convert_return(&filter, return_trait, into, quote!(#ident(__a, __b).await));
    quote! {
        fn __filter(
            __ctx: #p::RequestContext,
            __params: #p::ErasedValue,
            __next: #erased_next,
        ) -> #p::BoxFuture<#p::Result<#erased_out, #p::McpError>> {
            let _ = #method;
            #shim::<#params, #result, _, _>(__ctx, __params, __next, |__req, __next| async move {
                let __a = #request;
                let __b = #next;
                #returns
            })
        }

        #p::inventory::submit! {
            #registration {
                method: #method,
                order: #order,
                name: #name,
                group: #group,
                params_type: #p::TypeId::of::<#params>,
                result_type: #p::TypeId::of::<#result>,
                handler: __filter,
                site: #site,
            }
        }
    }
}

/// The spans of the first and the last token of `path`.
fn first_and_last_spans(path: &syn::Path) -> (Span, Span) {
    let mut tokens = path.to_token_stream().into_iter().map(|t| t.span());
    let first = tokens.next().unwrap_or_else(Span::call_site);
    (first, tokens.last().unwrap_or(first))
}

/// `<ty as Trait>::method(value)`, spanned at the user's `ty`.
fn convert(ty: &Type, trait_path: TokenStream, method: TokenStream, value: TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> <#ty as #trait_path>::#method(#value))
}

/// The conversion of the awaited filter's value, spanned at the return type (at the function
/// name when there is no `->`); a return type that cannot be named (`impl Trait`) is left to
/// inference.
fn convert_return(
    filter: &FilterFn<'_>,
    trait_path: TokenStream,
    method: TokenStream,
    value: TokenStream,
) -> TokenStream {
    match filter.output {
        Some(ty) if ast::is_unnameable(ty) => quote!(<_ as #trait_path>::#method(#value)),
        Some(ty) => convert(ty, trait_path, method, value),
        None => quote_spanned!(filter.ident.span()=> <() as #trait_path>::#method(#value)),
    }
}
