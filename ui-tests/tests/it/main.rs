//! The macros' tests as one binary: the trybuild pass and fail cases (`ui`), and registrations
//! served end to end by a real server (`roundtrip`).

mod roundtrip;
mod ui;
