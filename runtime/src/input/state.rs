//! `requestState`: the opaque, HMAC-SHA256-authenticated blob that carries a request's answers and
//! the handler's own data from one MRTR round to the next
//! ([MRTR server requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#server-requirements-basic-workflow)).
//!
//! Format: `v1.<payload>.<tag>`, both parts base64url without padding. The payload is JSON
//! `{"m":method,"n":name,"a":args-digest,"p":principal|null,"exp":unix-seconds,"ans":{..},"d":..}`
//! and the tag is HMAC-SHA256 over `v1.<payload>` with the server's key. The payload is
//! authenticated, not encrypted: the client can read it, it cannot change it.

use crate::jsonrpc::{McpError, TakenOut, small_map};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const VERSION: &str = "v1";

/// The shortest configured key accepted (bytes): HMAC-SHA256's own output size.
pub(crate) const MIN_KEY_BYTES: usize = 32;

/// Seals `requestState` values with one key and opens those sealed with it or with one of the
/// previous keys (a key being rotated out), within one lifetime.
#[derive(Clone)]
pub(crate) struct StateCodec {
    key: Vec<u8>,
    previous: Vec<Vec<u8>>,
    ttl: Duration,
}

impl std::fmt::Debug for StateCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key never appears in logs.
        f.debug_struct("StateCodec").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

/// The key used when the builder was given none: 32 random bytes drawn once per process, so
/// every server of the process accepts the others' states and a restart invalidates them all.
fn process_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(rand::random::<[u8; 32]>)
}

/// What a state is bound to: the request that received it must match it exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: String,
    /// The tool or prompt name, or the resource URI.
    pub name: String,
    /// Hex SHA-256 of the canonical JSON of the arguments (`{}` when absent).
    pub digest: String,
    /// The authenticated principal's id; `None` when anonymous.
    pub principal: Option<String>,
}

impl Binding {
    /// The binding of a request from its params (`name`/`uri` and `arguments`).
    #[cfg(any(feature = "fuzzing", test))]
    pub(crate) fn of(method: &'static str, params: &Map<String, Value>, principal: Option<&str>) -> Binding {
        BindingInput::of(method, params, &Default::default(), principal).bind()
    }
}

/// What a [`Binding`] is made from, kept as it came (text arguments shared, others copied) so
/// that the SHA-256 digest is computed only when a state is sealed: most requests never ask
/// for input.
#[derive(Debug, Clone)]
pub(crate) struct BindingInput {
    /// A built-in method's name, not a copy of the request's: only `tools/call`,
    /// `prompts/get` and `resources/read` take input.
    method: &'static str,
    name: String,
    /// `None` when absent or `null`, which digests as `{}`.
    arguments: Option<Arguments>,
    principal: Option<String>,
}

/// A request's arguments: the text a `tools/call`'s were taken out of `params` as
/// ([`Request::arguments`](crate::jsonrpc::Request::arguments)), or a value from `params`.
#[derive(Debug, Clone)]
enum Arguments {
    /// The text the parser captured, shared (not copied) with the request's arguments.
    Text(Arc<str>),
    Value(Value),
}

impl BindingInput {
    /// The input of a request from its params (`name`/`uri` and `arguments`), or from what
    /// the parser took out of a `tools/call`'s (its `arguments` text, its `name`).
    pub(crate) fn of(
        method: &'static str,
        params: &Map<String, Value>,
        taken: &TakenOut,
        principal: Option<&str>,
    ) -> BindingInput {
        let name = taken.name.as_deref().unwrap_or_else(|| {
            small_map::get(params, "name")
                .or_else(|| small_map::get(params, "uri"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        });
        BindingInput {
            method,
            name: name.to_owned(),
            arguments: match &taken.arguments {
                Some(text) => Some(Arguments::Text(text.clone())),
                None => small_map::get(params, "arguments").filter(|a| !a.is_null()).cloned().map(Arguments::Value),
            },
            principal: principal.map(str::to_owned),
        }
    }

    /// The binding, with the digest of the canonical arguments.
    pub(crate) fn bind(&self) -> Binding {
        let mut hasher = HashWriter(Sha256::new());
        match &self.arguments {
            Some(Arguments::Value(args)) => write_canonical(&mut hasher, args),
            // Checked JSON (the parser's), so it parses; the canonical form needs the keys.
            Some(Arguments::Text(text)) => match serde_json::from_str::<Value>(text) {
                Ok(args) => write_canonical(&mut hasher, &args),
                Err(_) => hasher.0.update(text.as_bytes()),
            },
            None => hasher.0.update(b"{}"),
        }
        let digest = hex(&hasher.0.finalize());
        Binding { method: self.method.to_owned(), name: self.name.clone(), digest, principal: self.principal.clone() }
    }
}

/// Feeds what is written into a SHA-256.
struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `v` as compact JSON with every object's keys sorted, so equal arguments digest
/// equally whatever their order. The bytes are those of `serde_json::to_vec` on a copy of `v`
/// with sorted keys, written without building that copy: every `tools/call`,
/// `prompts/get` and `resources/read` on the modern wire computes its binding.
fn write_canonical(out: &mut HashWriter, v: &Value) {
    use std::io::Write;
    // Writes into a hasher cannot fail, and serializing a string, number, bool or null
    // cannot either, so the results below carry no information.
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let _ = out.write_all(b"{");
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    let _ = out.write_all(b",");
                }
                let _ = serde_json::to_writer(&mut *out, k);
                let _ = out.write_all(b":");
                write_canonical(out, v);
            }
            let _ = out.write_all(b"}");
        }
        Value::Array(a) => {
            let _ = out.write_all(b"[");
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    let _ = out.write_all(b",");
                }
                write_canonical(out, v);
            }
            let _ = out.write_all(b"]");
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

/// Lower-case hex of `bytes`, in one allocation.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// What a state carries between rounds.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Carried {
    /// Answers received in earlier rounds, by input key.
    pub answers: Map<String, Value>,
    /// The handler's own data ([`RequestContext::set_request_state_data`](crate::RequestContext::set_request_state_data)).
    pub data: Option<Value>,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    m: String,
    n: String,
    a: String,
    p: Option<String>,
    exp: u64,
    #[serde(default)]
    ans: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d: Option<Value>,
}

impl StateCodec {
    /// A codec with `key` (the per-process random key when `None`) and states valid for `ttl`.
    pub(crate) fn new(key: Option<Vec<u8>>, ttl: Duration) -> Self {
        StateCodec { key: key.unwrap_or_else(|| process_key().to_vec()), previous: Vec::new(), ttl }
    }

    /// This codec also opening states sealed with `keys` (older keys of a rotation).
    pub(crate) fn with_previous(mut self, keys: Vec<Vec<u8>>) -> Self {
        self.previous = keys;
        self
    }

    fn mac(&self) -> Hmac<Sha256> {
        mac_of(&self.key)
    }

    /// Seals `carried` for a request bound to `binding`, valid until `now + ttl`.
    pub(crate) fn seal(&self, binding: &Binding, carried: &Carried, now: SystemTime) -> String {
        let exp = (now + self.ttl).duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        let payload = Payload {
            m: binding.method.clone(),
            n: binding.name.clone(),
            a: binding.digest.clone(),
            p: binding.principal.clone(),
            exp,
            ans: carried.answers.clone(),
            d: carried.data.clone(),
        };
        // A struct of strings, numbers and JSON values always serializes.
        let json = serde_json::to_vec(&payload).unwrap_or_default();
        let body = format!("{VERSION}.{}", URL_SAFE_NO_PAD.encode(json));
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{body}.{tag}")
    }

    /// Checks `token` and returns what it carries.
    ///
    /// Errors: `-32602` (and the handler never runs) when the token is malformed, its tag does
    /// not verify (tampered, or sealed with another key), it has expired, or it was issued for
    /// another method, primitive, argument set or principal.
    pub(crate) fn open(&self, token: &str, binding: &Binding, now: SystemTime) -> Result<Carried, McpError> {
        let invalid = |why: &str| {
            McpError::invalid_params(format!(
                "requestState rejected: {why}; retry the request without requestState and inputResponses"
            ))
        };
        let (body, tag) = token.rsplit_once('.').ok_or_else(|| invalid("it is not a state this server issued"))?;
        let payload_b64 = body
            .strip_prefix(VERSION)
            .and_then(|r| r.strip_prefix('.'))
            .ok_or_else(|| invalid("unknown state format"))?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| invalid("its signature is not base64url"))?;
        let verifies = |key: &[u8]| {
            let mut mac = mac_of(key);
            mac.update(body.as_bytes());
            mac.verify_slice(&tag).is_ok()
        };
        if !verifies(&self.key) && !self.previous.iter().any(|k| verifies(k)) {
            return Err(invalid("its signature does not verify (tampered or from another server)"));
        }
        let json = URL_SAFE_NO_PAD.decode(payload_b64).map_err(|_| invalid("its payload is not base64url"))?;
        let p: Payload = serde_json::from_slice(&json).map_err(|_| invalid("its payload is malformed"))?;
        let now_s = now.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        if now_s >= p.exp {
            return Err(invalid("it has expired"));
        }
        if p.m != binding.method || p.n != binding.name {
            return Err(invalid(&format!("it was issued for {} `{}`", p.m, p.n)));
        }
        if p.a != binding.digest {
            return Err(invalid("it was issued for different arguments"));
        }
        if p.p != binding.principal {
            return Err(invalid("it was issued to another principal"));
        }
        Ok(Carried { answers: p.ans, data: p.d })
    }
}

fn mac_of(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length (longer ones are hashed), so this cannot fail.
    <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!("HMAC accepts any key"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding(name: &str, args: Value, principal: Option<&str>) -> Binding {
        let params = json!({ "name": name, "arguments": args });
        Binding::of("tools/call", params.as_object().expect("object"), principal)
    }

    fn codec() -> StateCodec {
        StateCodec::new(Some(vec![7u8; 32]), Duration::from_secs(60))
    }

    /// A name the parser kept apart binds as the same name in `params`, and not as another.
    #[test]
    fn a_name_kept_apart_binds_as_in_params() {
        let args: Arc<str> = Arc::from(r#"{"a":1}"#);
        let in_params = binding("t", json!({"a": 1}), Some("p"));
        let apart = TakenOut { arguments: Some(args), name: Some("t".into()) };
        assert_eq!(BindingInput::of("tools/call", &Map::new(), &apart, Some("p")).bind(), in_params);
        let other = binding("u", json!({"a": 1}), Some("p"));
        assert_ne!(BindingInput::of("tools/call", &Map::new(), &apart, Some("p")).bind(), other);
    }

    fn carried() -> Carried {
        let mut answers = Map::new();
        answers.insert("user_name".into(), json!({"action":"accept","content":{"name":"Ada"}}));
        Carried { answers, data: Some(json!({"step": 2})) }
    }

    #[test]
    fn round_trips_answers_and_data() {
        let now = SystemTime::now();
        let b = binding("ask_name", json!({"x": 1, "y": [1, 2]}), Some("alice"));
        let token = codec().seal(&b, &carried(), now);
        assert!(token.starts_with("v1."));
        assert_eq!(codec().open(&token, &b, now).expect("valid"), carried());
    }

    /// The digest of the sorted copy's compact JSON: how bindings were digested before
    /// `write_canonical` streamed them, so states sealed by either agree.
    fn digest_of_the_sorted_copy(args: &Value) -> String {
        fn sorted(v: &Value) -> Value {
            match v {
                Value::Object(m) => {
                    let mut keys: Vec<&String> = m.keys().collect();
                    keys.sort();
                    Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
                }
                Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
                other => other.clone(),
            }
        }
        let copy = serde_json::to_vec(&sorted(args)).expect("serializes");
        Sha256::digest(&copy).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The digest is that of the sorted copy's compact JSON (the format of states sealed
    /// before the digest was streamed), for nested objects, arrays, escapes and numbers.
    #[test]
    fn the_streamed_digest_is_the_digest_of_the_sorted_copy() {
        for args in [
            json!({}),
            json!({"z": 1, "a": [3, {"y": null, "b": true}], "m": "quote \" and \u{00e9} \n"}),
            json!({"n": -1.5e300, "big": 18446744073709551615u64, "neg": -9223372036854775808i64, "s": ""}),
            json!({"nested": {"d": {"c": {"b": {"a": []}}}}, "é": "ü", "A": "upper first"}),
        ] {
            assert_eq!(binding("t", args.clone(), None).digest, digest_of_the_sorted_copy(&args), "{args}");
        }
    }

    /// A small deterministic generator (xorshift64*) of JSON values that lean on what
    /// canonical writing can get wrong: keys needing escapes (quotes, backslashes, control
    /// characters, U+2028, astral and combining characters), keys that sort differently by
    /// bytes than by UTF-16 or case, integer and float extremes, deep nesting and empty
    /// containers, with keys inserted in random order.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn string(&mut self) -> String {
            const PIECES: &[&str] = &[
                "",
                "a",
                "A",
                "b",
                "Z",
                "_",
                "\"",
                "\\",
                "/",
                "\n",
                "\r",
                "\t",
                "\u{0}",
                "\u{1f}",
                "\u{7f}",
                "\u{80}",
                "é",
                "e\u{301}",
                "\u{2028}",
                "\u{2029}",
                "\u{feff}",
                "\u{ffff}",
                "\u{10000}",
                "😀",
                "\u{10ffff}",
                "中",
                "key",
                "key2",
                "10",
                "9",
                "-",
                " ",
            ];
            (0..self.below(4)).map(|_| PIECES[self.below(PIECES.len() as u64) as usize]).collect()
        }

        fn number(&mut self) -> Value {
            match self.below(8) {
                0 => json!(u64::MAX - self.below(3)),
                1 => json!(i64::MIN + self.below(3) as i64),
                2 => json!(self.next() as i64),
                3 => json!(self.next()),
                4 => {
                    // Any bit pattern: a NaN or infinity is no JSON number, so it becomes 0.5.
                    let f = f64::from_bits(self.next());
                    json!(if f.is_finite() { f } else { 0.5 })
                }
                5 => json!(
                    [0.0, -0.0, 1e-320, f64::MIN_POSITIVE, f64::MAX, f64::MIN, 0.1, 1e21, 1.5e300]
                        [self.below(9) as usize]
                ),
                6 => json!((self.next() as f64) / 7.0),
                _ => json!(self.below(100)),
            }
        }

        fn value(&mut self, depth: u32) -> Value {
            match self.below(if depth == 0 { 4 } else { 7 }) {
                0 => Value::Null,
                1 => Value::Bool(self.below(2) == 0),
                2 => self.number(),
                3 => Value::String(self.string()),
                4 => Value::Array((0..self.below(4)).map(|_| self.value(depth - 1)).collect()),
                _ => {
                    let mut m = Map::new();
                    for _ in 0..self.below(6) {
                        let k = self.string();
                        m.insert(k, self.value(depth - 1));
                    }
                    Value::Object(m)
                }
            }
        }
    }

    /// Thousands of generated values (objects, and any other JSON value as `arguments`)
    /// digest exactly as their sorted copies do.
    #[test]
    fn generated_values_digest_as_their_sorted_copies() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        for round in 0..4000 {
            let args = match g.value(5) {
                v @ Value::Object(_) => v,
                // Half of the rounds wrap non-objects, so objects dominate as they do on the wire.
                v if round % 2 == 0 => json!({ "v": v }),
                v => v,
            };
            if args.is_null() {
                continue;
            }
            assert_eq!(
                binding("t", args.clone(), None).digest,
                digest_of_the_sorted_copy(&args),
                "round {round}: {args}"
            );
        }
    }

    #[test]
    fn argument_order_does_not_matter() {
        let a = binding("t", json!({"x": 1, "y": {"b": 1, "a": 2}}), None);
        let b = binding("t", json!({"y": {"a": 2, "b": 1}, "x": 1}), None);
        assert_eq!(a, b);
        let null_args = Binding::of("tools/call", json!({"name":"t","arguments":null}).as_object().expect("o"), None);
        assert_eq!(null_args, binding("t", json!({}), None));
    }

    /// A `tools/call`'s arguments taken out as text bind as the same arguments in `params` do,
    /// whatever their whitespace and order.
    #[test]
    fn arguments_as_text_bind_as_the_map_does() {
        let mut g = Gen(0x2545_f491_4f6c_dd1d);
        let name = json!({"name": "t"});
        let params = name.as_object().expect("object");
        for round in 0..500 {
            let args = match g.value(4) {
                v @ Value::Object(_) => v,
                v => json!({ "v": v, "w": [v] }),
            };
            let pretty = serde_json::to_string_pretty(&args).expect("serializes");
            let text = Arc::<str>::from(pretty);
            let taken = TakenOut { arguments: Some(text), name: None };
            let from_text = BindingInput::of("tools/call", params, &taken, Some("p")).bind();
            assert_eq!(from_text, binding("t", args.clone(), Some("p")), "round {round}: {args}");
        }
    }

    #[test]
    fn a_rotated_out_key_still_opens_its_states() {
        let now = SystemTime::now();
        let b = binding("t", json!({"x": 1}), None);
        let old = StateCodec::new(Some(vec![3u8; 32]), Duration::from_secs(60));
        let new = StateCodec::new(Some(vec![4u8; 32]), Duration::from_secs(60));
        let rotating = new.clone().with_previous(vec![vec![3u8; 32]]);
        let sealed_old = old.seal(&b, &carried(), now);
        assert!(new.open(&sealed_old, &b, now).is_err(), "the new key alone refuses old states");
        assert_eq!(rotating.open(&sealed_old, &b, now).expect("a previous key opens it"), carried());
        let sealed_new = rotating.seal(&b, &carried(), now);
        assert!(old.open(&sealed_new, &b, now).is_err(), "sealed with the current key, not a previous one");
        assert_eq!(new.open(&sealed_new, &b, now).expect("the current key"), carried());
        // A previous key does not loosen the other checks.
        let other = binding("t", json!({"x": 2}), None);
        assert!(rotating.open(&sealed_old, &other, now).is_err());
    }

    #[test]
    fn tampering_is_rejected() {
        let now = SystemTime::now();
        let b = binding("t", json!({}), None);
        let token = codec().seal(&b, &carried(), now);
        for bad in [format!("{token}-TAMPERED"), token.replacen("v1.", "v1.e", 1), "garbage".to_owned(), String::new()]
        {
            let e = codec().open(&bad, &b, now).expect_err("tampered");
            assert_eq!(e.code(), crate::ErrorCode::INVALID_PARAMS, "{bad}");
        }
        let other_key = StateCodec::new(Some(vec![8u8; 32]), Duration::from_secs(60));
        assert!(other_key.open(&token, &b, now).is_err());
    }

    #[test]
    fn expired_states_are_rejected() {
        let then = SystemTime::now();
        let b = binding("t", json!({}), None);
        let token = codec().seal(&b, &carried(), then);
        let e = codec().open(&token, &b, then + Duration::from_secs(61)).expect_err("expired");
        assert!(e.message().contains("expired"));
    }

    #[test]
    fn states_are_bound_to_tool_arguments_method_and_principal() {
        let now = SystemTime::now();
        let b = binding("t", json!({"n": 1}), Some("alice"));
        let token = codec().seal(&b, &carried(), now);
        assert!(codec().open(&token, &binding("other", json!({"n": 1}), Some("alice")), now).is_err());
        assert!(codec().open(&token, &binding("t", json!({"n": 2}), Some("alice")), now).is_err());
        assert!(codec().open(&token, &binding("t", json!({"n": 1}), Some("bob")), now).is_err());
        assert!(codec().open(&token, &binding("t", json!({"n": 1}), None), now).is_err());
        let mut prompt = b.clone();
        prompt.method = "prompts/get".into();
        assert!(codec().open(&token, &prompt, now).is_err());
    }

    #[test]
    fn the_default_key_is_random_but_stable_in_a_process() {
        let a = StateCodec::new(None, Duration::from_secs(60));
        let b = StateCodec::new(None, Duration::from_secs(60));
        assert_eq!(a.key, b.key);
        assert_eq!(a.key.len(), 32);
        assert_ne!(a.key, vec![0u8; 32]);
    }
}
