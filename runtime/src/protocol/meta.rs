use super::{LogLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION};
use crate::jsonrpc::{McpError, RequestMeta};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The per-request `_meta` of a 2026-07-28 request, validated
/// ([`_meta`](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta)).
#[derive(Debug, Clone)]
pub struct ModernMeta {
    /// `io.modelcontextprotocol/protocolVersion`, as sent (not yet checked against what we serve).
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`: a `ClientCapabilities` object.
    pub client_capabilities: Value,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub client_info: Option<Value>,
    /// `io.modelcontextprotocol/logLevel`, when sent.
    pub log_level: Option<LogLevel>,
}

/// Validates the required `_meta` keys of a modern request.
///
/// Errors (all `-32602`): `params._meta` missing or not an object, the protocol version
/// missing or not a string, the client capabilities missing or not an object, an unknown
/// `logLevel`, a `progressToken` that is neither a string nor an integer. The Streamable HTTP
/// transport answers them with HTTP 400 (unlike other `-32602`s, which are 200), as it calls
/// this itself before dispatch. The version value itself is checked later (header comparison
/// first, then `-32022`), following the order of the HTTP transport's
/// [server validation](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation).
pub fn parse_modern_meta(meta: &RequestMeta) -> Result<ModernMeta, McpError> {
    let mut checked = check_modern_meta(meta)?;
    checked.client_info = meta.get(META_CLIENT_INFO).cloned();
    Ok(checked)
}

/// [`parse_modern_meta`] without copying `clientInfo` (`client_info` is `None`), for the
/// server's own transports: the request's context reads it from the `_meta` it keeps
/// (`RequestContext::client_info`), so it is not copied and dropped per request.
///
/// Errors: those of [`parse_modern_meta`].
pub(crate) fn check_modern_meta(meta: &RequestMeta) -> Result<ModernMeta, McpError> {
    let bad = |msg: &str| McpError::invalid_params(msg.to_owned());
    let Some(text) = meta.text() else {
        return Err(bad(
            "params._meta is required on every 2026-07-28 request (clients of 2025-11-25 and earlier send initialize first)",
        ));
    };
    let keys = match CheckedKeys::read(meta, text) {
        Ok(keys) => keys,
        Err(other) => return Err(bad(&format!("params._meta must be an object, not {}", kind(&other)))),
    };
    let protocol_version = match keys.protocol_version {
        Some(Value::String(v)) => v,
        None => return Err(bad("params._meta[\"io.modelcontextprotocol/protocolVersion\"] is required")),
        Some(other) => {
            return Err(bad(&format!(
                "params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a string, not {}",
                kind(&other)
            )));
        }
    };
    let client_capabilities = match keys.client_capabilities {
        Some(v @ Value::Object(_)) => v,
        None => {
            return Err(bad(
                "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] is required (an object; {} for none)",
            ));
        }
        Some(other) => {
            return Err(bad(&format!(
                "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] must be an object ({{}} for none), not {}",
                kind(&other)
            )));
        }
    };
    if let Some(t) = keys.progress_token
        && !(t.is_string() || t.is_i64() || t.is_u64())
    {
        return Err(bad("params._meta.progressToken must be a string or an integer"));
    }
    let log_level = match keys.log_level {
        None => None,
        Some(v) => Some(v.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            bad("params._meta[\"io.modelcontextprotocol/logLevel\"] must be one of debug, info, notice, warning, error, critical, alert, emergency")
        })?),
    };
    Ok(ModernMeta { protocol_version, client_capabilities, client_info: None, log_level })
}

/// The keys of `_meta` every 2026-07-28 request is checked for, each as it was sent.
struct CheckedKeys {
    protocol_version: Option<Value>,
    client_capabilities: Option<Value>,
    log_level: Option<Value>,
    progress_token: Option<Value>,
}

/// [`CheckedKeys`] of the usual shapes, decoded from `_meta`'s text without building its map:
/// every other key is skipped unread, and any other shape of these four (a wrong type, an
/// escaped string, a repeated key) fails here and is read from the map, where the checks word
/// the error. The names are those of [`META_PROTOCOL_VERSION`], [`META_CLIENT_CAPABILITIES`]
/// and [`META_LOG_LEVEL`] (a test holds them equal).
#[derive(Deserialize)]
struct CheckedText<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default, deserialize_with = "some_str")]
    protocol_version: Option<&'a str>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default, deserialize_with = "some_object")]
    client_capabilities: Option<Map<String, Value>>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default, deserialize_with = "some_str")]
    log_level: Option<&'a str>,
    #[serde(rename = "progressToken", default, deserialize_with = "some_token")]
    progress_token: Option<Value>,
}

/// A string without escapes; `null` or anything else is an error, not an absent key.
fn some_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de str>, D::Error> {
    <&str>::deserialize(d).map(Some)
}

fn some_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Map<String, Value>>, D::Error> {
    Map::deserialize(d).map(Some)
}

fn some_token<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl CheckedKeys {
    /// The checked keys of `meta`, whose text is `text`; `Err` with its value when it is not
    /// an object. Where the parser noted the keys' values, only those are decoded.
    fn read(meta: &RequestMeta, text: &str) -> Result<CheckedKeys, Value> {
        let Some(values) = meta.envelope() else { return Self::read_text(text) };
        // Checked JSON, so each value parses; were one not to, the text answers instead of
        // the key reading as absent.
        // The first four: `traceparent`, noted last, is no key of these checks.
        let mut parsed = [None, None, None, None];
        for (value, value_text) in parsed.iter_mut().zip(values) {
            if let Some(value_text) = value_text {
                *value = serde_json::from_str::<Value>(value_text).ok();
                if value.is_none() {
                    return Self::read_text(text);
                }
            }
        }
        let [protocol_version, client_capabilities, log_level, progress_token] = parsed;
        Ok(CheckedKeys { protocol_version, client_capabilities, log_level, progress_token })
    }

    /// [`read`](Self::read) from the text alone.
    fn read_text(text: &str) -> Result<CheckedKeys, Value> {
        if text.trim_start().starts_with('{')
            && let Ok(keys) = serde_json::from_str::<CheckedText>(text)
        {
            return Ok(CheckedKeys {
                protocol_version: keys.protocol_version.map(Value::from),
                client_capabilities: keys.client_capabilities.map(Value::Object),
                log_level: keys.log_level.map(Value::from),
                progress_token: keys.progress_token,
            });
        }
        match serde_json::from_str::<Value>(text).unwrap_or(Value::Null) {
            Value::Object(m) => Ok(CheckedKeys {
                protocol_version: m.get(META_PROTOCOL_VERSION).cloned(),
                client_capabilities: m.get(META_CLIENT_CAPABILITIES).cloned(),
                log_level: m.get(META_LOG_LEVEL).cloned(),
                progress_token: m.get("progressToken").cloned(),
            }),
            other => Err(other),
        }
    }
}

/// The JSON type of `v`, for error messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(params: Value) -> String {
        let meta = params.get("_meta").cloned().map(RequestMeta::from_value).unwrap_or_default();
        let err = parse_modern_meta(&meta).expect_err("refused");
        assert_eq!(err.code(), crate::ErrorCode::INVALID_PARAMS);
        err.message().to_owned()
    }

    #[test]
    fn a_missing_key_and_a_wrong_type_get_different_messages() {
        assert!(message(json!({})).contains("_meta is required"));
        assert!(message(json!({ "_meta": 3 })).contains("_meta must be an object, not a number"));
        let caps = json!({});
        assert!(
            message(json!({ "_meta": { "io.modelcontextprotocol/clientCapabilities": caps } })).contains("is required")
        );
        let m = message(
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {} } }),
        );
        assert!(m.contains("must be a string, not a number"), "{m}");
        let m = message(
            json!({ "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [] } }),
        );
        assert!(m.contains("must be an object ({} for none), not an array"), "{m}");
    }

    /// The text decoding reads the keys the constants name, and agrees with the map.
    #[test]
    fn the_text_and_the_map_read_the_same_keys() {
        let sent = [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"a":{}},
               "io.modelcontextprotocol/logLevel":"info","progressToken":7,"x":[1,{"y":"\u00e9"}]}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"2026-07-28",
               "io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":null,"io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/client\u0043apabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol/clientCapabilities":[],
               "io.modelcontextprotocol/logLevel":7,"progressToken":{"a":1}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/logLevel":null}"#,
            r#" { "x" : {"progressToken":1,"io.modelcontextprotocol/logLevel":"debug"} ,
               "io.modelcontextprotocol/protocolVersion" :"2026-07-28" , "y":"progressToken"	}"#,
            r#"{ }"#,
            r#"{"progressToken":"pé","io.modelcontextprotocol/clientCapabilities":{"e":{"k":[1,2.5e3]}}}"#,
        ];
        let mut envelopes = 0;
        for text in sent {
            let map: serde_json::Map<String, Value> = serde_json::from_str(text).expect("an object");
            // From the text alone, and from a parsed request (which notes the keys' values
            // where it can).
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{text}}}}}"#);
            let Ok(crate::jsonrpc::Message::Request(req)) = crate::jsonrpc::parse_message(line.as_bytes()) else {
                panic!("a request: {line}")
            };
            envelopes += usize::from(req.meta.envelope().is_some());
            let parsed = CheckedKeys::read(&req.meta, req.meta.text().expect("present"));
            for keys in [CheckedKeys::read_text(text), parsed] {
                let keys = keys.unwrap_or_else(|v| panic!("an object: {v}"));
                assert_eq!(keys.protocol_version.as_ref(), map.get(META_PROTOCOL_VERSION), "{text}");
                assert_eq!(keys.client_capabilities.as_ref(), map.get(META_CLIENT_CAPABILITIES), "{text}");
                assert_eq!(keys.log_level.as_ref(), map.get(META_LOG_LEVEL), "{text}");
                assert_eq!(keys.progress_token.as_ref(), map.get("progressToken"), "{text}");
            }
        }
        assert!(envelopes >= 3, "the parser noted the keys of {envelopes} of {}", sent.len());
        assert!(CheckedKeys::read_text("[1]").is_err());
    }

    /// The keys the parser notes are the ones the checks read.
    #[test]
    fn the_envelope_keys_are_the_protocol_s() {
        let keys = crate::jsonrpc::ENVELOPE_KEYS;
        assert_eq!(
            keys,
            [
                META_PROTOCOL_VERSION,
                META_CLIENT_CAPABILITIES,
                META_LOG_LEVEL,
                "progressToken",
                crate::protocol::META_TRACEPARENT
            ]
        );
    }
}
