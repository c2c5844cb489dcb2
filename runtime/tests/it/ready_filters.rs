//! The ready filters of `switchyard::filters`, each as a raw filter value (and two through a
//! typed filter): their effect, their refusals, and what they leave alone.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;
use switchyard::auth::Principal;
use switchyard::context::{Connection, Notifier, Origin};
use switchyard::filters::{
    Audit, CachePolicy, ConcurrencyLimit, MaskErrors, MaxResultSize, Rate, RateLimit, ResultCache, Timeout,
};
use switchyard::jsonrpc::{Message, ResultObject, parse_message};
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::testing::{HttpTestServer, TestClient};
use switchyard::transport::http::HttpConfig;
use switchyard::{ErrorCode, ServerBuilder};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

const GROUP: &str = "ready-filters";

/// Answers at once.
#[mcp_tool(group = "ready-filters")]
async fn quick() -> Result<String, ToolError> {
    Ok("quick".to_owned())
}

/// Another tool that answers at once.
#[mcp_tool(group = "ready-filters")]
async fn other() -> Result<String, ToolError> {
    Ok("other".to_owned())
}

/// Set when a `hang` call's future is dropped.
static HANG_DROPPED: AtomicBool = AtomicBool::new(false);

struct MarkDropped;

impl Drop for MarkDropped {
    fn drop(&mut self) {
        HANG_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Never answers; marks its cancellation when dropped.
#[mcp_tool(group = "ready-filters")]
async fn hang() -> Result<String, ToolError> {
    let _mark = MarkDropped;
    std::future::pending::<()>().await;
    Ok("never".to_owned())
}

/// Set when the work a `spawner` call spawned saw the request's cancellation fire.
static SPAWNED_STOPPED: AtomicBool = AtomicBool::new(false);

/// Never answers; spawns work that stops when the request's cancellation token fires.
#[mcp_tool(group = "ready-filters")]
async fn spawner(cancel: CancellationToken) -> Result<String, ToolError> {
    tokio::spawn(async move {
        cancel.cancelled().await;
        SPAWNED_STOPPED.store(true, Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
    Ok("never".to_owned())
}

#[derive(Deserialize, JsonSchema)]
struct Keyed {
    key: String,
}

/// Gates by key: a call waits for one permit of its key's gate; `ENTERED` counts arrivals.
static GATES: LazyLock<Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>> = LazyLock::new(Default::default);
static ENTERED: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Default::default);

fn gate(key: &str) -> Arc<tokio::sync::Semaphore> {
    GATES
        .lock()
        .expect("gates")
        .entry(key.to_owned())
        .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(0)))
        .clone()
}

fn entered(key: &str) -> usize {
    ENTERED.lock().expect("entered").get(key).copied().unwrap_or(0)
}

/// Waits at its key's gate, then answers.
#[mcp_tool(group = "ready-filters")]
async fn gated(args: Keyed) -> Result<String, ToolError> {
    *ENTERED.lock().expect("entered").entry(args.key.clone()).or_default() += 1;
    gate(&args.key).acquire().await.map_err(ToolError::from)?.forget();
    Ok(format!("through {}", args.key))
}

#[derive(Deserialize, JsonSchema)]
struct Size {
    bytes: usize,
}

/// A text of `bytes` bytes.
#[mcp_tool(group = "ready-filters")]
async fn sized(args: Size) -> Result<String, ToolError> {
    Ok("x".repeat(args.bytes))
}

static COUNTS: LazyLock<Mutex<HashMap<String, u64>>> = LazyLock::new(Default::default);

#[derive(Deserialize, JsonSchema)]
struct Counted {
    key: String,
    #[serde(default)]
    extra: Option<String>,
    #[serde(default)]
    fail: bool,
}

/// How often it ran for `key` (any `extra`); fails as a tool when `fail`.
#[mcp_tool(group = "ready-filters")]
async fn counted(args: Counted) -> Result<String, ToolError> {
    let n = {
        let mut counts = COUNTS.lock().expect("counts");
        let n = counts.entry(args.key).or_default();
        *n += 1;
        *n
    };
    let _ = args.extra;
    if args.fail {
        return Err(ToolError::new(format!("failed, run {n}")));
    }
    Ok(format!("run {n}"))
}

/// Fails with an internal error naming an internal host.
#[mcp_tool(group = "ready-filters")]
async fn leaky() -> Result<String, McpError> {
    Err(McpError::internal("db at 10.0.0.5:5432 refused the connection"))
}

/// Panics with a message naming an internal path.
#[mcp_tool(group = "ready-filters")]
async fn explodes() -> Result<String, ToolError> {
    panic!("config at /srv/secret.toml is unreadable");
}

/// A server of this module's tools with `filters` added in order.
fn server(filters: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Server {
    filters(Server::builder("ready", "1").groups([GROUP])).build().expect("builds")
}

/// Calls `tool` with `arguments` as `principal` from `address`, statelessly (2026-07-28).
fn call(
    server: &Server,
    principal: Option<&str>,
    address: Option<&str>,
    tool: &str,
    arguments: Value,
) -> impl Future<Output = Result<Value, McpError>> + Send + 'static {
    let principal = principal.map(|id| Principal::new(id, Vec::<String>::new()));
    call_by(server, principal, address, tool, arguments)
}

/// [`call`] by a principal of any roles and scopes.
fn call_by(
    server: &Server,
    principal: Option<Principal>,
    address: Option<&str>,
    tool: &str,
    arguments: Value,
) -> impl Future<Output = Result<Value, McpError>> + Send + 'static {
    let line = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {} } } });
    let Ok(Message::Request(req)) = parse_message(line.to_string().as_bytes()) else { panic!("a request") };
    let origin = Origin::new(CancellationToken::new(), Notifier::disconnected())
        .principal(principal.map(Arc::new))
        .connection(address.map(|a| Connection::new(Some(a.parse().expect("a socket address")))));
    let work = server.handle_request(req, None, origin);
    async move { work.await.map(ResultObject::into_value) }
}

fn reason(e: &McpError) -> Option<&str> {
    e.data().and_then(|d| d.get("reason")).and_then(Value::as_str)
}

fn text(r: &Result<Value, McpError>) -> &str {
    match r {
        Ok(v) => v["content"][0]["text"].as_str().unwrap_or_default(),
        Err(e) => panic!("an error: {e}"),
    }
}

// ---- RateLimit ---------------------------------------------------------------------------

/// Each caller (principal, else address) has its own quota; over it the documented `-32600`
/// with `retryAfterMs`; other callers, addresses and methods are not limited.
#[tokio::test]
async fn a_rate_limited_caller_is_refused_and_no_other() {
    let s = server(|b| b.raw_filter(0, RateLimit::new(Rate::per_minute(2))));
    for _ in 0..2 {
        assert_eq!(text(&call(&s, Some("alice"), Some("10.0.0.1:1000"), "quick", json!({})).await), "quick");
    }
    let refused = call(&s, Some("alice"), Some("10.0.0.9:2000"), "quick", json!({})).await.expect_err("over quota");
    assert_eq!(refused.code(), ErrorCode::INVALID_REQUEST, "{refused}");
    assert_eq!(reason(&refused), Some("rate_limited"));
    let retry = refused.data().and_then(|d| d["retryAfterMs"].as_u64()).expect("retryAfterMs");
    assert!(retry > 0 && retry <= 30_000, "one call back every 30 s: {retry}");
    assert!(refused.message().contains("2/min per caller"), "{refused}");
    // Another principal from the same address has a quota of its own.
    assert_eq!(text(&call(&s, Some("bob"), Some("10.0.0.1:1000"), "quick", json!({})).await), "quick");
    // Anonymous callers are counted by address (any port).
    for port in [1, 2] {
        assert!(call(&s, None, Some(&format!("10.0.0.2:{port}")), "quick", json!({})).await.is_ok());
    }
    let anon = call(&s, None, Some("10.0.0.2:3"), "quick", json!({})).await.expect_err("over quota");
    assert_eq!(reason(&anon), Some("rate_limited"));
    assert!(call(&s, None, Some("10.0.0.3:1"), "quick", json!({})).await.is_ok());
    // Only tools/call is counted.
    let client = TestClient::modern(s);
    for _ in 0..4 {
        assert!(client.request("tools/list", json!({})).await.result()["tools"].is_array());
    }
}

/// A per-tool limit (what `rate_limit = "1/min"` on a tool declares) counts only that tool.
#[tokio::test]
async fn a_per_tool_limit_counts_only_its_tool() {
    let s = server(|b| b.raw_filter(0, RateLimit::per_tool("other", "1/min".parse().expect("a rate"))));
    assert!(call(&s, Some("a"), None, "other", json!({})).await.is_ok());
    let refused = call(&s, Some("a"), None, "other", json!({})).await.expect_err("second call");
    assert!(refused.message().contains("tools/call of \"other\""), "{refused}");
    for _ in 0..3 {
        assert!(call(&s, Some("a"), None, "quick", json!({})).await.is_ok());
    }
}

/// On the stateless HTTP wire the refused request is HTTP 429 with `Retry-After`.
#[tokio::test]
async fn a_rate_limited_http_request_is_429_with_retry_after() {
    let s = server(|b| b.raw_filter(0, RateLimit::new(Rate::per_minute(1))));
    let http = HttpTestServer::start(s, HttpConfig::default()).await.expect("a loopback port");
    let post = || {
        let meta = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {} });
        let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": { "name": "quick", "arguments": {}, "_meta": meta } });
        reqwest::Client::new()
            .post(http.url())
            .timeout(Duration::from_secs(20))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "quick")
            .body(body.to_string())
            .send()
    };
    let first = post().await.expect("sent");
    assert_eq!(first.status(), 200);
    let second = post().await.expect("sent");
    assert_eq!(second.status(), 429);
    let retry: u64 = second
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry), "{retry}");
    let body: Value = second.json().await.expect("JSON");
    assert_eq!(body["id"], 7);
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "rate_limited", "{body}");
}

/// A typed filter makes the same check through `RateLimit::check`.
static TYPED_LIMIT: LazyLock<RateLimit> = LazyLock::new(|| RateLimit::per_tool("quick", Rate::per_minute(1)));

#[mcp_filter(rpc = ToolsCall, group = "ready-typed")]
async fn typed_limit(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    if TYPED_LIMIT.counts(req.ctx.method(), Some(&req.params.name)) {
        TYPED_LIMIT.check(&req.ctx, Some(&req.params.name))?;
    }
    next.run(req).await
}

#[tokio::test]
async fn the_rate_limit_works_from_a_typed_filter() {
    let s = Server::builder("typed", "1").groups([GROUP, "ready-typed"]).build().expect("builds");
    assert!(call(&s, Some("t"), None, "quick", json!({})).await.is_ok());
    let refused = call(&s, Some("t"), None, "quick", json!({})).await.expect_err("over quota");
    assert_eq!(reason(&refused), Some("rate_limited"));
    assert!(call(&s, Some("t"), None, "other", json!({})).await.is_ok());
}

// ---- Timeout -----------------------------------------------------------------------------

/// A hung tool is cancelled at its deadline (its future dropped) and answered with the error
/// naming the limit; other tools keep serving meanwhile.
#[tokio::test(start_paused = true)]
async fn a_hung_tool_is_cancelled_at_its_deadline() {
    let s = server(|b| b.raw_filter(0, Timeout::per_tool("hang", Duration::from_millis(1500))));
    let hung = tokio::spawn(call(&s, None, None, "hang", json!({})));
    assert_eq!(text(&call(&s, None, None, "quick", json!({})).await), "quick", "unlimited, and not held up");
    let err = hung.await.expect("joined").expect_err("timed out");
    assert_eq!(err.code(), ErrorCode::INTERNAL_ERROR);
    assert_eq!(reason(&err), Some("timeout"));
    assert_eq!(err.data().map(|d| d["timeoutMs"].clone()), Some(json!(1500)));
    assert!(err.message().contains("tools/call of \"hang\" timed out after 1500 ms"), "{err}");
    assert!(HANG_DROPPED.load(Ordering::SeqCst), "the handler was cancelled");
    assert_eq!(
        Timeout::new(Duration::from_secs(2)).limit_for("subscriptions/listen", None),
        None,
        "long-lived methods are never limited"
    );
}

/// At the deadline the request's cancellation token fires, so work the handler spawned with
/// it stops too; the token is the handler's own, so the transport still answers the call (on
/// stdio a withdrawn request gets no answer).
#[tokio::test(start_paused = true)]
async fn a_deadline_fires_the_handlers_cancellation_and_the_call_is_still_answered() {
    let client = TestClient::modern(server(|b| b.raw_filter(0, Timeout::per_tool("spawner", Duration::from_secs(3)))));
    let reply = client.call_tool("spawner", json!({})).await;
    assert_eq!(reply.error_code(), Some(-32603), "answered over stdio: {:?}", reply);
    assert_eq!(reply.error()["data"]["reason"], "timeout");
    for _ in 0..1000 {
        if SPAWNED_STOPPED.load(Ordering::SeqCst) {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(SPAWNED_STOPPED.load(Ordering::SeqCst), "the spawned work saw the deadline");
    assert_eq!(
        client.call_tool("quick", json!({})).await.result()["content"][0]["text"],
        "quick",
        "the connection still serves"
    );
}

/// Set when the work a raw filter inside the deadline spawned saw the request's cancellation.
static WATCHER_STOPPED: AtomicBool = AtomicBool::new(false);

/// A raw filter that takes the request's token when the chain is made, before its future runs.
struct Watcher;

impl switchyard::RawFilter for Watcher {
    fn filter(&self, req: RawRequest, next: RawNext) -> switchyard::registry::BoxFuture<RawResponse> {
        let cancel = req.ctx.cancellation().clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            WATCHER_STOPPED.store(true, Ordering::SeqCst);
        });
        Box::pin(next.run(req))
    }
}

#[tokio::test(start_paused = true)]
async fn a_deadline_fires_the_token_a_filter_inside_it_took_up_front() {
    let s = server(|b| b.raw_filter(0, Timeout::per_tool("hang", Duration::from_secs(1))).raw_filter(1, Watcher));
    let err = call(&s, None, None, "hang", json!({})).await.expect_err("timed out");
    assert_eq!(reason(&err), Some("timeout"));
    for _ in 0..1000 {
        if WATCHER_STOPPED.load(Ordering::SeqCst) {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(WATCHER_STOPPED.load(Ordering::SeqCst), "the filter's spawned work saw the deadline");
}

static TYPED_TIMEOUT: LazyLock<Timeout> = LazyLock::new(|| Timeout::per_tool("hang", Duration::from_secs(2)));

#[mcp_filter(rpc = ToolsCall, group = "ready-typed-timeout")]
async fn typed_timeout(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    let ctx = req.ctx.clone();
    TYPED_TIMEOUT.run(&ctx, next.run(req)).await
}

#[tokio::test(start_paused = true)]
async fn the_timeout_works_from_a_typed_filter() {
    let s = Server::builder("typed", "1").groups([GROUP, "ready-typed-timeout"]).build().expect("builds");
    let err = call(&s, None, None, "hang", json!({})).await.expect_err("timed out");
    assert_eq!(reason(&err), Some("timeout"));
    assert!(err.message().contains("tools/call of \"hang\" timed out after 2000 ms"), "{err}");
    assert_eq!(text(&call(&s, None, None, "quick", json!({})).await), "quick", "other tools are not limited");
}

// ---- ConcurrencyLimit --------------------------------------------------------------------

async fn until_entered(key: &str, n: usize) {
    while entered(key) < n {
        tokio::task::yield_now().await;
    }
}

/// Over the limit a call is refused at once; with a wait it queues for the place.
#[tokio::test]
async fn a_concurrency_limit_refuses_or_queues() {
    let s = server(|b| b.raw_filter(0, ConcurrencyLimit::new().tool("gated", 1)));
    let first = tokio::spawn(call(&s, None, None, "gated", json!({ "key": "c1" })));
    until_entered("c1", 1).await;
    let refused = call(&s, None, None, "gated", json!({ "key": "c1" })).await.expect_err("over the limit");
    assert_eq!(refused.code(), ErrorCode::INVALID_REQUEST);
    assert_eq!(reason(&refused), Some("concurrency_limit"));
    assert!(refused.message().contains("at most 1 at once"), "{refused}");
    assert!(call(&s, None, None, "quick", json!({})).await.is_ok(), "other tools are not limited");
    gate("c1").add_permits(1);
    assert_eq!(text(&first.await.expect("joined")), "through c1");
    assert_eq!(entered("c1"), 1, "the refused call never ran");

    let queued = server(|b| b.raw_filter(0, ConcurrencyLimit::new().tool("gated", 1).wait(Duration::from_secs(30))));
    let a = tokio::spawn(call(&queued, None, None, "gated", json!({ "key": "c2" })));
    until_entered("c2", 1).await;
    let b = tokio::spawn(call(&queued, None, None, "gated", json!({ "key": "c2" })));
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert_eq!(entered("c2"), 1, "the second call waits for the place");
    gate("c2").add_permits(2);
    assert_eq!(text(&a.await.expect("joined")), "through c2");
    assert_eq!(text(&b.await.expect("joined")), "through c2");
    assert_eq!(entered("c2"), 2);
}

// ---- MaxResultSize -----------------------------------------------------------------------

/// A result over the cap is an error (the reply still one intact JSON line); under it, the result.
#[tokio::test]
async fn an_oversized_result_is_an_error_and_the_json_stays_intact() {
    let client = TestClient::modern(server(|b| b.raw_filter(0, MaxResultSize::new(1000))));
    let small = client.call_tool("sized", json!({ "bytes": 100 })).await;
    assert_eq!(small.result()["content"][0]["text"].as_str().map(str::len), Some(100));
    let big = client.call_tool("sized", json!({ "bytes": 5000 })).await;
    assert_eq!(big.error_code(), Some(-32603), "{big:?}");
    assert_eq!(big.error()["data"]["reason"], "result_too_large");
    assert_eq!(big.error()["data"]["limitBytes"], 1000);
    assert!(big.error()["message"].as_str().unwrap_or_default().contains("sized"), "{big:?}");
    // The connection goes on: the error was one whole message.
    assert!(client.call_tool("quick", json!({})).await.result()["content"].is_array());
}

// ---- ResultCache -------------------------------------------------------------------------

fn count(key: &str) -> u64 {
    COUNTS.lock().expect("counts").get(key).copied().unwrap_or(0)
}

/// A public entry serves every caller the same arguments (in any key order) until its TTL
/// passes; other arguments miss; failures are never kept.
#[tokio::test(start_paused = true)]
async fn a_cached_result_is_reused_within_its_ttl() {
    let cache = ResultCache::new(100).tool("counted", CachePolicy::public(Duration::from_secs(60)));
    let s = server(|b| b.raw_filter(0, cache));
    let a = call(&s, Some("alice"), None, "counted", json!({ "key": "pub", "extra": "e" })).await;
    assert_eq!(text(&a), "run 1");
    let b = call(&s, Some("bob"), None, "counted", json!({ "extra": "e", "key": "pub" })).await;
    assert_eq!(text(&b), "run 1", "a hit: same arguments, other key order, another caller");
    assert_eq!(count("pub"), 1);
    let c = call(&s, Some("alice"), None, "counted", json!({ "key": "pub", "extra": "f" })).await;
    assert_eq!(text(&c), "run 2", "other arguments miss");
    tokio::time::advance(Duration::from_secs(61)).await;
    let d = call(&s, Some("alice"), None, "counted", json!({ "key": "pub", "extra": "e" })).await;
    assert_eq!(text(&d), "run 3", "expired");
    for n in [1, 2] {
        let failed = call(&s, None, None, "counted", json!({ "key": "fail", "fail": true })).await;
        assert_eq!(text(&failed), format!("failed, run {n}"), "an isError result is never kept");
    }
    let uncached = call(&s, None, None, "quick", json!({})).await;
    assert_eq!(text(&uncached), "quick");
}

/// A hit records the primitive it answers for, as the dispatch it skips would: a filter
/// outside the cache sees it in `matched_primitive()` (and the span gets `gen_ai.tool.name`).
#[tokio::test]
async fn a_cache_hit_records_the_matched_tool() {
    let cache = ResultCache::new(100).tool("counted", CachePolicy::public(Duration::from_secs(60)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = {
        let seen = seen.clone();
        server(move |b| {
            b.raw_filter(0, move |req: RawRequest, next: RawNext| {
                let seen = seen.clone();
                async move {
                    let ctx = req.ctx.clone();
                    let out = next.run(req).await;
                    seen.lock().expect("seen").push(ctx.matched_primitive().map(str::to_owned));
                    out
                }
            })
            .raw_filter(1, cache)
        })
    };
    let args = json!({ "key": "matched" });
    assert_eq!(text(&call(&s, None, None, "counted", args.clone()).await), "run 1");
    assert_eq!(text(&call(&s, None, None, "counted", args).await), "run 1", "a hit");
    let seen = seen.lock().expect("seen").clone();
    assert_eq!(seen, [Some("counted".to_owned()), Some("counted".to_owned())], "miss, then hit");
}

/// A private entry serves its own caller only; anonymous calls are not cached.
#[tokio::test]
async fn a_private_result_is_kept_per_caller() {
    let cache = ResultCache::new(100).tool("counted", CachePolicy::private(Duration::from_secs(60)));
    let s = server(|b| b.raw_filter(0, cache));
    let args = json!({ "key": "priv" });
    assert_eq!(text(&call(&s, Some("alice"), None, "counted", args.clone()).await), "run 1");
    assert_eq!(text(&call(&s, Some("alice"), None, "counted", args.clone()).await), "run 1");
    assert_eq!(text(&call(&s, Some("bob"), None, "counted", args.clone()).await), "run 2");
    assert_eq!(text(&call(&s, None, None, "counted", args.clone()).await), "run 3");
    assert_eq!(text(&call(&s, None, None, "counted", args).await), "run 4", "anonymous: never cached");
}

/// A public entry is shared by callers with the same roles and scopes, as whole names: one
/// role whose name holds a comma is not the two roles around it.
#[tokio::test]
async fn public_entries_are_keyed_by_whole_role_names() {
    let cache = ResultCache::new(100).tool("counted", CachePolicy::public(Duration::from_secs(60)));
    let s = server(|b| b.raw_filter(0, cache));
    let args = json!({ "key": "roles" });
    let by = |p: Principal| call_by(&s, Some(p), None, "counted", args.clone());
    assert_eq!(text(&by(Principal::new("a", ["admin,staff"])).await), "run 1");
    assert_eq!(text(&by(Principal::new("b", ["admin", "staff"])).await), "run 2", "other roles miss");
    assert_eq!(text(&by(Principal::new("c", ["staff", "admin"])).await), "run 2", "the same roles hit");
    let scoped = Principal::new("d", ["admin"]).with_scopes(["staff"]);
    assert_eq!(text(&by(scoped).await), "run 3", "a scope is not a role");
}

/// A hit is answered only while the tool is served to the caller: disabled or removed, the
/// call answers what an uncached call would.
#[tokio::test]
async fn a_cached_result_of_a_tool_no_longer_served_is_not_answered() {
    let cache = ResultCache::new(100).tool("counted", CachePolicy::public(Duration::from_secs(60)));
    let s = server(|b| b.raw_filter(0, cache));
    let args = json!({ "key": "gone" });
    assert_eq!(text(&call(&s, None, None, "counted", args.clone()).await), "run 1");
    assert_eq!(text(&call(&s, None, None, "counted", args.clone()).await), "run 1");
    assert!(s.set_tool_enabled("counted", false));
    let refused = call(&s, None, None, "counted", args.clone()).await.expect_err("a disabled tool");
    assert_eq!(refused.code(), ErrorCode::INVALID_PARAMS, "{refused}");
    assert!(s.set_tool_enabled("counted", true));
    assert_eq!(text(&call(&s, None, None, "counted", args.clone()).await), "run 1", "served again");
    assert!(s.remove_tool("counted"));
    assert!(call(&s, None, None, "counted", args).await.is_err(), "a removed tool");
}

/// A TTL too long for the clock (`Duration::MAX`, "keep it") keeps the entry instead of
/// failing every call.
#[tokio::test]
async fn a_ttl_past_the_clocks_range_keeps_the_entry() {
    let cache = ResultCache::new(100).tool("counted", CachePolicy::public(Duration::MAX));
    let s = server(|b| b.raw_filter(0, cache));
    let args = json!({ "key": "forever" });
    assert_eq!(text(&call(&s, None, None, "counted", args.clone()).await), "run 1");
    assert_eq!(text(&call(&s, None, None, "counted", args).await), "run 1");
}

// ---- MaskErrors and Audit ----------------------------------------------------------------

/// Events of one target, each as its fields in text.
#[derive(Clone, Default)]
struct Events {
    seen: Arc<Mutex<Vec<BTreeMap<String, String>>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let target = event.metadata().target();
        if target == "switchyard::filters" || target == "switchyard::audit" {
            let mut fields = BTreeMap::from([("target".to_owned(), target.to_owned())]);
            event.record(&mut Fields(&mut fields));
            self.seen.lock().expect("events").push(fields);
        }
    }
}

fn capture() -> (Events, tracing::subscriber::DefaultGuard) {
    let events = Events::default();
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    // Other tests of this binary run without a subscriber and may have cached "never".
    tracing::callsite::rebuild_interest_cache();
    (events, guard)
}

/// An internal error reaches the client as a correlation id, which the server's log has with
/// the full error; a client error passes unchanged.
#[tokio::test(flavor = "current_thread")]
async fn a_masked_error_carries_a_correlation_id_that_is_in_the_log() {
    let (events, _guard) = capture();
    let s = server(|b| b.raw_filter(0, MaskErrors::new()));
    let masked = call(&s, None, None, "leaky", json!({})).await.expect_err("fails");
    assert_eq!(masked.code(), ErrorCode::INTERNAL_ERROR);
    assert!(!masked.message().contains("10.0.0.5"), "{masked}");
    let id = masked.data().and_then(|d| d["correlationId"].as_str()).expect("a correlation id").to_owned();
    assert!(masked.message().contains(&id), "{masked}");
    let seen = events.seen.lock().expect("events").clone();
    let logged = seen.iter().find(|e| e.get("correlation_id") == Some(&id)).expect("the log has the id");
    assert!(logged["error.message"].contains("10.0.0.5:5432"), "{logged:?}");
    assert_eq!(logged.get("gen_ai.tool.name").map(String::as_str), Some("leaky"), "{logged:?}");
    assert_eq!(logged.get("error.type").map(String::as_str), Some("-32603"), "{logged:?}");
    let unknown = call(&s, None, None, "no_such_tool", json!({})).await.expect_err("unknown");
    assert_eq!(unknown.code(), ErrorCode::INVALID_PARAMS);
    assert!(unknown.message().contains("no_such_tool"), "passed unchanged: {unknown}");
    assert!(unknown.data().and_then(|d| d.get("correlationId")).is_none());
}

/// One audit event per call with the caller, method, tool, duration and outcome.
#[tokio::test(flavor = "current_thread")]
async fn each_call_has_one_audit_event() {
    let (events, _guard) = capture();
    let s = server(|b| b.raw_filter(0, Audit::new()));
    assert!(call(&s, Some("alice"), Some("192.0.2.1:4000"), "quick", json!({})).await.is_ok());
    assert!(call(&s, None, None, "no_such_tool", json!({})).await.is_err());
    let client = TestClient::modern(s);
    assert!(client.request("tools/list", json!({})).await.result()["tools"].is_array());
    let audits: Vec<_> =
        events.seen.lock().expect("events").iter().filter(|e| e["target"] == "switchyard::audit").cloned().collect();
    assert_eq!(audits.len(), 2, "tools/list is not a call: {audits:?}");
    let ok = &audits[0];
    assert_eq!(ok.get("enduser.id").map(String::as_str), Some("alice"), "{ok:?}");
    assert_eq!(ok.get("client.address").map(String::as_str), Some("192.0.2.1"), "{ok:?}");
    assert_eq!(ok.get("mcp.method.name").map(String::as_str), Some("tools/call"), "{ok:?}");
    assert_eq!(ok.get("gen_ai.tool.name").map(String::as_str), Some("quick"), "{ok:?}");
    assert_eq!(ok.get("outcome").map(String::as_str), Some("ok"), "{ok:?}");
    assert!(ok.get("mcp.server.operation.duration").is_some_and(|d| d.parse::<f64>().is_ok()), "{ok:?}");
    assert!(!ok.contains_key("error.type"), "{ok:?}");
    let failed = &audits[1];
    assert_eq!(failed.get("outcome").map(String::as_str), Some("error"), "{failed:?}");
    assert_eq!(failed.get("error.type").map(String::as_str), Some("-32602"), "{failed:?}");
    assert_eq!(failed.get("gen_ai.tool.name").map(String::as_str), Some("no_such_tool"), "{failed:?}");
    assert!(!failed.contains_key("enduser.id"), "anonymous: {failed:?}");
}

/// A panicking handler is an internal error like any other to the raw filters around it:
/// masked with a correlation id the log has, and audited as an error.
#[tokio::test(flavor = "current_thread")]
async fn a_panicking_handler_is_masked_and_audited() {
    let (events, _guard) = capture();
    let s = server(|b| b.raw_filter(0, Audit::new()).raw_filter(1, MaskErrors::new()));
    let masked = call(&s, Some("alice"), None, "explodes", json!({})).await.expect_err("panics");
    assert_eq!(masked.code(), ErrorCode::INTERNAL_ERROR);
    assert!(!masked.message().contains("secret"), "{masked}");
    let id = masked.data().and_then(|d| d["correlationId"].as_str()).expect("a correlation id").to_owned();
    let seen = events.seen.lock().expect("events").clone();
    assert!(seen.iter().any(|e| e.get("correlation_id") == Some(&id)), "the log has the id: {seen:?}");
    let audits: Vec<_> = seen.iter().filter(|e| e["target"] == "switchyard::audit").collect();
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert_eq!(audits[0].get("outcome").map(String::as_str), Some("error"), "{audits:?}");
    assert_eq!(audits[0].get("enduser.id").map(String::as_str), Some("alice"), "{audits:?}");
}

/// A call withdrawn before it answers (the client cancelled it, its connection ended) is
/// audited too, as `cancelled`: a client cannot run a tool and leave no record by cancelling.
#[tokio::test(flavor = "current_thread")]
async fn a_cancelled_call_is_audited() {
    let (events, _guard) = capture();
    let s = server(|b| b.raw_filter(0, Audit::new()));
    let line = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "hang", "arguments": {},
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {} } } });
    let Ok(Message::Request(req)) = parse_message(line.to_string().as_bytes()) else { panic!("a request") };
    let cancel = CancellationToken::new();
    let origin = Origin::new(cancel.clone(), Notifier::disconnected())
        .principal(Some(Arc::new(Principal::new("mallory", Vec::<String>::new()))));
    let running = tokio::spawn(s.handle_request(req, None, origin));
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    cancel.cancel();
    let _ = running.await.expect("joined");
    let seen = events.seen.lock().expect("events").clone();
    let audits: Vec<_> = seen.iter().filter(|e| e["target"] == "switchyard::audit").collect();
    assert_eq!(audits.len(), 1, "{audits:?}");
    assert_eq!(audits[0].get("outcome").map(String::as_str), Some("cancelled"), "{audits:?}");
    assert_eq!(audits[0].get("enduser.id").map(String::as_str), Some("mallory"), "{audits:?}");
    assert_eq!(audits[0].get("gen_ai.tool.name").map(String::as_str), Some("hang"), "{audits:?}");
}

/// Callers rotating their identity do not grow the limit's memory past its bound.
#[tokio::test]
async fn the_rate_limits_keys_stay_bounded() {
    let limit = Arc::new(RateLimit::new(Rate::per_minute(1)).max_keys(8));
    let l = limit.clone();
    let s = server(move |b| {
        b.raw_filter(0, move |req: RawRequest, next: RawNext| {
            let l = l.clone();
            async move {
                l.check(&req.ctx, None)?;
                next.run(req).await
            }
        })
    });
    for i in 0..200 {
        let _ = call(&s, Some(&format!("rotating-{i}")), None, "quick", json!({})).await;
    }
    assert!(limit.keys() <= 9, "{} keys after 200 callers", limit.keys());
}
