//! Tasks across instances, in one process: two servers ("instances") share one store, and in
//! some tests one event hub, as instances behind a load balancer share PostgreSQL and NATS
//! (`docs/scaling.md`). The same behaviour over real PostgreSQL, NATS and HAProxy is tested in
//! `tests/it/cluster.rs`; here each rule is checked in isolation and quickly.

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use switchyard::prelude::*;
use switchyard::subscriptions::{DeliveryHub, Event, EventStream, InProcessHub};
use switchyard::testing::TestClient;
use switchyard_tasks::{InMemoryTaskStore, TaskRecord, TaskState, TaskStore, TasksExtension, now_ms};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// One in-process hub shared by several servers: what a broker gives instances.
#[derive(Clone, Default)]
struct SharedHub(Arc<InProcessHub>);

impl DeliveryHub for SharedHub {
    fn publish(&self, event: Event) {
        self.0.publish(event);
    }
    fn subscribe(&self) -> EventStream {
        self.0.subscribe()
    }
}

/// How often `stoppable` saw its cancellation, and when the last one came.
#[derive(Default)]
struct Stops {
    count: AtomicUsize,
    at: std::sync::Mutex<Option<Instant>>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Work {
    seconds: u64,
}

/// Records in `Stops` when the work it guards ends without finishing: the tool saw its
/// cancellation, or the task's pipeline dropped it on cancellation (whichever comes first).
struct StopGuard {
    stops: Arc<Stops>,
    finished: bool,
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        if !self.finished {
            *self.stops.at.lock().expect("stops") = Some(Instant::now());
            self.stops.count.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Works for `seconds` unless stopped; records the stop in the server's `Stops`.
#[mcp_tool(task_support = "optional", group = "across_instances")]
async fn stoppable(args: Work, ctx: RequestContext, stops: State<Arc<Stops>>) -> Result<String, ToolError> {
    let mut guard = StopGuard { stops: Arc::clone(&stops.0), finished: false };
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_secs(args.seconds)) => {
            guard.finished = true;
            Ok("worked".into())
        }
        _ = ctx.cancellation().cancelled() => Err(ToolError::new("stopped")),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NameForm {
    name: String,
}

/// Asks for a name inside the task, then greets.
#[mcp_tool(task_support = "optional", group = "across_instances")]
async fn greet_in_task(ctx: RequestContext) -> Result<String, McpError> {
    match ctx.elicit::<NameForm>("who", "Name?").await? {
        Elicited::Accept(f) => Ok(format!("Hello, {}!", f.name)),
        _ => Ok("Hello, nobody!".into()),
    }
}

struct Instance {
    client: Arc<TestClient>,
    stops: Arc<Stops>,
}

fn instance(store: Arc<InMemoryTaskStore>, hub: Option<SharedHub>, lease: Duration) -> Instance {
    let stops = Arc::new(Stops::default());
    // Not the other modules' tools and filters, which share this binary's registry;
    // installing the extension adds its own group.
    let mut builder = Server::builder("across", "0").groups(["across_instances"]).state(stops.clone());
    if let Some(hub) = hub {
        builder = builder.delivery_hub(hub).request_state_key([9u8; 32]);
    }
    let server = TasksExtension::new().shared_store(store).lease(lease).install(builder).build().expect("builds");
    let client =
        TestClient::modern(server).with_capabilities(json!({ "elicitation": {}, "extensions": { TASKS: {} } }));
    Instance { client: Arc::new(client), stops }
}

async fn create(on: &Instance, tool: &str, arguments: Value) -> String {
    let r = on.client.call_tool(tool, arguments).await;
    assert_eq!(r.result()["resultType"], "task", "{}", r.response);
    r.result()["taskId"].as_str().expect("taskId").to_owned()
}

async fn get(on: &Instance, id: &str) -> Value {
    on.client.request("tasks/get", json!({ "taskId": id })).await.response["result"].clone()
}

/// Polls `tasks/get` on `on` until `done` holds (at most 10 s).
async fn wait_until(on: &Instance, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = get(on, id).await;
        if done(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "task {id} never reached the expected state: {t}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_for_stop(stops: &Stops) -> Instant {
    let deadline = Instant::now() + Duration::from_secs(10);
    while stops.count.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the work was never stopped");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stops.at.lock().expect("stops").expect("a stop time")
}

#[tokio::test]
async fn a_cancel_answered_by_another_instance_stops_the_work_through_the_hub() {
    let (store, hub) = (Arc::new(InMemoryTaskStore::new()), SharedHub::default());
    // A lease of a minute: the renewal (every 20 s) cannot be what stops the work here.
    let a = instance(store.clone(), Some(hub.clone()), Duration::from_secs(60));
    let b = instance(store, Some(hub), Duration::from_secs(60));
    let id = create(&a, "stoppable", json!({ "seconds": 60 })).await;
    let sent = Instant::now();
    let r = b.client.request("tasks/cancel", json!({ "taskId": id })).await;
    assert!(r.response.get("error").is_none(), "{}", r.response);
    let stopped = wait_for_stop(&a.stops).await;
    eprintln!("cancel on B stopped the work on A after {:?}", stopped.saturating_duration_since(sent));
    assert_eq!(b.stops.count.load(Ordering::SeqCst), 0, "B ran nothing");
    // The late "stopped" outcome never overwrites the cancellation.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(get(&a, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn without_a_shared_hub_the_lease_renewal_stops_a_task_cancelled_elsewhere() {
    let store = Arc::new(InMemoryTaskStore::new());
    let a = instance(store.clone(), None, Duration::from_millis(300));
    let b = instance(store, None, Duration::from_millis(300));
    let id = create(&a, "stoppable", json!({ "seconds": 60 })).await;
    b.client.request("tasks/cancel", json!({ "taskId": id })).await;
    wait_for_stop(&a.stops).await;
    assert_eq!(get(&a, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn input_answered_on_another_instance_reaches_the_task_waiting_there() {
    let (store, hub) = (Arc::new(InMemoryTaskStore::new()), SharedHub::default());
    let a = instance(store.clone(), Some(hub.clone()), Duration::from_secs(15));
    let b = instance(store, Some(hub), Duration::from_secs(15));
    let id = create(&a, "greet_in_task", json!({})).await;
    let waiting = wait_until(&b, &id, |t| t["status"] == "input_required").await;
    let key = waiting["inputRequests"].as_object().and_then(|m| m.keys().next().cloned()).expect("a key");
    let answer = json!({ key: { "action": "accept", "content": { "name": "Ada" } } });
    let r = b.client.request("tasks/update", json!({ "taskId": id, "inputResponses": answer })).await;
    assert!(r.response.get("error").is_none(), "{}", r.response);
    let done = wait_until(&b, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
}

/// Without a shared hub nothing tells the waiting instance that answers came (as when the
/// broker is down): `tasks/update` on another instance stores them, and the task waiting on A
/// finds them in the store. The update changed the task before it was acknowledged, and a
/// re-send of the answered key is acknowledged and ignored.
#[tokio::test]
async fn input_answered_on_another_instance_without_a_shared_hub_reaches_the_task_through_the_store() {
    let store = Arc::new(InMemoryTaskStore::new());
    let a = instance(store.clone(), None, Duration::from_millis(900));
    let b = instance(store, None, Duration::from_millis(900));
    let id = create(&a, "greet_in_task", json!({})).await;
    let waiting = wait_until(&b, &id, |t| t["status"] == "input_required").await;
    let key = waiting["inputRequests"].as_object().and_then(|m| m.keys().next().cloned()).expect("a key");
    let update =
        json!({ "taskId": id, "inputResponses": { key: { "action": "accept", "content": { "name": "Ada" } } } });
    let r = b.client.request("tasks/update", update.clone()).await;
    assert!(r.response.get("error").is_none(), "{}", r.response);
    assert_ne!(get(&b, &id).await["status"], "input_required", "stored before the acknowledgement");
    let again = b.client.request("tasks/update", update).await;
    assert!(again.response.get("error").is_none(), "{}", again.response);
    let done = wait_until(&b, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!", "{done}");
}

fn orphan(id: &str, lease_expires_at_ms: u64) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.to_owned(),
        owner: None,
        state: TaskState::Working,
        status_message: None,
        created_at_ms: now,
        last_updated_at_ms: now,
        ttl_ms: Some(60_000),
        poll_interval_ms: Some(500),
        lease_expires_at_ms: Some(lease_expires_at_ms),
    }
}

#[tokio::test]
async fn a_task_of_a_dead_instance_fails_when_read_and_in_the_background() {
    let store = Arc::new(InMemoryTaskStore::new());
    let b = instance(store.clone(), None, Duration::from_millis(300));
    // Left `working` by an instance that died: its lease passed a second ago.
    store.create(orphan("t_read", now_ms() - 1000)).await.expect("stored");
    // A process judges no lease in its first lease: it may have started at the end of a store
    // outage, when live runners have not renewed yet.
    assert_eq!(get(&b, "t_read").await["status"], "working");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = get(&b, "t_read").await;
    assert_eq!((t["status"].clone(), t["error"]["code"].clone()), (json!("failed"), json!(-32603)), "{t}");
    // One more, whose lease runs out later, is failed by the background sweep without a read;
    // listeners hear it.
    let listen = b.client.clone();
    let open = tokio::spawn(async move {
        listen.request("subscriptions/listen", json!({ "notifications": { "taskIds": ["t_sweep"] } })).await
    });
    store.create(orphan("t_sweep", now_ms() + 200)).await.expect("stored");
    let note = b
        .client
        .wait_for_notification(
            |n| n["method"] == "notifications/tasks" && n["params"]["taskId"] == "t_sweep",
            Duration::from_secs(10),
        )
        .await
        .expect("the sweep announces the failed task");
    assert_eq!(note["params"]["status"], "failed", "{note}");
    let stored = store.get("t_sweep").await.expect("readable").expect("kept");
    assert!(matches!(stored.state, TaskState::Failed(_)), "{stored:?}");
    open.abort();
}

#[tokio::test]
async fn a_task_that_keeps_running_keeps_its_lease() {
    let store = Arc::new(InMemoryTaskStore::new());
    let a = instance(store.clone(), None, Duration::from_millis(150));
    let id = create(&a, "stoppable", json!({ "seconds": 2 })).await;
    // Ten leases long: only the renewals keep it alive.
    let t = wait_until(&a, &id, |t| t["status"] != "working").await;
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(a.stops.count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn ids_no_store_can_hold_are_unknown_without_asking_the_store() {
    let a = instance(Arc::new(InMemoryTaskStore::new()), None, Duration::from_secs(15));
    let long = "t".repeat(10_000);
    for id in ["a\u{0}b", long.as_str()] {
        for method in ["tasks/get", "tasks/cancel"] {
            let r = a.client.request(method, json!({ "taskId": id })).await.response;
            assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
            let message = r["error"]["message"].as_str().expect("a message");
            assert!(message.len() < 200, "the id is not echoed whole: {} bytes", message.len());
        }
    }
}
