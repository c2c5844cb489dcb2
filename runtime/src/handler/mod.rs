//! What handlers may return, and the helpers the generated shims call.

mod outcome;
mod schema;

pub use outcome::{
    IntoCallToolResult, IntoCompletion, IntoPromptResult, IntoReadResult, IntoToolFailure, IntoToolOutcome, ToolError,
    ToolFailure,
};
#[doc(hidden)]
pub use schema::{
    decode_arguments, decode_tool_arguments, empty_object_schema, input_schema, output_schema, prompt_arguments,
    raw_schema, template_var,
};
