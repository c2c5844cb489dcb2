//! Arbitrary bytes on the stdio transport of `examples/everything` (its modules are compiled in
//! here): partial, empty, overlong and non-UTF-8 lines, several messages per input, EOF at any
//! point. Never panics, never hangs past EOF, every line written a well-formed JSON-RPC message.
#![no_main]

#[path = "common.rs"]
mod common;

use common::{runtime, server};
use libfuzzer_sys::fuzz_target;
use switchyard::fuzzing::{check_server_message, stdio_exchange};

fuzz_target!(|data: &[u8]| {
    let lines = runtime().block_on(stdio_exchange(server(), data)).expect("in-memory I/O");
    for line in lines {
        if let Err(e) = check_server_message(&line) {
            panic!("malformed output ({e}): {}", String::from_utf8_lossy(&line));
        }
    }
});
