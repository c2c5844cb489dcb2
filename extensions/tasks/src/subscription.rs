//! The `taskIds` key of `subscriptions/listen`
//! ([task status notifications](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-status-notifications)).

use crate::tasks::installed;
use switchyard::prelude::*;

/// Grants the requested task ids that the caller may see (tasks it created, not expired);
/// others are left out silently. A listen naming `taskIds` without declaring the extension gets
/// `-32021` (the runtime checks `extension`).
#[subscription_field("taskIds", extension = "io.modelcontextprotocol/tasks", group = "io.modelcontextprotocol/tasks")]
async fn grant_task_ids(requested: Vec<String>, ctx: RequestContext) -> Result<Vec<String>, McpError> {
    let Some(tasks) = installed(&ctx) else { return Ok(Vec::new()) };
    let mut granted = Vec::new();
    for id in requested {
        if tasks.visible(&ctx, &id).await.is_ok() && !granted.contains(&id) {
            granted.push(id);
        }
    }
    Ok(granted)
}
