use super::meta::{ENVELOPE_KEYS, EnvelopeSpans};
use super::{McpError, RequestId, RequestMeta};
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;

/// A JSON-RPC request: `{"jsonrpc":"2.0","id":..,"method":..,"params"?:{..}}`
/// (<https://www.jsonrpc.org/specification#request_object>), with the MCP `params._meta`
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic#meta>) kept apart from
/// `params`, whatever its type (`null` included).
///
/// The parser also keeps a `tools/call`'s object `arguments` apart, as the JSON text it came
/// in ([`arguments`](Self::arguments)): a tool decodes its parameters straight from it
/// ([`ToolArguments`](super::ToolArguments)). When `method` came before `params`, it usually
/// keeps the call's string `name` apart too ([`tool_name`](Self::tool_name)), and `params` is
/// then empty: no map is built for a call. (A message it reads in full, a batch's entries
/// among them, keeps `name` in `params`; read it with `tool_name` either way.)
///
/// Made by [`parse_message`], or in code with [`Request::new`], which splits `_meta` the same
/// way (the pipeline reads `_meta` from [`meta`](Self::meta) only, so one left in `params`
/// would be a request without it) and leaves `arguments` and `name` in `params`, where the
/// pipeline reads them as a map.
#[derive(Clone)]
#[non_exhaustive]
pub struct Request {
    /// The request id, echoed in the response.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The params object without its `_meta`; `None` when the message had no params. Of a
    /// parsed `tools/call`, without the `arguments` and `name` the parser kept apart
    /// ([`arguments`](Self::arguments), [`tool_name`](Self::tool_name)); a `name` put here
    /// (by a transport that rewrites the call) is the one the call uses.
    pub params: Option<Map<String, Value>>,
    /// `params._meta`, taken out of `params` as JSON text (absent when it had none).
    pub meta: RequestMeta,
    /// See [`arguments`](Self::arguments). Set by the parser only, from text it checked.
    pub(crate) arguments: Option<Arc<str>>,
    /// A parsed `tools/call`'s string `params.name`, taken out of `params`
    /// ([`tool_name`](Self::tool_name)). Set by the parser only.
    pub(crate) tool_name: Option<Box<str>>,
}

/// What the parser took out of a `tools/call`'s `params` ([`Request::arguments`],
/// [`Request::tool_name`]), carried apart from them to the call.
#[derive(Debug, Default)]
pub(crate) struct TakenOut {
    /// The object `arguments`, as the text it was sent as.
    pub(crate) arguments: Option<Arc<str>>,
    /// The string `name`.
    pub(crate) name: Option<Box<str>>,
}

impl Request {
    /// Takes the members the parser kept apart, leaving `self` as it would be without them. A
    /// `name` found in `params` was put there after the parse, and is the one that counts.
    pub(crate) fn take_out(&mut self) -> TakenOut {
        let name = self.tool_name.take();
        let overridden = self.params.as_ref().is_some_and(|p| super::small_map::contains(p, "name"));
        TakenOut { arguments: self.arguments.take(), name: name.filter(|_| !overridden) }
    }
}

impl Request {
    /// A request of `method` with `params` (`None`: the message had none), whose `_meta` key
    /// (if any, of any type) is moved into [`meta`](Self::meta), as the parser does; a
    /// `tools/call`'s `arguments` stay in `params`.
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Map<String, Value>>) -> Self {
        let (params, meta) = split_meta(params);
        Request { id, method: method.into(), params, meta, arguments: None, tool_name: None }
    }

    /// The tool a `tools/call` names (`params.name`, when a string): a `name` in
    /// [`params`](Self::params), else the one the parser kept apart. `None` for a request of
    /// another method, and when `name` is absent or not a string (the call is then refused
    /// with `-32602`).
    pub fn tool_name(&self) -> Option<&str> {
        if self.method != TOOLS_CALL {
            return None;
        }
        match self.params.as_ref().and_then(|p| super::small_map::get(p, "name")) {
            Some(name) => name.as_str(),
            None => self.tool_name.as_deref(),
        }
    }

    /// The `params.arguments` of a parsed `tools/call`, as the JSON text of the object it
    /// was sent as (a `Value` parse of the message accepts it); `None` for a request of another
    /// method or made in code, and when `arguments` is absent or not an object. When `None`,
    /// `arguments` (if any) is in [`params`](Self::params): `null` reads as `{}` and another
    /// type is refused with `-32602`.
    pub fn arguments(&self) -> Option<&str> {
        self.arguments.as_deref()
    }
}

/// Shows `arguments` parsed, as [`RequestMeta`] shows `_meta`: the same request reads the same
/// whatever whitespace it was sent with.
impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let arguments = self.arguments.as_deref().map(|text| match serde_json::from_str::<Value>(text) {
            Ok(value) => format!("{value}"),
            Err(_) => text.to_owned(),
        });
        f.debug_struct("Request")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("params", &self.params)
            .field("meta", &self.meta)
            .field("arguments", &arguments)
            .field("tool_name", &self.tool_name)
            .finish()
    }
}

/// The method whose `params.arguments` a [`Request`] keeps apart.
const TOOLS_CALL: &str = "tools/call";

/// `params` with its `_meta` moved out.
fn split_meta(params: Option<Map<String, Value>>) -> (Option<Map<String, Value>>, RequestMeta) {
    match params {
        Some(mut p) => {
            let meta = p.shift_remove("_meta").map(RequestMeta::from_value).unwrap_or_default();
            (Some(p), meta)
        }
        None => (None, RequestMeta::default()),
    }
}

/// A JSON-RPC notification: a request without an id.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name, e.g. `notifications/cancelled`.
    pub method: String,
    /// The params object, if any.
    pub params: Option<Map<String, Value>>,
}

/// One decoded client message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request that expects a response.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response to a server→client request (legacy sessions only): `id` plus `result` or `error`.
    Response {
        /// The id of the server's request.
        id: RequestId,
        /// `Ok(result)` or `Err(error object)`.
        outcome: Result<Value, Value>,
    },
}

/// Why a message could not be parsed: the error to answer with, and the request id when one
/// could be read so that the error response can echo it.
#[derive(Debug, Clone)]
pub struct ParseFailure {
    /// `-32700` or `-32600`.
    pub error: McpError,
    /// The id of the offending message, if it had a readable one.
    pub id: Option<RequestId>,
    /// True when the message was recognisably a notification (a `method` and no `id`): it gets
    /// no error response.
    pub notification: bool,
}

/// Parses one JSON-RPC message from bytes.
///
/// Errors: `-32700` when the bytes are not JSON; `-32600` when the JSON is not a single JSON-RPC
/// 2.0 message (batches, a missing `"jsonrpc":"2.0"`, a non-string method, a `null` or fractional
/// id, non-object params). Boxed: failures are rare and the success path stays small.
pub fn parse_message(bytes: &[u8]) -> Result<Message, Box<ParseFailure>> {
    // A request first, with the fewest fields: it is what a server parses per request.
    if let Some(request) = parse_plain_request(bytes) {
        return Ok(Message::Request(request));
    }
    if let Some(message) = parse_plain(bytes) {
        return Ok(message);
    }
    parse(bytes).map_err(|(error, id, notification)| Box::new(ParseFailure { error: *error, id, notification }))
}

/// The shape of a well-formed message, decoded straight from the bytes: no intermediate map
/// for the envelope (its keys, hashing and removals were a large share of the per-message
/// cost, on the server for requests and on the client for responses). Anything else,
/// duplicate keys included, fails here and takes the general path below, which alone decides
/// errors; so this only ever accepts what [`parse`] would turn into the same [`Message`]. A key
/// of no JSON-RPC field is refused too: skipped unread, it would let through JSON the general
/// path rejects (a lone surrogate, a number out of range).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainMessage<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    /// `Some` whenever the key is present (as for the fields below), `null` included (which
    /// is invalid, not absent).
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    /// A string; `null` or any other value is no method here (the general path refuses it).
    #[serde(default, deserialize_with = "present_string")]
    method: Option<String>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

fn present_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// `bytes` decoded as `T` when they are one JSON object: a derived struct also accepts a
/// JSON array (fields by position), which the general path must judge instead.
///
/// The bytes are checked as UTF-8 once, as a whole, and decoded as text: from bytes, serde_json
/// checks every string it reads on its own (a tenth of the instructions of a request's parse,
/// callgrind). Bytes that are not UTF-8 are left to the general path, which words the error.
fn plain_object<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Option<T> {
    serde_json::from_str(plain_text(bytes)?).ok()
}

/// `bytes` as text when they may be one JSON object: UTF-8, and `{` first after whitespace.
fn plain_text(bytes: &[u8]) -> Option<&str> {
    let first = bytes.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if *first != b'{' {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// A valid request id (a string, or an integer that fits `i64`), else `None`.
fn plain_id(id: Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s)),
        Value::Number(n) => Some(RequestId::Number(n.as_i64()?)),
        _ => None,
    }
}

/// `Some(params)` when they are absent or an object; `None` (not plain) otherwise.
fn plain_params(params: Option<Value>) -> Option<Option<Map<String, Value>>> {
    match params {
        None => Some(None),
        Some(Value::Object(m)) => Some(Some(m)),
        Some(_) => None,
    }
}

/// [`PlainMessage`] of a request alone: `id` and `method` required, no result fields, no key
/// twice. Not derived: the params of a `tools/call` keep their `arguments` as text, and the
/// decoding of `params` is told whether the request is one when `method` came first (as every
/// client writes it); when it did not, the text is kept and parsed into `params` afterwards
/// if the method is another.
struct PlainRequest {
    id: Value,
    method: String,
    /// Anything but an object (`null` included) fails here, for the general path to refuse.
    params: Option<PlainParams>,
}

/// Decodes a [`PlainRequest`] from `input`, the whole message, reading a `_meta` as `meta`
/// says.
#[derive(Clone, Copy)]
struct PlainRequestVisitor<'de, 'a> {
    input: &'de str,
    meta: MetaRead<'a>,
}

/// How the plain request path reads an `_meta`.
#[derive(Clone, Copy)]
enum MetaRead<'a> {
    /// In one pass ([`MetaSeed`]); what that pass cannot read sets the flag, and the message
    /// is read again with [`Whole`](MetaRead::Whole).
    OnePass(&'a Cell<bool>),
    /// As one checked text, with nothing noted: any JSON value, any key.
    Whole,
}

impl<'de> Visitor<'de> for PlainRequestVisitor<'de, '_> {
    type Value = PlainRequest;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON-RPC request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<PlainRequest, A::Error> {
        use serde::de::Error;
        let (mut version, mut id, mut method, mut params) = (None, None, None, None);
        while let Some(key) = access.next_key::<RequestKey>()? {
            let repeated = match key {
                RequestKey::Jsonrpc => version.replace(access.next_value::<Version>()?).is_some(),
                RequestKey::Id => id.replace(access.next_value::<Value>()?).is_some(),
                RequestKey::Method => method.replace(access.next_value::<String>()?).is_some(),
                RequestKey::Params => {
                    let tool_call = method.as_deref().map(|m| m == TOOLS_CALL);
                    let seed = ParamsSeed { tool_call, input: self.input, meta: self.meta };
                    params.replace(access.next_value_seed(seed)?).is_some()
                }
            };
            if repeated {
                return Err(A::Error::custom("a key is repeated"));
            }
        }
        match (version, id, method) {
            (Some(Version(true)), Some(id), Some(method)) => Ok(PlainRequest { id, method, params }),
            _ => Err(A::Error::custom("not a plain JSON-RPC 2.0 request")),
        }
    }
}

/// A key of a plain request; any other key fails the plain path.
enum RequestKey {
    Jsonrpc,
    Id,
    Method,
    Params,
}

impl<'de> Deserialize<'de> for RequestKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = RequestKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("jsonrpc, id, method or params")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<RequestKey, E> {
                match key {
                    "jsonrpc" => Ok(RequestKey::Jsonrpc),
                    "id" => Ok(RequestKey::Id),
                    "method" => Ok(RequestKey::Method),
                    "params" => Ok(RequestKey::Params),
                    other => Err(E::unknown_field(other, &["jsonrpc", "id", "method", "params"])),
                }
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Whether `jsonrpc` is the string `"2.0"`; another type fails the plain path.
pub(super) struct Version(pub(super) bool);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct VersionVisitor;
        impl Visitor<'_> for VersionVisitor {
            type Value = Version;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Version, E> {
                Ok(Version(v == "2.0"))
            }
        }
        d.deserialize_str(VersionVisitor)
    }
}

/// Decodes a request's `params` as [`PlainParams`], keeping an object `arguments` as text
/// unless the request is known not to be a `tools/call` (`Some(false)`).
#[derive(Clone, Copy)]
struct ParamsSeed<'de, 'a> {
    tool_call: Option<bool>,
    input: &'de str,
    meta: MetaRead<'a>,
}

impl<'de> serde::de::DeserializeSeed<'de> for ParamsSeed<'de, '_> {
    type Value = PlainParams;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<PlainParams, D::Error> {
        d.deserialize_map(PlainParamsVisitor { tool_call: self.tool_call, input: self.input, meta: self.meta })
    }
}

/// A request's `params` object with its `_meta` captured as JSON text rather than built into a
/// map: the pipeline reads a few keys of it, and the map only when asked
/// ([`RequestMeta::map`]). A `tools/call`'s object `arguments` is captured as text the same
/// way. A repeated key keeps its last value, as a `Value` map does.
struct PlainParams {
    members: Map<String, Value>,
    meta: Option<RequestMeta>,
    /// Shared: the `requestState` binding keeps the same text without a copy.
    arguments: Option<Arc<str>>,
    /// A `tools/call`'s string `name`, when the method came first; a `name` of another type
    /// stays in `members`, for the call to refuse.
    name: Option<Box<str>>,
    /// `members` holds an `arguments` entry: a value that is not an object, or, while
    /// `arguments` holds text taken before the method was known, a `null` keeping its place
    /// (another method's arguments go back there, in the order they were sent).
    held: bool,
}

/// How many arrays and objects enclose `params`' members in a message: the message and
/// `params` itself.
const PARAMS_MEMBER_DEPTH: usize = 2;

struct PlainParamsVisitor<'de, 'a> {
    tool_call: Option<bool>,
    input: &'de str,
    meta: MetaRead<'a>,
}

impl<'de> Visitor<'de> for PlainParamsVisitor<'de, '_> {
    type Value = PlainParams;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<PlainParams, A::Error> {
        let mut params = PlainParams { members: Map::new(), meta: None, arguments: None, name: None, held: false };
        let mut name_seen = false;
        // Captured text is only scanned, not parsed: what a `Value` would refuse (a lone
        // surrogate, a number out of range, nesting past the depth limit) must fail here too,
        // for the general path to answer -32700.
        let checked = |raw: Box<RawValue>| {
            super::meta::check_json(raw.get(), PARAMS_MEMBER_DEPTH).map(|()| raw).map_err(serde::de::Error::custom)
        };
        while let Some(key) = access.next_key::<ParamsKey>()? {
            match key {
                ParamsKey::Meta => {
                    params.meta = Some(match self.meta {
                        MetaRead::OnePass(declined) => {
                            access.next_value_seed(MetaSeed { input: self.input, declined })?
                        }
                        MetaRead::Whole => RequestMeta::from_parsed(checked(access.next_value()?)?.into(), None),
                    });
                }
                ParamsKey::Arguments if self.tool_call != Some(false) => {
                    let raw = access.next_value::<&'de RawValue>()?.get();
                    super::meta::check_json(raw, PARAMS_MEMBER_DEPTH).map_err(serde::de::Error::custom)?;
                    if raw.trim_start().starts_with('{') {
                        if self.tool_call.is_none() {
                            params.members.insert("arguments".to_owned(), Value::Null);
                            params.held = true;
                        } else if params.held {
                            params.members.shift_remove("arguments");
                            params.held = false;
                        }
                        params.arguments = Some(Arc::from(raw));
                    } else {
                        // `null` or a wrong type: left in the map for `tools/call` to judge.
                        let value = serde_json::from_str(raw).map_err(serde::de::Error::custom)?;
                        params.members.insert("arguments".to_owned(), value);
                        params.arguments = None;
                        params.held = true;
                    }
                }
                ParamsKey::Arguments => {
                    params.members.insert("arguments".to_owned(), access.next_value()?);
                }
                // Only once the method is known: taken out before, a name would have to be put
                // back for another method, in its place.
                ParamsKey::Name if self.tool_call == Some(true) => {
                    // A map keeps a repeated key where it was first sent, with the last value:
                    // the general path says so.
                    if std::mem::replace(&mut name_seen, true) {
                        return Err(serde::de::Error::custom("`name` sent twice"));
                    }
                    match access.next_value()? {
                        Value::String(name) => params.name = Some(name.into_boxed_str()),
                        other => {
                            params.members.insert("name".to_owned(), other);
                        }
                    }
                }
                ParamsKey::Name => {
                    params.members.insert("name".to_owned(), access.next_value()?);
                }
                ParamsKey::Other(key) => {
                    params.members.insert(key, access.next_value()?);
                }
            }
        }
        Ok(params)
    }
}

/// A key of `params`: `_meta`, `arguments` and `name` are told apart without allocating them.
enum ParamsKey {
    Meta,
    Arguments,
    Name,
    Other(String),
}

impl ParamsKey {
    fn of(key: &str) -> Option<ParamsKey> {
        match key {
            "_meta" => Some(ParamsKey::Meta),
            "arguments" => Some(ParamsKey::Arguments),
            "name" => Some(ParamsKey::Name),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for ParamsKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = ParamsKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<ParamsKey, E> {
                Ok(ParamsKey::of(key).unwrap_or_else(|| ParamsKey::Other(key.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, key: String) -> Result<ParamsKey, E> {
                Ok(ParamsKey::of(&key).unwrap_or(ParamsKey::Other(key)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Decodes an object `_meta` in one pass into a [`RequestMeta`]: each member's value is
/// checked as a `Value` parse would check it and, for the [`ENVELOPE_KEYS`], where it lies is
/// noted, so the 2026-07-28 checks decode only those values instead of parsing `_meta` again;
/// the object's text is sliced out of `input`, the message it is part of. What this pass
/// cannot read (a `_meta` that is not an object or has no member, a key written with escapes)
/// fails it with `declined` set, and the message is read again with `_meta` taken whole
/// ([`MetaRead::Whole`]), as sent. An envelope key written twice, or a `_meta` too long for
/// the spans, is kept with no spans noted (the map answers).
#[derive(Clone, Copy)]
struct MetaSeed<'de, 'a> {
    input: &'de str,
    declined: &'a Cell<bool>,
}

/// How many arrays and objects enclose `_meta`'s members in a message: the message, `params`
/// and `_meta`.
const META_MEMBER_DEPTH: usize = PARAMS_MEMBER_DEPTH + 1;

impl<'de> serde::de::DeserializeSeed<'de> for MetaSeed<'de, '_> {
    type Value = RequestMeta;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<RequestMeta, D::Error> {
        // Cleared once the object is read: any failure on the way (not an object, an escaped
        // key, a value a `Value` parse refuses) leaves it set.
        self.declined.set(true);
        let meta = d.deserialize_map(self)?;
        self.declined.set(false);
        Ok(meta)
    }
}

impl<'de> Visitor<'de> for MetaSeed<'de, '_> {
    type Value = RequestMeta;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a _meta object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<RequestMeta, A::Error> {
        use serde::de::Error;
        let within = |text: &str| {
            let at = (text.as_ptr() as usize).checked_sub(self.input.as_ptr() as usize)?;
            (at + text.len() <= self.input.len()).then_some(at)
        };
        let outside = || A::Error::custom("_meta was not read from the message's text");
        let bytes = self.input.as_bytes();
        let json_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        // The object's `{`, found from its first key (only whitespace lies between them); the
        // spans count from it.
        let brace_before = |key_at: usize| {
            let quote = key_at.checked_sub(1).filter(|&q| bytes[q] == b'"')?;
            bytes[..quote].iter().rposition(|b| !json_space(b)).filter(|&o| bytes[o] == b'{')
        };
        let (mut open, mut end) = (None, 0);
        let mut spans = Some(EnvelopeSpans::default());
        while let Some(key) = access.next_key::<&'de str>()? {
            let value = access.next_value::<&'de RawValue>()?;
            super::meta::check_json(value.get(), META_MEMBER_DEPTH).map_err(A::Error::custom)?;
            let start = match open {
                Some(start) => start,
                None => *open.insert(within(key).and_then(brace_before).ok_or_else(outside)?),
            };
            let value_at = within(value.get()).ok_or_else(outside)?;
            end = value_at + value.get().len();
            if let (Some(i), Some(noted)) = (ENVELOPE_KEYS.iter().position(|k| *k == key), &mut spans)
                && !noted.note(i, value_at - start, end - start)
            {
                // Repeated (the map, which keeps the last, answers) or past the spans' range.
                spans = None;
            }
        }
        // No member: nothing says where the braces are (read whole instead).
        let open = open.ok_or_else(outside)?;
        // Only whitespace lies between the last value and the closing brace.
        let close = bytes[end..]
            .iter()
            .position(|b| !json_space(b))
            .map(|c| end + c)
            .filter(|&c| bytes[c] == b'}')
            .ok_or_else(outside)?;
        Ok(RequestMeta::from_parsed(self.input[open..=close].into(), spans))
    }
}

fn parse_plain_request(bytes: &[u8]) -> Option<Request> {
    let input = plain_text(bytes)?;
    let read = |meta| {
        let mut de = serde_json::Deserializer::from_str(input);
        let plain = serde::Deserializer::deserialize_map(&mut de, PlainRequestVisitor { input, meta }).ok()?;
        de.end().ok().map(|()| plain)
    };
    let declined = Cell::new(false);
    let plain = match read(MetaRead::OnePass(&declined)) {
        Some(plain) => plain,
        // Only a `_meta` the one pass cannot read is worth a second read.
        None if declined.get() => read(MetaRead::Whole)?,
        None => return None,
    };
    let (params, meta, arguments, tool_name) = match plain.params {
        None => (None, RequestMeta::default(), None, None),
        Some(mut p) => {
            // `params` before `method`: a `tools/call` drops the placeholder; another method's
            // arguments go back in its place (checked text, so it parses).
            if plain.method == TOOLS_CALL {
                if p.arguments.is_some() && p.held {
                    p.members.shift_remove("arguments");
                }
            } else if let Some(text) = p.arguments.take() {
                p.members.insert("arguments".to_owned(), serde_json::from_str(&text).ok()?);
            }
            (Some(p.members), p.meta.unwrap_or_default(), p.arguments, p.name)
        }
    };
    Some(Request { id: plain_id(plain.id)?, method: plain.method, params, meta, arguments, tool_name })
}

fn parse_plain(bytes: &[u8]) -> Option<Message> {
    let plain: PlainMessage = plain_object(bytes)?;
    if plain.jsonrpc != "2.0" {
        return None;
    }
    let id = match plain.id {
        None => None,
        Some(id) => Some(plain_id(id)?),
    };
    let params = plain_params(plain.params)?;
    Some(match (plain.method, id) {
        (Some(method), Some(id)) => Message::Request(Request::new(id, method, params)),
        (Some(method), None) => Message::Notification(Notification { method, params }),
        // As the general path: a response's `params` are ignored, `result` wins over `error`.
        (None, Some(id)) => match (plain.result, plain.error) {
            (Some(result), _) => Message::Response { id, outcome: Ok(result) },
            (None, Some(error)) => Message::Response { id, outcome: Err(error) },
            (None, None) => return None,
        },
        (None, None) => return None,
    })
}

/// Most entries accepted in one JSON-RPC batch (64). A batch is a handful of messages sent
/// together (2025-03-26 only: <https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>);
/// this bound keeps one line or one POST from starting more work than that many separate
/// requests would, whatever the size limit of the line or body. A longer batch is refused
/// whole by [`parse_batch`] (`-32600`).
pub const MAX_BATCH_LEN: usize = 64;

/// The entries of a JSON-RPC batch: `Some` when `bytes` is a JSON array (its first
/// non-whitespace byte is `[`), `None` for anything else, which is one message for
/// [`parse_message`].
///
/// Each entry is left as JSON, for the incoming message filters and [`parse_entry`]; the
/// transport decides whether the connection's protocol version takes batches at all
/// ([`accepts_batches`](crate::protocol::accepts_batches); if not, it answers
/// [`batch_refused`](crate::protocol::batch_refused)).
///
/// Errors, each answered with one error object (`id` null), never an array
/// (<https://www.jsonrpc.org/specification#batch>): `-32700` when the bytes are not JSON;
/// `-32600` for an empty array, and for more than [`MAX_BATCH_LEN`] entries.
///
/// Spec: <https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>.
pub fn parse_batch(bytes: &[u8]) -> Option<Result<Vec<Value>, Box<ParseFailure>>> {
    let first = bytes.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if *first != b'[' {
        return None;
    }
    let failure = |error| Box::new(ParseFailure { error, id: None, notification: false });
    Some(match serde_json::from_slice::<Vec<Value>>(bytes) {
        Err(e) => Err(failure(McpError::parse_error(format!("invalid JSON: {e}")))),
        Ok(entries) if entries.is_empty() => Err(failure(McpError::invalid_request("an empty batch is not a request"))),
        Ok(entries) if entries.len() > MAX_BATCH_LEN => Err(failure(McpError::invalid_request(format!(
            "a batch of {} messages is more than the {MAX_BATCH_LEN} this server takes at once",
            entries.len()
        )))),
        Ok(entries) => Ok(entries),
    })
}

/// Parses one entry of a batch (from [`parse_batch`]) like [`parse_message`] parses a
/// message: the same [`Message`], or the same failure (`-32600` for an entry that is not a
/// JSON-RPC 2.0 object, a nested array included). Each failed entry that is not a notification
/// gets its own error response inside the batch's answer
/// (<https://www.jsonrpc.org/specification#batch>).
pub fn parse_entry(entry: Value) -> Result<Message, Box<ParseFailure>> {
    classify(entry).map_err(|(error, id, notification)| Box::new(ParseFailure { error: *error, id, notification }))
}

type Failure = (Box<McpError>, Option<RequestId>, bool);

fn parse(bytes: &[u8]) -> Result<Message, Failure> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| (Box::new(McpError::parse_error(format!("invalid JSON: {e}"))), None, false))?;
    if value.is_array() {
        return Err((Box::new(McpError::invalid_request("batches are not supported")), None, false));
    }
    classify(value)
}

fn classify(value: Value) -> Result<Message, Failure> {
    let Value::Object(mut obj) = value else {
        return Err((Box::new(McpError::invalid_request("expected a JSON object")), None, false));
    };
    let id_value = obj.remove("id");
    // A message with a method and no id is a notification: failures are not answered.
    let notification = id_value.is_none() && obj.get("method").is_some_and(Value::is_string);
    let id = match &id_value {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err((
                    Box::new(McpError::invalid_request("id must be a string or an integer from -2^63 to 2^63-1")),
                    None,
                    false,
                ));
            }
        },
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((Box::new(McpError::invalid_request("\"jsonrpc\" must be \"2.0\"")), id, notification));
    }
    let params = match obj.remove("params") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err((Box::new(McpError::invalid_request("params must be an object")), id, notification)),
    };
    match obj.remove("method") {
        Some(Value::String(method)) => Ok(match id {
            Some(id) => Message::Request(Request::new(id, method, params)),
            None => Message::Notification(Notification { method, params }),
        }),
        Some(_) => Err((Box::new(McpError::invalid_request("method must be a string")), id, false)),
        None => {
            let Some(id) = id else {
                return Err((Box::new(McpError::invalid_request("message has neither method nor id")), None, false));
            };
            if let Some(result) = obj.remove("result") {
                Ok(Message::Response { id, outcome: Ok(result) })
            } else if let Some(error) = obj.remove("error") {
                Ok(Message::Response { id, outcome: Err(error) })
            } else {
                Err((Box::new(McpError::invalid_request("message has no method")), Some(id), false))
            }
        }
    }
}

/// `{"jsonrpc":"2.0","id":id,"result":result}`.
pub fn success_response(id: &RequestId, result: Value) -> Value {
    // Built by moving `result` in: `json!` would serialize it into a new `Value`, a deep copy
    // of every result (~10,600 instructions of a stateless `tools/call`, callgrind,
    // 2026-12-01). Same keys in the same order, so the same bytes.
    let mut m = serde_json::Map::with_capacity(3);
    m.insert("jsonrpc".to_owned(), Value::from("2.0"));
    m.insert("id".to_owned(), id.to_value());
    m.insert("result".to_owned(), result);
    Value::Object(m)
}

/// `{"jsonrpc":"2.0","id":id|null,"error":{..}}`; the id is `null` only when none could be read.
pub fn error_response(id: Option<&RequestId>, error: &McpError) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.map(RequestId::to_value).unwrap_or(Value::Null),
        "error": error.to_error_object(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_an_array_of_at_most_max_batch_len_messages() {
        let code =
            |r: Option<Result<Vec<Value>, Box<ParseFailure>>>| r.expect("an array").map_err(|f| f.error.code().0);
        assert!(parse_batch(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none(), "one message");
        assert!(parse_batch(b"").is_none());
        assert_eq!(code(parse_batch(b" \n[1, {}]")).map(|e| e.len()), Ok(2));
        assert_eq!(code(parse_batch(b"[]")), Err(-32600), "empty");
        assert_eq!(code(parse_batch(b"[1,")), Err(-32700), "not JSON");
        let full = format!("[{}]", vec!["{}"; MAX_BATCH_LEN].join(","));
        assert_eq!(code(parse_batch(full.as_bytes())).map(|e| e.len()), Ok(MAX_BATCH_LEN));
        let over = format!("[{}]", vec!["{}"; MAX_BATCH_LEN + 1].join(","));
        assert_eq!(code(parse_batch(over.as_bytes())), Err(-32600), "too long");
    }

    /// Entries fail like single messages; a nested array is an invalid entry, not a batch.
    #[test]
    fn batch_entries_parse_like_messages() {
        let entry = |v: Value| parse_entry(v).map_err(|f| (f.error.code().0, f.id, f.notification));
        assert!(matches!(entry(json!({"jsonrpc":"2.0","id":1,"method":"ping"})), Ok(Message::Request(_))));
        assert!(matches!(entry(json!({"jsonrpc":"2.0","method":"n"})), Ok(Message::Notification(_))));
        assert!(matches!(entry(json!({"jsonrpc":"2.0","id":1,"result":{}})), Ok(Message::Response { .. })));
        assert_eq!(entry(json!([{"jsonrpc":"2.0","id":1,"method":"ping"}])).err(), Some((-32600, None, false)));
        assert_eq!(entry(json!(1)).err(), Some((-32600, None, false)));
        assert_eq!(
            entry(json!({"jsonrpc":"2.0","id":"a","method":"m","params":1})).err(),
            Some((-32600, Some(RequestId::String("a".into())), false))
        );
        assert_eq!(entry(json!({"jsonrpc":"2.0","method":"m","params":1})).err(), Some((-32600, None, true)));
        // A single array outside a batch keeps its old answer.
        assert_eq!(
            parse_message(b"[1]").err().map(|f| f.error.message().to_owned()),
            Some("batches are not supported".into())
        );
    }

    /// The plain path accepts only what the general path turns into the same message.
    #[test]
    fn plain_path_agrees_with_the_general_path() {
        let accepted = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"b":1,"a":2}}}"#,
            r#"  {"method":"ping","id":"x\"y","jsonrpc":"2\u002e0"}"#,
            r#"{"jsonrpc":"2.0","id":-3,"method":"m","result":1}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            r#"{"jsonrpc":"2.0","method":"n"}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"b":1,"a":2}}"#,
            r#"{"jsonrpc":"2.0","id":"r","result":null}"#,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"error":1,"result":2,"params":{"x":3}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta": {"progressToken" : 1, "a":[1, 2]} ,"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"m","params":{"_meta":1,"x":{"_meta":2},"_meta":{"b":"\u00e9"}}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"m","params":{"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","id":25,"method":"m","params":{"_meta":{"a":1},"_meta":null}}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"e","arguments": { "t" : "\u00e9" , "n":[1, {}]} }}"#,
            r#"{"jsonrpc":"2.0","id":12,"params":{"name":"e","arguments":{"t":1}},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"e","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"e","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"arguments":{"a":1},"name":"e","arguments":{"b":2}}}"#,
            r#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"arguments":{"a":1},"arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"arguments":7,"arguments":{"a":{"b":2}}}}"#,
            r#"{"jsonrpc":"2.0","id":18,"method":"prompts/get","params":{"name":"p","arguments":{"a":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":19,"params":{"name":"p","arguments":{"a":"1"}},"method":"prompts/get"}"#,
            r#"{"jsonrpc":"2.0","id":20,"params":{"arguments":{"a":"1"},"arguments":null},"method":"prompts/get"}"#,
            r#"{"jsonrpc":"2.0","id":21,"params":{"arguments":7,"name":"p","arguments":{"a":1}},"method":"prompts/get"}"#,
            r#"{"jsonrpc":"2.0","id":22,"params":{"arguments":{"a":1},"name":"p","arguments":{"b":2}},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":23,"params":{"arguments":{"a":1},"name":"e","arguments":7},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":24,"params":{"arguments":7,"name":"e","arguments":{"a":1}},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"e","arguments":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":7,"arguments":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":null}}"#,
            r#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"x":{"name":"inner"}}}"#,
            r#"{"jsonrpc":"2.0","id":32,"params":{"name":"e"},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":33,"method":"prompts/get","params":{"name":"p"}}"#,
        ];
        for line in accepted {
            let plain = parse_plain(line.as_bytes()).expect(line);
            let general = parse(line.as_bytes()).unwrap_or_else(|_| panic!("general path: {line}"));
            assert_eq!(format!("{plain:?}"), format!("{general:?}"), "{line}");
            let sent: Value = serde_json::from_str(line).expect("JSON");
            // A request with no key of a response: the plain request path takes each one.
            let is_request = ["id", "method"].iter().all(|k| sent.get(k).is_some())
                && ["result", "error"].iter().all(|k| sent.get(k).is_none());
            assert_eq!(parse_plain_request(line.as_bytes()).is_some(), is_request, "{line}");
            if let Some(request) = parse_plain_request(line.as_bytes()) {
                let object_arguments = sent["method"] == TOOLS_CALL && sent["params"]["arguments"].is_object();
                assert_eq!(request.arguments.is_some(), object_arguments, "{line}");
                // The name only once the method is known, and only a string (the last one sent).
                let method_first = line.find(r#""method""#) < line.find(r#""params""#);
                let string_name = sent["method"] == TOOLS_CALL && method_first && sent["params"]["name"].is_string();
                assert_eq!(
                    request.tool_name.as_deref(),
                    string_name.then(|| sent["params"]["name"].as_str()).flatten(),
                    "{line}"
                );
                assert_eq!(
                    request.tool_name(),
                    (sent["method"] == TOOLS_CALL).then(|| sent["params"]["name"].as_str()).flatten(),
                    "{line}"
                );
                if request.arguments.is_none() && request.tool_name.is_none() {
                    // Nothing was taken out: the same request, key order included.
                    assert_eq!(format!("{:?}", Message::Request(request.clone())), format!("{general:?}"), "{line}");
                }
                let Message::Request(general) = &general else { panic!("a request: {line}") };
                let request = merged(request);
                assert_eq!(
                    (&request.id, &request.method, &request.params, request.meta.to_value()),
                    (&general.id, &general.method, &general.params, general.meta.to_value()),
                    "{line}"
                );
            }
        }
        // A tool's `name` sent twice: the general path keeps it where it came first, with the
        // last value.
        for line in [
            r#"{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"a","x":1,"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":7,"x":1,"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"a","name":"b\u00e9"}}"#,
        ] {
            assert!(parse_plain_request(line.as_bytes()).is_none(), "{line}");
            let (Ok(parsed), Ok(general)) = (parse_message(line.as_bytes()), parse(line.as_bytes())) else {
                panic!("{line} parses")
            };
            assert_eq!(format!("{parsed:?}"), format!("{general:?}"), "{line}");
        }
        let declined = [
            r#"["2.0",1,"m"]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
            r#"{"jsonrpc":"2.0","method":"m","params":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"id":1,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
        ];
        for line in declined {
            assert!(parse_plain(line.as_bytes()).is_none(), "{line}");
            assert!(parse_plain_request(line.as_bytes()).is_none(), "{line}");
        }
    }

    /// The request the general path makes: a `tools/call`'s name and arguments in `params`.
    fn merged(mut request: Request) -> Request {
        if let Some(name) = request.tool_name.take() {
            request.params.get_or_insert_default().insert("name".into(), Value::String(name.into_string()));
        }
        if let Some(text) = request.arguments.take() {
            let value = serde_json::from_str(&text).expect("checked JSON");
            request.params.get_or_insert_default().insert("arguments".into(), value);
        }
        request
    }

    /// A request's `_meta` leaves its params, kept as sent; a notification's stays.
    #[test]
    fn a_request_s_meta_is_taken_out_of_its_params() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"_meta":{"progressToken":"t","z":[1]}}}"#;
        let Ok(Message::Request(req)) = parse_message(line) else { panic!("a request") };
        assert_eq!(req.params, json!({ "a": 1 }).as_object().cloned());
        assert_eq!(req.meta.raw().map(|r| r.get()), Some(r#"{"progressToken":"t","z":[1]}"#));
        assert_eq!(req.meta.get("progressToken"), Some(&json!("t")));
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}"#;
        let Ok(Message::Request(req)) = parse_message(line) else { panic!("a request") };
        assert!(!req.meta.is_present());
        let made = Request::new(RequestId::Number(1), "m", json!({ "_meta": { "k": 2 }, "a": 1 }).as_object().cloned());
        assert_eq!(made.params, json!({ "a": 1 }).as_object().cloned());
        assert_eq!(made.meta.to_value(), Some(json!({ "k": 2 })));
        let line = br#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"k":1}}}"#;
        let Ok(Message::Notification(n)) = parse_message(line) else { panic!("a notification") };
        assert_eq!(n.params, json!({ "_meta": { "k": 1 } }).as_object().cloned());
        // A tool's object arguments leave too, kept as sent, and its name; another method's stay.
        let line =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{ "b":1,"a":[2] }}}"#;
        let Ok(Message::Request(req)) = parse_message(line) else { panic!("a request") };
        assert_eq!(req.params, Some(Map::new()));
        assert_eq!(req.tool_name(), Some("e"));
        assert_eq!(req.arguments.as_deref(), Some(r#"{ "b":1,"a":[2] }"#));
        for (line, left) in [
            (
                &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":null}}"#[..],
                json!(null),
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"arguments":{"a":"1"}}}"#, json!({"a": "1"})),
        ] {
            let Ok(Message::Request(req)) = parse_message(line) else { panic!("a request") };
            assert!(req.arguments.is_none());
            assert_eq!(req.params.and_then(|p| p.get("arguments").cloned()), Some(left));
        }
        let made =
            Request::new(RequestId::Number(1), "tools/call", json!({ "arguments": { "k": 2 } }).as_object().cloned());
        assert_eq!(made.params, json!({ "arguments": { "k": 2 } }).as_object().cloned());
        assert!(made.arguments().is_none());
        // Made in code, the name stays in `params`, where `tool_name` finds it; another
        // method's `name` is not a tool's.
        let made = Request::new(RequestId::Number(1), "tools/call", json!({ "name": "t" }).as_object().cloned());
        assert_eq!((made.tool_name(), made.params.as_ref().map(Map::len)), (Some("t"), Some(1)));
        let made = Request::new(RequestId::Number(1), "prompts/get", json!({ "name": "p" }).as_object().cloned());
        assert_eq!(made.tool_name(), None);
        // A name put in `params` after the parse is the one that counts.
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e"}}"#;
        let Ok(Message::Request(mut req)) = parse_message(line) else { panic!("a request") };
        req.params.get_or_insert_default().insert("name".into(), json!("f"));
        assert_eq!(req.tool_name(), Some("f"));
        assert_eq!(req.take_out().name, None);
        // `params` before `method`: the arguments taken out all the same, the name left.
        let line = br#"{"jsonrpc":"2.0","id":1,"params":{"arguments":{ "k" :2},"name":"e"},"method":"tools/call"}"#;
        let Ok(Message::Request(req)) = parse_message(line) else { panic!("a request") };
        assert_eq!(req.arguments(), Some(r#"{ "k" :2}"#));
        assert_eq!((req.tool_name(), req.tool_name.as_deref()), (Some("e"), None));
        // Not UTF-8: the general path's error.
        let failure = parse_message(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\xff\"}").expect_err("refused");
        assert_eq!(failure.error.code().0, -32700);
    }

    /// An object `_meta` is read in one pass: its text is sliced out as sent and the envelope
    /// keys' values are noted where they lie; an envelope key twice notes nothing (the map's
    /// last value answers); what that pass cannot read (no member, an escaped key, not an
    /// object) is read whole, as sent, on the same plain path, and notes nothing.
    #[test]
    fn a_meta_object_is_read_in_one_pass() {
        let request = |meta: &str| {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":1,"_meta":{meta},"b":2}}}}"#);
            match parse_message(line.as_bytes()) {
                Ok(Message::Request(req)) => req,
                other => panic!("{line}: {other:?}"),
            }
        };
        let text = "{ \"x\" : [1, {\"progressToken\":2}] ,\n \"progressToken\" :\t\"p\" , \"io.modelcontextprotocol/logLevel\":\"info\" }";
        let req = request(text);
        assert_eq!(req.meta.text(), Some(text));
        assert_eq!(req.meta.raw().map(RawValue::get), Some(text));
        assert_eq!(req.meta.envelope(), Some([None, None, Some(r#""info""#), Some(r#""p""#), None]));
        assert_eq!(req.params, json!({ "a": 1, "b": 2 }).as_object().cloned());
        let twice = request(r#"{"progressToken":1,"progressToken":2}"#);
        assert_eq!((twice.meta.envelope(), twice.meta.get("progressToken")), (None, Some(&json!(2))));
        for other in ["{ \n }", r#"{"progress\u0054oken":1}"#, "7", "null", r#""s""#, "[ 1E2 ]"] {
            let req = request(other);
            assert!(req.meta.envelope().is_none(), "{other}");
            assert_eq!(req.meta.text(), Some(other), "kept as sent");
            assert_eq!(req.meta.to_value(), serde_json::from_str(other).ok(), "{other}");
            assert_eq!(req.params, json!({ "a": 1, "b": 2 }).as_object().cloned(), "{other}");
            // Read whole on the plain path, so a tool's arguments stay text.
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{other},"name":"e","arguments":{{"x":1}}}}}}"#
            );
            let req = parse_plain_request(line.as_bytes()).expect(&line);
            assert_eq!(req.arguments(), Some(r#"{"x":1}"#), "{other}");
        }
    }

    /// What the general path refuses, the plain path must decline (and leave to it): a
    /// `"method": null` ("method must be a string", not an absent method that makes the
    /// message a response), and JSON the general path rejects inside a key the plain path
    /// skips unread (a lone surrogate, a number out of range).
    #[test]
    fn the_plain_path_declines_what_the_general_path_refuses() {
        let refused = [
            (r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1,"method":null,"error":{"code":1,"message":"m"}}"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1,"result":{},"x":"\ud800"}"#, -32700),
            (r#"{"jsonrpc":"2.0","method":"n","x":1e400}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\udc00"}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"x":"\ud800"}}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"\ud800":1}}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"x":[1e400]}}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":7,"x":1e400}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"\u0078":"\ud800"}}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":"\ud800"}}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":[1e400]}}}"#, -32700),
            (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":"\udc00"}}"#, -32700),
        ];
        for (line, code) in refused {
            let general = parse(line.as_bytes()).err().map(|(error, _, _)| error.code().0);
            assert_eq!(general, Some(code), "general path: {line}");
            assert!(parse_plain(line.as_bytes()).is_none(), "{line}");
            assert!(parse_plain_request(line.as_bytes()).is_none(), "{line}");
            let failure = parse_message(line.as_bytes()).expect_err(line);
            assert_eq!(failure.error.code().0, code, "{line}");
        }
        // Nested past serde_json's depth limit inside `_meta` or a tool's arguments: refused
        // like anywhere else, from one level past the limit of a whole message's parse.
        // `_meta` as an object (read in one pass) and as an array (read whole).
        for (key, object) in [("_meta", true), ("_meta", false), ("arguments", false)] {
            // `levels` arrays and objects around `1`.
            let nested = |levels: usize| {
                let (open, close) = match object {
                    true => (format!(r#"{{"k":{}"#, "[".repeat(levels - 1)), format!("{}}}", "]".repeat(levels - 1))),
                    false => ("[".repeat(levels), "]".repeat(levels)),
                };
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"{key}":{open}1{close}}}}}"#)
            };
            // The message and `params` are two levels.
            let deepest = nested(125);
            assert!(parse(deepest.as_bytes()).is_ok(), "{key}: the general path takes 127 levels");
            assert!(parse_plain_request(deepest.as_bytes()).is_some(), "{key}");
            let deeper = nested(126);
            assert!(parse(deeper.as_bytes()).is_err(), "{key}: the general path refuses 128 levels");
            assert!(parse_plain_request(deeper.as_bytes()).is_none(), "{key}");
            assert_eq!(parse_message(deeper.as_bytes()).expect_err("too deep").error.code().0, -32700);
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(parse_plain_request(deep.as_bytes()).is_none());
        assert_eq!(parse_message(deep.as_bytes()).expect_err("too deep").error.code().0, -32700);
    }
}
