use crate::protocol::LogLevel;
use crate::subscriptions::InterestHold;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The state of one legacy (2025-11-25 / 2025-06-18 / 2025-03-26) session, created by
/// `initialize`: the agreed version, the client's capabilities and identity, the log level set
/// with `logging/setLevel`, and the resources subscribed with `resources/subscribe`.
///
/// A stdio process has at most one; each Streamable HTTP session (`Mcp-Session-Id`) has one.
#[derive(Debug)]
pub struct LegacySession {
    /// The session id (an HTTP `Mcp-Session-Id`, visible ASCII; unused on stdio).
    pub id: String,
    /// The negotiated protocol version.
    pub version: &'static str,
    /// The client's capabilities from `initialize`, shared with every request of the session.
    pub client_capabilities: std::sync::Arc<Value>,
    /// The client's `clientInfo` from `initialize`, shared with every request of the session.
    pub client_info: Option<std::sync::Arc<Value>>,
    log_level: Mutex<Option<LogLevel>>,
    /// Each subscribed URI with its hold on the server's interest in it, released with the
    /// session.
    subscriptions: Mutex<BTreeMap<String, InterestHold>>,
    initialized: AtomicBool,
    client_requests: std::sync::Arc<crate::input::ClientRequests>,
}

impl LegacySession {
    /// The session-wide notification for `event` (legacy sessions get list changes broadcast,
    /// and `resources/updated` for the URIs they subscribed to; no subscription ids).
    pub fn notification_for(&self, event: &crate::subscriptions::Event) -> Option<serde_json::Value> {
        use crate::subscriptions::Event;
        let (method, params) = match event {
            Event::ToolsListChanged => ("notifications/tools/list_changed", serde_json::json!({})),
            Event::PromptsListChanged => ("notifications/prompts/list_changed", serde_json::json!({})),
            Event::ResourcesListChanged => ("notifications/resources/list_changed", serde_json::json!({})),
            Event::ResourceUpdated(uri)
                if self.subscriptions.lock().unwrap_or_else(|e| e.into_inner()).contains_key(uri) =>
            {
                ("notifications/resources/updated", serde_json::json!({ "uri": uri }))
            }
            _ => return None,
        };
        Some(serde_json::json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    pub(crate) fn new(
        id: String,
        version: &'static str,
        client_capabilities: Value,
        client_info: Option<Value>,
    ) -> Self {
        LegacySession {
            id,
            version,
            client_capabilities: std::sync::Arc::new(client_capabilities),
            client_info: client_info.map(std::sync::Arc::new),
            // Until the client picks a level, informational messages and above are sent.
            log_level: Mutex::new(Some(LogLevel::Info)),
            subscriptions: Mutex::new(BTreeMap::new()),
            initialized: AtomicBool::new(false),
            client_requests: Default::default(),
        }
    }

    /// The server→client requests (elicitation, sampling, roots) awaiting the client's
    /// response. Transports hand every JSON-RPC response the client sends to
    /// [`ClientRequests::deliver`](crate::input::ClientRequests::deliver).
    pub fn client_requests(&self) -> &std::sync::Arc<crate::input::ClientRequests> {
        &self.client_requests
    }

    /// The current log threshold.
    pub fn log_level(&self) -> Option<LogLevel> {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
    }

    /// True once `notifications/initialized` arrived.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    /// Records `notifications/initialized`: a transport calls it when the client sends that
    /// notification on the session
    /// ([lifecycle](https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization)).
    pub fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Release);
    }

    /// The URIs this session subscribed to with `resources/subscribe`.
    pub fn subscriptions(&self) -> Vec<String> {
        self.subscriptions.lock().unwrap_or_else(|e| e.into_inner()).keys().cloned().collect()
    }

    /// Subscribes to `uri`, held in `interest` until unsubscribed or the session ends; a
    /// second subscription to the same URI changes nothing.
    pub(crate) fn subscribe(&self, uri: &str, interest: &std::sync::Arc<crate::subscriptions::ResourceInterest>) {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if !subscriptions.contains_key(uri) {
            subscriptions.insert(uri.to_owned(), interest.hold(uri));
        }
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|e| e.into_inner()).remove(uri);
    }
}
