use crate::context::RequestContext;
use serde_json::{Map, Value};

/// Which list a definition is listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListedKind {
    /// A `Tool` of `tools/list`.
    Tool,
    /// A `Prompt` of `prompts/list`.
    Prompt,
    /// A `Resource` of `resources/list`.
    Resource,
    /// A `ResourceTemplate` of `resources/templates/list`.
    ResourceTemplate,
}

/// Shapes what one client is listed: called for each definition a `tools/list`,
/// `prompts/list`, `resources/list` or `resources/templates/list` answer would hold (after the
/// caller's roles and scopes allowed it), with the request's context, so a definition can depend
/// on what the client declared (its `capabilities.extensions`, say). Extensions use it: MCP Apps
/// gives `_meta.ui` only to clients that render views and hides app-only tools from the rest.
/// Register with [`ServerBuilder::listing_filter`](crate::ServerBuilder::listing_filter).
///
/// `definition` is the newest revision's object (`Tool`, `Prompt`, `Resource`,
/// `ResourceTemplate`); the filter may change it, and an older session is then sent the keys its
/// schema has. Returning false leaves it out of the page. A server without listing filters pays
/// nothing for the seam.
///
/// Keep it deterministic for one client: pagination counts the definitions that are kept.
pub trait ListingFilter: Send + Sync + 'static {
    /// Changes `definition` for `ctx`'s client, or returns false to leave it out.
    fn filter(&self, ctx: &RequestContext, kind: ListedKind, definition: &mut Map<String, Value>) -> bool;
}

impl<F> ListingFilter for F
where
    F: Fn(&RequestContext, ListedKind, &mut Map<String, Value>) -> bool + Send + Sync + 'static,
{
    fn filter(&self, ctx: &RequestContext, kind: ListedKind, definition: &mut Map<String, Value>) -> bool {
        self(ctx, kind, definition)
    }
}

/// A check [`ServerBuilder::build`](crate::ServerBuilder::build) runs over the finished table,
/// registered with [`ServerBuilder::build_check`](crate::ServerBuilder::build_check): extensions
/// refuse what only the whole server shows (a tool linked to a view that does not exist).
pub(crate) type BuildCheck = Box<dyn FnOnce(&super::DispatchTable) -> Result<(), super::BuildError> + Send + Sync>;
