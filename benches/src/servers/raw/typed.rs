//! The raw reference as a hand-written server would decode it: each message into borrowed
//! structs (the id kept as its raw JSON, strings borrowed from the input unless they hold
//! escapes), each answer serialized from a struct. Every byte is still parsed: serde_json
//! checks the members it skips as thoroughly as the ones it keeps.

use super::Outcome;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::io::{self, Write};

/// One JSON-RPC message from the client: a request, or a notification (no `id`).
#[derive(Deserialize)]
struct Message<'a> {
    /// `None` when absent (a notification); `null` is an id like any other and is echoed.
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    /// `tools/call` reads `arguments`; `initialize`'s members are parsed and skipped.
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

/// A member that is present, whatever it holds (`null` too): `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
struct Reply<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

#[derive(Serialize)]
struct CallResult<'a> {
    content: [TextContent<'a>; 1],
    #[serde(rename = "isError")]
    is_error: bool,
}

#[derive(Serialize)]
struct TextContent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    /// `null` when the call had no text (as the `Value` reference answers).
    text: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult {
    protocol_version: &'static str,
    capabilities: Capabilities,
    server_info: Implementation,
}

#[derive(Serialize)]
struct Capabilities {
    tools: Empty,
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct Implementation {
    name: &'static str,
    version: &'static str,
}

const INITIALIZE: InitializeResult = InitializeResult {
    protocol_version: "2025-11-25",
    capabilities: Capabilities { tools: Empty {} },
    server_info: Implementation { name: "raw", version: "0" },
};

#[derive(Serialize)]
struct ErrorReply<'a> {
    jsonrpc: &'static str,
    /// Always `null`: the id of a message that could not be decoded is not known.
    id: (),
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i32,
    message: &'a str,
}

/// Writes the answer to the message `msg` into `out` (nothing for a notification).
///
/// Input that is not JSON is answered with -32700 (parse error); JSON that is not a message of
/// this shape (no `method`, a `text` that is not a string) with -32600 (invalid request), where
/// the `Value` reference answers what it can: see `super::tests` for where they agree.
pub fn answer<W: Write>(msg: &[u8], mut out: W) -> io::Result<Outcome> {
    let message = match serde_json::from_slice::<Message>(msg) {
        Ok(m) => m,
        Err(e) => {
            let code = if e.is_data() { -32600 } else { -32700 };
            let message = e.to_string();
            let reply = ErrorReply { jsonrpc: "2.0", id: (), error: ErrorObject { code, message: &message } };
            serde_json::to_writer(&mut out, &reply)?;
            return Ok(Outcome::Rejected);
        }
    };
    let Some(id) = message.id else { return Ok(Outcome::Notification) };
    if message.method == "initialize" {
        serde_json::to_writer(&mut out, &Reply { jsonrpc: "2.0", id, result: INITIALIZE })?;
    } else {
        let text = message.params.and_then(|p| p.arguments).and_then(|a| a.text);
        let result = CallResult { content: [TextContent { kind: "text", text: text.as_deref() }], is_error: false };
        serde_json::to_writer(&mut out, &Reply { jsonrpc: "2.0", id, result })?;
    }
    Ok(Outcome::Answered)
}
