//! Params decoding through the dispatch table of `examples/everything` (its modules are
//! compiled in here), over the real stdio transport: never panics, never hangs past EOF, and
//! every line written is a well-formed JSON-RPC message.
#![no_main]

#[path = "../../examples/everything/prompts.rs"]
#[allow(dead_code)]
mod prompts;
#[path = "../../examples/everything/resources.rs"]
#[allow(dead_code)]
mod resources;
#[path = "../../examples/everything/tools.rs"]
#[allow(dead_code)]
mod tools;

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use switchyard::Server;
use switchyard::fuzzing::{check_server_message, dispatch_input, stdio_exchange};

fn server() -> Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| Server::builder("fuzz-everything", "0").build().expect("the everything table builds")).clone()
}

/// One runtime for every input (making one per input would cost more than most inputs).
/// Paused time: sleeps inside tools, timers and grace periods pass at once.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let input = dispatch_input(data);
    let lines = runtime().block_on(stdio_exchange(server(), &input)).expect("in-memory I/O");
    for line in lines {
        if let Err(e) = check_server_message(&line) {
            panic!("malformed output ({e}): {}", String::from_utf8_lossy(&line));
        }
    }
});
