//! Arbitrary methods, header sets and bodies through the Streamable HTTP router of
//! `examples/everything` (its modules are compiled in here), in process: never panics, never
//! hangs, every JSON body and SSE frame a well-formed JSON-RPC message. Legacy sessions that an
//! input creates stay in the router for later inputs, as on a long-running server.
#![no_main]

#[path = "common.rs"]
mod common;

use common::{runtime, server};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use switchyard::fuzzing::HttpTarget;

fn target() -> &'static HttpTarget {
    static TARGET: OnceLock<HttpTarget> = OnceLock::new();
    TARGET.get_or_init(|| HttpTarget::new(server()))
}

fuzz_target!(|data: &[u8]| {
    if let Err(e) = runtime().block_on(target().exchange(data)) {
        panic!("{e}");
    }
});
