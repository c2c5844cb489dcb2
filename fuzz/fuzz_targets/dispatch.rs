//! Params decoding through the dispatch table of `examples/everything` (its modules are
//! compiled in here), over the real stdio transport: never panics, never hangs past EOF, and
//! every line written is a well-formed JSON-RPC message.
#![no_main]

#[path = "common.rs"]
mod common;

use common::{runtime, server};
use libfuzzer_sys::fuzz_target;
use switchyard::fuzzing::{check_server_message, dispatch_input, stdio_exchange};

fuzz_target!(|data: &[u8]| {
    let input = dispatch_input(data);
    let lines = runtime().block_on(stdio_exchange(server(), &input)).expect("in-memory I/O");
    for line in lines {
        if let Err(e) = check_server_message(&line) {
            panic!("malformed output ({e}): {}", String::from_utf8_lossy(&line));
        }
    }
});
