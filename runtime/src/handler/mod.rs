//! What handlers may return, and the helpers the generated shims call.

mod outcome;
pub(crate) mod schema;

pub use outcome::{
    IntoCallToolResult, IntoCompletion, IntoPromptResult, IntoReadResult, IntoToolFailure, IntoToolOutcome, ToolError,
    ToolFailure,
};
