//! The model of an annotated handler: its name, doc comment, arguments sorted into roles, and
//! return type. Structural problems of the signature are reported into the [`Ctxt`] here, each at
//! the token that causes it.

use crate::ctxt::Ctxt;
use crate::symbol::{EXTRACT, PARAMS, Symbol};
use syn::ext::IdentExt;
use syn::visit::Visit;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, Ident, ItemFn, Lit, Meta, Pat, PathArguments, ReturnType, Type,
};

/// Type names (last path segment) taken as extractors without `#[extract]`: the runtime's
/// `FromRequestContext` implementations.
const KNOWN_EXTRACTORS: &[&str] = &["RequestContext", "State", "CancellationToken", "Progress", "Logger", "Server"];

/// Which macro is building the model; decides what a non-extractor argument may be.
pub enum ArgRules<'a> {
    /// Tools and prompts: at most one params argument.
    Params { macro_name: &'static str },
    /// Resources: arguments named after a template variable, one `ResourceRequest`, extractors.
    Resource { uri: &'a str, vars: &'a [String] },
    /// Completions: one argument receiving the `CompletionRequest`, extractors.
    Completion,
    /// Subscription field processors: exactly one argument receiving the requested value
    /// (role [`Role::Params`]), extractors.
    Grant,
}

/// What the generated shim passes for one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Built with `FromRequestContext`.
    Extractor,
    /// Decoded from the request's arguments.
    Params,
    /// Parsed from the URI template variable of this name.
    TemplateVar(String),
    /// The `ResourceRequest` itself.
    ResourceRequest,
    /// The `CompletionRequest` itself.
    CompletionRequest,
}

/// One argument of the handler.
pub struct Arg<'a> {
    pub ty: &'a Type,
    pub role: Role,
}

/// An annotated `async fn`.
pub struct Handler<'a> {
    pub ident: &'a Ident,
    /// The doc comment, lines trimmed, `None` when absent or blank.
    pub docs: Option<String>,
    pub args: Vec<Arg<'a>>,
    /// `None` for a function without `->` (it returns `()`).
    pub output: Option<&'a Type>,
}

impl<'a> Handler<'a> {
    /// Builds the model, reporting every unsupported part of the signature.
    pub fn from_fn(cx: &Ctxt, func: &'a ItemFn, rules: &ArgRules<'_>) -> Handler<'a> {
        check_signature(cx, func, "MCP handlers");
        let mut args: Vec<Arg<'a>> = Vec::new();
        for input in &func.sig.inputs {
            match input {
                FnArg::Receiver(receiver) => {
                    cx.error_spanned_by(receiver, "MCP handlers are free functions and cannot take `self`");
                }
                FnArg::Typed(arg) => {
                    let binding = match &*arg.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(&p.ident),
                        Pat::Wild(_) => None,
                        other => {
                            cx.error_spanned_by(
                                other,
                                "handler arguments must be plain identifiers; destructure inside the function body",
                            );
                            continue;
                        }
                    };
                    let marked = has_marker(cx, &arg.attrs, EXTRACT);
                    let params = has_marker(cx, &arg.attrs, PARAMS);
                    let role = match (marked, params) {
                        (true, true) => {
                            cx.error_spanned_by(arg, "an argument is either `#[extract]` or `#[params]`, not both");
                            continue;
                        }
                        (false, true) => params_marked(cx, rules, arg),
                        _ => classify(cx, rules, binding, &arg.ty, marked),
                    };
                    let Some(role) = role else { continue };
                    let single = matches!(role, Role::Params | Role::CompletionRequest | Role::ResourceRequest);
                    if let Some(first) = args.iter().find(|a| single && a.role == role) {
                        report_second(cx, &role, rules, arg, first.ty);
                        continue;
                    }
                    args.push(Arg { ty: &arg.ty, role });
                }
            }
        }
        let output = match &func.sig.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => Some(&**ty),
        };
        Handler { ident: &func.sig.ident, docs: doc_comment(&func.attrs), args, output }
    }

    /// The params argument's type, if the handler has one.
    pub fn params(&self) -> Option<&'a Type> {
        self.args.iter().find(|a| a.role == Role::Params).map(|a| a.ty)
    }
}

/// The qualifiers every annotated function must (not) have; `what` names the functions in the
/// messages ("MCP handlers", "MCP filters").
fn check_signature(cx: &Ctxt, func: &ItemFn, what: &str) {
    let sig = &func.sig;
    if sig.asyncness.is_none() {
        cx.error_spanned_by(sig.fn_token, format!("{what} must be `async fn`"));
    }
    if let Some(constness) = &sig.constness {
        cx.error_spanned_by(constness, format!("{what} cannot be `const fn`"));
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(unsafety, format!("{what} cannot be `unsafe fn`; keep the unsafe block inside the body"));
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, format!("{what} use the Rust ABI; remove the `extern` qualifier"));
    }
    let generic = format!("{what} cannot be generic: the registration needs one concrete function");
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(&sig.generics, generic);
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(where_clause, generic);
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, format!("{what} cannot be variadic"));
    }
}

/// The kinds of filter, which differ in signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// Every request, undecoded: `#[mcp_filter]`.
    Raw,
    /// One method's decoded params and typed result: `#[mcp_filter(rpc = ..)]`.
    Typed,
    /// One method, around its typed filters, may answer with another shape:
    /// `#[mcp_filter(alternate, rpc = ..)]`.
    Alternate,
}

impl FilterKind {
    /// The signature this kind needs, for errors about the argument count.
    fn shape(self) -> &'static str {
        match self {
            FilterKind::Raw => "a raw filter takes two arguments, `(req: RawRequest, next: RawNext)`",
            FilterKind::Typed => {
                "a typed filter takes two arguments, `(req: TypedRequest<P>, next: Next<P, R>)`, \
                 with the params `P` and result `R` of its RPC"
            }
            FilterKind::Alternate => {
                "an alternate-result filter takes two arguments, `(req: TypedRequest<P>, next: AltNext<P, R>)`, \
                 with the params `P` and result `R` of its method"
            }
        }
    }
}

/// An annotated filter, `async fn(request, next) -> response`. Only its shape is checked here:
/// the generated shim converts through the runtime's filter traits, so rustc reports a wrong
/// argument or return type at the user's token.
pub struct FilterFn<'a> {
    pub ident: &'a Ident,
    /// The request and `next` types; `None` unless there are exactly two arguments (reported).
    pub args: Option<(&'a Type, &'a Type)>,
    /// `None` for a function without `->`.
    pub output: Option<&'a Type>,
}

impl<'a> FilterFn<'a> {
    /// Builds the model of a filter of `kind`, reporting every unsupported part of the
    /// signature.
    pub fn from_fn(cx: &Ctxt, func: &'a ItemFn, kind: FilterKind) -> FilterFn<'a> {
        check_signature(cx, func, "MCP filters");
        let mut args = Vec::new();
        for input in &func.sig.inputs {
            match input {
                FnArg::Receiver(receiver) => {
                    cx.error_spanned_by(receiver, "MCP filters are free functions and cannot take `self`");
                }
                FnArg::Typed(arg) => {
                    for attr in arg.attrs.iter().filter(|a| a.path() == EXTRACT) {
                        cx.error_spanned_by(
                            attr,
                            "filters take no extractors: the request carries the context, `req.ctx`",
                        );
                    }
                    args.push(arg);
                }
            }
        }
        let shape = kind.shape();
        let args = match args.as_slice() {
            [req, next] => Some((&*req.ty, &*next.ty)),
            [_, _, extra @ ..] => {
                cx.error_spanned_by(quote::quote!(#(#extra),*), shape);
                None
            }
            _ => {
                cx.error_at(func.sig.paren_token.span.join(), shape);
                None
            }
        };
        let output = match &func.sig.output {
            ReturnType::Default => None,
            ReturnType::Type(_, ty) => Some(&**ty),
        };
        FilterFn { ident: &func.sig.ident, args, output }
    }
}

/// Whether the argument carries the marker `#[extract]` or `#[params]`; a malformed one is
/// reported and still counts.
fn has_marker(cx: &Ctxt, attrs: &[Attribute], marker: Symbol) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path() == marker) {
        if !matches!(attr.meta, Meta::Path(_)) {
            cx.error_spanned_by(attr, format!("`#[{marker}]` takes no arguments"));
        }
        if found {
            cx.error_spanned_by(attr, format!("`#[{marker}]` is given twice"));
        }
        found = true;
    }
    found
}

/// An argument marked `#[params]`: the params of a tool, prompt or RPC (or the requested value
/// of a subscription field), even when its type is named like an extractor (`State`, ...).
fn params_marked(cx: &Ctxt, rules: &ArgRules<'_>, arg: &syn::PatType) -> Option<Role> {
    match rules {
        ArgRules::Params { .. } | ArgRules::Grant => Some(Role::Params),
        ArgRules::Resource { .. } | ArgRules::Completion => {
            cx.error_spanned_by(
                arg,
                "`#[params]` marks the params of a tool, prompt, RPC or subscription field; resource and \
                 completion handlers take template variables, `ResourceRequest` or `CompletionRequest` instead",
            );
            None
        }
    }
}

/// Removes `#[extract]` and `#[params]` from the arguments: they are our markers, not
/// attributes rustc knows.
pub fn strip_extract_attrs(func: &mut ItemFn) {
    for input in &mut func.sig.inputs {
        if let FnArg::Typed(arg) = input {
            arg.attrs.retain(|a| a.path() != EXTRACT && a.path() != PARAMS);
        }
    }
}

fn classify(cx: &Ctxt, rules: &ArgRules<'_>, binding: Option<&Ident>, ty: &Type, marked: bool) -> Option<Role> {
    if marked {
        return Some(Role::Extractor);
    }
    if let ArgRules::Resource { vars, .. } = rules {
        // The argument's name is explicit intent, so it wins over type-name heuristics.
        if let Some(name) = binding.map(|b| b.unraw().to_string())
            && vars.contains(&name)
        {
            return Some(Role::TemplateVar(name));
        }
    }
    if let Some(name) = last_segment_name(ty)
        && KNOWN_EXTRACTORS.contains(&name.as_str())
    {
        return Some(Role::Extractor);
    }
    if let Type::Reference(reference) = ty
        && let Some(name) = last_segment_name(&reference.elem)
        && (KNOWN_EXTRACTORS.contains(&name.as_str()) || name == "ResourceRequest" || name == "CompletionRequest")
    {
        cx.error_spanned_by(reference, format!("take `{name}` by value: handlers receive owned values"));
        return None;
    }
    match rules {
        ArgRules::Params { .. } | ArgRules::Grant => Some(Role::Params),
        ArgRules::Completion => Some(Role::CompletionRequest),
        ArgRules::Resource { uri, vars } => {
            if last_segment_name(ty).as_deref() == Some("ResourceRequest") {
                return Some(Role::ResourceRequest);
            }
            let what = match binding {
                Some(ident) => format!("argument `{ident}`"),
                None => "this argument".to_owned(),
            };
            let vars_text = if vars.is_empty() {
                format!("the URI `{uri}` has no template variables")
            } else {
                let list: Vec<String> = vars.iter().map(|v| format!("`{v}`")).collect();
                format!("the template `{uri}` has the variables {}", list.join(", "))
            };
            cx.error_spanned_by(
                ty,
                format!(
                    "{what} is neither a URI template variable nor an extractor: {vars_text}; \
                     name the argument after a variable, take `ResourceRequest`, or mark a custom extractor `#[extract]`"
                ),
            );
            None
        }
    }
}

/// A second argument for a role that takes one (params, the request).
fn report_second(cx: &Ctxt, role: &Role, rules: &ArgRules<'_>, arg: &syn::PatType, first: &Type) {
    let first = quote::ToTokens::to_token_stream(first).to_string();
    let msg = match (role, rules) {
        (Role::Params, ArgRules::Params { macro_name }) => format!(
            "`#[{macro_name}]` takes at most one params argument and `{first}` is already the params; \
             put every field into that one type, or mark a custom extractor `#[extract]`"
        ),
        (Role::Params, ArgRules::Grant) => format!(
            "`#[subscription_field]` takes exactly one argument for the requested value and `{first}` is \
             already it; the other arguments must be extractors (e.g. `RequestContext`, or one marked `#[extract]`)"
        ),
        (Role::ResourceRequest, _) => "a resource handler takes the `ResourceRequest` at most once".to_owned(),
        _ => format!(
            "`#[mcp_completion]` takes one argument for the `CompletionRequest` and `{first}` is already it; \
             mark a custom extractor `#[extract]`"
        ),
    };
    cx.error_spanned_by(arg, msg);
}

/// The name of a type's last path segment (`State` for `switchyard::State<T>`), looking through
/// parentheses and invisible groups from `macro_rules!` expansions.
pub fn last_segment_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Group(g) => last_segment_name(&g.elem),
        Type::Paren(p) => last_segment_name(&p.elem),
        _ => None,
    }
}

/// `(T, E)` when `ty` is written `Result<T, E>`: a path whose last segment is `Result` with
/// exactly two type arguments (looking through parentheses and invisible groups).
pub fn result_parts(ty: &Type) -> Option<(&Type, &Type)> {
    let path = match ty {
        Type::Path(p) if p.qself.is_none() => &p.path,
        Type::Group(g) => return result_parts(&g.elem),
        Type::Paren(p) => return result_parts(&p.elem),
        _ => return None,
    };
    let last = path.segments.last().filter(|s| s.ident == "Result")?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(Some(ok)), Some(Some(err)), None) => Some((ok, err)),
        _ => None,
    }
}

/// `T` when the return type is `Json<T>` or `Result<Json<T>, E>`: the tool declares an output
/// schema for `T`. Type aliases hide this; such tools simply declare no output schema.
pub fn structured_output(ty: &Type) -> Option<&Type> {
    let inner = first_type_arg(ty, "Result").unwrap_or(ty);
    first_type_arg(inner, "Json")
}

fn first_type_arg<'t>(ty: &'t Type, segment: &str) -> Option<&'t Type> {
    let path = match ty {
        Type::Path(p) if p.qself.is_none() => &p.path,
        Type::Group(g) => return first_type_arg(&g.elem, segment),
        Type::Paren(p) => return first_type_arg(&p.elem, segment),
        _ => return None,
    };
    let last = path.segments.last().filter(|s| s.ident == segment)?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// True when `ty` mentions `impl Trait` or `_`, which cannot be named in a turbofish: such
/// return types are checked only where the shim converts the value.
pub fn is_unnameable(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
        fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

/// The doc comment (`///` lines or `#[doc = "..."]` literals): each line trimmed, blank lines at
/// either end dropped, lines joined with `\n`. A `/** */` block whose lines all start with `*`
/// loses that gutter. `None` when there is no text.
pub fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        // `#[doc = include_str!(..)]` cannot be evaluated here; it does not count as a doc
        // comment, so tools relying on it must give `description` explicitly.
        if let Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit { lit: Lit::Str(text), .. }) = &nv.value
        {
            lines.extend(text.value().split('\n').map(|l| l.trim().to_owned()));
        }
    }
    let gutter = lines.iter().filter(|l| !l.is_empty()).all(|l| l.starts_with('*'));
    if gutter {
        for line in &mut lines {
            if let Some(rest) = line.strip_prefix('*') {
                *line = rest.trim().to_owned();
            }
        }
    }
    let first = lines.iter().position(|l| !l.is_empty())?;
    let last = lines.iter().rposition(|l| !l.is_empty())?;
    Some(lines[first..=last].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn docs_of(func: ItemFn) -> Option<String> {
        doc_comment(&func.attrs)
    }

    #[test]
    fn doc_lines_are_trimmed_and_joined() {
        let func: ItemFn = parse_quote! {
            ///
            /// Echo the text back.
            ///   Twice, if asked.
            ///
            async fn echo() {}
        };
        assert_eq!(docs_of(func).as_deref(), Some("Echo the text back.\nTwice, if asked."));
    }

    #[test]
    fn doc_paragraphs_keep_their_blank_line() {
        let func: ItemFn = parse_quote! {
            /// First.
            ///
            /// Second.
            async fn f() {}
        };
        assert_eq!(docs_of(func).as_deref(), Some("First.\n\nSecond."));
    }

    #[test]
    fn block_doc_comment_loses_its_gutter() {
        let func: ItemFn = parse_quote! {
            #[doc = "\n * Reads a file.\n * Safely.\n "]
            async fn f() {}
        };
        assert_eq!(docs_of(func).as_deref(), Some("Reads a file.\nSafely."));
    }

    #[test]
    fn missing_or_blank_docs_are_none() {
        let func: ItemFn = parse_quote! { #[inline] async fn f() {} };
        assert_eq!(docs_of(func), None);
        let func: ItemFn = parse_quote! { #[doc = "   "] async fn f() {} };
        assert_eq!(docs_of(func), None);
        let func: ItemFn = parse_quote! { #[doc = include_str!("x.md")] async fn f() {} };
        assert_eq!(docs_of(func), None);
    }

    #[test]
    fn structured_output_sees_json_inside_result() {
        let ty: Type = parse_quote!(Result<Json<Weather>, ToolError>);
        assert_eq!(structured_output(&ty), Some(&parse_quote!(Weather)));
        let ty: Type = parse_quote!(switchyard::Json<Vec<u8>>);
        assert_eq!(structured_output(&ty), Some(&parse_quote!(Vec<u8>)));
        let ty: Type = parse_quote!(Result<String, ToolError>);
        assert_eq!(structured_output(&ty), None);
    }

    #[test]
    fn result_parts_need_both_type_arguments() {
        let ty: Type = parse_quote!(Result<Sum, McpError>);
        assert_eq!(result_parts(&ty), Some((&parse_quote!(Sum), &parse_quote!(McpError))));
        let ty: Type = parse_quote!(std::result::Result<Vec<u8>, E>);
        assert_eq!(result_parts(&ty).map(|(ok, _)| ok), Some(&parse_quote!(Vec<u8>)));
        for ty in [parse_quote!(Result<u32>), parse_quote!(u32), parse_quote!(Option<u32>), parse_quote!((u32, E))] {
            assert_eq!(result_parts(&ty), None, "{}", quote::ToTokens::to_token_stream(&ty));
        }
    }

    #[test]
    fn filters_take_exactly_two_arguments() {
        let func: ItemFn = parse_quote! { async fn f((a, b): RawRequest, _: RawNext) -> RawResponse {} };
        let cx = Ctxt::new();
        let filter = FilterFn::from_fn(&cx, &func, FilterKind::Raw);
        assert!(filter.args.is_some(), "patterns are fine");
        assert!(cx.check().is_ok());

        for func in [
            parse_quote! { async fn f(req: RawRequest) -> RawResponse {} },
            parse_quote! { async fn f(a: RawRequest, b: RawNext, c: u8) -> RawResponse {} },
        ] {
            let func: ItemFn = func;
            let cx = Ctxt::new();
            assert!(FilterFn::from_fn(&cx, &func, FilterKind::Typed).args.is_none());
            let err = cx.check().expect_err("must fail").to_string();
            assert!(err.contains("a typed filter takes two arguments"), "{err}");

            let cx = Ctxt::new();
            assert!(FilterFn::from_fn(&cx, &func, FilterKind::Alternate).args.is_none());
            let err = cx.check().expect_err("must fail").to_string();
            assert!(err.contains("an alternate-result filter takes two arguments"), "{err}");
            assert!(err.contains("next: AltNext<P, R>"), "{err}");
        }
    }

    #[test]
    fn filter_signature_errors_name_filters() {
        let func: ItemFn = parse_quote! { fn f<T>(#[extract] a: RawRequest, b: RawNext) -> RawResponse {} };
        let cx = Ctxt::new();
        let _ = FilterFn::from_fn(&cx, &func, FilterKind::Raw);
        let errors: Vec<String> = cx.check().expect_err("must fail").into_iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("MCP filters must be `async fn`"), "{errors:?}");
        assert!(errors[1].contains("MCP filters cannot be generic"), "{errors:?}");
        assert!(errors[2].contains("filters take no extractors"), "{errors:?}");
    }

    #[test]
    fn arguments_are_sorted_into_roles() {
        let func: ItemFn = parse_quote! {
            async fn f(ctx: RequestContext, args: Args, s: switchyard::State<Db>, #[extract] me: Caller) {}
        };
        let cx = Ctxt::new();
        let handler = Handler::from_fn(&cx, &func, &ArgRules::Params { macro_name: "mcp_tool" });
        let roles: Vec<Role> = handler.args.iter().map(|a| a.role.clone()).collect();
        assert_eq!(roles, [Role::Extractor, Role::Params, Role::Extractor, Role::Extractor]);
        assert!(cx.check().is_ok());
    }

    #[test]
    fn second_params_argument_is_an_error() {
        let func: ItemFn = parse_quote! { async fn f(a: A, b: B) {} };
        let cx = Ctxt::new();
        let _ = Handler::from_fn(&cx, &func, &ArgRules::Params { macro_name: "mcp_tool" });
        let err = cx.check().expect_err("must fail").to_string();
        assert!(err.contains("at most one params argument"), "{err}");
    }

    #[test]
    fn resource_arguments_bind_template_variables() {
        let func: ItemFn = parse_quote! { async fn f(id: u32, req: ResourceRequest, other: String) {} };
        let vars = vec!["id".to_owned()];
        let cx = Ctxt::new();
        let handler = Handler::from_fn(&cx, &func, &ArgRules::Resource { uri: "x://{id}", vars: &vars });
        let roles: Vec<Role> = handler.args.iter().map(|a| a.role.clone()).collect();
        assert_eq!(roles, [Role::TemplateVar("id".to_owned()), Role::ResourceRequest]);
        let err = cx.check().expect_err("must fail").to_string();
        assert!(err.contains("argument `other` is neither"), "{err}");
    }
}
