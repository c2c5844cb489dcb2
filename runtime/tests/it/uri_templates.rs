//! Resource template variables over the real Streamable HTTP transport, on the stateless
//! 2026-07-28 wire and in a 2025-11-25 session: `{var}` matches no reserved character and
//! `{+var}` matches paths, values reach the handler percent-decoded, a URI no template serves
//! is not found, and the file-backed handlers of the `#[mcp_resource]` docs keep to their
//! directories. A hand-written registration with a template the matcher cannot serve fails
//! `build()`.

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use switchyard::prelude::*;
use switchyard::testing::HttpTestServer;
use switchyard::transport::http::HttpConfig;
use switchyard::{BuildError, ResourceRequest};

/// Answers the `name` it was given.
#[mcp_resource(uri = "notes://{name}", mime_type = "text/plain", group = "uri_templates")]
async fn note_name(name: String) -> Result<String, McpError> {
    Ok(name)
}

/// Answers the `path` it was given.
#[mcp_resource(uri = "files://{+path}", mime_type = "text/plain", group = "uri_templates")]
async fn file_path(path: String) -> Result<String, McpError> {
    Ok(path)
}

/// Answers the `path` before `/raw`.
#[mcp_resource(uri = "repo://{+path}/raw", mime_type = "text/plain", group = "uri_templates")]
async fn repo_path(path: String) -> Result<String, McpError> {
    Ok(path)
}

/// The directory of `disk-notes://{name}`.
struct Notes {
    dir: PathBuf,
}

/// A note on disk: one file directly in the notes directory (the docs' `{var}` example).
#[mcp_resource(uri = "disk-notes://{name}", mime_type = "text/plain", group = "uri_templates")]
async fn disk_note(name: String, notes: State<Notes>, req: ResourceRequest) -> Result<String, McpError> {
    let plain = !matches!(name.as_str(), "." | "..") && !name.contains(['/', '\\', '\0']);
    if !plain {
        return Err(McpError::resource_not_found(&req.uri));
    }
    tokio::fs::read_to_string(notes.dir.join(&name)).await.map_err(|_| McpError::resource_not_found(&req.uri))
}

/// The canonical root of `docs://{+path}`.
struct Docs {
    root: PathBuf,
}

/// A file anywhere under the docs root (the docs' `{+var}` example).
#[mcp_resource(uri = "docs://{+path}", mime_type = "text/plain", group = "uri_templates")]
async fn doc_file(path: String, docs: State<Docs>, req: ResourceRequest) -> Result<String, McpError> {
    let not_found = || McpError::resource_not_found(&req.uri);
    // `join` puts an absolute `path` in the root's place; resolving `..` and links first,
    // then checking the prefix, catches that and every other way out of the root.
    let full = tokio::fs::canonicalize(docs.root.join(&path)).await.map_err(|_| not_found())?;
    if !full.starts_with(&docs.root) {
        return Err(not_found());
    }
    tokio::fs::read_to_string(full).await.map_err(|_| not_found())
}

/// A tree in the system's temporary directory, removed when dropped:
/// `secret.txt`, `notes/hello.md`, `docs/guide/a b.md`.
struct Tree {
    base: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir().join(format!(
            "switchyard-uri-templates-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(base.join("notes")).expect("notes dir");
        std::fs::create_dir_all(base.join("docs/guide")).expect("docs dir");
        std::fs::write(base.join("secret.txt"), "secret").expect("secret");
        std::fs::write(base.join("notes/hello.md"), "hello note").expect("note");
        std::fs::write(base.join("docs/guide/a b.md"), "a guide").expect("doc");
        Tree { base: std::fs::canonicalize(base).expect("canonical") }
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

async fn serve(tree: &Tree) -> HttpTestServer {
    let server = Server::builder("uri-templates", "1")
        .groups(["uri_templates"])
        .state(Notes { dir: tree.base.join("notes") })
        .state(Docs { root: tree.base.join("docs") })
        .build()
        .expect("builds");
    HttpTestServer::start(server, HttpConfig::default()).await.expect("a loopback port")
}

fn post(url: &str, body: &Value) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
}

/// The HTTP status and JSON-RPC reply of `rb`.
async fn reply(rb: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = rb.send().await.expect("sent");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("a JSON reply"))
}

/// One era of the wire: how a `resources/read` is sent.
enum Wire {
    /// 2026-07-28: `_meta` in every request, `Mcp-Method` and `Mcp-Name` headers.
    Stateless,
    /// 2025-11-25: a session opened by `initialize`.
    Session(String),
}

impl Wire {
    async fn session(url: &str) -> Wire {
        let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } });
        let resp = post(url, &init).send().await.expect("sent");
        let id = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("a session").to_owned();
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let resp = post(url, &initialized)
            .header("mcp-session-id", &id)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .expect("sent");
        assert_eq!(resp.status().as_u16(), 202, "notifications/initialized is accepted");
        Wire::Session(id)
    }

    /// `resources/read` of `uri`: the HTTP status and the reply.
    async fn read(&self, url: &str, uri: &str) -> (u16, Value) {
        match self {
            Wire::Stateless => {
                let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {} });
                let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read",
                    "params": { "uri": uri, "_meta": meta } });
                // A header carries visible ASCII only; anything else goes base64-encoded.
                let name = if uri.bytes().all(|b| b.is_ascii_graphic()) {
                    uri.to_owned()
                } else {
                    format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(uri))
                };
                let rb = post(url, &body)
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "resources/read")
                    .header("mcp-name", name);
                reply(rb).await
            }
            Wire::Session(id) => {
                let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": uri } });
                reply(post(url, &body).header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25")).await
            }
        }
    }

    fn era(&self) -> &'static str {
        match self {
            Wire::Stateless => "2026-07-28",
            Wire::Session(_) => "2025-11-25",
        }
    }
}

/// The text `uri` reads as, on `wire`.
async fn text(wire: &Wire, url: &str, uri: &str) -> String {
    let (status, v) = wire.read(url, uri).await;
    assert_eq!(status, 200, "{} {uri}: {v}", wire.era());
    let contents = &v["result"]["contents"][0];
    assert_eq!(contents["uri"], uri, "{} {uri}: {v}", wire.era());
    contents["text"].as_str().unwrap_or_else(|| panic!("{} {uri}: no text in {v}", wire.era())).to_owned()
}

/// Asserts that `uri` is not found on `wire`: the `-32602` of an unknown resource, with
/// `data.uri`, answered with HTTP 200 as every handler's error.
async fn not_found(wire: &Wire, url: &str, uri: &str) {
    let (status, v) = wire.read(url, uri).await;
    assert_eq!(status, 200, "{} {uri}: {v}", wire.era());
    assert_eq!(v["error"]["code"], -32602, "{} {uri}: {v}", wire.era());
    assert_eq!(v["error"]["message"], format!("resource not found: {uri}"), "{} {uri}: {v}", wire.era());
    assert_eq!(v["error"]["data"]["uri"], uri, "{} {uri}: {v}", wire.era());
}

/// Both eras on one server.
async fn wires(url: &str) -> [Wire; 2] {
    [Wire::Stateless, Wire::session(url).await]
}

#[tokio::test]
async fn simple_variables_are_decoded_on_both_wires() {
    let tree = Tree::new();
    let http = serve(&tree).await;
    let url = http.url();
    for wire in wires(&url).await {
        assert_eq!(text(&wire, &url, "notes://a%2Fb").await, "a/b", "{}", wire.era());
        assert_eq!(text(&wire, &url, "notes://caf%C3%A9").await, "café", "{}", wire.era());
        assert_eq!(text(&wire, &url, "notes://café").await, "café", "{}", wire.era());
        assert_eq!(text(&wire, &url, "notes://a%20b").await, "a b", "{}", wire.era());
        assert_eq!(text(&wire, &url, "notes://%2E%2E").await, "..", "{}", wire.era());
    }
}

#[tokio::test]
async fn simple_variables_match_no_slash_on_both_wires() {
    let tree = Tree::new();
    let http = serve(&tree).await;
    let url = http.url();
    for wire in wires(&url).await {
        not_found(&wire, &url, "notes://../../etc/passwd").await;
        not_found(&wire, &url, "notes://a/b").await;
        not_found(&wire, &url, "notes://").await;
        not_found(&wire, &url, "notes://a%2").await;
        not_found(&wire, &url, "notes://%FF").await;
    }
}

#[tokio::test]
async fn reserved_expansion_matches_paths_on_both_wires() {
    let tree = Tree::new();
    let http = serve(&tree).await;
    let url = http.url();
    for wire in wires(&url).await {
        assert_eq!(text(&wire, &url, "files://docs/a%20b.md").await, "docs/a b.md", "{}", wire.era());
        assert_eq!(text(&wire, &url, "files://a/b/c").await, "a/b/c", "{}", wire.era());
        assert_eq!(text(&wire, &url, "files://x/caf%C3%A9?v=1").await, "x/café?v=1", "{}", wire.era());
        assert_eq!(text(&wire, &url, "repo://a/b/raw").await, "a/b", "{}", wire.era());
        assert_eq!(text(&wire, &url, "repo://a/raw/b/raw").await, "a/raw/b", "{}", wire.era());
        not_found(&wire, &url, "repo://a/b/raw/").await;
    }
}

#[tokio::test]
async fn the_documented_file_handlers_stay_in_their_directories() {
    let tree = Tree::new();
    let http = serve(&tree).await;
    let url = http.url();
    for wire in wires(&url).await {
        assert_eq!(text(&wire, &url, "disk-notes://hello.md").await, "hello note", "{}", wire.era());
        not_found(&wire, &url, "disk-notes://../secret.txt").await;
        not_found(&wire, &url, "disk-notes://..%2Fsecret.txt").await;
        not_found(&wire, &url, "disk-notes://%2E%2E").await;
        assert_eq!(text(&wire, &url, "docs://guide/a%20b.md").await, "a guide", "{}", wire.era());
        assert_eq!(text(&wire, &url, "docs://guide/../guide/a%20b.md").await, "a guide", "{}", wire.era());
        not_found(&wire, &url, "docs://../secret.txt").await;
        not_found(&wire, &url, "docs://guide/%2E%2E/%2E%2E/secret.txt").await;
        let absolute = format!("docs://{}", tree.base.join("secret.txt").display());
        not_found(&wire, &url, &absolute).await;
    }
}

/// The shim of the hand-written registration below, which `build()` refuses before any read.
fn never_read(
    _ctx: RequestContext,
    _req: ResourceRequest,
) -> switchyard::registry::BoxFuture<Result<ReadResourceResult, McpError>> {
    Box::pin(async { Err(McpError::internal("never read")) })
}

/// A `ResourceRegistration` written by hand, as a crate without the macro could submit it:
/// the templates the macro refuses must fail `build()` as well.
macro_rules! hand_written_template {
    ($uri:literal, $group:literal) => {
        inventory::submit! {
            switchyard::__private::ResourceRegistration {
                uri: $uri,
                is_template: true,
                name: $group,
                title: None,
                description: None,
                mime_type: None,
                size: None,
                annotations: None,
                icons: None,
                meta: None,
                group: $group,
                roles: &[],
                scopes: &[],
                handler: never_read,
                state: &[],
                site: switchyard::__private::Site {
                    module_path: module_path!(),
                    file: file!(),
                    line: line!(),
                    function: $group,
                },
            }
        }
    };
}

hand_written_template!("notes://{#frag}", "uri_fragment_operator");
hand_written_template!("notes://{name:3}", "uri_prefix_modifier");
hand_written_template!("notes://my notes/{name}", "uri_literal_space");

#[test]
fn templates_the_matcher_cannot_serve_fail_the_build() {
    for (group, reason) in [
        (
            "uri_fragment_operator",
            "URI template \"notes://{#frag}\": `{#frag}` uses the RFC 6570 operator `#` (fragment expansion); \
             only `{var}` (simple string expansion) and `{+var}` (reserved expansion) are supported",
        ),
        (
            "uri_prefix_modifier",
            "URI template \"notes://{name:3}\": `{name:3}` uses an RFC 6570 prefix modifier (`:` and a length); \
             only `{var}` (simple string expansion) and `{+var}` (reserved expansion) are supported, without \
             modifiers",
        ),
        (
            "uri_literal_space",
            "URI template \"notes://my notes/{name}\": U+0020 (' ') cannot appear in a URI; write it \
             percent-encoded, `%20`",
        ),
    ] {
        match Server::builder("bad", "1").groups([group]).build() {
            Err(BuildError::Invalid { kind: "resource", reason: got, .. }) => assert_eq!(got, reason, "{group}"),
            other => panic!("{group}: expected an invalid resource, got {other:?}"),
        }
    }
}
