use serde_json::Value;

/// The `result` member of a JSON-RPC success response, in the form the server made it.
///
/// Most results are built as a [`Value`]. A result the server encoded straight from its typed
/// form (the `CallToolResult` of a `tools/call`, with its era's stamping, when no raw filter needs
/// it as a `Value`) arrives as [`Encoded`](Self::Encoded) text instead: writing it is a copy, and
/// a `Value` tree is built only when something asks for one ([`into_value`](Self::into_value)).
/// Both forms of one result describe the same JSON object.
///
/// Returned by [`Server::handle_request`](crate::Server::handle_request) and carried by
/// [`Payload::Success`](crate::context::Payload::Success); the response envelope
/// (<https://www.jsonrpc.org/specification#response_object>) is added by the transport.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ResultObject {
    /// The result as a JSON value (an object for every MCP result).
    Value(Value),
    /// The result's compact JSON text.
    Encoded(EncodedResult),
}

/// The compact JSON text of a result object, written by this crate's serializer (so it is
/// valid JSON, one line: serde_json escapes newlines), or a peer's result checked to be valid
/// and one line ([`ToolResultText`](crate::ToolResultText)). Made only inside the crate; read
/// it with [`as_str`](Self::as_str).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedResult(String);

impl EncodedResult {
    /// Wraps the text of one JSON value, on one line: serde_json's, or a peer's kept text.
    pub(crate) fn new(text: String) -> Self {
        EncodedResult(text)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl ResultObject {
    /// The result as a [`Value`]: moved out of [`Value`](Self::Value), parsed from
    /// [`Encoded`](Self::Encoded). The text comes from serde_json in this crate, so it parses,
    /// at any depth (the depth limit serde_json applies to input does not apply here: the
    /// result had that depth when it was encoded); `Null` would mark a bug, never a client's
    /// input.
    pub fn into_value(self) -> Value {
        match self {
            ResultObject::Value(v) => v,
            ResultObject::Encoded(text) => {
                let mut de = serde_json::Deserializer::from_str(text.as_str());
                de.disable_recursion_limit();
                serde::Deserialize::deserialize(&mut de).unwrap_or(Value::Null)
            }
        }
    }

    /// Appends the result's compact JSON to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            // Cannot fail: writing into a Vec does no I/O, and a `Value`'s map keys are strings.
            ResultObject::Value(v) => {
                let _ = serde_json::to_writer(out, v);
            }
            ResultObject::Encoded(text) => out.extend_from_slice(text.as_str().as_bytes()),
        }
    }
}

impl From<Value> for ResultObject {
    fn from(value: Value) -> Self {
        ResultObject::Value(value)
    }
}

/// Two results are equal when they are the same JSON, whichever form each is in.
impl PartialEq for ResultObject {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ResultObject::Value(a), ResultObject::Value(b)) => a == b,
            (ResultObject::Encoded(a), ResultObject::Encoded(b)) if a == b => true,
            (a, b) => a.clone().into_value() == b.clone().into_value(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result nested deeper than the input limit (128) parses back whole.
    #[test]
    fn a_deep_encoded_result_parses_back() {
        let mut value = Value::from(1);
        for _ in 0..300 {
            value = Value::Array(vec![value]);
        }
        let text = serde_json::to_string(&value).expect("encodes");
        let encoded = ResultObject::Encoded(EncodedResult::new(text.clone()));
        assert_eq!(encoded.clone().into_value(), value);
        let mut out = Vec::new();
        encoded.write_json(&mut out);
        assert_eq!(out, text.into_bytes());
    }
}
