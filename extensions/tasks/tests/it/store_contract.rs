//! The `TaskStore` contract, written once as generic checks and run against every store: in
//! memory, SQLite (a temporary file) and PostgreSQL (a fresh schema per test); plus the
//! PostgreSQL job queue and executor.
//!
//! The PostgreSQL tests need the `postgres` feature and a database in `SWITCHYARD_TEST_PG`:
//!
//! ```text
//! SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test cargo test -p switchyard-mcp-tasks --features postgres
//! ```
//!
//! Without them they are reported `ignored` (the package's build script sets `cfg(svc_pg)` when
//! both are there); under CI (`CI` set) they always run, and a missing database fails them. Each PostgreSQL test creates its own schema with a random name, connects with
//! `search_path` set to it and drops it at the end, so the tests run in parallel and counts are
//! exact.

use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use switchyard_tasks::{
    InMemoryTaskStore, PutInput, SqliteTaskStore, TaskError, TaskRecord, TaskState, TaskStore, Transition, new_task_id,
};
use tokio::sync::Barrier;

/// How to run the PostgreSQL tests, printed when one runs without what it needs.
const RUN_PG: &str =
    "SWITCHYARD_TEST_PG=postgres://postgres@127.0.0.1:5432/test cargo test -p switchyard-mcp-tasks --features postgres";

/// Two handles on the same tasks: for the durable stores two separate instances (two pools, or
/// two connections, as two processes have); for the memory store one instance twice.
struct Fixture {
    a: Arc<dyn TaskStore>,
    b: Arc<dyn TaskStore>,
}

impl Fixture {
    fn both(&self) -> [&Arc<dyn TaskStore>; 2] {
        [&self.a, &self.b]
    }
}

fn memory() -> Fixture {
    let store: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::new());
    Fixture { a: store.clone(), b: store }
}

/// Two handles on one fresh SQLite file; the directory to remove afterwards.
fn sqlite(test: &str) -> (Fixture, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("switchyard-contract-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("tasks.db");
    let a = SqliteTaskStore::open(&db).expect("opens");
    let b = SqliteTaskStore::open(&db).expect("opens a second time");
    (Fixture { a: Arc::new(a), b: Arc::new(b) }, dir)
}

fn task(state: TaskState) -> TaskRecord {
    TaskRecord {
        id: new_task_id(),
        owner: Some("alice".into()),
        state,
        status_message: None,
        created_at_ms: 1_000,
        last_updated_at_ms: 1_000,
        ttl_ms: None,
        poll_interval_ms: Some(500),
        lease_expires_at_ms: None,
    }
}

fn requests(key: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.into(), json!({ "method": "elicitation/create", "params": { "message": "Wie heißt du? 名前は?" } }));
    m
}

/// One state of each kind.
fn every_state() -> Vec<TaskState> {
    vec![
        TaskState::Working,
        TaskState::InputRequired(requests("k")),
        TaskState::Completed(json!({ "content": [], "isError": false })),
        TaskState::Failed(TaskError::internal("late")),
        TaskState::Cancelled,
    ]
}

fn applied(t: Transition) -> TaskRecord {
    match t {
        Transition::Applied(r) => r,
        other => panic!("expected Applied, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The contract.

/// Every field survives create → get on the other handle: `None` and `Some` variants, every
/// state, unicode, a 1 MB result, U+0000, extreme JSON numbers, a TTL of `i64::MAX`.
async fn create_then_get_round_trips_every_field(f: &Fixture) {
    let big = "ü✓🚀 ".repeat(100_000);
    let records = vec![
        TaskRecord { owner: None, poll_interval_ms: None, ..task(TaskState::Working) },
        TaskRecord {
            owner: Some("ünïcødé 用户 🙂".into()),
            status_message: Some("half way — 50 %".into()),
            ttl_ms: Some(60_000),
            poll_interval_ms: Some(1),
            lease_expires_at_ms: Some(1_785_585_600_123),
            last_updated_at_ms: 2_000,
            ..task(TaskState::InputRequired(requests("name_1")))
        },
        TaskRecord {
            ttl_ms: Some(i64::MAX as u64),
            ..task(TaskState::Completed(json!({
                "content": [{ "type": "text", "text": big }],
                "structuredContent": {
                    "nul": "a\u{0}b", "max": u64::MAX, "min": i64::MIN, "frac": 3.25,
                    "nested": [null, true, { "k": [] }], "quote": "\"'\\"
                },
                "isError": false,
                "resultType": "complete"
            })))
        },
        task(TaskState::Completed(Value::Null)),
        task(TaskState::Failed(TaskError {
            code: -32602,
            message: "bad ✗".into(),
            data: Some(json!({ "field": "n" })),
        })),
        TaskRecord { status_message: Some(String::new()), ..task(TaskState::Failed(TaskError::internal("boom"))) },
        TaskRecord { created_at_ms: 0, last_updated_at_ms: 0, ttl_ms: Some(0), ..task(TaskState::Cancelled) },
    ];
    for r in &records {
        f.a.create(r.clone()).await.expect("create");
    }
    for r in &records {
        let got = f.b.get(&r.id).await.expect("get").expect("visible to the other handle at once");
        assert_eq!(&got, r);
    }
}

/// A second create with an existing id fails and changes nothing.
async fn duplicate_ids_are_rejected(f: &Fixture) {
    let original = task(TaskState::Working);
    f.a.create(original.clone()).await.expect("create");
    let copy = TaskRecord { owner: Some("mallory".into()), ..task(TaskState::Cancelled) };
    for store in f.both() {
        let err = store.create(TaskRecord { id: original.id.clone(), ..copy.clone() }).await;
        assert!(err.is_err(), "a duplicate id must fail: {err:?}");
    }
    assert_eq!(f.b.get(&original.id).await.expect("get"), Some(original));
}

/// `completed`, `failed` and `cancelled` never change: every later transition, from either
/// handle, answers `Terminal` with the record unchanged; the lease cannot be renewed.
async fn terminal_states_never_change(f: &Fixture) {
    let terminals = [
        TaskState::Completed(json!({ "content": [{ "type": "text", "text": "done" }] })),
        TaskState::Failed(TaskError::internal("broke")),
        TaskState::Cancelled,
    ];
    for terminal in terminals {
        let t = TaskRecord { lease_expires_at_ms: Some(5_000), ..task(TaskState::Working) };
        f.a.create(t.clone()).await.expect("create");
        let done = applied(f.a.transition(&t.id, terminal.clone(), Some("over".into()), 2_000).await.expect("end"));
        assert_eq!(
            (&done.state, done.status_message.as_deref(), done.last_updated_at_ms),
            (&terminal, Some("over"), 2_000)
        );
        assert_eq!(done.lease_expires_at_ms, None, "a terminal state clears the lease");
        assert_eq!(f.b.get(&t.id).await.expect("get").as_ref(), Some(&done));
        for next in every_state() {
            for store in f.both() {
                let late = store.transition(&t.id, next.clone(), Some("late".into()), 3_000).await.expect("write");
                assert_eq!(late, Transition::Terminal(done.clone()), "{} after {}", next.status(), terminal.status());
            }
        }
        for store in f.both() {
            assert!(!store.renew_lease(&t.id, Some(9_999)).await.expect("renew"), "no lease on a terminal task");
            assert!(!store.renew_lease(&t.id, None).await.expect("renew"));
        }
        assert!(f.a.fail_expired_leases(1_000_000, TaskError::internal("x")).await.expect("sweep").is_empty());
        assert_eq!(f.a.get(&t.id).await.expect("get"), Some(done));
    }
}

/// `working` ↔ `input_required` as often as needed; `lastUpdatedAt` never goes back.
async fn input_required_and_working_alternate(f: &Fixture) {
    let t = task(TaskState::Working);
    f.a.create(t.clone()).await.expect("create");
    let asked = applied(
        f.a.transition(&t.id, TaskState::InputRequired(requests("a")), Some("need a name".into()), 1_100)
            .await
            .expect("ask"),
    );
    assert_eq!(
        (&asked.state, asked.status_message.as_deref(), asked.last_updated_at_ms),
        (&TaskState::InputRequired(requests("a")), Some("need a name"), 1_100)
    );
    assert_eq!(f.b.get(&t.id).await.expect("get"), Some(asked));
    let back = applied(f.b.transition(&t.id, TaskState::Working, None, 1_200).await.expect("answer"));
    assert_eq!(
        (&back.state, back.status_message.as_deref(), back.last_updated_at_ms),
        (&TaskState::Working, None, 1_200)
    );
    // A writer with a clock behind the others does not move lastUpdatedAt back.
    let again =
        applied(f.a.transition(&t.id, TaskState::InputRequired(requests("b")), None, 1_150).await.expect("ask"));
    assert_eq!((&again.state, again.last_updated_at_ms), (&TaskState::InputRequired(requests("b")), 1_200));
    let working = applied(f.b.transition(&t.id, TaskState::Working, None, 1_300).await.expect("answer"));
    let done = applied(f.a.transition(&t.id, TaskState::Completed(json!(1)), None, 1_400).await.expect("end"));
    assert_eq!((working.state, done.state), (TaskState::Working, TaskState::Completed(json!(1))));
}

/// An id nobody created: `None`, `Unknown`, `false`, nothing purged or failed.
async fn unknown_ids_are_reported_unknown(f: &Fixture) {
    let id = new_task_id();
    for store in f.both() {
        assert_eq!(store.get(&id).await.expect("get"), None);
        for state in every_state() {
            assert_eq!(store.transition(&id, state, None, 2_000).await.expect("write"), Transition::Unknown);
        }
        assert!(!store.renew_lease(&id, Some(5_000)).await.expect("renew"));
        assert!(!store.renew_lease(&id, None).await.expect("renew"));
        assert_eq!(store.purge_expired(u64::MAX / 2).await.expect("purge"), 0);
        assert!(store.fail_expired_leases(u64::MAX / 2, TaskError::internal("x")).await.expect("sweep").is_empty());
    }
    assert_eq!(f.a.get(&id).await.expect("get"), None, "nothing was created on the way");
}

/// The TTL purge deletes exactly the tasks whose `created + ttl` has passed, whatever their
/// state, and reports how many.
async fn ttl_purge_deletes_exactly_the_expired(f: &Fixture) {
    let with = |ttl: Option<u64>, state: TaskState| TaskRecord { ttl_ms: ttl, ..task(state) };
    let zero = with(Some(0), TaskState::Working);
    let ten = with(Some(10), TaskState::Working);
    let ten_done = with(Some(10), TaskState::Completed(json!({})));
    let twenty = with(Some(20), TaskState::InputRequired(requests("k")));
    let forever = with(None, TaskState::Working);
    let huge = with(Some(i64::MAX as u64), TaskState::Working);
    for t in [&zero, &ten, &ten_done, &twenty, &forever, &huge] {
        f.a.create(t.clone()).await.expect("create");
    }
    let gone = |ids: &[&TaskRecord]| ids.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    assert_eq!(f.a.purge_expired(999).await.expect("purge"), 0);
    assert_eq!(f.b.purge_expired(1_000).await.expect("purge"), 1);
    assert_eq!(f.a.purge_expired(1_009).await.expect("purge"), 0);
    assert_eq!(f.b.purge_expired(1_010).await.expect("purge"), 2);
    assert_eq!(f.a.purge_expired(1_019).await.expect("purge"), 0);
    assert_eq!(f.a.purge_expired(1_020).await.expect("purge"), 1);
    for id in gone(&[&zero, &ten, &ten_done, &twenty]) {
        assert_eq!(f.b.get(&id).await.expect("get"), None, "{id} was purged");
    }
    // A realistic now in year 2096: tasks without a TTL or with a huge one stay.
    assert_eq!(f.a.purge_expired(4_000_000_000_000).await.expect("purge"), 0);
    assert_eq!(f.b.get(&forever.id).await.expect("get"), Some(forever));
    assert_eq!(f.b.get(&huge.id).await.expect("get"), Some(huge));
}

/// Two handles (two processes, for the durable stores) race to end the same task, many
/// rounds: exactly one wins each round, the other sees the winner's record.
async fn racing_transitions_have_exactly_one_winner(f: &Fixture) {
    for round in 0..60 {
        let t = task(TaskState::Working);
        f.a.create(t.clone()).await.expect("create");
        let barrier = Arc::new(Barrier::new(2));
        let racer = |store: Arc<dyn TaskStore>, state: TaskState| {
            let (id, barrier) = (t.id.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.transition(&id, state, None, 2_000).await.expect("write")
            })
        };
        let completed = TaskState::Completed(json!({ "by": "a", "round": round }));
        let other = if round % 2 == 0 { TaskState::Cancelled } else { TaskState::Failed(TaskError::internal("b")) };
        let x = racer(f.a.clone(), completed.clone());
        let y = racer(f.b.clone(), other.clone());
        let (x, y) = (x.await.expect("racer a"), y.await.expect("racer b"));
        let winner = match (&x, &y) {
            (Transition::Applied(w), Transition::Terminal(l)) | (Transition::Terminal(l), Transition::Applied(w)) => {
                assert_eq!(w, l, "the loser sees the winner's record");
                w.clone()
            }
            _ => panic!("round {round}: exactly one must win: {x:?} / {y:?}"),
        };
        assert!(winner.state == completed || winner.state == other);
        assert_eq!(f.a.get(&t.id).await.expect("get"), Some(winner));
    }
}

/// A lease can be set, moved and cleared on `working` and `input_required` tasks, from either
/// handle; on terminal or unknown tasks `renew_lease` answers `false` and changes nothing.
async fn leases_renew_only_live_tasks(f: &Fixture) {
    let t = task(TaskState::Working);
    f.a.create(t.clone()).await.expect("create");
    let lease = |store: &Arc<dyn TaskStore>, id: String| {
        let store = store.clone();
        async move { store.get(&id).await.expect("get").expect("exists").lease_expires_at_ms }
    };
    assert!(f.a.renew_lease(&t.id, Some(5_000)).await.expect("renew"));
    assert_eq!(lease(&f.b, t.id.clone()).await, Some(5_000));
    assert!(f.b.renew_lease(&t.id, None).await.expect("clear"));
    assert_eq!(lease(&f.a, t.id.clone()).await, None);
    applied(f.a.transition(&t.id, TaskState::InputRequired(requests("k")), None, 1_100).await.expect("ask"));
    assert!(f.b.renew_lease(&t.id, Some(6_000)).await.expect("renew while waiting for input"));
    let record = f.a.get(&t.id).await.expect("get").expect("exists");
    assert_eq!((record.lease_expires_at_ms, record.state), (Some(6_000), TaskState::InputRequired(requests("k"))));
    applied(f.a.transition(&t.id, TaskState::Cancelled, None, 1_200).await.expect("cancel"));
    let cancelled = f.a.get(&t.id).await.expect("get");
    assert!(!f.b.renew_lease(&t.id, Some(7_000)).await.expect("renew"), "a cancelled task's worker must stop");
    assert_eq!(f.a.get(&t.id).await.expect("get"), cancelled, "unchanged");
    assert!(!f.a.renew_lease(&new_task_id(), Some(7_000)).await.expect("renew"));
}

/// `fail_expired_leases` fails exactly the non-terminal tasks whose lease has passed (at or
/// before `now`), with the given error, once; never a task without a lease, a live lease, or
/// a terminal task.
async fn expired_leases_fail_exactly_the_dead_tasks(f: &Fixture) {
    let now = 10_000;
    let with = |lease: Option<u64>, state: TaskState| TaskRecord { lease_expires_at_ms: lease, ..task(state) };
    let at_now = with(Some(now), TaskState::Working);
    let asking = with(Some(9_000), TaskState::InputRequired(requests("k")));
    let alive = with(Some(now + 1), TaskState::Working);
    let unleased = with(None, TaskState::Working);
    let done = with(Some(1), TaskState::Completed(json!({})));
    let cancelled = with(Some(5_000), TaskState::Working);
    let renewed = with(Some(1), TaskState::Working);
    for t in [&at_now, &asking, &alive, &unleased, &done, &cancelled, &renewed] {
        f.a.create(t.clone()).await.expect("create");
    }
    applied(f.a.transition(&cancelled.id, TaskState::Cancelled, None, 2_000).await.expect("cancel"));
    assert!(f.b.renew_lease(&renewed.id, Some(20_000)).await.expect("renew"));
    let mut before = Vec::new();
    for t in [&alive, &unleased, &done, &cancelled, &renewed] {
        before.push(f.a.get(&t.id).await.expect("get").expect("exists"));
    }

    let error = TaskError { code: -32603, message: "the worker died".into(), data: Some(json!({ "lease": true })) };
    let mut failed = f.b.fail_expired_leases(now, error.clone()).await.expect("sweep");
    failed.sort_by(|x, y| x.id.cmp(&y.id));
    let mut expected = vec![at_now.id.clone(), asking.id.clone()];
    expected.sort();
    assert_eq!(failed.iter().map(|t| t.id.clone()).collect::<Vec<_>>(), expected);
    for r in &failed {
        assert_eq!(r.state, TaskState::Failed(error.clone()));
        assert_eq!(r.status_message.as_deref(), Some("the worker died"));
        assert_eq!(r.last_updated_at_ms, now);
        assert_eq!(f.a.get(&r.id).await.expect("get").as_ref(), Some(r), "the returned record is the stored one");
        assert!(!f.a.renew_lease(&r.id, Some(now * 2)).await.expect("renew"), "its worker must stop");
    }
    assert!(f.a.fail_expired_leases(now, error.clone()).await.expect("sweep").is_empty(), "each task fails once");
    for t in before {
        assert_eq!(f.b.get(&t.id).await.expect("get"), Some(t), "left alone");
    }
    let later = f.a.fail_expired_leases(now + 1, error).await.expect("sweep");
    assert_eq!(later.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), [alive.id.as_str()]);
}

/// Instances sweeping at the same moment fail each dead task exactly once between them.
async fn concurrent_sweeps_fail_each_task_once(f: &Fixture) {
    let mut ids = HashSet::new();
    for _ in 0..40 {
        let t = TaskRecord { lease_expires_at_ms: Some(100), ..task(TaskState::Working) };
        ids.insert(t.id.clone());
        f.a.create(t).await.expect("create");
    }
    let barrier = Arc::new(Barrier::new(2));
    let sweeper = |store: Arc<dyn TaskStore>| {
        let barrier = barrier.clone();
        tokio::spawn(async move {
            barrier.wait().await;
            store.fail_expired_leases(200, TaskError::internal("dead")).await.expect("sweep")
        })
    };
    let (x, y) = (sweeper(f.a.clone()), sweeper(f.b.clone()));
    let (x, y) = (x.await.expect("sweeper a"), y.await.expect("sweeper b"));
    let all: Vec<String> = x.iter().chain(&y).map(|t| t.id.clone()).collect();
    assert_eq!(all.len(), 40, "no task failed twice");
    assert_eq!(all.into_iter().collect::<HashSet<_>>(), ids);
}

/// `{key: {"action": "accept", "content": {"v": v}}}` for each `(key, v)`.
fn answers(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), json!({ "action": "accept", "content": { "v": v } }))).collect()
}

fn stored(p: PutInput) -> (Vec<String>, TaskRecord) {
    match p {
        PutInput::Stored { keys, record } => (keys, record),
        other => panic!("expected Stored, got {other:?}"),
    }
}

/// `tasks/update` answers are kept only for keys outstanding in an `input_required` task; the
/// answered keys leave `inputRequests` in the same step (the last one moves the task to
/// `working`); both handles read what either stored until the runner removes what it took;
/// a terminal state drops them.
async fn input_responses_are_kept_for_outstanding_keys_only(f: &Fixture) {
    let mut asked = requests("a");
    asked.extend(requests("b"));
    asked.extend(requests("c"));
    let t = task(TaskState::InputRequired(asked.clone()));
    f.a.create(t.clone()).await.expect("create");
    assert!(f.b.input_responses(&t.id).await.expect("read").is_empty(), "nothing stored yet");

    // One outstanding key of two sent; unicode and U+0000 survive.
    let first = answers(&[("a", json!("Zoë 用户 a\u{0}b")), ("x", json!(1))]);
    let (keys, record) = stored(f.a.put_input_responses(&t.id, first, 2_000).await.expect("put"));
    assert_eq!(keys, ["a"]);
    let mut left = asked.clone();
    left.remove("a");
    assert_eq!((&record.state, record.last_updated_at_ms), (&TaskState::InputRequired(left.clone()), 2_000));
    assert_eq!(f.b.get(&t.id).await.expect("get"), Some(record.clone()), "the other handle sees it at once");
    assert_eq!(f.b.input_responses(&t.id).await.expect("read"), answers(&[("a", json!("Zoë 用户 a\u{0}b"))]));

    // A key answered before is not outstanding any more: a re-send changes nothing.
    let again = f.b.put_input_responses(&t.id, answers(&[("a", json!("other"))]), 2_100).await.expect("put");
    assert_eq!(again, PutInput::Ignored(record.clone()));
    assert_eq!(f.a.input_responses(&t.id).await.expect("read"), answers(&[("a", json!("Zoë 用户 a\u{0}b"))]));

    // The runner took "a"; "b" arrives meanwhile and stays after "a" is removed.
    let (keys, r) = stored(f.b.put_input_responses(&t.id, answers(&[("b", json!(2))]), 1_500).await.expect("put"));
    assert_eq!((keys, r.last_updated_at_ms), (vec!["b".to_owned()], 2_000), "lastUpdatedAt never goes back");
    f.a.remove_input_responses(&t.id, &["a".to_owned(), "never".to_owned()]).await.expect("remove");
    assert_eq!(f.b.input_responses(&t.id).await.expect("read"), answers(&[("b", json!(2))]));

    // The last key moves the task to working.
    let (keys, record) =
        stored(f.a.put_input_responses(&t.id, answers(&[("c", json!(null))]), 3_000).await.expect("put"));
    assert_eq!((keys, &record.state, record.last_updated_at_ms), (vec!["c".to_owned()], &TaskState::Working, 3_000));
    assert_eq!(f.b.input_responses(&t.id).await.expect("read"), answers(&[("b", json!(2)), ("c", json!(null))]));
    let ignored = f.b.put_input_responses(&t.id, answers(&[("c", json!(3))]), 3_100).await.expect("put");
    assert_eq!(ignored, PutInput::Ignored(record), "a working task takes no answers");

    // Another round with new keys; then the task ends and its stored answers are dropped.
    applied(f.a.transition(&t.id, TaskState::InputRequired(requests("d")), None, 3_200).await.expect("ask"));
    stored(f.b.put_input_responses(&t.id, answers(&[("d", json!(4))]), 3_300).await.expect("put"));
    let done = applied(f.a.transition(&t.id, TaskState::Cancelled, None, 3_400).await.expect("cancel"));
    assert!(f.b.input_responses(&t.id).await.expect("read").is_empty(), "a terminal state drops the answers");
    let late = f.a.put_input_responses(&t.id, answers(&[("d", json!(5))]), 3_500).await.expect("put");
    assert_eq!(late, PutInput::Ignored(done));

    let unknown = new_task_id();
    for store in f.both() {
        assert_eq!(
            store.put_input_responses(&unknown, answers(&[("a", json!(1))]), 1).await.expect("put"),
            PutInput::Unknown
        );
        assert!(store.input_responses(&unknown).await.expect("read").is_empty());
        store.remove_input_responses(&unknown, &["a".to_owned()]).await.expect("no error for an unknown task");
    }
    assert_eq!(f.a.get(&unknown).await.expect("get"), None, "nothing was created on the way");
}

/// Two handles (two instances) store answers for different keys of one task at the same
/// moment, many rounds: both answers are kept and no key stays outstanding, whichever came
/// first.
async fn answers_to_different_keys_at_once_are_all_kept(f: &Fixture) {
    for round in 0..40 {
        let mut asked = requests("x");
        asked.extend(requests("y"));
        let t = task(TaskState::InputRequired(asked));
        f.a.create(t.clone()).await.expect("create");
        let barrier = Arc::new(Barrier::new(2));
        let sender = |store: Arc<dyn TaskStore>, key: &'static str| {
            let (id, barrier) = (t.id.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.put_input_responses(&id, answers(&[(key, json!(round))]), 2_000).await.expect("put")
            })
        };
        let (x, y) = (sender(f.a.clone(), "x"), sender(f.b.clone(), "y"));
        let (x, y) = (stored(x.await.expect("sender a")), stored(y.await.expect("sender b")));
        assert_eq!((x.0, y.0), (vec!["x".to_owned()], vec!["y".to_owned()]));
        let states = [x.1.state.status(), y.1.state.status()];
        assert!(states.contains(&"working") && states.contains(&"input_required"), "round {round}: {states:?}");
        assert_eq!(f.b.get(&t.id).await.expect("get").expect("exists").state, TaskState::Working);
        assert_eq!(
            f.a.input_responses(&t.id).await.expect("read"),
            answers(&[("x", json!(round)), ("y", json!(round))]),
            "round {round}"
        );
    }
}

/// A status message is written only while the task is `working`, from either handle, with
/// `lastUpdatedAt` moving forward only; `input_required`, terminal and unknown tasks are left as
/// they are and answer `None`.
async fn status_messages_change_only_working_tasks(f: &Fixture) {
    let t = task(TaskState::Working);
    f.a.create(t.clone()).await.expect("create");
    let set = f.b.set_status_message(&t.id, Some("3 of 10 (30%): copying — ü✓".into()), 1_500).await.expect("write");
    let set = set.expect("a working task takes a status message");
    assert_eq!(
        (&set.state, set.status_message.as_deref(), set.last_updated_at_ms),
        (&TaskState::Working, Some("3 of 10 (30%): copying — ü✓"), 1_500)
    );
    assert_eq!(TaskRecord { status_message: t.status_message.clone(), last_updated_at_ms: 1_000, ..set.clone() }, t);
    assert_eq!(f.a.get(&t.id).await.expect("get"), Some(set.clone()));
    // A writer with a clock behind the others does not move lastUpdatedAt back.
    let behind = f.a.set_status_message(&t.id, Some("4 of 10".into()), 1_200).await.expect("write").expect("working");
    assert_eq!((behind.status_message.as_deref(), behind.last_updated_at_ms), (Some("4 of 10"), 1_500));
    let cleared = f.b.set_status_message(&t.id, None, 1_600).await.expect("write").expect("working");
    assert_eq!((cleared.status_message, cleared.last_updated_at_ms), (None, 1_600));

    // Waiting for input: the round's message stays.
    let asking = applied(
        f.a.transition(&t.id, TaskState::InputRequired(requests("k")), Some("need input".into()), 1_700)
            .await
            .expect("ask"),
    );
    for store in f.both() {
        assert_eq!(store.set_status_message(&t.id, Some("5 of 10".into()), 1_800).await.expect("write"), None);
    }
    assert_eq!(f.b.get(&t.id).await.expect("get"), Some(asking));

    for terminal in [
        TaskState::Completed(json!({ "content": [] })),
        TaskState::Failed(TaskError::internal("broke")),
        TaskState::Cancelled,
    ] {
        let t = task(TaskState::Working);
        f.a.create(t.clone()).await.expect("create");
        let done = applied(f.a.transition(&t.id, terminal, Some("over".into()), 2_000).await.expect("end"));
        for store in f.both() {
            assert_eq!(store.set_status_message(&t.id, Some("late".into()), 3_000).await.expect("write"), None);
            assert_eq!(store.set_status_message(&t.id, None, 3_000).await.expect("write"), None);
        }
        assert_eq!(f.b.get(&t.id).await.expect("get"), Some(done));
    }

    let unknown = new_task_id();
    for store in f.both() {
        assert_eq!(store.set_status_message(&unknown, Some("x".into()), 2_000).await.expect("write"), None);
        assert_eq!(store.get(&unknown).await.expect("get"), None, "nothing was created on the way");
    }
}

// ---------------------------------------------------------------------------------------------
// One test per check and store.

macro_rules! contract {
    ($($check:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    super::$check(&super::memory()).await;
                }
            )*
        }

        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $check() {
                    let (fixture, dir) = super::sqlite(stringify!($check));
                    super::$check(&fixture).await;
                    drop(fixture);
                    let _ = std::fs::remove_dir_all(dir);
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[cfg_attr(not(svc_pg), ignore = "needs PostgreSQL: the `postgres` feature and SWITCHYARD_TEST_PG (see the module docs)")]
                async fn $check() {
                    #[cfg(feature = "postgres")]
                    super::pg::with_db(stringify!($check), |db| async move {
                        super::$check(&db.fixture().await).await;
                    })
                    .await;
                    #[cfg(not(feature = "postgres"))]
                    super::missing(stringify!($check), "built without the `postgres` feature");
                }
            )*
        }
    };
}

contract!(
    create_then_get_round_trips_every_field,
    duplicate_ids_are_rejected,
    terminal_states_never_change,
    input_required_and_working_alternate,
    unknown_ids_are_reported_unknown,
    ttl_purge_deletes_exactly_the_expired,
    racing_transitions_have_exactly_one_winner,
    leases_renew_only_live_tasks,
    expired_leases_fail_exactly_the_dead_tasks,
    concurrent_sweeps_fail_each_task_once,
    input_responses_are_kept_for_outstanding_keys_only,
    answers_to_different_keys_at_once_are_all_kept,
    status_messages_change_only_working_tasks,
);

/// Fails `test`, which runs (`cfg(svc_pg)`: under CI, or with a database and the feature)
/// without what it needs, and says how to provide it.
fn missing(test: &str, why: &str) -> ! {
    panic!("{test}: {why}; to run it: {RUN_PG}");
}

/// Task ids are bearer handles: `t_` and 32 lowercase hex digits, all distinct, with every
/// digit at every position (no counter, no timestamp prefix).
#[test]
fn task_ids_are_unguessable() {
    let ids: Vec<String> = (0..10_000).map(|_| new_task_id()).collect();
    let mut seen = vec![HashSet::new(); 32];
    for id in &ids {
        let hex = id.strip_prefix("t_").unwrap_or_else(|| panic!("{id} starts with t_"));
        assert_eq!(hex.len(), 32, "{id}");
        assert!(hex.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)), "{id}");
        for (i, c) in hex.chars().enumerate() {
            seen[i].insert(c);
        }
    }
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 10_000, "all distinct");
    assert!(seen.iter().all(|digits| digits.len() == 16), "every position takes every digit");
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL only: schema set-up, errors, the job queue and its executor.

macro_rules! pg_only {
    ($($test:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[cfg_attr(not(svc_pg), ignore = "needs PostgreSQL: the `postgres` feature and SWITCHYARD_TEST_PG (see the module docs)")]
            async fn $test() {
                #[cfg(feature = "postgres")]
                pg::with_db(stringify!($test), pg::$test).await;
                #[cfg(not(feature = "postgres"))]
                missing(stringify!($test), "built without the `postgres` feature");
            }
        )*
    };
}

pg_only!(
    postgres_schema_setup_is_concurrent_and_upgrades_old_tables,
    postgres_pool_exhaustion_is_a_store_error,
    postgres_a_frozen_database_is_a_store_error_not_a_hang,
    postgres_a_store_outage_fails_no_live_task,
    postgres_an_outcome_reached_during_an_outage_is_recorded_after_it,
    postgres_job_queue_hands_each_job_out_once,
    postgres_jobs_of_ended_tasks_are_never_handed_out,
    postgres_a_claimed_job_is_never_handed_out_again,
    postgres_job_executor_queues_the_call_for_a_worker,
);

/// Needs no database: nothing listens on port 1.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_connection_errors_are_store_errors() {
    use switchyard_tasks::{PostgresTaskStore, StoreError};
    // Everything an error says, its sources included, in Display and Debug form.
    fn said(e: &StoreError) -> String {
        let mut all = format!("{e} {e:?}");
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            all.push_str(&format!(" {s} {s:?}"));
            source = s.source();
        }
        all
    }
    let refused = PostgresTaskStore::connect("postgres://postgres:secret@127.0.0.1:1/test").await.expect_err("refused");
    let text = refused.to_string();
    assert!(text.contains("PostgreSQL") && text.contains("connect"), "{refused}");
    assert!(refused.is_transient(), "a database that cannot be reached may come back: {refused:?}");
    assert!(!said(&refused).contains("secret"), "no password in errors or their sources: {refused:?}");
    let invalid =
        PostgresTaskStore::connect("postgres://postgres:secret@127.0.0.1:notaport/test").await.expect_err("bad");
    assert!(matches!(invalid, StoreError::Config(_)), "{invalid:?}");
    assert!(invalid.to_string().contains("invalid connection URL") && !said(&invalid).contains("secret"), "{invalid}");
    let mut config = switchyard_tasks::tokio_postgres::Config::new();
    config.host("127.0.0.1").port(1).user("postgres");
    let empty = PostgresTaskStore::with_config(config, 0).await.expect_err("no connections");
    assert!(matches!(&empty, StoreError::Config(m) if m.contains("at least one connection")), "{empty:?}");
}

#[cfg(not(feature = "postgres"))]
#[test]
#[cfg_attr(not(svc_pg), ignore = "needs the `postgres` feature")]
fn postgres_connection_errors_are_store_errors() {
    missing("postgres_connection_errors_are_store_errors", "built without the `postgres` feature");
}

#[cfg(feature = "postgres")]
mod pg {
    use super::*;
    use futures::FutureExt;
    use std::time::Duration;
    use switchyard::prelude::*;
    use switchyard::testing::TestClient;
    use switchyard_tasks::deadpool_postgres::{Manager, Pool, Runtime};
    use switchyard_tasks::tokio_postgres::{self, NoTls};
    use switchyard_tasks::{Job, PostgresJobExecutor, PostgresTaskStore, TasksExtension, now_ms};

    /// A fresh schema of the database in `SWITCHYARD_TEST_PG`.
    pub struct Db {
        admin: tokio_postgres::Client,
        schema: String,
        config: tokio_postgres::Config,
    }

    impl Db {
        /// A new store instance (its own pool) on the schema.
        pub async fn store(&self, pool_size: usize) -> PostgresTaskStore {
            PostgresTaskStore::with_config(self.config.clone(), pool_size).await.expect("store connects")
        }

        /// Two instances with two pools, as two processes have.
        pub async fn fixture(&self) -> Fixture {
            let (a, b) = (self.store(4).await, self.store(4).await);
            Fixture { a: Arc::new(a), b: Arc::new(b) }
        }

        async fn sql(&self, sql: &str) {
            self.admin.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        }

        async fn count(&self, sql: &str) -> i64 {
            self.admin.query_one(sql, &[]).await.and_then(|r| r.try_get(0)).unwrap_or_else(|e| panic!("{sql}: {e:?}"))
        }
    }

    /// Runs `body` on a fresh schema and drops the schema afterwards, also when `body` panics;
    /// fails when `SWITCHYARD_TEST_PG` is unset (the test runs only where it should be set).
    pub async fn with_db<F, Fut>(test: &str, body: F)
    where
        F: FnOnce(Arc<Db>) -> Fut,
        Fut: Future<Output = ()>,
    {
        let Ok(url) = std::env::var("SWITCHYARD_TEST_PG") else {
            missing(test, "SWITCHYARD_TEST_PG is not set");
        };
        let (admin, connection) = tokio_postgres::connect(&url, NoTls).await.expect("SWITCHYARD_TEST_PG connects");
        tokio::spawn(connection);
        let schema = format!("switchyard_test_{}", &new_task_id()[2..]);
        let mut config: tokio_postgres::Config = url.parse().expect("SWITCHYARD_TEST_PG is a connection URL");
        config.options(format!("-c search_path={schema}"));
        let db = Arc::new(Db { admin, schema, config });
        db.sql(&format!("CREATE SCHEMA {0}; SET search_path TO {0}", db.schema)).await;
        let outcome = std::panic::AssertUnwindSafe(body(db.clone())).catch_unwind().await;
        db.sql(&format!("DROP SCHEMA {} CASCADE", db.schema)).await;
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }

    /// Instances starting together set the schema up once between them; a table from before
    /// leases gains the column and keeps its rows.
    pub async fn postgres_schema_setup_is_concurrent_and_upgrades_old_tables(db: Arc<Db>) {
        db.sql(
            "CREATE TABLE switchyard_tasks (
                id TEXT PRIMARY KEY, owner TEXT, status TEXT NOT NULL, payload TEXT, status_message TEXT,
                created_at_ms BIGINT NOT NULL, last_updated_at_ms BIGINT NOT NULL, ttl_ms BIGINT,
                poll_interval_ms BIGINT, expires_at_ms BIGINT
            );
            INSERT INTO switchyard_tasks VALUES ('t_old', 'bob', 'working', NULL, NULL, 1000, 1000, NULL, 500, NULL);
            INSERT INTO switchyard_tasks VALUES ('t_asking', 'bob', 'input_required',
                '{\"k\":{\"method\":\"elicitation/create\",\"params\":{}}}', NULL, 1000, 1000, NULL, 500, NULL);",
        )
        .await;
        let starting: Vec<_> = (0..8)
            .map(|_| {
                let config = db.config.clone();
                tokio::spawn(async move { PostgresTaskStore::with_config(config, 1).await })
            })
            .collect();
        let mut stores = Vec::new();
        for s in starting {
            stores.push(s.await.expect("no panic").expect("every instance starts"));
        }
        let old = stores[0].get("t_old").await.expect("read").expect("kept");
        assert_eq!((old.owner.as_deref(), old.lease_expires_at_ms), (Some("bob"), None));
        assert!(stores[1].renew_lease("t_old", Some(5)).await.expect("renew"));
        assert_eq!(stores[2].fail_expired_leases(5, TaskError::internal("x")).await.expect("sweep").len(), 1);
        // A restart finds everything in place and changes nothing.
        drop(stores);
        let again = db.store(1).await;
        assert!(again.get("t_old").await.expect("read").is_some());
        let columns = db
            .count(&format!(
                "SELECT count(*) FROM information_schema.columns
                 WHERE table_schema = '{}' AND table_name = 'switchyard_tasks' AND column_name = 'lease_expires_at_ms'",
                db.schema
            ))
            .await;
        assert_eq!(columns, 1);
        // A task that waited for input before the upgrade takes answers after it.
        let put = again.put_input_responses("t_asking", answers(&[("k", json!(1))]), 2_000).await.expect("put");
        assert_eq!(stored(put).1.state, TaskState::Working);
        // A table of the version before input responses (every relation there, one column
        // missing) gains the column and keeps its answers' task.
        db.sql("ALTER TABLE switchyard_tasks DROP COLUMN input_responses").await;
        let upgraded = db.store(1).await;
        assert!(upgraded.input_responses("t_asking").await.expect("the column is back").is_empty());
        applied(
            upgraded.transition("t_asking", TaskState::InputRequired(requests("j")), None, 3_000).await.expect("ask"),
        );
        stored(upgraded.put_input_responses("t_asking", answers(&[("j", json!(2))]), 3_100).await.expect("put"));
        assert_eq!(upgraded.input_responses("t_asking").await.expect("read"), answers(&[("j", json!(2))]));
    }

    /// A call that finds every pooled connection busy fails with a StoreError that says so.
    pub async fn postgres_pool_exhaustion_is_a_store_error(db: Arc<Db>) {
        let manager = Manager::new(db.config.clone(), NoTls);
        let pool = Pool::builder(manager)
            .max_size(1)
            .wait_timeout(Some(Duration::from_millis(200)))
            .runtime(Runtime::Tokio1)
            .build()
            .expect("pool");
        let store = PostgresTaskStore::with_pool(pool.clone()).await.expect("store");
        let held = pool.get().await.expect("the only connection");
        let err = store.get("t_x").await.expect_err("no free connection");
        assert!(
            err.to_string().contains("PostgreSQL")
                && err.to_string().contains("read a task")
                && err.to_string().contains("in use"),
            "{err}"
        );
        drop(held);
        assert_eq!(store.get("t_x").await.expect("works again"), None);
    }

    /// A TCP relay to PostgreSQL that can stop passing bytes on, as a frozen database host (or
    /// a partition) does: connections stay open and nothing comes back; or that can be down, as
    /// a database that stopped or fails over is: open connections are closed and new ones
    /// refused.
    struct Relay {
        port: u16,
        frozen: Arc<std::sync::atomic::AtomicBool>,
        down: Arc<std::sync::atomic::AtomicBool>,
        links: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
    }

    impl Relay {
        async fn start(to: String) -> Relay {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
            let port = listener.local_addr().expect("an address").port();
            let frozen = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let links = Arc::new(std::sync::Mutex::new(Vec::new()));
            let (gate, is_down, open) = (frozen.clone(), down.clone(), links.clone());
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let Ok(server) = tokio::net::TcpStream::connect(&to).await else { continue };
                    // Checked under the lock `set_down` takes: a connection made while the relay
                    // goes down is closed with the others, never left open through the outage.
                    let mut open = open.lock().expect("links");
                    if is_down.load(std::sync::atomic::Ordering::SeqCst) {
                        continue; // dropped: the connection is closed at once
                    }
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    open.push(tokio::spawn(pass(cr, sw, gate.clone())).abort_handle());
                    open.push(tokio::spawn(pass(sr, cw, gate.clone())).abort_handle());
                }
            });
            Relay { port, frozen, down, links }
        }

        fn freeze(&self, frozen: bool) {
            self.frozen.store(frozen, std::sync::atomic::Ordering::SeqCst);
        }

        /// Closes every open connection and refuses new ones (`true`), or accepts them again.
        fn set_down(&self, down: bool) {
            let mut links = self.links.lock().expect("links");
            self.down.store(down, std::sync::atomic::Ordering::SeqCst);
            if down {
                for link in links.drain(..) {
                    link.abort();
                }
            }
        }
    }

    /// Copies `from` to `to`, holding what it read while the gate is shut.
    async fn pass(
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        gate: Arc<std::sync::atomic::AtomicBool>,
    ) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            while gate.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if to.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    }

    /// A relay to the test's database and a connection config through it.
    async fn relayed(db: &Db) -> (Relay, tokio_postgres::Config) {
        let host = db.config.get_hosts().first().cloned();
        let host = match host {
            Some(tokio_postgres::config::Host::Tcp(h)) => h,
            _ => "127.0.0.1".to_owned(),
        };
        let port = db.config.get_ports().first().copied().unwrap_or(5432);
        let relay = Relay::start(format!("{host}:{port}")).await;
        // A new config: `host`/`port` on a parsed one add a second address rather than replace it.
        let mut config = tokio_postgres::Config::new();
        config.host("127.0.0.1").port(relay.port);
        if let Some(user) = db.config.get_user() {
            config.user(user);
        }
        if let Some(password) = db.config.get_password() {
            config.password(password);
        }
        if let Some(dbname) = db.config.get_dbname() {
            config.dbname(dbname);
        }
        if let Some(options) = db.config.get_options() {
            config.options(options);
        }
        (relay, config)
    }

    /// A database that stops answering without closing its connections fails each store call
    /// after the statement timeout, with a message saying so, instead of holding the request
    /// for as long as the database is away; once it answers again, so does the store.
    pub async fn postgres_a_frozen_database_is_a_store_error_not_a_hang(db: Arc<Db>) {
        let (relay, config) = relayed(&db).await;
        let store =
            PostgresTaskStore::with_config(config, 2).await.expect("store").statement_timeout(Duration::from_secs(1));
        let t = task(TaskState::Working);
        store.create(t.clone()).await.expect("create");
        relay.freeze(true);
        // A bound far above the timeout: a hang fails the test instead of stalling it.
        let outcome = tokio::time::timeout(Duration::from_secs(30), store.get(&t.id)).await;
        let err = outcome.expect("answered, not hung").expect_err("the database is frozen");
        assert!(err.to_string().contains("read a task") && err.to_string().contains("statement timeout"), "{err}");
        let outcome = tokio::time::timeout(Duration::from_secs(30), store.renew_lease(&t.id, Some(now_ms()))).await;
        assert!(outcome.expect("answered, not hung").is_err());
        relay.freeze(false);
        let back = tokio::time::timeout(Duration::from_secs(30), store.get(&t.id)).await;
        assert_eq!(back.expect("answered").expect("works again").map(|r| r.id), Some(t.id));
    }

    fn args(i: usize) -> Value {
        json!({ "n": i, "text": "héllo ✓ 🚀", "nested": { "list": [i, null] } })
    }

    /// 50 jobs, 4 workers on separate pools claiming at once: every job claimed exactly once,
    /// each task leased by its claim.
    pub async fn postgres_job_queue_hands_each_job_out_once(db: Arc<Db>) {
        let store = db.store(4).await;
        let mut queued = std::collections::HashMap::new();
        for i in 0..50 {
            // The lease the creating instance set is cleared by the hand-off.
            let t = TaskRecord { lease_expires_at_ms: Some(now_ms() + 60_000), ..task(TaskState::Working) };
            store.create(t.clone()).await.expect("create");
            store.enqueue(&t.id, &format!("tool_{i}"), &args(i)).await.expect("enqueue");
            assert_eq!(store.get(&t.id).await.expect("get").expect("exists").lease_expires_at_ms, None);
            queued.insert(t.id.clone(), Job { task_id: t.id, tool: format!("tool_{i}"), arguments: args(i) });
        }
        let lease = Duration::from_secs(30);
        let before = now_ms();
        let barrier = Arc::new(Barrier::new(4));
        let mut workers = Vec::new();
        for w in 0..4 {
            let (worker, barrier) = (db.store(2).await, barrier.clone());
            workers.push(tokio::spawn(async move {
                barrier.wait().await;
                let mut jobs = Vec::new();
                while let Some(job) = worker.claim(&format!("worker-{w}"), lease).await.expect("claim") {
                    jobs.push(job);
                }
                jobs
            }));
        }
        let mut claimed = Vec::new();
        for w in workers {
            claimed.extend(w.await.expect("worker"));
        }
        let after = now_ms();
        assert_eq!(claimed.len(), 50, "no job handed out twice");
        for job in &claimed {
            assert_eq!(queued.remove(&job.task_id).as_ref(), Some(job), "each job once, as queued");
            let t = store.get(&job.task_id).await.expect("get").expect("exists");
            let until = t.lease_expires_at_ms.expect("a claimed job's task has a lease");
            assert!((before + 30_000..=after + 30_000).contains(&until), "{until} vs {before}..{after}");
            assert_eq!(t.state, TaskState::Working);
        }
        assert!(queued.is_empty());
        assert_eq!(store.claim("late", lease).await.expect("claim"), None);
        let unclaimed = db.count("SELECT count(*) FROM switchyard_task_jobs WHERE claimed_by IS NULL").await;
        assert_eq!(unclaimed, 0);
    }

    /// Jobs of cancelled or finished tasks are not handed out (and dropped); nothing is queued
    /// for a task that is not working, twice, or unknown.
    pub async fn postgres_jobs_of_ended_tasks_are_never_handed_out(db: Arc<Db>) {
        let store = db.store(2).await;
        let mut ids = Vec::new();
        for i in 0..3 {
            let t = task(TaskState::Working);
            store.create(t.clone()).await.expect("create");
            store.enqueue(&t.id, "crunch", &args(i)).await.expect("enqueue");
            ids.push(t.id);
        }
        applied(store.transition(&ids[0], TaskState::Cancelled, None, 2_000).await.expect("cancel"));
        applied(store.transition(&ids[1], TaskState::Completed(json!({})), None, 2_000).await.expect("complete"));
        let job = store.claim("w", Duration::from_secs(5)).await.expect("claim").expect("the live job");
        assert_eq!(job.task_id, ids[2]);
        assert_eq!(store.claim("w", Duration::from_secs(5)).await.expect("claim"), None);
        assert_eq!(db.count("SELECT count(*) FROM switchyard_task_jobs").await, 1, "ended tasks' jobs dropped");

        let err = store.enqueue(&ids[0], "crunch", &json!({})).await.expect_err("cancelled");
        assert!(err.to_string().contains("no longer working"), "{err}");
        let err = store.enqueue(&ids[2], "crunch", &json!({})).await.expect_err("twice");
        assert!(
            err.to_string().contains("no longer working") || err.to_string().contains("already has a job"),
            "{err}"
        );
        let asking = task(TaskState::InputRequired(requests("k")));
        store.create(asking.clone()).await.expect("create");
        assert!(store.enqueue(&asking.id, "crunch", &json!({})).await.is_err(), "only working tasks are queued");
        assert!(store.enqueue(&new_task_id(), "crunch", &json!({})).await.is_err(), "unknown task");
        let working = task(TaskState::Working);
        store.create(working.clone()).await.expect("create");
        let err =
            store.enqueue(&working.id, "crunch", &json!({ "s": "a\u{0}b" })).await.expect_err("JSONB has no U+0000");
        assert!(err.to_string().contains("PostgreSQL"), "{err}");
        store.enqueue(&working.id, "crunch", &json!({})).await.expect("a failed enqueue left nothing behind");
    }

    /// A queued task is never failed by a stray lease (nobody runs it); once claimed, a worker
    /// that stops renewing loses the task to the sweep, and the job is never handed out again.
    pub async fn postgres_a_claimed_job_is_never_handed_out_again(db: Arc<Db>) {
        let store = db.store(2).await;
        let t = task(TaskState::Working);
        store.create(t.clone()).await.expect("create");
        store.enqueue(&t.id, "crunch", &args(1)).await.expect("enqueue");
        assert!(store.renew_lease(&t.id, Some(1)).await.expect("a late renewal by the creating instance"));
        assert!(store.fail_expired_leases(now_ms(), TaskError::internal("dead")).await.expect("sweep").is_empty());
        let job = store.claim("w1", Duration::from_millis(1)).await.expect("claim").expect("job");
        assert_eq!(job.task_id, t.id);
        tokio::time::sleep(Duration::from_millis(5)).await;
        let failed = store.fail_expired_leases(now_ms(), TaskError::internal("dead")).await.expect("sweep");
        assert_eq!(failed.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [t.id.as_str()]);
        assert!(!store.renew_lease(&t.id, Some(now_ms() + 10_000)).await.expect("renew"), "the worker must stop");
        assert_eq!(store.claim("w2", Duration::from_secs(5)).await.expect("claim"), None, "never run twice");
        let late = store.transition(&t.id, TaskState::Completed(json!({})), None, now_ms()).await.expect("write");
        assert!(matches!(late, Transition::Terminal(ref r) if matches!(r.state, TaskState::Failed(_))), "{late:?}");
    }

    static RAN_HERE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct CrunchArgs {
        n: u64,
    }

    /// Sums 1..=n; as a task it runs in a worker, never in the server.
    #[mcp_tool(task_support = "optional", group = "store_contract")]
    async fn crunch(args: CrunchArgs) -> Result<String, ToolError> {
        RAN_HERE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(format!("{}", args.n * (args.n + 1) / 2))
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NapArgs {
        /// How long to sleep (ms).
        ms: u64,
    }

    /// Sleeps, then says so.
    #[mcp_tool(task_support = "optional", group = "store_outage")]
    async fn nap(args: NapArgs) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
        Ok("rested".to_owned())
    }

    /// The database freezes for four leases while a task runs on instance A: no lease can be
    /// renewed meanwhile. Once it answers again, instance B, which saw the store fail, neither
    /// fails the task when it is read nor in its sweep before A has renewed; the task completes.
    pub async fn postgres_a_store_outage_fails_no_live_task(db: Arc<Db>) {
        let (relay, config) = relayed(&db).await;
        let lease = Duration::from_millis(500);
        let instance = |store: PostgresTaskStore| {
            let ext = TasksExtension::new().store(store.statement_timeout(Duration::from_millis(200))).lease(lease);
            let server = ext.install(Server::builder("outage", "0").groups(["store_outage"])).build();
            TestClient::modern(server.expect("builds"))
                .with_capabilities(json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }))
        };
        let a = instance(PostgresTaskStore::with_config(config.clone(), 2).await.expect("store"));
        let b = instance(PostgresTaskStore::with_config(config, 2).await.expect("store"));
        let reply = a.call_tool("nap", json!({ "ms": 4000 })).await;
        let id = reply.result()["taskId"].as_str().expect("a task").to_owned();
        // B has been serving for a while (its background work runs) when the database freezes.
        let get = json!({ "taskId": id });
        assert_eq!(b.request("tasks/get", get.clone()).await.result()["status"], "working");
        tokio::time::sleep(lease * 2).await;
        relay.freeze(true);
        tokio::time::sleep(lease * 4).await;
        relay.freeze(false);
        let mut seen: Vec<String> = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let r = b.request("tasks/get", get.clone()).await;
            let status = r.response["result"]["status"].as_str().unwrap_or("(store error)").to_owned();
            if seen.last() != Some(&status) {
                seen.push(status.clone());
            }
            if status == "completed" || status == "failed" || std::time::Instant::now() > deadline {
                assert_eq!(status, "completed", "statuses seen after the outage: {seen:?}; {}", r.response);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The database goes down (connections closed, new ones refused) while a task runs on
    /// instance A and stays down, for many leases, after the task finished: A cannot record the
    /// result, keeps retrying and keeps the task's lease once the database is back, so the task
    /// ends `completed` with its result, not `failed` by a sweep.
    pub async fn postgres_an_outcome_reached_during_an_outage_is_recorded_after_it(db: Arc<Db>) {
        let (relay, config) = relayed(&db).await;
        // Long enough that A, renewing every third of it, renews well before B, which saw the
        // store fail, judges leases again a whole lease after the outage, on a loaded machine.
        let lease = Duration::from_millis(1500);
        let instance = |store: PostgresTaskStore| {
            let ext = TasksExtension::new().store(store.statement_timeout(Duration::from_millis(500))).lease(lease);
            let server = ext.install(Server::builder("outage", "0").groups(["store_outage"])).build();
            TestClient::modern(server.expect("builds"))
                .with_capabilities(json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }))
        };
        let a = instance(PostgresTaskStore::with_config(config.clone(), 2).await.expect("store"));
        let b = instance(PostgresTaskStore::with_config(config, 2).await.expect("store"));
        let reply = a.call_tool("nap", json!({ "ms": 1000 })).await;
        let id = reply.result()["taskId"].as_str().expect("a task").to_owned();
        let get = json!({ "taskId": id });
        assert_eq!(b.request("tasks/get", get.clone()).await.result()["status"], "working");
        relay.set_down(true);
        // The nap ends a second into the outage; the outage lasts four leases past that.
        tokio::time::sleep(Duration::from_millis(1000) + lease * 4).await;
        let during = b.request("tasks/get", get.clone()).await;
        assert_eq!(during.error_code(), Some(-32603), "the database is down: {}", during.response);
        relay.set_down(false);
        let mut seen: Vec<String> = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let done = loop {
            let r = b.request("tasks/get", get.clone()).await;
            let status = r.response["result"]["status"].as_str().unwrap_or("(error)").to_owned();
            if seen.last() != Some(&status) {
                seen.push(status.clone());
            }
            if status == "completed" || status == "failed" || std::time::Instant::now() > deadline {
                assert_eq!(status, "completed", "statuses seen after the outage: {seen:?}; {}", r.response);
                break r;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(done.result()["result"]["content"][0]["text"], "rested", "{}", done.response);
    }

    /// Polls `cond` for at most 30 s; a timeout only turns a hang into a failure.
    async fn wait_for_metric(what: &str, cond: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !cond() {
            assert!(std::time::Instant::now() < deadline, "timed out waiting until {what}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The executor queues the task's `tools/call` and clears its lease; a worker on another
    /// pool claims it and records the outcome, which `tasks/get` on the server then shows.
    pub async fn postgres_job_executor_queues_the_call_for_a_worker(db: Arc<Db>) {
        let store = db.store(4).await;
        // A short lease: the maintenance period (a third of it) reads the queue's length.
        let ext = TasksExtension::new()
            .store(store.clone())
            .executor(PostgresJobExecutor::new(store.clone()))
            .lease(Duration::from_millis(600));
        // Not the other modules' tools and filters, which share this binary's registry;
        // installing the extension adds its own group.
        let server = ext.install(Server::builder("pg-jobs", "0").groups(["store_contract"])).build().expect("builds");
        let metrics = server.clone();
        let queued_metric =
            move || metrics.metrics().into_iter().find(|m| m.name == "switchyard.tasks.queued").map(|m| m.value);
        let client = TestClient::modern(server)
            .with_capabilities(json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }));
        let reply = client.call_tool("crunch", json!({ "n": 4 })).await;
        assert_eq!(reply.result()["resultType"], "task", "{}", reply.response);
        let id = reply.result()["taskId"].as_str().expect("taskId").to_owned();
        let queued = store.get(&id).await.expect("get").expect("created before the answer");
        assert_eq!((queued.state, queued.lease_expires_at_ms), (TaskState::Working, None), "queued, nobody runs it");
        assert_eq!(store.queued_jobs().await.expect("count"), 1);
        wait_for_metric("the queue's length is exported", || queued_metric() == Some(1.0)).await;

        let worker = db.store(1).await;
        let job = worker.claim("worker-1", Duration::from_secs(30)).await.expect("claim").expect("the job");
        assert_eq!(
            (job.task_id.as_str(), job.tool.as_str(), &job.arguments),
            (id.as_str(), "crunch", &json!({ "n": 4 }))
        );
        assert!(worker.renew_lease(&id, Some(now_ms() + 30_000)).await.expect("renew"));
        assert_eq!(store.queued_jobs().await.expect("count"), 0, "a claimed job no longer waits");
        wait_for_metric("the claimed job leaves the exported length", || queued_metric() == Some(0.0)).await;
        let result =
            json!({ "content": [{ "type": "text", "text": "10" }], "isError": false, "resultType": "complete" });
        applied(worker.transition(&id, TaskState::Completed(result), None, now_ms()).await.expect("record"));

        let got = client.request("tasks/get", json!({ "taskId": id })).await;
        assert_eq!(got.result()["status"], "completed", "{}", got.response);
        assert_eq!(got.result()["result"]["content"][0]["text"], "10");
        assert_eq!(RAN_HERE.load(std::sync::atomic::Ordering::SeqCst), 0, "the tool never ran in the server");
    }
}
