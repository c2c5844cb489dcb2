//! `#[mcp_completion]`: a `CompletionRegistration` for one prompt or resource template (and
//! optionally one argument) whose shim hands the `CompletionRequest` to the function and
//! converts the return value with `IntoCompletion`.

use super::{
    Guarded, ShimInputs, bind_args, convert_return, duplicate_guard, group, lit_value, opt_str, private, shim_param,
};
use super::{site, uses};
use crate::ast::{ArgRules, Handler, Role};
use crate::attr::{CompletionAttrs, Named};
use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemFn;

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let attrs = CompletionAttrs::parse(cx, attr);
    check::check_completion(cx, &attrs);
    let handler = Handler::from_fn(cx, func, &ArgRules::Completion);
    if cx.has_errors() {
        return TokenStream::new();
    }
    let p = private();
    let group = group(attrs.group.as_ref());
    let (target, target_lit, kind) = match (&attrs.prompt, &attrs.resource) {
        (Some(prompt), _) => (quote!(#p::CompletionTarget::Prompt(#prompt)), prompt, "prompt"),
        (None, Some(resource)) => (quote!(#p::CompletionTarget::ResourceTemplate(#resource)), resource, "resource"),
        // `check_completion` reported the missing target, so expansion stopped above.
        (None, None) => return TokenStream::new(),
    };
    let argument = opt_str(lit_value(attrs.argument.as_ref()));

    let inputs = ShimInputs { what: "", tool: None, params_value: TokenStream::new() };
    let (lets, call) = bind_args(&handler, &inputs, false);
    let returns = convert_return(
        &handler,
        ("assert_completion_return", "IntoCompletion", "into_completion"),
        quote!(#call.await),
        TokenStream::new(),
    );
    let ctx = shim_param(uses(&handler, |r| *r == Role::Extractor), "__ctx");
    let req = shim_param(uses(&handler, |r| *r == Role::CompletionRequest), "__req");
    let pin = quote_spanned!(handler.ident.span()=> #p::Box::pin);
    let site = site(handler.ident);
    // One handler per (target, argument); `*` stands for "every argument".
    let key = format!(
        "{kind}:{}#{}",
        target_lit.value(),
        lit_value(attrs.argument.as_ref()).unwrap_or_else(|| "*".to_owned())
    );
    let span = attrs.argument.as_ref().unwrap_or(target_lit).span();
    let guard = duplicate_guard(Guarded::Completion, &group, &Named { value: key, span });

    let state = super::state_requirements(&handler);
    quote! {
        fn __complete(
            #ctx: #p::RequestContext,
            #req: #p::CompletionRequest,
        ) -> #p::BoxFuture<#p::Result<#p::Completion, #p::McpError>> {
            #pin(async move {
                #lets
                #returns
            })
        }

        #p::inventory::submit! {
            #p::CompletionRegistration {
                target: #target,
                argument: #argument,
                group: #group,
                handler: __complete,
                state: #state,
                site: #site,
            }
        }

        #guard
    }
}
