//! MCP result and content types shared by both eras (schema `ContentBlock`, `CallToolResult`,
//! `GetPromptResult`, `ReadResourceResult`, `CompleteResult`).

mod completion;
mod content;
mod metadata;
mod prompt;
mod resource;
mod schema;
mod short_list;
mod tool;
mod tool_text;

pub use completion::{Completion, CompletionArgument, CompletionRef, CompletionRequest};
pub use content::{Content, EmbeddedResource, ResourceContents};
pub(crate) use metadata::check_icons;
pub use metadata::{Annotations, Icon, ToolAnnotations, check_meta};
pub use prompt::{GetPromptResult, PromptArgument, PromptMessage, Role};
pub use resource::ReadResourceResult;
pub use schema::input_schema;
pub use tool::{CallToolResult, Json};
pub(crate) use tool_text::ToolResultParts;
pub use tool_text::ToolResultText;
