//! MCP result and content types shared by both eras (schema `ContentBlock`, `CallToolResult`,
//! `GetPromptResult`, `ReadResourceResult`, `CompleteResult`).

mod completion;
mod content;
mod prompt;
mod resource;
mod tool;

pub use completion::{Completion, CompletionArgument, CompletionRef, CompletionRequest};
pub use content::{Content, EmbeddedResource, ResourceContents};
pub use prompt::{GetPromptResult, PromptArgument, PromptMessage, Role};
pub use resource::ReadResourceResult;
pub use tool::{CallToolResult, Json};
