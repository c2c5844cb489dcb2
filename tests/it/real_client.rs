//! An official MCP client (the TypeScript SDK, from the npm registry) drives the `everything`
//! example over stdio: list tools, call tools, read resources, get a prompt.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_typescript_sdk_client_drives_everything_over_stdio() {
    let server = common::example("everything");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("client").join("run.sh");
    let out = Command::new("bash").arg(script).arg(&server).arg("--stdio").output().expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed\nstdout: {stdout}\nstderr: {stderr}");
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(summary["server"]["name"], "switchyard-everything");
    assert!(summary["tools"].as_u64().is_some_and(|n| n >= 10));
}
