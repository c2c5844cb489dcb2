//! In-process tests of the Tasks extension with fake stores and executors: requirements A5, A8,
//! A15, D14-D21, D23-D26, driven through the runtime's `TestClient`.

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::methods::ToolsCall;
use switchyard::prelude::*;
use switchyard::testing::TestClient;
use switchyard_tasks::{
    CurrentTask, InMemoryTaskStore, InProcessExecutor, PutInput, RegisteredExecutor, StartError, StoreError,
    TaskExecution, TaskExecutor, TaskRecord, TaskState, TaskStore, TasksExtension, Transition, request_input,
    set_status_message,
};

const TASKS: &str = "io.modelcontextprotocol/tasks";

// ---------------------------------------------------------------------------------------------
// A store that counts calls and fails on request.

#[derive(Default)]
struct FakeStore {
    inner: InMemoryTaskStore,
    creates: AtomicUsize,
    fail_create: AtomicBool,
    fail_next_completion: AtomicBool,
    /// Every completion write fails while everything else works (a result the store refuses).
    refuse_completions: AtomicBool,
    /// Every read fails as a corrupt record would: not a store that is down.
    corrupt_reads: AtomicBool,
    fail_next_put: AtomicBool,
    fail_next_failed_mark: AtomicBool,
    ids: Mutex<Vec<String>>,
}

impl FakeStore {
    fn count(&self) -> usize {
        self.ids.lock().expect("ids").len()
    }
}

impl TaskStore for FakeStore {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        self.creates.fetch_add(1, Ordering::SeqCst);
        if self.fail_create.load(Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError::unavailable_because("disk full")) });
        }
        self.ids.lock().expect("ids").push(task.id.clone());
        self.inner.create(task)
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        if self.corrupt_reads.load(Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError::data("stored task state is unreadable")) });
        }
        self.inner.get(id)
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        if matches!(state, TaskState::Failed(_)) && self.fail_next_failed_mark.swap(false, Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError::unavailable_because("write failed")) });
        }
        if matches!(state, TaskState::Completed(_))
            && (self.fail_next_completion.swap(false, Ordering::SeqCst)
                || self.refuse_completions.load(Ordering::SeqCst))
        {
            return Box::pin(async { Err(StoreError::unavailable_because("write failed")) });
        }
        self.inner.transition(id, state, status_message, now_ms)
    }

    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        self.inner.purge_expired(now_ms)
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a str,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        self.inner.set_status_message(id, status_message, now_ms)
    }

    fn put_input_responses<'a>(
        &'a self,
        id: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<PutInput, StoreError>> {
        if self.fail_next_put.swap(false, Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError::unavailable_because("connection reset")) });
        }
        self.inner.put_input_responses(id, responses, now_ms)
    }

    fn input_responses<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Map<String, Value>, StoreError>> {
        self.inner.input_responses(id)
    }

    fn remove_input_responses<'a>(&'a self, id: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.remove_input_responses(id, keys)
    }
}

// ---------------------------------------------------------------------------------------------
// Executors.

/// Counts `start` calls; keeps every execution; optionally runs it, disposes it, or fails.
#[derive(Default)]
struct FakeExecutor {
    starts: AtomicUsize,
    mode: Mutex<Mode>,
    held: Mutex<Vec<TaskExecution>>,
    latch: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    started: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
}

#[derive(Default, Clone, Copy, PartialEq)]
enum Mode {
    #[default]
    Hold,
    Run,
    DisposeOnly,
    Fail,
}

impl FakeExecutor {
    fn with(mode: Mode) -> Arc<Self> {
        let e = Arc::new(FakeExecutor::default());
        *e.mode.lock().expect("mode") = mode;
        e
    }
    fn held(&self) -> TaskExecution {
        self.held.lock().expect("held").last().cloned().expect("an execution")
    }
}

struct Shared(Arc<FakeExecutor>);

impl TaskExecutor for Shared {
    fn start(&self, execution: TaskExecution) -> BoxFuture<'static, Result<(), StartError>> {
        let e = self.0.clone();
        Box::pin(async move {
            e.starts.fetch_add(1, Ordering::SeqCst);
            if let Some(tx) = e.started.lock().expect("started").take() {
                let _ = tx.send(());
            }
            let latch = e.latch.lock().expect("latch").take();
            if let Some(rx) = latch {
                let _ = rx.await;
            }
            e.held.lock().expect("held").push(execution.clone());
            match *e.mode.lock().expect("mode") {
                Mode::Hold => Ok(()),
                Mode::Run => {
                    tokio::spawn(async move { execution.run_tool_pipeline().await });
                    Ok(())
                }
                Mode::DisposeOnly => {
                    execution.dispose();
                    execution.dispose();
                    Ok(())
                }
                Mode::Fail => Err(StartError::Unavailable("queue down".into())),
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Probe: what the filters and tools saw.

#[derive(Default)]
struct Probe {
    store: Mutex<Option<Arc<FakeStore>>>,
    seen: Mutex<Vec<(String, usize, bool)>>,
    counts: Mutex<std::collections::BTreeMap<String, usize>>,
    alt_ctx: Mutex<Option<RequestContext>>,
    same_ctx_in_ord: Mutex<Option<bool>>,
    scope_dropped_after_tool: Arc<AtomicBool>,
    tool_done: Arc<AtomicBool>,
}

impl Probe {
    fn record(&self, label: &str, ctx: &RequestContext) {
        let n = self.store.lock().expect("store").as_ref().map_or(0, |s| s.count());
        let background = CurrentTask::of(ctx).is_some();
        self.seen.lock().expect("seen").push((label.to_owned(), n, background));
        *self.counts.lock().expect("counts").entry(label.to_owned()).or_default() += 1;
    }
    fn count(&self, label: &str) -> usize {
        self.counts.lock().expect("counts").get(label).copied().unwrap_or(0)
    }
}

/// Sets its flag when the request scope holding it is dropped, if the tool had finished.
struct ScopeGuard {
    dropped: Arc<AtomicBool>,
    tool_done: Arc<AtomicBool>,
}

impl Clone for ScopeGuard {
    fn clone(&self) -> Self {
        ScopeGuard { dropped: Arc::new(AtomicBool::new(false)), tool_done: self.tool_done.clone() }
    }
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        if self.tool_done.load(Ordering::SeqCst) {
            self.dropped.store(true, Ordering::SeqCst);
        }
    }
}

#[mcp_filter(alternate, rpc = ToolsCall, order = 500, group = "in_process")]
async fn alt_pre(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    if let Some(p) = req.ctx.state::<Arc<Probe>>() {
        p.record("altPre", &req.ctx);
        *p.alt_ctx.lock().expect("alt ctx") = Some(req.ctx.clone());
    }
    next.run(req).await
}

#[mcp_filter(alternate, rpc = ToolsCall, order = 1500, group = "in_process")]
async fn alt_post(
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Alternate<CallToolResult>, McpError> {
    if let Some(p) = req.ctx.state::<Arc<Probe>>() {
        p.record("altPost", &req.ctx);
    }
    if req.params.name == "alt_inside" {
        return Ok(Alternate::Other(json!({ "resultType": "complete", "other": true })));
    }
    next.run(req).await
}

#[mcp_filter(rpc = ToolsCall, order = 1, group = "in_process")]
async fn ord(
    req: TypedRequest<CallToolParams>,
    next: Next<CallToolParams, CallToolResult>,
) -> Result<CallToolResult, McpError> {
    if let Some(p) = req.ctx.state::<Arc<Probe>>() {
        p.record("ord", &req.ctx);
        let alt = p.alt_ctx.lock().expect("alt ctx").clone();
        *p.same_ctx_in_ord.lock().expect("same") = alt.map(|a| a.same_context(&req.ctx));
        req.ctx
            .extensions()
            .insert(ScopeGuard { dropped: p.scope_dropped_after_tool.clone(), tool_done: p.tool_done.clone() });
    }
    next.run(req).await
}

/// A job: counts its runs.
#[mcp_tool(task_support = "optional", group = "in_process")]
async fn work(ctx: RequestContext) -> Result<String, ToolError> {
    if let Some(p) = ctx.state::<Arc<Probe>>() {
        p.record("tool", &ctx);
        p.tool_done.store(true, Ordering::SeqCst);
    }
    Ok("worked".to_owned())
}

/// Needs the role admin.
#[mcp_tool(task_support = "optional", roles = ["admin"], group = "in_process")]
async fn secret(ctx: RequestContext) -> Result<String, ToolError> {
    if let Some(p) = ctx.state::<Arc<Probe>>() {
        p.record("tool:secret", &ctx);
    }
    Ok("secret".to_owned())
}

/// An inner alternate filter answers for it.
#[mcp_tool(task_support = "optional", group = "in_process")]
async fn alt_inside() -> Result<String, ToolError> {
    Ok("never".to_owned())
}

/// Waits for cancellation (at most a minute).
#[mcp_tool(task_support = "optional", group = "in_process")]
async fn wait_cancel(cancel: CancellationToken) -> Result<String, ToolError> {
    tokio::select! {
        _ = cancel.cancelled() => Err(ToolError::new("cancelled")),
        _ = tokio::time::sleep(Duration::from_secs(60)) => Ok("timed out".to_owned()),
    }
}

/// Asks the client for a name through the task's input requests.
#[mcp_tool(task_support = "required", group = "in_process")]
async fn ask(ctx: RequestContext) -> Result<String, ToolError> {
    let mut requests = Map::new();
    requests.insert(
        "name_1".into(),
        json!({ "method": "elicitation/create", "params": { "mode": "form", "message": "Name?",
            "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } } } }),
    );
    let answers = request_input(&ctx, requests).await.map_err(|e| ToolError::new(e.message()))?;
    Ok(format!("Hello, {}!", answers["name_1"]["content"]["name"].as_str().unwrap_or("?")))
}

// ---------------------------------------------------------------------------------------------
// Harness.

struct Harness {
    server: Server,
    client: TestClient,
    store: Arc<FakeStore>,
    probe: Arc<Probe>,
}

fn harness(configure: impl FnOnce(TasksExtension) -> TasksExtension, registered: Option<Arc<FakeExecutor>>) -> Harness {
    let store = Arc::new(FakeStore::default());
    let probe = Arc::new(Probe::default());
    *probe.store.lock().expect("store") = Some(store.clone());
    // Not the other modules' tools and filters, which share this binary's registry;
    // installing the extension adds its own group.
    let mut builder = Server::builder("tasks-test", "0").groups(["in_process"]).state(probe.clone());
    if let Some(r) = registered {
        builder = builder.state(RegisteredExecutor(Arc::new(Shared(r))));
    }
    let ext = configure(TasksExtension::new().shared_store(store.clone()));
    let server = ext.install(builder).build().expect("builds");
    let client = TestClient::modern(server.clone()).with_capabilities(json!({ "extensions": { TASKS: {} } }));
    Harness { server, client, store, probe }
}

impl Harness {
    async fn create(&self, tool: &str) -> String {
        let r = self.client.call_tool(tool, json!({})).await;
        assert_eq!(r.result()["resultType"], "task", "{}", r.response);
        r.result()["taskId"].as_str().expect("taskId").to_owned()
    }

    async fn get(&self, id: &str) -> Value {
        self.client.request("tasks/get", json!({ "taskId": id })).await.response
    }

    async fn wait_terminal(&self, id: &str) -> Value {
        for _ in 0..400 {
            let r = self.get(id).await;
            let s = r["result"]["status"].as_str().unwrap_or_else(|| panic!("a task: {r}")).to_owned();
            if ["completed", "failed", "cancelled"].contains(&s.as_str()) {
                return r["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {id} did not end within 10 s");
    }
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[tokio::test]
async fn a5_a4_a8_position_in_the_alternate_chain_and_a_fresh_scope() {
    let h = harness(|e| e, None);
    let id = h.create("work").await;
    let done = h.wait_terminal(&id).await;
    assert_eq!(done["result"]["content"][0]["text"], "worked");
    let seen = h.probe.seen.lock().expect("seen").clone();
    let expected: Vec<(String, usize, bool)> = vec![
        ("altPre".into(), 0, false),
        ("altPost".into(), 1, true),
        ("ord".into(), 1, true),
        ("tool".into(), 1, true),
    ];
    assert_eq!(seen, expected);
    assert_eq!((h.probe.count("ord"), h.probe.count("tool")), (1, 1));
    // A8: the ordinary filter saw another context than the alternate filter, and the task's
    // request scope was dropped after the tool ran.
    assert_eq!(*h.probe.same_ctx_in_ord.lock().expect("same"), Some(false));
    for _ in 0..200 {
        if h.probe.scope_dropped_after_tool.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(h.probe.scope_dropped_after_tool.load(Ordering::SeqCst), "scope dropped after the tool ran");
    // A direct call goes through the same chain synchronously.
    h.probe.seen.lock().expect("seen").clear();
    let direct = TestClient::modern(h.server.clone());
    let r = direct.call_tool("work", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "worked");
    let seen = h.probe.seen.lock().expect("seen").clone();
    let labels: Vec<(&str, bool)> = seen.iter().map(|(l, _, bg)| (l.as_str(), *bg)).collect();
    assert_eq!(labels, [("altPre", false), ("altPost", false), ("ord", false), ("tool", false)]);
}

#[tokio::test]
async fn a15_an_inner_alternate_fails_the_task() {
    let h = harness(|e| e, None);
    let id = h.create("alt_inside").await;
    let t = h.wait_terminal(&id).await;
    assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32603)), "{t}");
    assert!(t.get("result").is_none());
    assert_eq!(h.store.count(), 1);
}

#[tokio::test]
async fn d14_d20_a_held_execution_runs_the_pipeline_later_exactly_once() {
    let exec = FakeExecutor::with(Mode::Hold);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    let id = h.create("work").await;
    assert_eq!(h.get(&id).await["result"]["status"], "working");
    assert_eq!((h.probe.count("ord"), h.probe.count("tool")), (0, 0), "nothing ran yet");
    let execution = exec.held();
    assert_eq!(execution.task_id(), id);
    assert_eq!(execution.info().state, TaskState::Working);
    assert_eq!(execution.params().expect("params").name, "work");
    assert!(execution.request().is_some());
    assert!(execution.run_tool_pipeline().await);
    assert!(!execution.run_tool_pipeline().await, "runs once");
    let t = h.get(&id).await;
    assert_eq!(t["result"]["status"], "completed", "{t}");
    assert_eq!(t["result"]["result"]["content"][0]["text"], "worked");
    assert_eq!((h.probe.count("ord"), h.probe.count("tool")), (1, 1));
}

#[tokio::test]
async fn d20_dispose_only_runs_nothing_here() {
    let exec = FakeExecutor::with(Mode::DisposeOnly);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    let id = h.create("work").await;
    assert_eq!(h.get(&id).await["result"]["status"], "working");
    let execution = exec.held();
    assert!(execution.request().is_none(), "disposed");
    assert!(!execution.run_tool_pipeline().await);
    assert_eq!((h.probe.count("ord"), h.probe.count("tool")), (0, 0));
}

#[tokio::test]
async fn d16_the_explicit_executor_wins_over_the_registered_one() {
    let explicit = FakeExecutor::with(Mode::Run);
    let registered = FakeExecutor::with(Mode::Run);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(explicit.clone()))), Some(registered.clone()));
    let id = h.create("work").await;
    assert_eq!(h.wait_terminal(&id).await["status"], "completed");
    assert_eq!((explicit.starts.load(Ordering::SeqCst), registered.starts.load(Ordering::SeqCst)), (1, 0));
    // Without an explicit one, the registered one is used.
    let h = harness(|e| e, Some(registered.clone()));
    let id = h.create("work").await;
    assert_eq!(h.wait_terminal(&id).await["status"], "completed");
    assert_eq!(registered.starts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn d15_the_default_executor_behaves_like_the_explicit_in_process_one() {
    for h in [harness(|e| e, None), harness(|e| e.executor(InProcessExecutor), None)] {
        let id = h.create("wait_cancel").await;
        let ack = h.client.request("tasks/cancel", json!({ "taskId": id })).await;
        assert_eq!(ack.result()["resultType"], "complete");
        assert_eq!(h.wait_terminal(&id).await["status"], "cancelled");
    }
}

#[tokio::test]
async fn d17_the_response_waits_for_start() {
    let exec = FakeExecutor::with(Mode::Run);
    let (release, latch) = tokio::sync::oneshot::channel();
    let (started_tx, started) = tokio::sync::oneshot::channel();
    *exec.latch.lock().expect("latch") = Some(latch);
    *exec.started.lock().expect("started") = Some(started_tx);
    let h = Arc::new(harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None));
    let h2 = h.clone();
    let call = tokio::spawn(async move { h2.client.call_tool("work", json!({})).await });
    started.await.expect("start was called");
    // start is blocked on the latch, so the response cannot have been sent.
    assert!(!call.is_finished());
    release.send(()).expect("release");
    let r = tokio::time::timeout(Duration::from_secs(10), call).await.expect("answered").expect("joined");
    assert_eq!(r.result()["resultType"], "task");
}

#[tokio::test]
async fn d18_a_failed_start_marks_the_task_failed_before_the_response() {
    let exec = FakeExecutor::with(Mode::Fail);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    let id = h.create("work").await;
    let t = h.get(&id).await;
    assert_eq!(t["result"]["status"], "failed", "{t}");
    assert_eq!(t["result"]["error"]["code"], -32603);
    assert!(t["result"]["error"]["message"].as_str().is_some_and(|m| m.contains("queue down")));
    assert!(exec.held().request().is_none(), "the scope was released");
    assert_eq!(h.probe.count("tool"), 0);
}

#[tokio::test]
async fn d18_a_failed_start_the_store_cannot_record_at_once_is_recorded_later() {
    let exec = FakeExecutor::with(Mode::Fail);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    h.store.fail_next_failed_mark.store(true, Ordering::SeqCst);
    let id = h.create("work").await;
    let t = h.wait_terminal(&id).await;
    assert!(!h.store.fail_next_failed_mark.load(Ordering::SeqCst), "the first write failed");
    assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32603)), "{t}");
    assert!(t["error"]["message"].as_str().is_some_and(|m| m.contains("queue down")), "the start's own error: {t}");
    assert_eq!(h.probe.count("tool"), 0);
}

#[tokio::test]
async fn d19_a6_a_denied_call_reaches_neither_store_nor_executor() {
    let exec = FakeExecutor::with(Mode::Run);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    let r = h.client.call_tool("secret", json!({})).await;
    assert_eq!(r.error_code(), Some(-32600), "{}", r.response);
    assert_eq!((h.store.creates.load(Ordering::SeqCst), exec.starts.load(Ordering::SeqCst)), (0, 0));
    assert_eq!(h.probe.count("altPre"), 0, "authorization is outside every alternate filter");
}

#[tokio::test]
async fn d21_cancel_reaches_an_execution_held_elsewhere() {
    let exec = FakeExecutor::with(Mode::Hold);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    let id = h.create("work").await;
    let execution = exec.held();
    assert!(!execution.cancellation().is_cancelled());
    let ack = h.client.request("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(ack.result()["resultType"], "complete");
    assert!(execution.cancellation().is_cancelled());
    assert_eq!(h.get(&id).await["result"]["status"], "cancelled");
    // A late run records nothing: cancelled stays.
    execution.run_tool_pipeline().await;
    assert_eq!(h.get(&id).await["result"]["status"], "cancelled");
}

/// The extension's own registrations are served whatever groups the application selects,
/// also when it selects them after installing: a `required` tool is refused without the
/// extension (its filter runs) and `tasks/get` is the extension's (`-32602` for an unknown
/// task, not `-32601`).
#[tokio::test]
async fn installing_before_the_group_selection_keeps_the_extensions_registrations() {
    let server = TasksExtension::new()
        .install(Server::builder("order", "0").state(Arc::new(Probe::default())))
        .groups(["in_process"])
        .build()
        .expect("builds");
    let plain = TestClient::modern(server.clone());
    let refused = plain.call_tool("ask", json!({})).await;
    assert_eq!(refused.response["error"]["code"], -32021, "{}", refused.response);
    let client = TestClient::modern(server).with_capabilities(json!({ "extensions": { TASKS: {} } }));
    let unknown = client.request("tasks/get", json!({ "taskId": "none" })).await;
    assert_eq!(unknown.response["error"]["code"], -32602, "{}", unknown.response);
}

#[tokio::test]
async fn d23_expired_tasks_are_unknown() {
    let h = harness(|e| e.ttl(Some(Duration::from_millis(50))), None);
    let id = h.create("work").await;
    let r = h.client.call_tool("work", json!({})).await;
    assert_eq!(r.result()["ttlMs"], 50);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(h.get(&id).await["error"]["code"], -32602);
    assert_eq!(h.store.inner.get(&id).await.expect("store works"), None, "purged");
}

#[tokio::test]
async fn d24_seam_input_requests_inside_a_task() {
    let h = harness(|e| e, None);
    let id = h.create("ask").await;
    let mut t = Value::Null;
    for _ in 0..400 {
        t = h.get(&id).await;
        if t["result"]["status"] == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(t["result"]["status"], "input_required", "{t}");
    assert_eq!(t["result"]["inputRequests"]["name_1"]["method"], "elicitation/create");
    let ack = h
        .client
        .request(
            "tasks/update",
            json!({ "taskId": id, "inputResponses": { "name_1": { "action": "accept", "content": { "name": "Ada" } } } }),
        )
        .await;
    assert_eq!(ack.result()["resultType"], "complete");
    let done = h.wait_terminal(&id).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
}

#[tokio::test]
async fn d25_a_failed_outcome_write_is_retried_and_the_result_kept() {
    let h = harness(|e| e, None);
    h.store.fail_next_completion.store(true, Ordering::SeqCst);
    let id = h.create("work").await;
    let t = h.wait_terminal(&id).await;
    assert!(!h.store.fail_next_completion.load(Ordering::SeqCst), "the first write failed");
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["result"]["content"][0]["text"], "worked", "{t}");
}

#[tokio::test]
async fn d25_an_outcome_the_answering_store_keeps_refusing_fails_the_task() {
    let h = harness(|e| e, None);
    h.store.refuse_completions.store(true, Ordering::SeqCst);
    let id = h.create("work").await;
    let t = h.wait_terminal(&id).await;
    assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32603)), "{t}");
    let message = t["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("could not be recorded"), "{t}");
}

#[tokio::test]
async fn d26_an_outcome_refused_while_the_record_reads_corrupt_is_not_retried_forever() {
    let h = harness(|e| e, None);
    h.store.refuse_completions.store(true, Ordering::SeqCst);
    let id = h.create("work").await;
    // Reads fail from now on, as for a corrupt row: a retry cannot help, so each counts as a
    // refusal (a store that is down would not), and the task ends failed within the refusals'
    // backoff (about 1.5 s) rather than being retried for ever.
    h.store.corrupt_reads.store(true, Ordering::SeqCst);
    let mut ended = None;
    for _ in 0..400 {
        if let Ok(Some(t)) = h.store.inner.get(&id).await
            && t.state.is_terminal()
        {
            ended = Some(t);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let t = ended.expect("the task ended within 10 s");
    assert!(matches!(&t.state, TaskState::Failed(e) if e.message.contains("could not be recorded")), "{t:?}");
}

/// Waits until task `id` asks for input; its `tasks/get` result.
async fn wait_input_required(h: &Harness, id: &str) -> Value {
    for _ in 0..400 {
        let t = h.get(id).await;
        if t["result"]["status"] == "input_required" {
            return t["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} did not ask for input within 10 s");
}

#[tokio::test]
async fn d24_a_tasks_update_the_store_fails_changes_nothing_and_may_be_sent_again() {
    let h = harness(|e| e, None);
    let id = h.create("ask").await;
    let asking = wait_input_required(&h, &id).await;
    let update =
        json!({ "taskId": id, "inputResponses": { "name_1": { "action": "accept", "content": { "name": "Ada" } } } });
    h.store.fail_next_put.store(true, Ordering::SeqCst);
    let failed = h.client.request("tasks/update", update.clone()).await;
    assert_eq!(failed.error_code(), Some(-32603), "{}", failed.response);
    let message = failed.response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("send the same tasks/update again"), "{}", failed.response);
    let still = h.get(&id).await;
    assert_eq!(still["result"]["status"], "input_required", "{still}");
    assert_eq!(still["result"]["inputRequests"], asking["inputRequests"], "nothing changed");
    let ack = h.client.request("tasks/update", update).await;
    assert_eq!(ack.result()["resultType"], "complete", "{}", ack.response);
    let done = h.wait_terminal(&id).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
}

#[tokio::test]
async fn d26_a_failed_create_is_an_error_and_starts_nothing() {
    let exec = FakeExecutor::with(Mode::Run);
    let h = harness(|e| e.shared_executor(Arc::new(Shared(exec.clone()))), None);
    h.store.fail_create.store(true, Ordering::SeqCst);
    let r = h.client.call_tool("work", json!({})).await;
    assert_eq!(r.error_code(), Some(-32603), "{}", r.response);
    assert_eq!((exec.starts.load(Ordering::SeqCst), h.probe.count("tool")), (0, 0));
}

#[tokio::test]
async fn dynamic_tools_declare_task_support_too() {
    use switchyard::registry::TaskSupport;
    use switchyard::server::DynamicTool;
    let h = harness(|e| e, None);
    h.server
        .add_tool(
            DynamicTool::new("dyn_required", |_ctx, _args: Value| async { Ok::<_, ToolError>("dyn".to_owned()) })
                .description("runs only as a task")
                .task_support(TaskSupport::Required),
        )
        .expect("added");
    let id = h.create("dyn_required").await;
    assert_eq!(h.wait_terminal(&id).await["result"]["content"][0]["text"], "dyn");
    let plain = TestClient::modern(h.server.clone());
    let r = plain.call_tool("dyn_required", json!({})).await;
    assert_eq!(r.error_code(), Some(-32021), "{}", r.response);
    assert_eq!(r.error()["data"]["requiredCapabilities"]["extensions"][TASKS], json!({}));
    assert_eq!(h.server.table().tool("dyn_required").map(|t| t.task_support), Some(TaskSupport::Required));
}

/// Panics (a bug in a tool must not hang the client or its task).
#[mcp_tool(task_support = "optional", group = "in_process")]
async fn panics() -> Result<String, ToolError> {
    panic!("a bug in the tool")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NameForm {
    name: String,
}

/// Asks on the request path, then escalates.
#[mcp_tool(task_support = "escalate", group = "in_process")]
async fn escalating(ctx: RequestContext) -> Result<CallToolResult, McpError> {
    let name = match ctx.elicit::<NameForm>("who", "Name?").await? {
        Elicited::Accept(f) => f.name,
        _ => "nobody".to_owned(),
    };
    switchyard_tasks::escalate(&ctx, move |_ctx| async move {
        Ok(CallToolResult::success(vec![Content::text(format!("done for {name}"))]))
    })
    .await
}

#[tokio::test]
async fn a_panicking_tool_answers_minus_32603_directly_and_fails_its_task() {
    let h = harness(|e| e, None);
    let direct = TestClient::modern(h.server.clone());
    let r = direct.call_tool("panics", json!({})).await;
    assert_eq!(r.error_code(), Some(-32603), "{}", r.response);
    // The connection (and the server) go on.
    let r = direct.call_tool("work", json!({})).await;
    assert_eq!(r.result()["content"][0]["text"], "worked");
    let id = h.create("panics").await;
    let t = h.wait_terminal(&id).await;
    assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32603)), "{t}");
}

#[tokio::test]
async fn escalation_after_input_rounds_keeps_the_task_ttl() {
    let h = harness(|e| e.ttl(Some(Duration::from_secs(120))), None);
    let client = TestClient::modern(h.server.clone())
        .with_capabilities(json!({ "elicitation": {}, "extensions": { TASKS: {} } }));
    let first = client.call_tool("escalating", json!({})).await;
    assert_eq!(first.result()["resultType"], "input_required", "{}", first.response);
    let state = first.result()["requestState"].clone();
    let answer = json!({ "who": { "action": "accept", "content": { "name": "Ada" } } });
    let second = client
        .request(
            "tools/call",
            json!({ "name": "escalating", "arguments": {}, "inputResponses": answer, "requestState": state }),
        )
        .await;
    let created = second.result();
    assert_eq!(created["resultType"], "task", "{}", second.response);
    assert_eq!(created["ttlMs"], 120_000, "the task's retention, not a cache hint: {created}");
    assert!(created.get("cacheScope").is_none() && created.get("requestState").is_none(), "{created}");
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    let t = h.wait_terminal(&id).await;
    assert_eq!(t["result"]["content"][0]["text"], "done for Ada", "{t}");
    // Without the extension the same tool answers directly after its input round.
    let plain = TestClient::modern(h.server.clone()).with_capabilities(json!({ "elicitation": {} }));
    let first = plain.call_tool("escalating", json!({})).await;
    let state = first.result()["requestState"].clone();
    let direct = plain
        .request(
            "tools/call",
            json!({ "name": "escalating", "arguments": {}, "inputResponses": answer, "requestState": state }),
        )
        .await;
    assert_eq!(direct.result()["content"][0]["text"], "done for Ada", "{}", direct.response);
}

// ---------------------------------------------------------------------------------------------
// Progress and status messages inside tasks.

/// Copies "files", reporting progress with a message every few milliseconds, until cancelled.
#[mcp_tool(task_support = "required", group = "in_process")]
async fn copying(ctx: RequestContext) -> Result<String, ToolError> {
    let progress = ctx.progress();
    for done in 0u32.. {
        progress.report(f64::from(done.min(1000)), Some(1000.0), Some("copying files")).await;
        tokio::select! {
            _ = ctx.cancellation().cancelled() => return Err(ToolError::new("cancelled")),
            _ = tokio::time::sleep(Duration::from_millis(5)) => {}
        }
    }
    Ok("copied".to_owned())
}

/// Sets a status message directly, then waits for cancellation.
#[mcp_tool(task_support = "required", group = "in_process")]
async fn labelled(ctx: RequestContext) -> Result<String, ToolError> {
    set_status_message(&ctx, "warming up").map_err(|e| ToolError::new(e.message()))?;
    ctx.cancellation().cancelled().await;
    Err(ToolError::new("cancelled"))
}

/// Tries to set a status message on an ordinary request.
#[mcp_tool(group = "in_process")]
async fn not_a_task(ctx: RequestContext) -> Result<String, McpError> {
    set_status_message(&ctx, "nobody reads this")?;
    Ok("set".to_owned())
}

/// True for a `statusMessage` written from the `copying` tool's reports.
fn copying_status(message: &Value) -> bool {
    let Some(text) = message.as_str() else { return false };
    let Some(numbers) = text.strip_suffix(": copying files") else { return false };
    let Some((done, percent)) = numbers.split_once(" of 1000 (") else { return false };
    done.parse::<u32>().is_ok_and(|d| d <= 1000) && percent.strip_suffix("%)").is_some_and(|p| p.parse::<u32>().is_ok())
}

/// Polls `tasks/get` until `ready` accepts the result; panics after 10 s.
async fn wait_task(h: &Harness, id: &str, ready: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..400 {
        let t = h.get(id).await;
        if ready(&t["result"]) {
            return t["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} did not reach the expected state within 10 s: {}", h.get(id).await);
}

#[tokio::test]
async fn progress_inside_a_task_becomes_its_status_message_and_never_a_progress_notification() {
    let h = harness(|e| e, None);
    let created = h
        .client
        .request("tools/call", json!({ "name": "copying", "arguments": {}, "_meta": { "progressToken": "copy-1" } }))
        .await;
    assert_eq!(created.result()["resultType"], "task", "{}", created.response);
    let id = created.result()["taskId"].as_str().expect("taskId").to_owned();

    let listener =
        Arc::new(TestClient::modern(h.server.clone()).with_capabilities(json!({ "extensions": { TASKS: {} } })));
    let listen = {
        let (listener, id) = (listener.clone(), id.clone());
        tokio::spawn(async move {
            listener.request("subscriptions/listen", json!({ "notifications": { "taskIds": [id] } })).await
        })
    };
    let note = listener
        .wait_for_notification(
            |n| {
                n["method"] == "notifications/tasks"
                    && n["params"]["taskId"] == id.as_str()
                    && copying_status(&n["params"]["statusMessage"])
            },
            Duration::from_secs(10),
        )
        .await
        .expect("a notifications/tasks carrying the status message");
    assert_eq!(note["params"]["status"], "working", "{note}");

    let running = wait_task(&h, &id, |t| copying_status(&t["statusMessage"])).await;
    assert_eq!(running["status"], "working", "{running}");

    let ack = h.client.request("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(ack.result()["resultType"], "complete");
    let done = h.wait_terminal(&id).await;
    assert_eq!(done["status"], "cancelled", "{done}");
    listen.abort();

    let mut seen = created.notifications.clone();
    seen.extend(h.client.notifications());
    seen.extend(listener.notifications());
    let progress: Vec<&Value> = seen.iter().filter(|n| n["method"] == "notifications/progress").collect();
    assert!(progress.is_empty(), "no progress notification for a task: {progress:?}");
}

#[tokio::test]
async fn a_task_sets_its_status_message_directly_and_only_a_task_can() {
    let h = harness(|e| e, None);
    let id = h.create("labelled").await;
    let running = wait_task(&h, &id, |t| t.get("statusMessage").is_some()).await;
    assert_eq!((running["status"].clone(), running["statusMessage"].clone()), (json!("working"), json!("warming up")));
    h.client.request("tasks/cancel", json!({ "taskId": id })).await;
    assert_eq!(h.wait_terminal(&id).await["status"], "cancelled");

    let r = h.client.call_tool("not_a_task", json!({})).await;
    assert_eq!(r.error_code(), Some(-32600), "{}", r.response);
}
