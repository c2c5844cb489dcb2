use serde::{Deserialize, Serialize};
use std::fmt;

/// A JSON-RPC request id: a string or an integer (JSON-RPC 2.0 §4; MCP forbids `null`).
///
/// JSON: `"abc"` or `7`. Ids are echoed exactly, with their type, in responses and in
/// `io.modelcontextprotocol/subscriptionId`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id. Fractional ids are rejected as invalid requests (-32600).
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for anything but a string or an integer.
    pub fn from_value(v: &serde_json::Value) -> Option<RequestId> {
        match v {
            serde_json::Value::String(s) => Some(RequestId::String(s.clone())),
            serde_json::Value::Number(n) => n.as_i64().map(RequestId::Number),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            RequestId::Number(n) => serde_json::Value::from(*n),
            RequestId::String(s) => serde_json::Value::String(s.clone()),
        }
    }

    /// How many bytes serde_json writes for the id: digits and sign, or the string quoted with
    /// its escapes (`\"`, `\\`, the short forms of five control characters, `\u00XX` for
    /// the others below 0x20).
    #[cfg(feature = "http")]
    pub(crate) fn json_len(&self) -> usize {
        match self {
            RequestId::Number(n) => {
                let digits = n.unsigned_abs().checked_ilog10().map_or(1, |d| d as usize + 1);
                digits + usize::from(*n < 0)
            }
            RequestId::String(s) => {
                let escapes: usize = s
                    .bytes()
                    .map(|b| match b {
                        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
                        0..0x20 => 5,
                        _ => 0,
                    })
                    .sum();
                s.len() + 2 + escapes
            }
        }
    }
}
