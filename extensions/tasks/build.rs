//! `cfg(svc_pg)` for this package's tests: on when the PostgreSQL tests can run (the `postgres`
//! feature and a database in `SWITCHYARD_TEST_PG`), so that without them those tests are
//! reported `ignored`, with what they need, instead of passing after printing "skipped". Under
//! CI (`CI` set, as `.ci/run` runs) it is always on: a missing database or feature is then a
//! failure. The library itself reads no `cfg` from here; for a user of the crate this script
//! only prints.

fn main() {
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-env-changed=SWITCHYARD_TEST_PG");
    println!("cargo:rustc-check-cfg=cfg(svc_pg)");
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    let database = std::env::var("SWITCHYARD_TEST_PG").is_ok_and(|v| !v.trim().is_empty());
    let feature = std::env::var_os("CARGO_FEATURE_POSTGRES").is_some();
    if ci || (database && feature) {
        println!("cargo:rustc-cfg=svc_pg");
    }
}
