use serde::{Deserialize, Serialize};

/// A logging level (RFC 5424 severities, as MCP spells them), ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// Parses a level name; `None` for anything MCP does not define.
    pub fn parse(s: &str) -> Option<LogLevel> {
        serde_json::from_value(serde_json::Value::String(s.to_owned())).ok()
    }
}
