use serde_json::Value;

/// Something that happened on the server that listen subscriptions may be told about.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// A resource changed (`notifications/resources/updated` with this URI).
    ResourceUpdated(String),
    /// An extension's event, delivered to subscriptions whose grant for `key` matches `item`:
    /// the granted value is an array containing `item`, or equals it.
    Extension {
        /// The filter key it is routed by, e.g. `taskIds`.
        key: String,
        /// The value it concerns, e.g. a task id.
        item: Value,
        /// The notification method, e.g. `notifications/tasks`.
        method: String,
        /// Its params (the subscription id is added to `_meta`).
        params: Value,
    },
}
