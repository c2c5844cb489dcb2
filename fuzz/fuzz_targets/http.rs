//! Arbitrary methods, header sets and bodies through the Streamable HTTP router of
//! `examples/everything` (its modules are compiled in here), in process: never panics, never
//! hangs, every JSON body and SSE frame a well-formed JSON-RPC message. Legacy sessions that an
//! input creates stay in the router for later inputs, as on a long-running server.
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
use switchyard::fuzzing::HttpTarget;

fn target() -> &'static HttpTarget {
    static TARGET: OnceLock<HttpTarget> = OnceLock::new();
    TARGET.get_or_init(|| {
        let server = Server::builder("fuzz-everything", "0").build().expect("the everything table builds");
        HttpTarget::new(server)
    })
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
    if let Err(e) = runtime().block_on(target().exchange(data)) {
        panic!("{e}");
    }
});
