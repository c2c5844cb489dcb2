//! Every attribute keyword, named once so a typo in the macro crate cannot silently create a
//! second spelling of the same key.

use std::fmt::{self, Display};
use syn::{Ident, Path};

/// An attribute keyword such as `name` or `read_only`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Symbol(&'static str);

impl Symbol {
    /// The keyword as written by the user.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

pub const NAME: Symbol = Symbol("name");
pub const TITLE: Symbol = Symbol("title");
pub const DESCRIPTION: Symbol = Symbol("description");
pub const GROUP: Symbol = Symbol("group");
pub const INPUT_SCHEMA: Symbol = Symbol("input_schema");
pub const READ_ONLY: Symbol = Symbol("read_only");
pub const DESTRUCTIVE: Symbol = Symbol("destructive");
pub const IDEMPOTENT: Symbol = Symbol("idempotent");
pub const OPEN_WORLD: Symbol = Symbol("open_world");
pub const URI: Symbol = Symbol("uri");
pub const MIME_TYPE: Symbol = Symbol("mime_type");
pub const PROMPT: Symbol = Symbol("prompt");
pub const RESOURCE: Symbol = Symbol("resource");
pub const ARGUMENT: Symbol = Symbol("argument");
pub const ROUTING_NAME: Symbol = Symbol("routing_name");
pub const CAPABILITY: Symbol = Symbol("capability");
pub const EXTENSION: Symbol = Symbol("extension");
pub const ERAS: Symbol = Symbol("eras");
pub const ORDER: Symbol = Symbol("order");
pub const RPC: Symbol = Symbol("rpc");
pub const METHOD: Symbol = Symbol("method");
pub const ALTERNATE: Symbol = Symbol("alternate");
pub const ROLES: Symbol = Symbol("roles");
pub const SCOPES: Symbol = Symbol("scopes");
pub const TASK_SUPPORT: Symbol = Symbol("task_support");
pub const TIMEOUT: Symbol = Symbol("timeout");
pub const RATE_LIMIT: Symbol = Symbol("rate_limit");
pub const MAX_CONCURRENCY: Symbol = Symbol("max_concurrency");
pub const KEY: Symbol = Symbol("key");
pub const CLIENT_DECLARES: Symbol = Symbol("client_declares");

/// The argument attribute that marks a custom extractor.
pub const EXTRACT: Symbol = Symbol("extract");
/// The argument attribute that marks the params argument, whatever its type is named.
pub const PARAMS: Symbol = Symbol("params");
pub const DECLARED: Symbol = Symbol("declared");
pub const ICONS: Symbol = Symbol("icons");
pub const META: Symbol = Symbol("meta");
pub const SIZE: Symbol = Symbol("size");
pub const SRC: Symbol = Symbol("src");
pub const SIZES: Symbol = Symbol("sizes");
pub const THEME: Symbol = Symbol("theme");

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl PartialEq<Symbol> for &Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
