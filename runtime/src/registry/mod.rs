//! Registrations made by the attribute macros, and the dispatch table built from them.
//!
//! Every `#[mcp_tool]`, `#[mcp_prompt]`, `#[mcp_resource]` and `#[mcp_completion]` submits one
//! const-constructible item to [`inventory`]; [`ServerBuilder::build`](crate::ServerBuilder::build)
//! gathers the items of the selected groups, checks names binary-wide and freezes them into a
//! sorted, immutable [`DispatchTable`].

pub(crate) mod items;
mod limits;
mod listing;
pub(crate) mod mount;
mod mount_links;
mod selection;
pub(crate) mod table;
mod task_support;
mod tool_schema;
pub(crate) mod transform;
mod uri_template;

// At the crate root: `switchyard::ResourceRequest`, `BuildError`.
pub use items::BoxFuture;
pub(crate) use items::ResourceRequest;
// The registrations the macros submit are reachable only through `switchyard::__private`.
pub use crate::model::check_meta;
pub(crate) use items::{
    CompletionRegistration, CompletionTarget, PromptRegistration, ResourceRegistration, SchemaOrigin, Site,
    ToolRegistration,
};
pub use limits::ToolLimits;
pub(crate) use listing::BuildCheck;
pub use listing::{ListedKind, ListingFilter};
pub(crate) use mount::{Mount, Mounts};
pub(crate) use selection::{Groups, Registration, registrations};
pub(crate) use table::BuildError;
pub use table::{
    CompletionFn, CompletionKey, DispatchTable, ParamHeader, PromptEntry, PromptGetFn, ResourceEntry, ResourceReadFn,
    ToolCallFn, ToolEntry,
};
pub(crate) use table::{Decoration, ToolParts, ToolTextFn, build_tool};
pub use task_support::TaskSupport;
pub(crate) use tool_schema::{argument_error, problem};
pub(crate) use transform::ToolTransforms;
pub use uri_template::UriTemplate;
