//! What the targets that drive `examples/everything` share: that example's modules, compiled
//! in so that their registrations are in the binary (paths relative to `fuzz_targets/`), one
//! server and one paused runtime per process.

#[path = "../../examples/everything/prompts.rs"]
#[allow(dead_code)]
mod prompts;
#[path = "../../examples/everything/resources.rs"]
#[allow(dead_code)]
mod resources;
#[path = "../../examples/everything/tools.rs"]
#[allow(dead_code)]
mod tools;

use std::sync::OnceLock;
use switchyard::Server;

/// The server of everything the example registers, built once.
pub fn server() -> Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| Server::builder("fuzz-everything", "0").build().expect("the everything table builds")).clone()
}

/// One runtime for every input (making one per input would cost more than most inputs).
/// Paused time: sleeps inside tools, timers and grace periods pass at once.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime")
    })
}
