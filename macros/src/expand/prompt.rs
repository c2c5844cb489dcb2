//! `#[mcp_prompt]`: a `PromptRegistration` whose shim decodes the string `arguments` into the
//! params type and converts the return value with `IntoPromptResult`.

use super::{
    Guarded, ShimInputs, bind_args, convert_return, decoration, duplicate_guard, group, lit_value, names, opt_str,
    params_assertion, private, shim_param, site, uses,
};
use crate::ast::{ArgRules, Handler, Role};
use crate::attr::{Named, PromptAttrs};
use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemFn;
use syn::spanned::Spanned;

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let attrs = PromptAttrs::parse(cx, attr);
    let handler = Handler::from_fn(cx, func, &ArgRules::Params { macro_name: "mcp_prompt" });
    let name = Named::literal_or_ident(attrs.common.name.as_ref(), handler.ident);
    check::check_prompt(cx, &attrs, &name, &handler);
    if cx.has_errors() {
        return TokenStream::new();
    }
    let p = private();
    let group = group(attrs.common.group.as_ref());
    let what = format!("prompt `{}`", name.value);

    let arguments = match handler.params() {
        Some(ty) => {
            let assertion = params_assertion(ty, false);
            let call = quote_spanned!(ty.span()=> #p::prompt_arguments::<#ty>());
            quote! {
                fn __arguments() -> #p::Vec<#p::PromptArgument> {
                    #assertion
                    #call
                }
            }
        }
        None => quote! {
            fn __arguments() -> #p::Vec<#p::PromptArgument> {
                #p::Vec::new()
            }
        },
    };

    let inputs = ShimInputs { what: &what, tool: None, params_value: quote!(#p::serde_json::Value::Object(__args)) };
    let (lets, call) = bind_args(&handler, &inputs, false);
    let returns = convert_return(
        &handler,
        ("assert_prompt_return", "IntoPromptResult", "into_prompt_result"),
        quote!(#call.await),
        TokenStream::new(),
    );
    let ctx = shim_param(uses(&handler, |r| *r == Role::Extractor), "__ctx");
    let args = shim_param(uses(&handler, |r| *r == Role::Params), "__args");
    let pin = quote_spanned!(handler.ident.span()=> #p::Box::pin);

    let name_text = &name.value;
    let title = opt_str(lit_value(attrs.common.title.as_ref()));
    let description = opt_str(lit_value(attrs.common.description.as_ref()).or_else(|| handler.docs.clone()));
    let roles = names(attrs.common.roles.as_ref());
    let scopes = names(attrs.common.scopes.as_ref());
    let (icons, meta) = decoration(&attrs.common);
    let site = site(handler.ident);
    let guard = duplicate_guard(Guarded::Prompt, &group, &name);

    let state = super::state_requirements(&handler);
    quote! {
        #arguments

        fn __get(
            #ctx: #p::RequestContext,
            #args: #p::serde_json::Map<#p::String, #p::serde_json::Value>,
        ) -> #p::BoxFuture<#p::Result<#p::GetPromptResult, #p::McpError>> {
            #pin(async move {
                #lets
                #returns
            })
        }

        #p::inventory::submit! {
            #p::PromptRegistration {
                name: #name_text,
                title: #title,
                description: #description,
                group: #group,
                arguments: __arguments,
                icons: #icons,
                meta: #meta,
                roles: #roles,
                scopes: #scopes,
                handler: __get,
                state: #state,
                site: #site,
            }
        }

        #guard
    }
}
