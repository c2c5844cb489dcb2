//! Limits declared on a tool (`#[mcp_tool(timeout, rate_limit, max_concurrency)]` and
//! `DynamicTool::limits`): enforced on `tools/call` without any filter configured, refused at
//! build and add time when out of bounds.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use switchyard::auth::Principal;
use switchyard::context::{Connection, Notifier, Origin};
use switchyard::jsonrpc::{Message, ResultObject, parse_message};
use switchyard::prelude::*;
use switchyard::registry::ToolLimits;
use switchyard::server::DynamicTool;
use switchyard::{BuildError, ErrorCode};

const GROUP: &str = "tool-limits";

/// Two calls a minute per caller.
#[mcp_tool(group = "tool-limits", rate_limit = "2/min")]
async fn scarce() -> Result<String, ToolError> {
    Ok("scarce".to_owned())
}

/// No limits.
#[mcp_tool(group = "tool-limits")]
async fn free() -> Result<String, ToolError> {
    Ok("free".to_owned())
}

/// Calls of `single` that have started.
static SINGLE_ENTERED: AtomicUsize = AtomicUsize::new(0);
/// What lets a `single` call finish.
static SINGLE_GATE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// One call at a time; waits for the gate.
#[mcp_tool(group = "tool-limits", max_concurrency = 1)]
async fn single() -> Result<String, ToolError> {
    SINGLE_ENTERED.fetch_add(1, Ordering::SeqCst);
    let _ = SINGLE_GATE.acquire().await.map(|p| p.forget());
    Ok("single".to_owned())
}

/// Calls of `stuck` whose future was dropped.
static STUCK_DROPPED: AtomicUsize = AtomicUsize::new(0);

struct CountDrop;

impl Drop for CountDrop {
    fn drop(&mut self) {
        STUCK_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Calls of `stuck` whose cancellation token fired.
static STUCK_CANCELLED: AtomicUsize = AtomicUsize::new(0);

/// Never answers within its 2 s; counts its cancellation from work it spawned.
#[mcp_tool(group = "tool-limits", timeout = "2s")]
async fn stuck(cancel: CancellationToken) -> Result<String, ToolError> {
    let _mark = CountDrop;
    tokio::spawn(async move {
        cancel.cancelled().await;
        STUCK_CANCELLED.fetch_add(1, Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
    Ok("never".to_owned())
}

fn server() -> Server {
    Server::builder("limits", "1").groups([GROUP]).build().expect("builds")
}

/// Calls `tool` statelessly (2026-07-28) as `principal`.
fn call(
    server: &Server,
    principal: Option<&str>,
    tool: &str,
) -> impl Future<Output = Result<Value, McpError>> + Send + 'static {
    let line = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": {},
        "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {} } } });
    let Ok(Message::Request(req)) = parse_message(line.to_string().as_bytes()) else { panic!("a request") };
    let origin = Origin::new(CancellationToken::new(), Notifier::disconnected())
        .principal(principal.map(|id| Arc::new(Principal::new(id, Vec::<String>::new()))))
        .connection(Some(Connection::new(Some("10.1.2.3:4000".parse().expect("an address")))));
    let work = server.handle_request(req, None, origin);
    async move { work.await.map(ResultObject::into_value) }
}

fn reason(e: &McpError) -> Option<&str> {
    e.data().and_then(|d| d.get("reason")).and_then(Value::as_str)
}

fn text(r: Result<Value, McpError>) -> String {
    match r {
        Ok(v) => v["content"][0]["text"].as_str().unwrap_or_default().to_owned(),
        Err(e) => panic!("an error: {e}"),
    }
}

#[tokio::test]
async fn a_declared_rate_limit_refuses_the_caller_over_it_and_no_one_else() {
    let s = server();
    for _ in 0..2 {
        assert_eq!(text(call(&s, Some("alice"), "scarce").await), "scarce");
    }
    let refused = call(&s, Some("alice"), "scarce").await.expect_err("over the limit");
    assert_eq!(refused.code(), ErrorCode::INVALID_REQUEST);
    assert_eq!(reason(&refused), Some("rate_limited"));
    assert!(refused.data().and_then(|d| d["retryAfterMs"].as_u64()).is_some_and(|ms| ms > 0), "{refused}");
    assert_eq!(text(call(&s, Some("bob"), "scarce").await), "scarce", "another caller has its own quota");
    assert_eq!(text(call(&s, Some("alice"), "free").await), "free", "other tools are not limited");
}

#[tokio::test]
async fn a_declared_concurrency_cap_refuses_the_call_over_it() {
    let s = server();
    let first = tokio::spawn(call(&s, None, "single"));
    while SINGLE_ENTERED.load(Ordering::SeqCst) < 1 {
        tokio::task::yield_now().await;
    }
    let refused = call(&s, None, "single").await.expect_err("over the cap");
    assert_eq!(refused.code(), ErrorCode::INVALID_REQUEST);
    assert_eq!(reason(&refused), Some("concurrency_limit"));
    assert_eq!(SINGLE_ENTERED.load(Ordering::SeqCst), 1, "the refused call never ran");
    SINGLE_GATE.add_permits(1);
    assert_eq!(text(first.await.expect("joined")), "single");
    // The place is free again.
    SINGLE_GATE.add_permits(1);
    assert_eq!(text(call(&s, None, "single").await), "single");
}

#[tokio::test(start_paused = true)]
async fn a_declared_timeout_cancels_the_body_and_answers_an_error() {
    let s = server();
    let err = call(&s, None, "stuck").await.expect_err("timed out");
    assert_eq!(err.code(), ErrorCode::INTERNAL_ERROR);
    assert_eq!(reason(&err), Some("timeout"));
    assert_eq!(err.data().map(|d| d["timeoutMs"].clone()), Some(json!(2000)));
    assert_eq!(STUCK_DROPPED.load(Ordering::SeqCst), 1, "the body was dropped");
    for _ in 0..1000 {
        if STUCK_CANCELLED.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(STUCK_CANCELLED.load(Ordering::SeqCst), 1, "its cancellation token fired");
    assert_eq!(text(call(&s, None, "free").await), "free", "the server keeps serving");
}

#[tokio::test]
async fn run_time_tools_declare_limits_and_bad_ones_are_refused() {
    let tool = |limits: ToolLimits| {
        DynamicTool::new("dyn", |_ctx, _args: Value| async { Ok::<_, ToolError>("dyn".to_owned()) }).limits(limits)
    };
    // A server without any limited tool gets its first one at run time.
    let s = Server::builder("limits", "1").groups(["none"]).build().expect("builds");
    s.add_tool(tool(ToolLimits::NONE.rate_limit(1, Duration::from_secs(3600)))).expect("added");
    assert_eq!(text(call(&s, Some("carol"), "dyn").await), "dyn");
    let refused = call(&s, Some("carol"), "dyn").await.expect_err("over the limit");
    assert_eq!(reason(&refused), Some("rate_limited"));
    // Replaced with other limits, the tool starts afresh.
    s.add_tool(tool(ToolLimits::NONE.rate_limit(5, Duration::from_secs(3600)))).expect("replaced");
    assert_eq!(text(call(&s, Some("carol"), "dyn").await), "dyn");

    for (limits, needle) in [
        (ToolLimits::NONE.timeout(Duration::ZERO), "at least 1 ms"),
        (ToolLimits::NONE.timeout(Duration::from_secs(86_401)), "one day"),
        (ToolLimits::NONE.rate_limit(0, Duration::from_secs(1)), "at least 1 call"),
        (ToolLimits::NONE.max_concurrency(0), "at least 1"),
    ] {
        let err = s.add_tool(tool(limits)).expect_err("out of bounds");
        assert_eq!(err.code(), ErrorCode::INVALID_PARAMS, "{limits:?}");
        assert!(err.message().contains(needle), "{limits:?}: {err}");
        let built = Server::builder("limits", "1").groups(["none"]).tool(tool(limits)).build();
        match built {
            Err(BuildError::Invalid { reason, .. }) => assert!(reason.contains(needle), "{reason}"),
            other => panic!("{limits:?}: {other:?}"),
        }
    }
    assert_eq!(text(call(&s, Some("dave"), "dyn").await), "dyn", "a refused add changed nothing");
}

/// Calls of `dyn-stuck` whose cancellation token (taken before its future) fired.
static DYN_STUCK_CANCELLED: AtomicUsize = AtomicUsize::new(0);

#[tokio::test(start_paused = true)]
async fn a_declared_timeout_fires_the_token_a_run_time_tool_takes_up_front() {
    // The handler takes its token when called, before its future runs: the declared deadline
    // must already be installed then.
    let tool = DynamicTool::new("dyn-stuck", |ctx: RequestContext, _args: Value| {
        let cancel = ctx.cancellation().clone();
        async move {
            tokio::spawn(async move {
                cancel.cancelled().await;
                DYN_STUCK_CANCELLED.fetch_add(1, Ordering::SeqCst);
            });
            std::future::pending::<()>().await;
            Ok::<_, ToolError>("never".to_owned())
        }
    })
    .limits(ToolLimits::NONE.timeout(Duration::from_secs(1)));
    let s = Server::builder("limits", "1").groups(["none"]).tool(tool).build().expect("builds");
    let err = call(&s, None, "dyn-stuck").await.expect_err("timed out");
    assert_eq!(reason(&err), Some("timeout"));
    for _ in 0..1000 {
        if DYN_STUCK_CANCELLED.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(DYN_STUCK_CANCELLED.load(Ordering::SeqCst), 1, "its cancellation token fired");
}
