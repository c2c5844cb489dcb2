//! The JSON-RPC envelope decoder on arbitrary bytes: never panics, and every answer it gives
//! is a well-formed JSON-RPC error response.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchyard::fuzzing::{check_server_message, decode_envelope};

fuzz_target!(|data: &[u8]| {
    if let Some(answer) = decode_envelope(data) {
        let line = serde_json::to_vec(&answer).expect("a Value serializes");
        if let Err(e) = check_server_message(&line) {
            panic!("malformed answer ({e}): {}", String::from_utf8_lossy(&line));
        }
    }
});
