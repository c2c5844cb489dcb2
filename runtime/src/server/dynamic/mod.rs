//! Tools, prompts, resources and resource templates defined at run time: everything a
//! `#[mcp_tool]`, `#[mcp_prompt]` or `#[mcp_resource]` can declare, given to the
//! [`ServerBuilder`](crate::ServerBuilder) before the server is built or added, replaced and
//! removed while it runs. Each definition is checked by the rules the macros apply
//! (`crate::vocab`), and each change of a listing publishes the matching
//! `notifications/*/list_changed`.

mod prompt;
mod resource;
mod template;
mod tool;

pub use prompt::DynamicPrompt;
pub use resource::DynamicResource;
pub use template::DynamicResourceTemplate;
pub use tool::DynamicTool;

use crate::Server;
use crate::registry::DispatchTable;
use crate::subscriptions::Publisher;
use std::sync::Arc;

/// An explicitly given text is never blank: the macros refuse `title = ""` too, since a blank
/// value is a mistake rather than a request for the default.
///
/// Errors: a sentence naming the field.
fn non_blank(field: &str, value: Option<&str>) -> Result<(), String> {
    match value {
        Some(text) if text.trim().is_empty() => Err(format!("`{field}` must not be empty")),
        _ => Ok(()),
    }
}

impl Server {
    /// Replaces the table with `change(current)` atomically (retrying if another change won the
    /// race) and, when it changed, announces it with `publish`; false, and no change, when
    /// `change` returns `None`.
    fn swap_table(&self, change: impl Fn(&DispatchTable) -> Option<DispatchTable>, publish: fn(&Publisher)) -> bool {
        let mut changed = false;
        self.engine().table.rcu(|t| match change(t) {
            Some(next) => {
                changed = true;
                Arc::new(next)
            }
            None => {
                changed = false;
                t.clone()
            }
        });
        if changed {
            publish(&self.publisher());
        }
        changed
    }
}
