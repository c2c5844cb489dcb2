//! `#[mcp_tool]`: a `ToolRegistration` whose shim decodes `arguments`, builds the extractors,
//! awaits the function and converts its return value with `IntoToolOutcome`.

use super::{
    Guarded, ShimInputs, bind_args, convert_return, decoration, duplicate_guard, group, lit_value, names, opt_str,
    params_assertion, private, shim_param, site, uses,
};
use crate::ast::{self, ArgRules, Handler, Role};
use crate::attr::{Named, ToolAttrs};
use crate::check;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemFn;
use syn::spanned::Spanned;

pub fn expand(cx: &Ctxt, attr: TokenStream, func: &ItemFn) -> TokenStream {
    let attrs = ToolAttrs::parse(cx, attr);
    let handler = Handler::from_fn(cx, func, &ArgRules::Params { macro_name: "mcp_tool" });
    let name = Named::literal_or_ident(attrs.common.name.as_ref(), handler.ident);
    check::check_tool(cx, &attrs, &name, &handler);
    if let (Some(_), Some(output)) = (&attrs.declared, handler.output.filter(|ty| ast::is_unnameable(ty))) {
        cx.error_spanned_by(
            output,
            "a handler that implements a declaration names its return type (the declaration's, or it inside \
             `Result<_, ToolError>`), so that its output is checked against the declaration's",
        );
    }
    if cx.has_errors() {
        return TokenStream::new();
    }
    let p = private();
    let group = group(attrs.common.group.as_ref());
    let what = format!("tool `{}`", name.value);
    let raw_schema = attrs.input_schema.as_ref();

    let input_schema = match (raw_schema, handler.params()) {
        (Some(text), _) => quote! {
            fn __input_schema() -> #p::serde_json::Value {
                #p::raw_schema(#text)
            }
        },
        (None, Some(ty)) => {
            let assertion = params_assertion(ty, false);
            let call = quote_spanned!(ty.span()=> #p::input_schema::<#ty>());
            quote! {
                fn __input_schema() -> #p::serde_json::Value {
                    #assertion
                    #call
                }
            }
        }
        (None, None) => quote! {
            fn __input_schema() -> #p::serde_json::Value {
                #p::empty_object_schema()
            }
        },
    };

    let schema_origin =
        if raw_schema.is_some() { quote!(#p::SchemaOrigin::Written) } else { quote!(#p::SchemaOrigin::Derived) };

    let (output_schema_fn, output_schema) = match handler.output.and_then(ast::structured_output) {
        Some(ty) => {
            let call = quote_spanned! {ty.span()=>
                #p::assert_output_schema::<#ty>();
                #p::output_schema::<#ty>()
            };
            (quote!(fn __output_schema() -> #p::serde_json::Value { #call }), quote!(#p::Some(__output_schema)))
        }
        None => (TokenStream::new(), quote!(#p::None)),
    };

    let (annotations_fn, annotations) = if attrs.hints.is_empty() {
        (TokenStream::new(), quote!(#p::None))
    } else {
        let entries = attrs.hints.iter().map(|h| {
            let (key, value) = (h.json_key, h.value);
            quote!(#key: #value)
        });
        let body = quote!(#p::serde_json::json!({ #(#entries),* }));
        (quote!(fn __annotations() -> #p::serde_json::Value { #body }), quote!(#p::Some(__annotations)))
    };

    let inputs = ShimInputs { what: &what, tool: Some(&name.value), params_value: quote!(__args) };
    let (lets, call) = bind_args(&handler, &inputs, raw_schema.is_some());
    let returns = convert_return(
        &handler,
        ("assert_tool_return", "IntoToolOutcome", "into_tool_outcome"),
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
    let guard = duplicate_guard(Guarded::Tool, &group, &name);
    let task_support = match attrs.task_support.as_ref().map(|m| check::task_support(&m.value())) {
        Some(Ok(variant)) => {
            let v = syn::Ident::new(variant, proc_macro2::Span::call_site());
            quote!(#p::TaskSupport::#v)
        }
        _ => quote!(#p::TaskSupport::Forbidden),
    };

    let limits = limits(&attrs);
    let state = super::state_requirements(&handler);
    let declaration = declaration_impl(func, &handler, name_text);
    let implements = attrs.declared.as_ref().map(|path| implements_declaration(path, &handler, name_text));
    quote! {
        #declaration
        #implements

        #input_schema
        #output_schema_fn
        #annotations_fn

        fn __call(
            #ctx: #p::RequestContext,
            #args: #p::ToolArguments,
        ) -> #p::BoxFuture<#p::Result<#p::CallToolResult, #p::McpError>> {
            #pin(async move {
                #lets
                #returns
            })
        }

        #p::inventory::submit! {
            #p::ToolRegistration {
                name: #name_text,
                title: #title,
                description: #description,
                group: #group,
                input_schema: __input_schema,
                schema_origin: #schema_origin,
                output_schema: #output_schema,
                annotations: #annotations,
                icons: #icons,
                meta: #meta,
                roles: #roles,
                scopes: #scopes,
                task_support: #task_support,
                limits: #limits,
                handler: __call,
                state: #state,
                site: #site,
            }
        }

        #guard
    }
}

/// The `ToolLimits` of `timeout`, `rate_limit` and `max_concurrency`; a value `check_tool`
/// reported is left out (the build fails on the error anyway).
fn limits(attrs: &ToolAttrs) -> TokenStream {
    let p = private();
    let mut limits = quote!(#p::ToolLimits::NONE);
    if let Some(Ok(ms)) = attrs.timeout.as_ref().map(|t| check::tool_timeout(&t.value())) {
        limits = quote!(#limits.timeout(::core::time::Duration::from_millis(#ms)));
    }
    if let Some(Ok((calls, per_ms))) = attrs.rate_limit.as_ref().map(|r| check::rate_limit(&r.value())) {
        limits = quote!(#limits.rate_limit(#calls, ::core::time::Duration::from_millis(#per_ms)));
    }
    if let Some(Ok(n)) = attrs.max_concurrency.as_ref().map(check::max_concurrency) {
        limits = quote!(#limits.max_concurrency(#n));
    }
    limits
}

/// `impl ToolDeclaration for` the tool's marker type: its name, params type (`()` without
/// params) and return type, for the typed call `greet::call`. Left out when a type cannot be
/// named outside the function (`impl Trait`), or the function has no alias.
pub fn declaration_impl(func: &ItemFn, handler: &Handler<'_>, name: &str) -> TokenStream {
    let p = private();
    let Some((module, marker)) = super::tool_declaration(func) else { return TokenStream::new() };
    let unit: syn::Type = syn::parse_quote!(());
    let params = handler.params().unwrap_or(&unit);
    let output = handler.output.unwrap_or(&unit);
    if ast::is_unnameable(params) || ast::is_unnameable(output) {
        return TokenStream::new();
    }
    quote! {
        impl #p::ToolDeclaration for #module::#marker {
            const NAME: &'static str = #name;
            type Params = #params;
            type Return = #output;
        }
    }
}

/// The checks of `declared = path`: the tool's name, its params type and its typed output (type
/// and where in the result it is) are the declaration's, each a compile error at the part that
/// differs.
fn implements_declaration(path: &syn::Path, handler: &Handler<'_>, name: &str) -> TokenStream {
    let p = private();
    let unit: syn::Type = syn::parse_quote!(());
    let params = handler.params().unwrap_or(&unit);
    let output = handler.output.unwrap_or(&unit);
    let declaration = quote_spanned!(path.span()=> <#path as #p::ToolDeclaration>);
    let name_check = quote_spanned! {path.span()=>
        const _: () = #p::assert_declared_name(#declaration::NAME, #name);
    };
    let params_check = quote_spanned! {params.span()=>
        fn __declared_params(params: #params) -> #declaration::Params { params }
    };
    let output_check = (!ast::is_unnameable(output)).then(|| {
        quote_spanned! {output.span()=>
            fn __declared_output(
                output: <#output as #p::ToolReturn>::Output,
            ) -> <#declaration::Return as #p::ToolReturn>::Output {
                output
            }
            const _: () = #p::assert_same_shape(
                <#declaration::Return as #p::ToolReturn>::SHAPE,
                <#output as #p::ToolReturn>::SHAPE,
            );
        }
    });
    quote! {
        #name_check
        #params_check
        #output_check
    }
}
