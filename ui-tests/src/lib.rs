//! Compile tests of the Switchyard attribute macros; the library itself is empty.
//!
//! `tests/ui.rs` compiles every `tests/pass/*.rs` (each must build and run) and every
//! `tests/fail/*.rs` (each must fail with exactly the diagnostics of its `.stderr` snapshot).
//! Regenerate snapshots with `TRYBUILD=overwrite cargo test -p switchyard-ui-tests`, then read
//! every changed `.stderr` before committing: it is the error message our users will see.
