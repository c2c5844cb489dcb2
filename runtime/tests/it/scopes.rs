//! OAuth scopes declared on primitives (`scopes = [...]`), over real HTTP on both eras: lists
//! hide what a token cannot use, a call without the scope is refused before any filter runs
//! with 403 and an `insufficient_scope` challenge (401 without a token), the metadata lists the
//! declared scopes, and a `Policy` can make one scope grant another.

use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use switchyard::auth::{BearerAuth, Policy, Primitive, Principal, ProtectedResource, RolePolicy, StaticTokens};
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::transport::http::{ConnectionLimits, HttpConfig, router, serve_app};

/// Calls of `write_notes` that reached the typed filters (only the first test calls it with a
/// token that may: the other tests' calls, running meanwhile, are not counted).
static FILTERED: AtomicUsize = AtomicUsize::new(0);

/// Reads the notes.
#[mcp_tool(scopes = ["notes:read"], group = "scopes")]
async fn read_notes() -> &'static str {
    "the notes"
}

/// Writes the notes.
#[mcp_tool(scopes = ["notes:read", "notes:write"], group = "scopes")]
async fn write_notes() -> &'static str {
    "written"
}

/// Anyone may.
#[mcp_tool(group = "scopes")]
async fn open_tool() -> &'static str {
    "open"
}

#[mcp_rpc("acme/purge", scopes = ["admin"], group = "scopes")]
async fn purge() -> Result<Value, McpError> {
    Ok(json!({ "purged": true }))
}

#[mcp_filter(rpc = ToolsCall, group = "scopes")]
async fn count(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    if req.params.name == "write_notes" {
        FILTERED.fetch_add(1, Ordering::SeqCst);
    }
    next.run(req).await
}

/// `notes:write` also grants `notes:read`; everything else as the default.
struct Hierarchy;

impl Policy for Hierarchy {
    fn allows(&self, principal: Option<&Principal>, primitive: Primitive<'_>, roles: &[&str]) -> bool {
        RolePolicy.allows(principal, primitive, roles)
    }

    fn grants(&self, principal: &Principal, scope: &str) -> bool {
        principal.has_scope(scope) || (scope == "notes:read" && principal.has_scope("notes:write"))
    }
}

/// A server of the `scopes` group behind bearer tokens (anonymous requests allowed), with
/// `policy`; its base URL.
async fn start(policy: impl Policy) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let base = format!("http://127.0.0.1:{}", listener.local_addr().expect("an address").port());
    let resource = ProtectedResource::new(&format!("{base}/mcp"))
        .and_then(|r| r.authorization_server("https://auth.example.com"))
        .expect("a resource");
    let tokens = StaticTokens::new()
        .with("reader", Principal::new("rita", Vec::<String>::new()).with_scopes(["notes:read"]))
        .with("writer", Principal::new("will", Vec::<String>::new()).with_scopes(["notes:read", "notes:write"]))
        .with("write-only", Principal::new("wes", Vec::<String>::new()).with_scopes(["notes:write"]));
    let server = Server::builder("scoped", "1").groups(["scopes"]).policy(policy).build().expect("builds");
    let shutdown = server.shutdown_token().clone();
    let app = router(server, HttpConfig::default().protected_resource(resource.clone()))
        .layer(BearerAuth::new(tokens).protected_resource(resource).allow_anonymous());
    tokio::spawn(async move { serve_app(listener, app, shutdown, &ConnectionLimits::default()).await });
    base
}

fn meta() -> Value {
    json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} })
}

/// A stateless request; its status, `WWW-Authenticate` and body.
async fn modern(base: &str, token: Option<&str>, method: &str, mut params: Value) -> (u16, Option<String>, Value) {
    params["_meta"] = meta();
    let mut rb = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        rb = rb.header("mcp-name", name);
    }
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let r = rb.body(body.to_string()).send().await.expect("sent");
    let challenge = r.headers().get("www-authenticate").map(|v| v.to_str().expect("ASCII").to_owned());
    (r.status().as_u16(), challenge, r.json().await.expect("a JSON body"))
}

fn tool_names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_call_without_its_scope_is_refused_before_any_filter_with_a_challenge() {
    let base = start(RolePolicy).await;
    let metadata = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let (_, _, list) = modern(&base, Some("reader"), "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["open_tool", "read_notes"]);
    let (_, _, list) = modern(&base, Some("writer"), "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["open_tool", "read_notes", "write_notes"]);
    let (_, _, list) = modern(&base, None, "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["open_tool"]);

    let before = FILTERED.load(Ordering::SeqCst);
    let (status, challenge, body) =
        modern(&base, Some("reader"), "tools/call", json!({ "name": "write_notes", "arguments": {} })).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        challenge.as_deref(),
        Some(
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"notes:read notes:write\", resource_metadata=\"{metadata}\""
            )
            .as_str()
        )
    );
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["error"]["data"], json!({ "reason": "insufficient_scope", "scope": "notes:read notes:write" }));
    assert_eq!(FILTERED.load(Ordering::SeqCst), before, "no filter saw the refused call");
    // Without a token: 401, asking for the scope.
    let (status, challenge, _) =
        modern(&base, None, "tools/call", json!({ "name": "read_notes", "arguments": {} })).await;
    assert_eq!(status, 401);
    assert_eq!(challenge, Some(format!("Bearer scope=\"notes:read\", resource_metadata=\"{metadata}\"")));
    // With it: served, through the filters.
    let (status, _, body) =
        modern(&base, Some("writer"), "tools/call", json!({ "name": "write_notes", "arguments": {} })).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["content"][0]["text"], "written");
    assert!(FILTERED.load(Ordering::SeqCst) > before);
    // RPC methods declare scopes too.
    let (status, challenge, _) = modern(&base, Some("writer"), "acme/purge", json!({})).await;
    assert_eq!(status, 403);
    assert!(challenge.is_some_and(|c| c.contains("scope=\"admin\"")));
    // The metadata lists every declared scope.
    let doc: Value = reqwest::get(&metadata).await.expect("sent").json().await.expect("JSON");
    assert_eq!(doc["scopes_supported"], json!(["admin", "notes:read", "notes:write"]));
}

#[tokio::test]
async fn a_legacy_session_is_challenged_the_same_way() {
    let base = start(RolePolicy).await;
    let c = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut rb = c
            .post(format!("{base}/mcp"))
            .bearer_auth("reader")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = session {
            rb = rb.header("mcp-session-id", s).header("mcp-protocol-version", "2025-11-25");
        }
        rb.body(body.to_string()).send()
    };
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let r = post(init, None).await.expect("sent");
    let session = r.headers()["mcp-session-id"].to_str().expect("ASCII").to_owned();
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "write_notes", "arguments": {} } });
    let r = post(call, Some(&session)).await.expect("sent");
    assert_eq!(r.status(), 403);
    let challenge = r.headers()["www-authenticate"].to_str().expect("ASCII").to_owned();
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"notes:read notes:write\""),
        "{challenge}"
    );
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["id"], 1);
    assert_eq!(body["error"]["data"]["reason"], "insufficient_scope");
    // The session is still there for what the token allows.
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "read_notes", "arguments": {} } });
    let r = post(call, Some(&session)).await.expect("sent");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_policy_can_let_one_scope_grant_another() {
    let base = start(Hierarchy).await;
    let (status, _, body) =
        modern(&base, Some("write-only"), "tools/call", json!({ "name": "read_notes", "arguments": {} })).await;
    assert_eq!(status, 200, "{body}");
    let (_, _, list) = modern(&base, Some("write-only"), "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["open_tool", "read_notes", "write_notes"]);
    // The default policy takes scopes literally.
    let base = start(RolePolicy).await;
    let (status, _, _) =
        modern(&base, Some("write-only"), "tools/call", json!({ "name": "read_notes", "arguments": {} })).await;
    assert_eq!(status, 403);
}
