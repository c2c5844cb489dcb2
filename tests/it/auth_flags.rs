//! The `--auth-*` flags of a served binary when protection was asked for but cannot be set up:
//! the server stops before it listens (exit 2) rather than serve unprotected.

use crate::common::example;
use std::process::{Command, Stdio};

#[test]
fn a_dpop_nonce_secret_too_short_stops_the_server_before_it_listens() {
    let out = Command::new(example("quickstart"))
        .args(["--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:9", "--auth-dpop", "required"])
        .args(["--auth-resource", "http://127.0.0.1:3000/mcp"])
        .env("SWITCHYARD_AUTH_DPOP_NONCE_SECRET", "short")
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("32"), "says how long the secret must be: {stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");
}
