//! `Mcp-Param-*` headers (2026-07-28 over HTTP): a tool's input schema may mark top-level
//! arguments with `x-mcp-header`, and a `tools/call` then mirrors their values in headers a
//! load balancer can route by
//! ([schema extension](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#schema-extension)).
//! The client learns the annotations from `tools/list` and drops a listed tool whose
//! annotations break the rules (the spec's "clients MUST reject" them).

#[cfg(feature = "http")]
use base64::Engine as _;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::RwLock;
use switchyard::registry::ParamHeader;

/// The annotations of the tools listed so far, by tool name. Shared by the client (which
/// learns them) and the HTTP transport (which writes the headers).
#[derive(Debug, Default)]
pub(crate) struct ParamHeaders {
    tools: RwLock<HashMap<String, Vec<ParamHeader>>>,
}

impl ParamHeaders {
    /// Records the annotations of the listed tool `name`.
    ///
    /// Errors: the reason the annotations break the rules; the caller drops the tool.
    pub(crate) fn learn(&self, name: &str, input_schema: &Value) -> Result<(), String> {
        let mut tools = self.tools.write().unwrap_or_else(|p| p.into_inner());
        match ParamHeader::from_input_schema(input_schema) {
            Ok(headers) if headers.is_empty() => {
                tools.remove(name);
                Ok(())
            }
            Ok(headers) => {
                tools.insert(name.to_owned(), headers);
                Ok(())
            }
            Err(reason) => {
                tools.remove(name);
                Err(reason)
            }
        }
    }

    #[cfg(feature = "http")]
    /// The `(header name, value)` pairs for a `tools/call` of `tool` with `arguments`: one for
    /// each annotated argument present and not `null`.
    pub(crate) fn for_call(&self, tool: &str, arguments: Option<&Value>) -> Vec<(String, String)> {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
        let Some(headers) = tools.get(tool) else { return Vec::new() };
        headers
            .iter()
            .filter_map(|h| {
                let value = encode(arguments?.get(&h.property)?)?;
                Some((format!("mcp-param-{}", h.header), value))
            })
            .collect()
    }
}

#[cfg(feature = "http")]
/// A header value for an argument: strings as they are, integers in decimal, booleans as
/// `true`/`false`; a string that a header cannot carry as it is (non-ASCII, control
/// characters, leading or trailing whitespace) as `=?base64?{base64 of its UTF-8}?=`. `None`
/// for `null` and for values no annotation may mark (objects, arrays).
fn encode(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null | Value::Array(_) | Value::Object(_) => return None,
    };
    let plain = text.bytes().all(|b| (0x20..0x7f).contains(&b)) && text.trim() == text;
    Some(if plain { text } else { format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(&text)) })
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_encoded_as_the_spec_says() {
        assert_eq!(encode(&json!("us-west1")).as_deref(), Some("us-west1"));
        assert_eq!(encode(&json!("us west 1")).as_deref(), Some("us west 1"));
        assert_eq!(encode(&json!("")).as_deref(), Some(""));
        assert_eq!(encode(&json!(42)).as_deref(), Some("42"));
        assert_eq!(encode(&json!(false)).as_deref(), Some("false"));
        assert_eq!(encode(&json!(" padded ")).as_deref(), Some("=?base64?IHBhZGRlZCA=?="));
        assert_eq!(encode(&json!("line1\nline2")).as_deref(), Some("=?base64?bGluZTEKbGluZTI=?="));
        assert_eq!(encode(&json!("Hello, 世界")).as_deref(), Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
        assert_eq!(encode(&json!("\tindented")).as_deref(), Some("=?base64?CWluZGVudGVk?="));
        assert_eq!(encode(&Value::Null), None);
    }

    #[test]
    fn calls_mirror_annotated_present_arguments_and_bad_tools_are_refused() {
        let headers = ParamHeaders::default();
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}
        }});
        headers.learn("t", &schema).expect("valid");
        let sent = headers.for_call("t", Some(&json!({"region": "eu", "verbose": null, "query": "q"})));
        assert_eq!(sent, vec![("mcp-param-Region".to_owned(), "eu".to_owned())]);
        assert!(headers.for_call("other", Some(&json!({"region": "eu"}))).is_empty());
        let bad = json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}});
        assert!(headers.learn("t", &bad).is_err());
        assert!(headers.for_call("t", Some(&json!({"region": "eu"}))).is_empty(), "a refused tool is forgotten");
    }
}
