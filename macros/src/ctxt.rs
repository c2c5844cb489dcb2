//! The error collector: every check reports into one [`Ctxt`] instead of returning early, so a
//! single compile shows every problem of an annotation at its own token.

use proc_macro2::Span;
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

/// Gathers the errors of one macro invocation.
///
/// Consumed by [`Ctxt::check`]; every expansion path ends there, so nothing reported is lost.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// Reports `msg` on the tokens of `obj` (their whole range, not only the first token).
    pub fn error_spanned_by<A: ToTokens, T: Display>(&self, obj: A, msg: T) {
        self.errors.borrow_mut().push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Reports `msg` at `span`.
    pub fn error_at<T: Display>(&self, span: Span, msg: T) {
        self.errors.borrow_mut().push(syn::Error::new(span, msg));
    }

    /// Records an error produced by syn's parser.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    /// True once anything was reported; expansion stops generating code from then on.
    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// All errors, combined so that `to_compile_error` emits one `compile_error!` per problem.
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for err in errors {
            combined.combine(err);
        }
        Err(combined)
    }
}
