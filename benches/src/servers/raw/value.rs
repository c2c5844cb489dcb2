//! The raw reference as it was first written (`--raw value`, roles `raw-value-stdio` and
//! `raw-value-http`): each message parsed into a `serde_json::Value`, each answer built with
//! `json!`. Kept to show what the generic tree costs against the typed decoding of `typed`.

use super::Outcome;
use serde_json::{Value, json};
use std::io::{self, Write};

/// The answer to one parsed JSON-RPC message; `None` for a notification (no `id`).
fn reply(msg: &Value) -> Option<Value> {
    let id = msg.get("id")?.clone();
    let result = if msg.get("method").and_then(Value::as_str) == Some("initialize") {
        json!({ "protocolVersion": "2025-11-25", "capabilities": { "tools": {} },
                "serverInfo": { "name": "raw", "version": "0" } })
    } else {
        let text = msg.pointer("/params/arguments/text").cloned().unwrap_or(Value::Null);
        json!({ "content": [{ "type": "text", "text": text }], "isError": false })
    };
    Some(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}

/// Writes the answer to the message `msg` into `out` (nothing for a notification).
pub fn answer<W: Write>(msg: &[u8], mut out: W) -> io::Result<Outcome> {
    let (reply, outcome) = match serde_json::from_slice::<Value>(msg) {
        Ok(msg) => match reply(&msg) {
            Some(r) => (r, Outcome::Answered),
            None => return Ok(Outcome::Notification),
        },
        Err(e) => (
            json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": e.to_string() } }),
            Outcome::Rejected,
        ),
    };
    serde_json::to_writer(&mut out, &reply)?;
    Ok(outcome)
}
