//! MCP Apps, end to end with real parts: the `apps` example (a dice view linked to `roll_dice`)
//! over Streamable HTTP, played by a host built from the official SDKs (tests/apps/host.mjs:
//! the TypeScript MCP SDK client, the ext-apps AppBridge, the view in a sandboxed iframe of
//! headless Chromium). The view is shown with the model's call, its Roll button is clicked,
//! and what it shows must be what the tool returned. A screenshot goes to
//! `target/artifacts/apps-<protocol>.png`.
//!
//! Two hosts: the v2 TypeScript client with ext-apps 2.x on 2026-07-28 (capabilities in each
//! request's `_meta`), and the v1 SDK with ext-apps 1.x in a 2025-11-25 session (capabilities
//! in `initialize`).

use crate::common::{self, HttpServer};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a harness script may run: an install of the pinned packages and the browser, then
/// the run itself (about 3 s).
const SCRIPT_LIMIT: Duration = Duration::from_secs(300);

const NEEDS: &str =
    "install Node.js with npm, then tests/apps/install.sh (the pinned npm packages and Debian's chromium)";

fn harness() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("apps")
}

/// Whether npm (and a Chromium, with `browser`) are there; says what is missing (a failure
/// under CI).
fn tools_present(test: &str, browser: bool) -> bool {
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    let chromium = std::env::var_os("SWITCHYARD_CHROMIUM").is_some() || on_path("chromium");
    let missing: Vec<&str> = [("npm", on_path("npm")), ("chromium", chromium || !browser)]
        .into_iter()
        .filter_map(|(name, present)| (!present).then_some(name))
        .collect();
    if missing.is_empty() {
        return true;
    }
    common::skip(test, &format!("{} not found", missing.join(" and ")), NEEDS);
    false
}

/// Runs `tests/apps/NAME ARGS...` to its end: its stdout, or a panic with its stderr.
fn script(name: &str, args: &[&str]) -> String {
    let run = common::run_script(&harness().join(name), args, SCRIPT_LIMIT);
    let (stdout, stderr) = (run.stdout, run.stderr);
    match run.status {
        Some(s) if s.success() => stdout,
        Some(s) => panic!("tests/apps/{name} failed ({s})\nstdout: {stdout}\nstderr:\n{stderr}"),
        None => panic!("tests/apps/{name} ran past {SCRIPT_LIMIT:?}\nstderr:\n{stderr}"),
    }
}

/// The total the view shows (its text) and the one the tool returned (its structured content)
/// must be the same, and so must the faces.
fn assert_shows(shown: &Value, structured: &Value, what: &str, summary: &Value) {
    let total = structured["total"].as_u64().unwrap_or_else(|| panic!("{what}: a structured total: {summary:#}"));
    assert_eq!(shown["total"], total.to_string(), "{what}: the view shows the tool's total: {summary:#}");
    let faces: Vec<String> = structured["rolls"].as_array().into_iter().flatten().map(|f| f.to_string()).collect();
    assert_eq!(shown["dice"], json!(faces), "{what}: the view shows each face: {summary:#}");
}

/// Runs the host on `protocol` against a fresh `apps` server and checks what it saw.
fn host_shows_the_view_and_rolls(test: &str, protocol: &str) {
    let server = HttpServer::start("apps");
    let shot = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../target/artifacts/apps-{protocol}.png"));
    let _ = std::fs::remove_file(&shot);
    let started = Instant::now();
    let out =
        script("host.sh", &["--server", &server.url, "--protocol", protocol, "--screenshot", &shot.to_string_lossy()]);
    eprintln!("{test}: the host ran in {:.1} s", started.elapsed().as_secs_f64());
    let summary: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("one JSON line ({e}): {out}"));

    assert_eq!(summary["protocolVersion"], protocol, "{summary:#}");
    // Extensions are declared in server/discover; the 2025-11-25 initialize result has no place
    // for them.
    let declared = if protocol == common::MODERN {
        json!({ "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } })
    } else {
        Value::Null
    };
    assert_eq!(summary["serverExtensions"], declared, "{summary:#}");
    assert_eq!(summary["tool"], json!({ "resourceUri": "ui://dice/roller", "visibility": ["model", "app"] }));
    assert_eq!(summary["plainToolMeta"], Value::Null, "no _meta.ui for a client without the extension");
    assert_eq!(summary["viewMeta"], json!({ "ui": { "prefersBorder": true } }), "{summary:#}");

    // The model's call, shown by the view from the bridge's tool-result notification.
    let model = &summary["modelCall"];
    assert_shows(&summary["afterModelCall"], &model["structured"], "the model's call", &summary);
    assert_eq!(summary["afterModelCall"]["status"], model["text"], "{summary:#}");
    let text = model["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Rolled 2d6: ") && text.ends_with(&format!("= {}", model["structured"]["total"])));

    // The button's call: from the view through the bridge to the server and back.
    let app = &summary["appCall"];
    assert_eq!(app["arguments"], json!({ "count": 2, "sides": 6 }), "{summary:#}");
    assert_shows(&summary["afterClick"], &app["structured"], "the button's call", &summary);
    assert!(shot.is_file(), "a screenshot at {}", shot.display());
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_chromium)), ignore = "needs npm and chromium (then tests/apps/install.sh)")]
async fn a_browser_host_on_the_stateless_wire_shows_the_view_and_rolls_through_the_bridge() {
    let test = "apps::a_browser_host_on_the_stateless_wire_shows_the_view_and_rolls_through_the_bridge";
    if tools_present(test, true) {
        tokio::task::block_in_place(|| host_shows_the_view_and_rolls(test, common::MODERN));
    }
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_chromium)), ignore = "needs npm and chromium (then tests/apps/install.sh)")]
async fn a_browser_host_in_a_2025_11_25_session_shows_the_view_and_rolls_through_the_bridge() {
    let test = "apps::a_browser_host_in_a_2025_11_25_session_shows_the_view_and_rolls_through_the_bridge";
    if tools_present(test, true) {
        tokio::task::block_in_place(|| host_shows_the_view_and_rolls(test, "2025-11-25"));
    }
}

#[test]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/apps/install.sh)")]
fn the_committed_view_is_the_bundle_of_its_sources() {
    let test = "apps::the_committed_view_is_the_bundle_of_its_sources";
    if !tools_present(test, false) {
        return;
    }
    // examples/apps embeds view/dist/dice.html; a change to dice.html or dice.js must be
    // bundled again (tests/apps/build-view.sh) and committed with it.
    script("build-view.sh", &["--check"]);
}
