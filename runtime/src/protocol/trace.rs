//! W3C trace context carried by a request: `traceparent`, `tracestate` and `baggage` in
//! `params._meta` ([SEP-414](https://modelcontextprotocol.io/seps/414-request-meta)), or in the
//! HTTP headers of the same names where `_meta` has none.
//!
//! Values are validated as the W3C specifications describe them
//! ([Trace Context](https://www.w3.org/TR/trace-context/),
//! [Baggage](https://www.w3.org/TR/baggage/)). A value that does not validate, or is longer than
//! the limits below, is dropped with a `debug` event: trace context never fails a request.

use serde_json::{Map, Value};

/// `params._meta` key of the W3C `traceparent` (SEP-414).
pub const META_TRACEPARENT: &str = "traceparent";
/// `params._meta` key of the W3C `tracestate` (SEP-414).
pub const META_TRACESTATE: &str = "tracestate";
/// `params._meta` key of the W3C `baggage` (SEP-414).
pub const META_BAGGAGE: &str = "baggage";

/// Longest `tracestate` kept, in bytes: the 512 characters every vendor must propagate.
pub const MAX_TRACESTATE_BYTES: usize = 512;
/// Most `tracestate` list members (W3C Trace Context §3.3.1).
pub const MAX_TRACESTATE_MEMBERS: usize = 32;
/// Longest `baggage` kept, in bytes (W3C Baggage §3.3.1).
pub const MAX_BAGGAGE_BYTES: usize = 8192;
/// Most `baggage` list members (W3C Baggage §3.3.1).
pub const MAX_BAGGAGE_MEMBERS: usize = 180;

/// The trace context of one request, validated.
///
/// Shapes: `traceparent` is `VERSION-TRACEID-PARENTID-FLAGS` (`00-` + 32 + `-` + 16 + `-` + 2
/// lowercase hex digits; only these 55 characters are kept when a later version appends more);
/// `tracestate` and `baggage` are kept as sent when they validate.
///
/// Cheap to clone (one `Arc`), and one word wide: a request's parts carry an
/// `Option<TraceContext>` whether or not the caller traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    inner: std::sync::Arc<Values>,
}

#[derive(Debug, PartialEq, Eq)]
struct Values {
    traceparent: String,
    tracestate: Option<String>,
    baggage: Option<String>,
}

impl TraceContext {
    /// A context from the three values; `None` unless `traceparent` is valid. An invalid
    /// `tracestate` or `baggage` is dropped alone.
    pub fn parse(traceparent: &str, tracestate: Option<&str>, baggage: Option<&str>) -> Option<TraceContext> {
        let Some(traceparent) = valid_traceparent(traceparent) else {
            tracing::debug!(traceparent, "dropping a traceparent that is not W3C Trace Context");
            return None;
        };
        let tracestate = tracestate.filter(|s| {
            let ok = valid_tracestate(s);
            if !ok {
                tracing::debug!(tracestate = %s, "dropping a tracestate that is not W3C Trace Context");
            }
            ok
        });
        let baggage = baggage.filter(|b| {
            let ok = valid_baggage(b);
            if !ok {
                tracing::debug!(baggage_bytes = b.len(), "dropping a baggage value that is not W3C Baggage");
            }
            ok
        });
        let values = Values {
            traceparent: traceparent.to_owned(),
            tracestate: tracestate.map(str::to_owned),
            baggage: baggage.map(str::to_owned),
        };
        Some(TraceContext { inner: std::sync::Arc::new(values) })
    }

    /// The context in a request's `params._meta`, if it carries a valid `traceparent` string.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<TraceContext> {
        let traceparent = meta.get(META_TRACEPARENT)?;
        let Some(traceparent) = traceparent.as_str() else {
            tracing::debug!("dropping a traceparent that is not a string");
            return None;
        };
        let text = |key| meta.get(key).and_then(Value::as_str);
        TraceContext::parse(traceparent, text(META_TRACESTATE), text(META_BAGGAGE))
    }

    /// The `traceparent` value (55 characters, version `00` layout).
    pub fn traceparent(&self) -> &str {
        &self.inner.traceparent
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.inner.traceparent[3..35]
    }

    /// The caller's span id (the remote parent of this request's span): 16 lowercase hex digits.
    pub fn parent_id(&self) -> &str {
        &self.inner.traceparent[36..52]
    }

    /// The trace flags byte (bit 0: sampled).
    pub fn flags(&self) -> u8 {
        u8::from_str_radix(&self.inner.traceparent[53..55], 16).unwrap_or(0)
    }

    /// True when the caller sampled the trace (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags() & 1 == 1
    }

    /// The vendor-specific `tracestate`, when the caller sent a valid one.
    pub fn tracestate(&self) -> Option<&str> {
        self.inner.tracestate.as_deref()
    }

    /// The W3C `baggage`, when the caller sent a valid one.
    pub fn baggage(&self) -> Option<&str> {
        self.inner.baggage.as_deref()
    }

    /// The three values as `params._meta` entries (SEP-414), e.g. to pass the context on in an
    /// outgoing request.
    pub fn to_meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(META_TRACEPARENT.to_owned(), Value::String(self.inner.traceparent.clone()));
        if let Some(s) = &self.inner.tracestate {
            meta.insert(META_TRACESTATE.to_owned(), Value::String(s.clone()));
        }
        if let Some(b) = &self.inner.baggage {
            meta.insert(META_BAGGAGE.to_owned(), Value::String(b.clone()));
        }
        meta
    }
}

fn lower_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The first 55 characters of a valid `traceparent` (W3C Trace Context §3.2).
fn valid_traceparent(value: &str) -> Option<&str> {
    let head = value.get(..55)?;
    let version = &head[..2];
    if !lower_hex(version) || version == "ff" {
        return None;
    }
    // Version 00 is exactly 55 characters; a later version may append `-...` fields.
    let rest_ok = match (version, &value[55..]) {
        ("00", rest) => rest.is_empty(),
        (_, rest) => rest.is_empty() || rest.starts_with('-'),
    };
    let dashes = [2, 35, 52].iter().all(|&i| head.as_bytes()[i] == b'-');
    let (trace_id, parent_id, flags) = (&head[3..35], &head[36..52], &head[53..55]);
    let ids_ok = [trace_id, parent_id, flags].iter().all(|s| lower_hex(s))
        && trace_id.bytes().any(|b| b != b'0')
        && parent_id.bytes().any(|b| b != b'0');
    (rest_ok && dashes && ids_ok).then_some(head)
}

/// A `tracestate` list (W3C Trace Context §3.3): at most 32 `key=value` members, 512 bytes.
fn valid_tracestate(value: &str) -> bool {
    if value.len() > MAX_TRACESTATE_BYTES {
        return false;
    }
    let members: Vec<&str> = value.split(',').map(|m| m.trim_matches([' ', '\t'])).filter(|m| !m.is_empty()).collect();
    if members.is_empty() || members.len() > MAX_TRACESTATE_MEMBERS {
        return false;
    }
    members.iter().all(|m| {
        let Some((key, val)) = m.split_once('=') else { return false };
        let key_ok = !key.is_empty()
            && key.len() <= 256
            && key.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/@".contains(&b));
        let val_ok = !val.is_empty()
            && val.len() <= 256
            && !val.ends_with(' ')
            && val.bytes().all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
        key_ok && val_ok
    })
}

/// A `baggage` list (W3C Baggage §3.3): at most 180 members and 8192 bytes, each member a
/// token key, `=`, and a value of baggage octets (percent-encoding allowed), optionally followed
/// by `;` properties.
fn valid_baggage(value: &str) -> bool {
    if value.len() > MAX_BAGGAGE_BYTES {
        return false;
    }
    let members: Vec<&str> = value.split(',').collect();
    if members.len() > MAX_BAGGAGE_MEMBERS {
        return false;
    }
    let token =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    let octets = |s: &str| s.bytes().all(|b| matches!(b, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e));
    members.iter().all(|m| {
        let entry = m.split(';').next().unwrap_or_default().trim_matches([' ', '\t']);
        match entry.split_once('=') {
            Some((key, val)) => token(key.trim_end_matches([' ', '\t'])) && octets(val.trim_start_matches([' ', '\t'])),
            None => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn an_optional_context_is_one_word() {
        assert_eq!(std::mem::size_of::<Option<TraceContext>>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn a_valid_traceparent_gives_its_ids_and_flags() {
        let t = TraceContext::parse(VALID, None, None).expect("valid");
        assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_id(), "00f067aa0ba902b7");
        assert!(t.sampled());
        let unsampled = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", None, None);
        assert!(!unsampled.expect("valid").sampled());
    }

    #[test]
    fn a_later_version_keeps_its_first_four_fields() {
        let t = TraceContext::parse(&format!("01{}-what-comes-next", &VALID[2..]), None, None).expect("valid");
        assert_eq!(t.traceparent(), format!("01{}", &VALID[2..]));
        assert!(TraceContext::parse(&format!("01{}x", &VALID[2..]), None, None).is_none(), "no dash after");
    }

    #[test]
    fn malformed_traceparents_are_dropped() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01é",
        ] {
            assert!(TraceContext::parse(bad, None, None).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn an_invalid_tracestate_or_baggage_is_dropped_alone() {
        let t = TraceContext::parse(VALID, Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"), Some("userId=alice,x=1;p"));
        let t = t.expect("valid");
        assert_eq!(t.tracestate(), Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"));
        assert_eq!(t.baggage(), Some("userId=alice,x=1;p"));
        let long = "a=".to_owned() + &"b".repeat(MAX_TRACESTATE_BYTES);
        let many = (0..=MAX_TRACESTATE_MEMBERS).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
        for bad in ["no-equals", "UPPER=v", "k=v,=v", long.as_str(), many.as_str(), "k=a,b=c=d"] {
            let t = TraceContext::parse(VALID, Some(bad), Some("a=b")).expect("the traceparent stands");
            assert_eq!((t.tracestate(), t.baggage()), (None, Some("a=b")), "{bad:?}");
        }
        let huge = "k=".to_owned() + &"v".repeat(MAX_BAGGAGE_BYTES);
        for bad in ["no-equals", "a b=c", "k=v\"q", huge.as_str()] {
            let t = TraceContext::parse(VALID, Some("a=b"), Some(bad)).expect("the traceparent stands");
            assert_eq!((t.tracestate(), t.baggage()), (Some("a=b"), None), "{bad:?}");
        }
    }

    #[test]
    fn the_context_is_read_from_meta_and_written_back() {
        let meta = json!({ "traceparent": VALID, "tracestate": "a=b", "baggage": "k=v", "progressToken": 1 });
        let meta = meta.as_object().expect("object");
        let t = TraceContext::from_meta(meta).expect("valid");
        assert_eq!(Value::Object(t.to_meta()), json!({ "traceparent": VALID, "tracestate": "a=b", "baggage": "k=v" }));
        assert!(TraceContext::from_meta(json!({ "traceparent": 7 }).as_object().expect("object")).is_none());
        assert!(TraceContext::from_meta(json!({ "tracestate": "a=b" }).as_object().expect("object")).is_none());
    }
}
