//! Legacy HTTP sessions are shared fairly between clients: a flood of `initialize` from one
//! client (an address, or a principal) spends that client's own quota and is refused with 429,
//! while a session another client created before it stays usable. Counts are bounded and
//! concurrency is capped; no timing is asserted.

use crate::common::*;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

/// `initialize` requests of the anonymous flood: with the default `max_sessions` (10 000),
/// enough to displace the other client's session if the flood were not limited per client.
const FLOOD: usize = 10_000;
/// `initialize` requests of the principal's flood: enough to spend its burst many times over,
/// which is what tells principals apart; the displacement itself is the anonymous test's.
const PRINCIPAL_FLOOD: usize = 1_000;
/// Flood requests in flight at once.
const CONCURRENCY: usize = 32;

fn initialize_body(id: usize) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "fairness-test", "version": "0" } } })
    .to_string()
}

/// A client whose connections leave from `local` (any 127.0.0.0/8 address is loopback).
fn client_from(local: Ipv4Addr) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(local))
        .timeout(std::time::Duration::from_secs(20))
        .build()
        .expect("client")
}

fn with_token(rb: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
    match token {
        Some(t) => rb.bearer_auth(t),
        None => rb,
    }
}

/// Initializes a legacy session (and sends `notifications/initialized`); returns its id.
async fn open(c: &reqwest::Client, url: &str, token: Option<&str>) -> String {
    let rb = c.post(url).header("content-type", "application/json").body(initialize_body(0));
    let r = send(with_token(rb, token)).await;
    assert_eq!(r.status, 200, "{:?}", r.messages);
    let id = r.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).expect("session id").to_owned();
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_eq!(send(in_session(c, url, &id, token, note)).await.status, 202);
    id
}

fn in_session(c: &reqwest::Client, url: &str, id: &str, token: Option<&str>, body: Value) -> reqwest::RequestBuilder {
    let rb = c
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", id)
        .body(body.to_string());
    with_token(rb, token)
}

/// `ping` in session `id`: the reply's status (200 while the session lives, 404 once gone).
async fn ping(c: &reqwest::Client, url: &str, id: &str, token: Option<&str>) -> u16 {
    let r = send(in_session(c, url, id, token, json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))).await;
    if r.status == 200 {
        // The fixture adds a trace in `_meta`; the everything server answers `{}`.
        assert!(r.last()["result"].is_object(), "{:?}", r.messages);
    }
    r.status
}

/// What a flood of `initialize` requests got: the count per HTTP status, and one 429 reply.
struct Flood {
    sent: usize,
    statuses: BTreeMap<u16, usize>,
    refusal: Option<Reply>,
}

async fn flood(c: &reqwest::Client, url: &str, token: Option<&str>, sent: usize) -> Flood {
    let replies = futures::stream::iter(1..=sent)
        .map(|i| {
            let rb = c.post(url).header("content-type", "application/json").body(initialize_body(i));
            send(with_token(rb, token))
        })
        .buffer_unordered(CONCURRENCY);
    let mut replies = std::pin::pin!(replies);
    let mut out = Flood { sent, statuses: BTreeMap::new(), refusal: None };
    while let Some(r) = replies.next().await {
        *out.statuses.entry(r.status).or_default() += 1;
        if r.status == 429 && out.refusal.is_none() {
            out.refusal = Some(r);
        }
    }
    out
}

/// The flood was served up to its burst and then refused with 429, `Retry-After` and an
/// actionable `-32600` naming `client`.
fn check_refused(f: &Flood, client: &str) {
    let served = f.statuses.get(&200).copied().unwrap_or_default();
    let refused = f.statuses.get(&429).copied().unwrap_or_default();
    assert_eq!(served + refused, f.sent, "only 200 and 429 expected: {:?}", f.statuses);
    // The bucket starts full (64) and only refills; more than that is a matter of time.
    assert!(served >= 64 && refused > 0, "{:?}", f.statuses);
    let r = f.refusal.as_ref().expect("a 429 reply");
    let retry = r.headers.get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    assert!(retry.is_some_and(|s| s >= 1), "Retry-After in whole seconds: {:?}", r.headers);
    assert_eq!(r.error_code(), Some(-32600), "{:?}", r.messages);
    let message = r.last()["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(client) && message.contains("reuse a session"), "{message}");
}

#[tokio::test]
async fn an_anonymous_flood_from_one_address_leaves_another_address_s_session_alone() {
    let srv = HttpServer::start("everything");
    let other = client_from(Ipv4Addr::new(127, 0, 0, 2));
    let session = open(&other, &srv.url, None).await;
    assert_eq!(ping(&other, &srv.url, &session, None).await, 200);

    let f = flood(&client_from(Ipv4Addr::LOCALHOST), &srv.url, None, FLOOD).await;
    assert_eq!(ping(&other, &srv.url, &session, None).await, 200, "the other address's session survives");
    check_refused(&f, "address 127.0.0.1");
}

#[tokio::test]
async fn a_principal_s_flood_leaves_other_principals_and_anonymous_callers_alone() {
    let srv = HttpServer::start_with("fixture", &["--auth"]);
    // Everyone on one address: only the principal tells the clients apart.
    let c = client_from(Ipv4Addr::LOCALHOST);
    let admin = open(&c, &srv.url, Some("admin-token")).await;

    let f = flood(&c, &srv.url, Some("user-token"), PRINCIPAL_FLOOD).await;
    assert_eq!(ping(&c, &srv.url, &admin, Some("admin-token")).await, 200, "admin's session survives");
    check_refused(&f, "principal \"user\"");
    // Anonymous callers from the same address have a quota of their own.
    let anonymous = open(&c, &srv.url, None).await;
    assert_eq!(ping(&c, &srv.url, &anonymous, None).await, 200);
}
