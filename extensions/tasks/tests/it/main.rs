//! The Tasks extension's integration tests, in one binary so the crate and its dependencies are
//! linked once. Run one module with a filter: `cargo test -p switchyard-mcp-tasks --test it in_process::`.
//!
//! All modules register into one `inventory`: each module's tools and filters are in a group
//! named after it, and its servers select that group alone (installing the extension adds the
//! extension's own), so no module's filters run in another's servers.

mod across_instances;
mod in_process;
mod sqlite_store;
mod store_contract;
