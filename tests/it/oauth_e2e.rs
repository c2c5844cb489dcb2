//! Real parts, end to end: a real authorization server (oidc-provider, tests/oauth/as.mjs) and a
//! real MCP host (the official Python SDK's OAuth client, tests/oauth/client.py) against the
//! `everything` example protected with `--auth-issuer`/`--auth-resource`. The host starts with no
//! token and must find its way from the server's 401 to a tool result by discovery alone;
//! the tests read the JSON summary it prints (every HTTP exchange, the tokens' claims, the
//! result). Also: a step-up from a token the user granted fewer scopes (403
//! `insufficient_scope`), and a signing key rotated while the MCP server keeps running.
//!
//! DPoP (RFC 9449, `--auth-dpop`): a second real host, the official TypeScript SDK's client
//! with a `fetch` that signs a proof per request (tests/oauth/dpop_client.mjs), gets a token
//! bound to its key (`cnf.jkt`) from oidc-provider by client credentials and calls a tool; the
//! same token as `Bearer`, a replayed proof and a proof of another key are refused. Once more with
//! server nonces at both ends (`SWITCHYARD_AUTH_DPOP_NONCE_SECRET`, `as.mjs --dpop-nonces`), and
//! with `--auth-dpop allowed`, where the Python host's plain bearer token is still served.

use crate::common::{self, HttpServer};

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a script may run, first-use installs included (npm ci, a venv and pip install).
const SCRIPT_LIMIT: Duration = Duration::from_secs(300);

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// Whether node/npm and python3 are there to install and run the scripts; says why not.
fn tools_present(test: &str) -> bool {
    tools_on_path(test, &["npm", "python3"])
}

/// Whether each of `tools` is on PATH; says which are not.
fn tools_on_path(test: &str, tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools.iter().copied().filter(|t| !on_path(t)).collect();
    if missing.is_empty() {
        return true;
    }
    common::skip(
        test,
        &format!("{} not on PATH", missing.join(" and ")),
        "install Node.js with npm and Python 3 with venv, then tests/oauth/install.sh",
    );
    false
}

/// The test authorization server (`tests/oauth/as.sh --port 0`), killed on drop.
struct AuthServer {
    child: Child,
    issuer: String,
    log: mpsc::Receiver<String>,
}

impl AuthServer {
    fn start() -> AuthServer {
        AuthServer::start_with(&[])
    }

    /// Started with these options of as.mjs besides `--port 0` (`--dpop-nonces`).
    fn start_with(args: &[&str]) -> AuthServer {
        let mut child = Command::new("bash")
            .arg(crate::common::peers::dir().join("as.sh"))
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bash runs tests/oauth/as.sh");
        let (log_tx, log) = mpsc::channel();
        let stderr = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = log_tx.send(line);
            }
        });
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            for _ in lines {}
        });
        let mut server = AuthServer { child, issuer: String::new(), log };
        match rx.recv_timeout(SCRIPT_LIMIT) {
            Ok(line) => match line.strip_prefix("listening on ") {
                Some(issuer) => server.issuer = issuer.trim().to_owned(),
                None => panic!("the authorization server said {line:?}\n{}", server.drained()),
            },
            Err(_) => panic!("the authorization server did not start\n{}", server.drained()),
        }
        server
    }

    /// What it logged so far (one line per request, and errors).
    fn drained(&self) -> String {
        self.log.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// POSTs to one of its test-only routes; the JSON answer.
    async fn admin(&self, path_and_query: &str) -> Value {
        let resp = common::client()
            .post(format!("{}{path_and_query}", self.issuer))
            .send()
            .await
            .expect("the authorization server answers");
        assert_eq!(resp.status().as_u16(), 200, "POST {path_and_query}");
        resp.json().await.expect("JSON")
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `everything` serving `/mcp` on a port chosen beforehand (the resource URL names it), requiring
/// tokens of `issuer` with `scopes`.
fn protected_everything(issuer: &str, scopes: &str) -> HttpServer {
    protected_everything_with(issuer, scopes, &[], &[])
}

/// [`protected_everything`] with more options (`--auth-dpop required`) and environment.
fn protected_everything_with(issuer: &str, scopes: &str, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
    let port = common::free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut all = vec!["--auth-issuer", issuer, "--auth-resource", &resource, "--auth-scopes", scopes];
    all.extend_from_slice(args);
    let server = HttpServer::start_on("everything", &format!("127.0.0.1:{port}"), &all, env);
    assert_eq!(server.url, resource);
    server
}

/// Runs the host (`tests/oauth/client.sh --server URL --wire WIRE`) to its end; its summary.
fn host(server: &HttpServer, wire: &str, auth: &AuthServer) -> Value {
    script("client.sh", &["--server", &server.url, "--wire", wire], auth)
}

/// Runs the DPoP host (`tests/oauth/dpop_client.sh --server URL`) to its end; its summary.
fn dpop_host(server: &HttpServer, auth: &AuthServer) -> Value {
    script("dpop_client.sh", &["--server", &server.url], auth)
}

/// Runs `tests/oauth/NAME ARGS...` to its end; the JSON line it printed.
fn script(name: &str, args: &[&str], auth: &AuthServer) -> Value {
    let run = common::run_script(&common::peers::dir().join(name), args, SCRIPT_LIMIT);
    let (status, stdout, stderr) = (run.status, run.stdout, run.stderr);
    let context = || format!("{name} stderr:\n{stderr}\nauthorization server:\n{}", auth.drained());
    match status {
        Some(s) if s.success() => {}
        Some(s) => panic!("{name} failed ({s})\nstdout: {stdout}\n{}", context()),
        None => panic!("{name} ran past {SCRIPT_LIMIT:?}\n{}", context()),
    }
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("one JSON line expected ({e}): {stdout}\n{}", context()))
}

fn exchanges(summary: &Value) -> &[Value] {
    summary["exchanges"].as_array().expect("exchanges")
}

/// The index of the first exchange at or after `from` that `matches`, or a panic naming `what`
/// with every exchange.
fn find(summary: &Value, from: usize, what: &str, matches: impl Fn(&Value) -> bool) -> usize {
    exchanges(summary)
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| matches(e))
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no {what} after exchange {from}: {:#}", summary["exchanges"]))
}

fn is(e: &Value, method: &str, url: &str, status: u64) -> bool {
    e["method"] == method && e["url"] == url && e["status"] == status
}

fn scopes(token: &Value) -> Vec<&str> {
    token["scope"].as_str().unwrap_or_default().split_whitespace().collect()
}

/// The sign-in every test starts with: 401 without a token, protected resource metadata,
/// authorization server metadata, registration, authorization with PKCE and `resource=`, token,
/// and the first MCP request again with the token. Returns the index of that request.
fn assert_signed_in(summary: &Value, server: &HttpServer, auth: &AuthServer, required: &str) -> usize {
    let mcp = &server.url;
    let base = mcp.trim_end_matches("/mcp");
    let metadata = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let first = &exchanges(summary)[0];
    assert!(is(first, "POST", mcp, 401) && first["bearer"] == false, "first: a tokenless POST gets 401: {first:#}");
    let challenge = first["wwwAuthenticate"].as_str().expect("a WWW-Authenticate challenge");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata}\"")), "{challenge}");
    assert!(challenge.contains(&format!("scope=\"{required}\"")), "{challenge}");

    let prm = find(summary, 1, "protected resource metadata", |e| is(e, "GET", &metadata, 200));
    let issuer = &auth.issuer;
    let asm = find(summary, prm, "authorization server metadata", |e| {
        e["method"] == "GET"
            && e["status"] == 200
            && [
                format!("{issuer}/.well-known/oauth-authorization-server"),
                format!("{issuer}/.well-known/openid-configuration"),
            ]
            .iter()
            .any(|u| e["url"] == u.as_str())
    });
    let reg = find(summary, asm, "a dynamic client registration", |e| is(e, "POST", &format!("{issuer}/reg"), 201));
    let token = find(summary, reg, "a token request", |e| is(e, "POST", &format!("{issuer}/token"), 200));
    let call = find(summary, token, "the MCP request with the token", |e| {
        e["method"] == "POST" && e["url"] == mcp.as_str() && e["bearer"] == true
    });

    let authorize = &summary["browser"][0];
    assert_eq!(authorize["authorize"], format!("{issuer}/auth"), "{authorize:#}");
    assert_eq!(authorize["resource"], mcp.as_str(), "RFC 8707 resource= is the MCP endpoint: {authorize:#}");
    assert_eq!(authorize["code_challenge_method"], "S256", "{authorize:#}");
    let asked: Vec<&str> = authorize["scope"].as_str().unwrap_or_default().split_whitespace().collect();
    assert!(required.split(' ').all(|s| asked.contains(&s)), "asked for the challenged scopes: {authorize:#}");

    let first_token = &summary["tokens"][0];
    assert_eq!(first_token["iss"], issuer.as_str(), "{first_token:#}");
    assert_eq!(first_token["aud"], mcp.as_str(), "a JWT for this resource: {first_token:#}");
    assert_eq!(first_token["sub"], "test-user", "{first_token:#}");
    assert!(first_token["kid"].as_str().is_some_and(|k| !k.is_empty()), "{first_token:#}");
    call
}

fn assert_tool_answered(summary: &Value) {
    assert_eq!(summary["tool"]["name"], "test_simple_text", "{summary:#}");
    assert_eq!(summary["tool"]["isError"], false, "{summary:#}");
    assert_eq!(summary["tool"]["text"], "This is a simple text response for testing.", "{summary:#}");
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn the_python_sdk_signs_in_and_calls_a_tool_on_the_stateless_wire() {
    let test = "oauth_e2e::the_python_sdk_signs_in_and_calls_a_tool_on_the_stateless_wire";
    if !tools_present(test) {
        return;
    }
    let auth = AuthServer::start();
    let server = protected_everything(&auth.issuer, "mcp");
    let summary = tokio::task::block_in_place(|| host(&server, "stateless", &auth));
    let call = assert_signed_in(&summary, &server, &auth, "mcp");
    assert_eq!(summary["protocolVersion"], common::MODERN, "{summary:#}");
    assert_eq!(exchanges(&summary)[0]["rpc"], "tools/call", "the first stateless request is the call itself");
    assert_eq!(exchanges(&summary)[call]["status"], 200, "{:#}", summary["exchanges"]);
    assert_eq!(scopes(&summary["tokens"][0]), ["mcp"]);
    assert_eq!(summary["tokens"].as_array().map(Vec::len), Some(1), "one sign-in: {summary:#}");
    assert_tool_answered(&summary);
}

#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn the_python_sdk_signs_in_and_calls_a_tool_in_a_2025_11_25_session() {
    let test = "oauth_e2e::the_python_sdk_signs_in_and_calls_a_tool_in_a_2025_11_25_session";
    if !tools_present(test) {
        return;
    }
    let auth = AuthServer::start();
    let server = protected_everything(&auth.issuer, "mcp");
    let summary = tokio::task::block_in_place(|| host(&server, "session", &auth));
    let call = assert_signed_in(&summary, &server, &auth, "mcp");
    assert_eq!(summary["protocolVersion"], "2025-11-25", "{summary:#}");
    assert_eq!(exchanges(&summary)[0]["rpc"], "initialize", "the session starts with initialize");
    assert_eq!(exchanges(&summary)[call]["rpc"], "initialize");
    assert_eq!(exchanges(&summary)[call]["status"], 200);
    // Every request of the session after the sign-in, its GET stream and its DELETE included,
    // carries the token and is served.
    let after: Vec<&Value> = exchanges(&summary)[call..].iter().filter(|e| e["url"] == server.url.as_str()).collect();
    for e in &after {
        assert!(e["bearer"] == true && matches!(e["status"].as_u64(), Some(200 | 202)), "{e:#}");
    }
    for method in ["GET", "DELETE"] {
        assert!(after.iter().any(|e| e["method"] == method), "the session's {method}: {:#}", summary["exchanges"]);
    }
    assert!(after.iter().any(|e| e["rpc"] == "tools/call" && e["status"] == 200), "{:#}", summary["exchanges"]);
    assert_tool_answered(&summary);
}

/// The user grants only `mcp` at the first consent; the server requires `mcp files:read`, so the
/// token is refused with 403 `insufficient_scope`, and the host authorizes again for both (the
/// SDK's own step-up: no new discovery or registration) and the call goes through.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn a_token_without_a_required_scope_is_stepped_up() {
    let test = "oauth_e2e::a_token_without_a_required_scope_is_stepped_up";
    if !tools_present(test) {
        return;
    }
    let auth = AuthServer::start();
    let server = protected_everything(&auth.issuer, "mcp,files:read");
    let limit = auth.admin("/test/limit-consent?scope=mcp").await;
    assert_eq!(limit["nextConsentGrantsAtMost"], serde_json::json!(["mcp"]));
    let summary = tokio::task::block_in_place(|| host(&server, "stateless", &auth));
    let call = assert_signed_in(&summary, &server, &auth, "files:read mcp");

    assert_eq!(scopes(&summary["tokens"][0]), ["mcp"], "the first token lacks files:read: {summary:#}");
    // The SDK hands a 403 to the retry right after a sign-in back as an error (it steps up only on
    // a request's first answer), so the script called the tool again: its second try got the 403
    // the SDK stepped up from.
    assert_eq!(summary["calledAgainAfter403"], true, "{summary:#}");
    let refused = &exchanges(&summary)[call];
    assert_eq!(refused["status"], 403, "{refused:#}");
    let challenge = refused["wwwAuthenticate"].as_str().expect("a challenge");
    assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
    assert!(challenge.contains("scope=\"files:read mcp\""), "{challenge}");

    let second = summary["browser"]
        .as_array()
        .expect("browser hops")
        .iter()
        .filter(|h| h.get("authorize").is_some())
        .nth(1)
        .cloned()
        .unwrap_or_else(|| panic!("a second authorization: {summary:#}"));
    let asked: Vec<&str> = second["scope"].as_str().unwrap_or_default().split_whitespace().collect();
    assert!(asked.contains(&"mcp") && asked.contains(&"files:read"), "{second:#}");
    assert_eq!(second["resource"], server.url.as_str());

    let tokens = summary["tokens"].as_array().expect("tokens");
    assert_eq!(tokens.len(), 2, "{summary:#}");
    let mut stepped = scopes(&tokens[1]);
    stepped.sort_unstable();
    assert_eq!(stepped, ["files:read", "mcp"]);
    let registrations = exchanges(&summary).iter().filter(|e| e["url"] == format!("{}/reg", auth.issuer)).count();
    assert_eq!(registrations, 1, "the step-up reuses the registration");
    let discoveries =
        exchanges(&summary).iter().filter(|e| e["url"].as_str().is_some_and(|u| u.contains("/.well-known/"))).count();
    assert_eq!(discoveries, 2, "the step-up reuses the metadata read at the 401 (the resource's and the issuer's)");
    let served = find(&summary, call + 1, "the call with the stepped-up token", |e| {
        e["url"] == server.url.as_str() && e["rpc"] == "tools/call" && e["status"] == 200
    });
    assert!(served > call);
    assert_tool_answered(&summary);
}

/// The authorization server signs with a new key (the old one stays published) while the MCP
/// server keeps running: the server fetches the key set again for the new `kid` and accepts the
/// new tokens without a restart.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn tokens_signed_with_a_rotated_key_are_accepted_without_a_restart() {
    let test = "oauth_e2e::tokens_signed_with_a_rotated_key_are_accepted_without_a_restart";
    if !tools_present(test) {
        return;
    }
    let auth = AuthServer::start();
    let mut server = protected_everything(&auth.issuer, "mcp");
    let before = tokio::task::block_in_place(|| host(&server, "stateless", &auth));
    assert_signed_in(&before, &server, &auth, "mcp");
    assert_tool_answered(&before);
    let old_kid = before["tokens"][0]["kid"].as_str().expect("a kid").to_owned();

    // The server fetched the key set for the first token and fetches it again at most every
    // 10 s (JwksVerifier's default refresh_interval, which the CLI does not change): a token
    // with the new kid inside that window is refused, so let the window pass.
    tokio::time::sleep(Duration::from_secs(11)).await;
    let rotated = auth.admin("/test/rotate-key").await;
    let new_kid = rotated["signing"].as_str().expect("the new kid").to_owned();
    assert_ne!(new_kid, old_kid);
    assert_eq!(rotated["published"], serde_json::json!([new_kid, old_kid]));

    let after = tokio::task::block_in_place(|| host(&server, "stateless", &auth));
    let call = assert_signed_in(&after, &server, &auth, "mcp");
    assert_eq!(after["tokens"][0]["kid"], new_kid.as_str(), "signed with the new key: {after:#}");
    assert_eq!(exchanges(&after)[call]["status"], 200, "{:#}", after["exchanges"]);
    assert_tool_answered(&after);
    assert!(server.child.try_wait().expect("waitable").is_none(), "the same server process served both");
    let fetches = auth.drained().matches("GET /jwks 200").count();
    assert_eq!(fetches, 2, "the key set fetched for the first token and again for the new kid");
}

/// What a DPoP run is set up with.
#[derive(Clone, Copy)]
struct DpopSetup {
    /// `--auth-dpop required` (else `allowed`).
    required: bool,
    /// Server nonces at the MCP server and the authorization server.
    nonces: bool,
}

/// The DPoP host's run, checked from its summary: the 401 offers DPoP, the resource metadata lists
/// ES256, the token endpoint (after a `use_dpop_nonce` round with nonces) answers a proof with a
/// `DPoP` token bound to the host's key, every MCP request of the SDK's session (POSTs, the GET
/// stream, the DELETE) carries `DPoP` and a proof and is served (after one `use_dpop_nonce` round
/// with nonces, each with the nonce), the tool answers, and the token as `Bearer`, a replayed
/// proof and a proof of another key are refused with their DPoP errors.
fn assert_dpop_flow(summary: &Value, server: &HttpServer, auth: &AuthServer, setup: DpopSetup) {
    let mcp = server.url.as_str();
    let issuer = &auth.issuer;
    let all = exchanges(summary);

    let first = &all[0];
    assert!(is(first, "POST", mcp, 401) && first["scheme"].is_null(), "a tokenless POST gets 401: {first:#}");
    let offered = first["wwwAuthenticate"].as_str().expect("a WWW-Authenticate challenge");
    let schemes: Vec<&str> = summary["firstChallenges"]
        .as_array()
        .expect("challenges")
        .iter()
        .filter_map(|c| c["scheme"].as_str())
        .collect();
    let expected: &[&str] = if setup.required { &["DPoP"] } else { &["Bearer", "DPoP"] };
    assert_eq!(schemes, expected, "{offered}");
    let metadata = format!("{}/.well-known/oauth-protected-resource/mcp", mcp.trim_end_matches("/mcp"));
    let dpop = summary["firstChallenges"].as_array().and_then(|c| c.iter().find(|c| c["scheme"] == "DPoP"));
    let dpop = dpop.expect("a DPoP challenge");
    assert_eq!(dpop["params"]["resource_metadata"], metadata.as_str(), "{offered}");
    assert!(dpop["params"]["algs"].as_str().is_some_and(|a| a.split(' ').any(|a| a == "ES256")), "{offered}");

    let prm = &summary["resourceMetadata"];
    assert_eq!(prm["resource"], mcp, "{prm:#}");
    assert_eq!(prm["authorization_servers"], serde_json::json!([issuer]), "{prm:#}");
    assert!(
        prm["dpop_signing_alg_values_supported"].as_array().is_some_and(|a| a.contains(&"ES256".into())),
        "{prm:#}"
    );
    assert_eq!(prm["dpop_bound_access_tokens_required"], setup.required, "{prm:#}");
    find(summary, 1, "protected resource metadata", |e| is(e, "GET", &metadata, 200));
    let reg = find(summary, 1, "a dynamic client registration", |e| is(e, "POST", &format!("{issuer}/reg"), 201));

    let token_url = format!("{issuer}/token");
    let mut token = find(summary, reg, "a token request", |e| e["method"] == "POST" && e["url"] == token_url.as_str());
    if setup.nonces {
        let asked = &all[token];
        assert!(asked["status"] == 400 && asked["error"] == "use_dpop_nonce", "the AS asks for a nonce: {asked:#}");
        assert!(asked["proof"] == true && asked["proofNonce"] == false && asked["dpopNonce"] == true, "{asked:#}");
        token += 1;
    }
    let issued = &all[token];
    assert!(is(issued, "POST", &token_url, 200), "the token request with a proof: {:#}", summary["exchanges"]);
    assert_eq!(issued["proof"], true, "{issued:#}");
    assert_eq!(issued["proofNonce"], setup.nonces, "{issued:#}");
    assert_eq!(summary["tokenType"], "DPoP", "{summary:#}");

    let claims = &summary["token"];
    let thumbprint = summary["keyThumbprint"].as_str().expect("the host's key thumbprint");
    assert!(!thumbprint.is_empty());
    assert_eq!(claims["cnf"]["jkt"], thumbprint, "bound to the host's key (RFC 7638 thumbprint): {claims:#}");
    assert_eq!(claims["typ"], "at+jwt", "{claims:#}");
    assert_eq!(claims["iss"], issuer.as_str(), "{claims:#}");
    assert_eq!(claims["aud"], mcp, "a JWT for this resource (RFC 8707): {claims:#}");
    assert_eq!(scopes(claims), ["mcp"], "{claims:#}");
    assert_eq!(claims["sub"], summary["registered"], "a client credentials token is the client's own: {claims:#}");

    // The SDK's session: every request to the server after the token, but the refusals asked for.
    let session: Vec<&Value> =
        all[token + 1..].iter().filter(|e| e["url"] == mcp && e.get("check").is_none()).collect();
    let mut served = &session[..];
    if setup.nonces {
        let asked = session[0];
        assert_eq!(asked["status"], 401, "{asked:#}");
        assert!(asked["proofNonce"] == false && asked["dpopNonce"] == true, "{asked:#}");
        let challenge = asked["wwwAuthenticate"].as_str().unwrap_or_default();
        assert!(challenge.starts_with("DPoP ") && challenge.contains("error=\"use_dpop_nonce\""), "{challenge}");
        assert_eq!(
            session[1]["rpc"], asked["rpc"],
            "the same request again, with the nonce: {:#}",
            summary["exchanges"]
        );
        served = &session[1..];
    }
    let rounds = summary["nonceRounds"].as_array().expect("nonce rounds");
    let expected_rounds = if setup.nonces { vec!["authorizationServer", "resourceServer"] } else { vec![] };
    assert_eq!(rounds.iter().map(|r| r["at"].as_str().unwrap_or_default()).collect::<Vec<_>>(), expected_rounds);
    assert_eq!(served[0]["rpc"], "initialize", "{:#}", summary["exchanges"]);
    for e in served {
        assert!(e["scheme"] == "DPoP" && e["proof"] == true, "every request with the token and a proof: {e:#}");
        assert_eq!(e["proofNonce"], setup.nonces, "{e:#}");
        assert!(matches!(e["status"].as_u64(), Some(200 | 202)), "served: {e:#}");
    }
    for method in ["GET", "DELETE"] {
        assert!(served.iter().any(|e| e["method"] == method), "the session's {method}: {:#}", summary["exchanges"]);
    }
    assert!(served.iter().any(|e| e["rpc"] == "tools/call"), "{:#}", summary["exchanges"]);
    assert_eq!(summary["protocolVersion"], "2025-11-25", "{summary:#}");
    assert_tool_answered(summary);

    let refused = |check: &str, error: &str, about: &str| {
        let r = &summary["refused"][check];
        assert_eq!(r["status"], 401, "{check}: {r:#}");
        let challenge = r["wwwAuthenticate"].as_str().unwrap_or_default();
        assert!(
            challenge.starts_with("DPoP ") && !challenge.contains("Bearer"),
            "{check}: a DPoP challenge only: {r:#}"
        );
        assert!(challenge.contains(&format!("error=\"{error}\"")), "{check}: {challenge}");
        assert!(challenge.contains(about), "{check}: {challenge}");
    };
    // A stolen token, or one whose proof an observer copied: useless without the key.
    refused("bearer", "invalid_token", "DPoP");
    refused("replay", "invalid_dpop_proof", "jti");
    refused("otherKey", "invalid_dpop_proof", "cnf.jkt");
}

/// `--auth-dpop required`: the TypeScript SDK's client gets a DPoP-bound token by client
/// credentials (DCR, RFC 8707 `resource=`, a proof at the token endpoint) and calls a tool in a
/// 2025-11-25 session, each request with a fresh proof.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh)")]
async fn the_typescript_sdk_calls_a_tool_with_a_dpop_bound_token() {
    let test = "oauth_e2e::the_typescript_sdk_calls_a_tool_with_a_dpop_bound_token";
    if !tools_on_path(test, &["npm"]) {
        return;
    }
    let auth = AuthServer::start();
    let server = protected_everything_with(&auth.issuer, "mcp", &["--auth-dpop", "required"], &[]);
    let summary = tokio::task::block_in_place(|| dpop_host(&server, &auth));
    assert_dpop_flow(&summary, &server, &auth, DpopSetup { required: true, nonces: false });
    assert!(exchanges(&summary).iter().all(|e| e["dpopNonce"] == false), "no nonces: {:#}", summary["exchanges"]);
}

/// Server nonces (RFC 9449 §8, §9) at both ends: the authorization server's token endpoint and
/// the MCP server (`SWITCHYARD_AUTH_DPOP_NONCE_SECRET`) each answer the first proof with
/// `use_dpop_nonce` and a `DPoP-Nonce`; the host retries once with it, and every later proof to
/// the MCP server carries it.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(svc_npm), ignore = "needs npm (then tests/oauth/install.sh)")]
async fn dpop_nonces_are_asked_for_and_used() {
    let test = "oauth_e2e::dpop_nonces_are_asked_for_and_used";
    if !tools_on_path(test, &["npm"]) {
        return;
    }
    let auth = AuthServer::start_with(&["--dpop-nonces"]);
    let secret = "a test secret of more than 32 bytes, for DPoP nonces";
    let server = protected_everything_with(
        &auth.issuer,
        "mcp",
        &["--auth-dpop", "required"],
        &[("SWITCHYARD_AUTH_DPOP_NONCE_SECRET", secret)],
    );
    let summary = tokio::task::block_in_place(|| dpop_host(&server, &auth));
    assert_dpop_flow(&summary, &server, &auth, DpopSetup { required: true, nonces: true });
}

/// `--auth-dpop allowed`: the Python SDK's host signs in and is served with a plain bearer token
/// as before, the 401 offers both schemes, and the DPoP host's bound token still must come with
/// its proofs.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn with_dpop_allowed_bearer_and_dpop_bound_tokens_are_both_served() {
    let test = "oauth_e2e::with_dpop_allowed_bearer_and_dpop_bound_tokens_are_both_served";
    if !tools_present(test) {
        return;
    }
    let auth = AuthServer::start();
    let server = protected_everything_with(&auth.issuer, "mcp", &["--auth-dpop", "allowed"], &[]);
    let bearer = tokio::task::block_in_place(|| host(&server, "stateless", &auth));
    let call = assert_signed_in(&bearer, &server, &auth, "mcp");
    assert_eq!(exchanges(&bearer)[call]["status"], 200, "{:#}", bearer["exchanges"]);
    assert_eq!(bearer["tokens"][0].get("cnf"), Some(&Value::Null), "a plain bearer token (no cnf): {bearer:#}");
    assert_tool_answered(&bearer);
    let challenge = exchanges(&bearer)[0]["wwwAuthenticate"].as_str().unwrap_or_default();
    assert!(challenge.contains("DPoP "), "DPoP offered beside Bearer: {challenge}");

    let summary = tokio::task::block_in_place(|| dpop_host(&server, &auth));
    assert_dpop_flow(&summary, &server, &auth, DpopSetup { required: false, nonces: false });
}

/// The redirect URI our client registers: nothing listens there; the headless browser stops at
/// the redirect to it.
const OUR_REDIRECT: &str = "http://127.0.0.1:9/callback";

/// A headless browser for the test authorization server: follows the authorization URL's
/// redirects (sign-in and consent finish at once, tied together by cookies) until the one to
/// `OUR_REDIRECT`, and hands that back. Records each authorization URL.
fn browser(asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> switchyard_client::OAuthConfig {
    switchyard_client::OAuthConfig::new(OUR_REDIRECT, move |url: String| {
        let asked = asked.clone();
        async move {
            asked.lock().expect("not poisoned").push(url.clone());
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let mut cookies: Vec<(String, String)> = Vec::new();
            let mut at = url;
            for _ in 0..10 {
                let cookie = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
                let response = http.get(&at).header("cookie", cookie).send().await.map_err(|e| e.to_string())?;
                for set in response.headers().get_all("set-cookie") {
                    let pair = set.to_str().unwrap_or_default().split(';').next().unwrap_or_default();
                    if let Some((name, value)) = pair.split_once('=') {
                        cookies.retain(|(k, _)| k != name);
                        cookies.push((name.trim().to_owned(), value.to_owned()));
                    }
                }
                let next = response.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
                let Some(next) = next else {
                    return Err(format!("{at}: HTTP {} without a redirect", response.status()));
                };
                let next = reqwest::Url::parse(&at).and_then(|base| base.join(&next)).map_err(|e| e.to_string())?;
                if next.as_str().starts_with(OUR_REDIRECT) {
                    return Ok(next.to_string());
                }
                at = next.to_string();
            }
            Err("more than 10 redirects".to_owned())
        }
    })
    .client_name("switchyard-tests")
}

/// Our own client, signed in with `oauth`, connected to `server` on `version`, having called
/// `test_simple_text`.
async fn our_client_calls_a_tool(
    version: &str,
    oauth: switchyard_client::OAuthConfig,
    server: &HttpServer,
    auth: &AuthServer,
) -> switchyard_client::Client {
    let client = switchyard_client::ClientBuilder::new("switchyard-tests", "1.0.0")
        .protocol_versions([version])
        .oauth(oauth)
        .connect_http(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{version}: connects after signing in: {e}\n{}", auth.drained()));
    assert_eq!(client.protocol_version(), version);
    let result = client.call_tool("test_simple_text", serde_json::json!({})).await.expect("tools/call");
    assert_eq!(result.content.first().and_then(|c| c.as_text()), Some("This is a simple text response for testing."));
    client
}

/// Our own client against a real authorization server (oidc-provider) and `everything`
/// requiring `mcp files:read`, the first consent granting only `mcp`: it discovers from the
/// 401, registers, signs in with PKCE and `resource`, is refused with 403 `insufficient_scope`,
/// signs in again for both scopes, and calls a tool; on the stateless wire and in a session.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn our_client_signs_in_steps_up_and_calls_a_tool_on_both_wires() {
    let test = "oauth_e2e::our_client_signs_in_steps_up_and_calls_a_tool_on_both_wires";
    if !tools_present(test) {
        return;
    }
    for version in [common::MODERN, "2025-11-25"] {
        let auth = AuthServer::start();
        let server = protected_everything(&auth.issuer, "mcp,files:read");
        auth.admin("/test/limit-consent?scope=mcp").await;
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let client = our_client_calls_a_tool(version, browser(asked.clone()), &server, &auth).await;

        let asked = asked.lock().expect("not poisoned").clone();
        assert_eq!(asked.len(), 2, "{version}: a sign-in and one step-up: {asked:#?}");
        for url in &asked {
            let url = reqwest::Url::parse(url).expect("an authorization URL");
            let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
            assert_eq!(param("resource").as_deref(), Some(server.url.as_str()), "{url}");
            assert_eq!(param("code_challenge_method").as_deref(), Some("S256"), "{url}");
            assert_eq!(param("redirect_uri").as_deref(), Some(OUR_REDIRECT), "{url}");
            // What the server requires, and `offline_access` (a refresh token), which this
            // authorization server offers.
            let mut scopes: Vec<String> = param("scope").unwrap_or_default().split(' ').map(str::to_owned).collect();
            scopes.sort();
            assert_eq!(scopes, ["files:read", "mcp", "offline_access"], "{url}");
        }
        client.close().await;
    }
}

/// Our own client against `everything` with `--auth-dpop required` and a real authorization
/// server, both asking for DPoP nonces: the 401's `DPoP` challenge and the resource metadata
/// make the client bind its token to a key of the connection; the token endpoint's and the MCP
/// server's `use_dpop_nonce` are answered with a new proof each; a bearer token would be
/// refused, so the served tool call proves the whole DPoP path. Both wires.
#[tokio::test(flavor = "multi_thread")]
#[cfg_attr(not(all(svc_npm, svc_python)), ignore = "needs npm and python3 (then tests/oauth/install.sh)")]
async fn our_client_binds_its_token_with_dpop_and_answers_nonces() {
    let test = "oauth_e2e::our_client_binds_its_token_with_dpop_and_answers_nonces";
    if !tools_present(test) {
        return;
    }
    for version in [common::MODERN, "2025-11-25"] {
        let auth = AuthServer::start_with(&["--dpop-nonces"]);
        let secret = "a test secret of more than 32 bytes, for DPoP nonces";
        let server = protected_everything_with(
            &auth.issuer,
            "mcp",
            &["--auth-dpop", "required"],
            &[("SWITCHYARD_AUTH_DPOP_NONCE_SECRET", secret)],
        );
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let client = our_client_calls_a_tool(version, browser(asked.clone()), &server, &auth).await;
        assert_eq!(asked.lock().expect("not poisoned").len(), 1, "{version}: one sign-in");
        client.close().await;

        // Told never to bind its token, the client is refused by this server.
        let refused = switchyard_client::ClientBuilder::new("switchyard-tests", "1.0.0")
            .protocol_versions([version])
            .oauth(browser(asked.clone()).dpop(false))
            .connect_http(&server.url)
            .await;
        assert!(refused.is_err(), "{version}: a bearer token is refused where DPoP is required");
    }
}
