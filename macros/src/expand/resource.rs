//! `#[mcp_resource]`: a `ResourceRegistration` (static URI or `{var}` template) whose shim binds
//! template variables to same-named arguments and converts the return value with
//! `IntoReadResult` under the registered MIME type.

use super::ShimInputs;
use super::{
    Guarded, bind_args, convert_return, decoration, duplicate_guard, group, lit_value, names, opt_str, private,
    shim_param, site, uses,
};
use crate::ast::{ArgRules, Handler, Role};
use crate::attr::{Named, ResourceAttrs};
use crate::check;
use crate::ctxt::Ctxt;
use crate::uri_template;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemFn;

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let attrs = ResourceAttrs::parse(cx, attr);
    let vars = check::check_resource(cx, &attrs);
    let uri = lit_value(attrs.uri.as_ref()).unwrap_or_default();
    let handler = Handler::from_fn(cx, func, &ArgRules::Resource { uri: &uri, vars: &vars });
    if cx.has_errors() {
        return TokenStream::new();
    }
    let p = private();
    let group = group(attrs.common.group.as_ref());
    let name = Named::literal_or_ident(attrs.common.name.as_ref(), handler.ident);
    let mime = opt_str(lit_value(attrs.mime_type.as_ref()));

    // Resources have no params argument; `what` is never used in a decode.
    let inputs = ShimInputs { what: "", tool: None, params_value: TokenStream::new() };
    let (lets, call) = bind_args(&handler, &inputs, false);
    let returns = convert_return(
        &handler,
        ("assert_resource_return", "IntoReadResult", "into_read_result"),
        quote!(#call.await),
        quote!(, &__req.uri, #mime),
    );
    let ctx = shim_param(uses(&handler, |r| *r == Role::Extractor), "__ctx");
    let pin = quote_spanned!(handler.ident.span()=> #p::Box::pin);

    let is_template = uri_template::is_template(&uri);
    let name_text = &name.value;
    let title = opt_str(lit_value(attrs.common.title.as_ref()));
    let description = opt_str(lit_value(attrs.common.description.as_ref()).or_else(|| handler.docs.clone()));
    let roles = names(attrs.common.roles.as_ref());
    let scopes = names(attrs.common.scopes.as_ref());
    let (icons, meta) = decoration(&attrs.common);
    let size = match attrs.size.as_ref().and_then(|n| n.base10_parse::<u64>().ok()) {
        Some(n) => quote!(#p::Some(#n)),
        None => quote!(#p::None),
    };
    let site = site(handler.ident);
    // The key is the URI: that is what `resources/read` looks a resource up by.
    let guard_key = Named { value: uri.clone(), span: attrs.uri.as_ref().map_or(name.span, |u| u.span()) };
    let guard = duplicate_guard(Guarded::Resource, &group, &guard_key);

    let state = super::state_requirements(&handler);
    quote! {
        fn __read(
            #ctx: #p::RequestContext,
            __req: #p::ResourceRequest,
        ) -> #p::BoxFuture<#p::Result<#p::ReadResourceResult, #p::McpError>> {
            #pin(async move {
                #lets
                #returns
            })
        }

        #p::inventory::submit! {
            #p::ResourceRegistration {
                uri: #uri,
                is_template: #is_template,
                name: #name_text,
                title: #title,
                description: #description,
                mime_type: #mime,
                size: #size,
                annotations: #p::None,
                icons: #icons,
                meta: #meta,
                group: #group,
                roles: #roles,
                scopes: #scopes,
                handler: __read,
                state: #state,
                site: #site,
            }
        }

        #guard
    }
}
