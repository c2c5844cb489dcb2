//! What handlers may return, and the helpers the generated shims call.

pub(crate) mod outcome;
pub(crate) mod schema;

pub use outcome::{
    IntoCallToolResult, IntoCompletion, IntoPromptResult, IntoReadResult, IntoToolFailure, IntoToolOutcome,
};
// `ToolError` and `ToolFailure` are public at the crate root.
