//! `requestState` verification
//! ([MRTR server requirements](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#server-requirements-basic-workflow))
//! on arbitrary input: never panics, and a state the server did not issue unchanged is always
//! rejected with `-32602`.
//!
//! Input layout: the first byte picks the mode, the rest is split at the first NUL into a
//! state part and an `inputResponses` part (parsed as JSON when it parses, else sent as a
//! string). Even modes send the state part as the `requestState` string; odd modes take a
//! valid state and overwrite bytes of it at positions and with values read from the state
//! part, so every single- and multi-byte tamper of a genuine token gets tried.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::fuzzing::{seal_request_state, verify_request_state};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let (state_part, responses_part) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let responses = responses_part.map(|r| {
        serde_json::from_slice(r).unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(r).into_owned()))
    });
    let valid = seal_request_state("fuzz");
    let token = if mode & 1 == 0 {
        String::from_utf8_lossy(state_part).into_owned()
    } else {
        let mut bytes = valid.clone().into_bytes();
        for pair in state_part.chunks_exact(2) {
            let at = usize::from(pair[0]) * 7 % bytes.len();
            bytes[at] = pair[1];
        }
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let outcome = verify_request_state("fuzz", serde_json::Value::String(token.clone()), responses.clone());
    let responses_ok = matches!(responses, None | Some(serde_json::Value::Null) | Some(serde_json::Value::Object(_)));
    if token == valid && responses_ok {
        let answers = outcome.expect("the genuine state verifies");
        assert!(answers.contains_key("confirm"), "the carried answer is lost: {answers:?}");
    } else {
        let e = outcome.expect_err("a state the server did not issue, or bad inputResponses, was accepted");
        assert_eq!(e.code.0, -32602, "{e:?}");
    }
});
