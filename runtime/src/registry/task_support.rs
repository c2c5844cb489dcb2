/// Whether a tool may run as a task of the Tasks extension (`io.modelcontextprotocol/tasks`,
/// [the server alone decides](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#polymorphic-results)).
///
/// A registration-time setting only: the 2026-07-28 `Tool` has no `execution` field, so it never
/// appears on the wire. Declared with `#[mcp_tool(task_support = "optional" | "required" | "escalate")]` or
/// [`DynamicTool::task_support`](crate::server::DynamicTool::task_support); read from
/// [`ToolEntry::task_support`](crate::registry::ToolEntry::task_support) by the Tasks extension
/// (crate `switchyard-mcp-tasks`), which alone acts on it. Without that extension installed every
/// tool runs synchronously.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never a task: the call always returns a `CallToolResult` (the default).
    #[default]
    Forbidden,
    /// A task when the request declares the extension in its own `clientCapabilities`,
    /// otherwise a direct result.
    Optional,
    /// Always a task; a request that does not declare the extension gets `-32021` with
    /// `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"] = {}`.
    Required,
    /// The call starts on the request path, like a synchronous one, so the tool can first gather
    /// input with `ctx.input` (2026-07-28 input-required rounds); it becomes a task when the tool
    /// calls `switchyard_tasks::escalate` and the request declares the extension
    /// ([task creation](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-creation)).
    /// Without the extension the escalated part runs inline and the call ends with a direct result.
    Escalate,
}
