//! The durable SQLite store: restart recovery, terminal states, TTL purge, sharing one file
//! between two handles (as a worker process would), upgrading a file from an older version.
//! The rest of the `TaskStore` contract is checked in `store_contract.rs`.

use serde_json::json;
use switchyard_tasks::{SqliteTaskStore, TaskError, TaskRecord, TaskState, TaskStore, Transition};

fn record(id: &str, now: u64, ttl: Option<u64>) -> TaskRecord {
    TaskRecord {
        id: id.to_owned(),
        owner: Some("alice".into()),
        state: TaskState::Working,
        status_message: None,
        created_at_ms: now,
        last_updated_at_ms: now,
        ttl_ms: ttl,
        poll_interval_ms: Some(500),
        lease_expires_at_ms: None,
    }
}

fn temp_db(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("switchyard-sqlite-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("tasks.db")
}

#[tokio::test]
async fn tasks_survive_a_restart_and_running_ones_are_reported_failed() {
    let db = temp_db("restart");
    {
        let store = SqliteTaskStore::open_for_server(&db).expect("opens");
        store.create(record("t_running", 1_000, None)).await.expect("create");
        store.create(record("t_done", 1_000, None)).await.expect("create");
        let result = json!({ "content": [{ "type": "text", "text": "done" }], "isError": false });
        let t = store.transition("t_done", TaskState::Completed(result), None, 2_000).await.expect("write");
        assert!(matches!(t, Transition::Applied(_)));
    }
    let store = SqliteTaskStore::open_for_server(&db).expect("reopens");
    let done = store.get("t_done").await.expect("read").expect("kept");
    assert_eq!(
        done.state,
        TaskState::Completed(json!({ "content": [{ "type": "text", "text": "done" }], "isError": false }))
    );
    assert_eq!(
        (done.owner.as_deref(), done.last_updated_at_ms, done.poll_interval_ms),
        (Some("alice"), 2_000, Some(500))
    );
    let running = store.get("t_running").await.expect("read").expect("kept");
    match &running.state {
        TaskState::Failed(e) => {
            assert_eq!(e.code, -32603);
            assert!(e.message.contains("server stopped"), "{}", e.message);
        }
        other => panic!("expected failed, got {other:?}"),
    }
    assert!(running.status_message.is_some());
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}

#[tokio::test]
async fn terminal_states_never_change_across_handles() {
    let db = temp_db("terminal");
    let server = SqliteTaskStore::open_for_server(&db).expect("opens");
    // A worker process opens the same file without recovering anything.
    let worker = SqliteTaskStore::open(&db).expect("opens");
    server.create(record("t_1", 1_000, None)).await.expect("create");
    assert!(worker.get("t_1").await.expect("read").is_some(), "visible to the other handle at once");
    let t = server.transition("t_1", TaskState::Cancelled, Some("cancelled".into()), 1_500).await.expect("cancel");
    assert!(matches!(t, Transition::Applied(_)));
    let late = worker.transition("t_1", TaskState::Completed(json!({})), None, 2_000).await.expect("write");
    assert!(matches!(late, Transition::Terminal(ref r) if r.state == TaskState::Cancelled), "{late:?}");
    let failed = TaskState::Failed(TaskError::internal("x"));
    assert_eq!(worker.transition("t_none", failed, None, 2_000).await.expect("write"), Transition::Unknown);
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}

#[tokio::test]
async fn input_requests_round_trip_and_expired_tasks_are_purged() {
    let db = temp_db("ttl");
    let store = SqliteTaskStore::open(&db).expect("opens");
    store.create(record("t_short", 1_000, Some(50))).await.expect("create");
    store.create(record("t_long", 1_000, None)).await.expect("create");
    let mut requests = serde_json::Map::new();
    requests.insert("k1".into(), json!({ "method": "elicitation/create", "params": {} }));
    store.transition("t_long", TaskState::InputRequired(requests.clone()), None, 1_010).await.expect("write");
    assert_eq!(store.get("t_long").await.expect("read").expect("kept").state, TaskState::InputRequired(requests));
    assert_eq!(store.purge_expired(1_049).await.expect("purge"), 0);
    assert_eq!(store.purge_expired(1_050).await.expect("purge"), 1);
    assert!(store.get("t_short").await.expect("read").is_none());
    assert!(store.get("t_long").await.expect("read").is_some());
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}

/// A server and its worker processes start together and open a file nobody created yet: the
/// first opens race to switch it to WAL and create the table, which SQLite answers with
/// "database is locked" at once (no busy wait can resolve two readers both upgrading).
#[test]
fn many_handles_can_open_a_fresh_file_at_once() {
    for round in 0..20 {
        let db = temp_db(&format!("fresh-{round}"));
        let opened: Vec<_> = (0..8)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || SqliteTaskStore::open(&db).map(drop))
            })
            .collect();
        for handle in opened {
            handle.join().expect("no panic").expect("every handle opens");
        }
    }
}

/// A file written before leases existed gains the column when opened, keeps its tasks, and
/// several handles may open it at once.
#[tokio::test]
async fn a_file_from_before_leases_is_upgraded_in_place() {
    let db = temp_db("upgrade");
    {
        let conn = rusqlite::Connection::open(&db).expect("opens");
        conn.execute_batch(
            "CREATE TABLE switchyard_tasks (
                id TEXT PRIMARY KEY NOT NULL, owner TEXT, status TEXT NOT NULL, payload TEXT,
                status_message TEXT, created_at_ms INTEGER NOT NULL, last_updated_at_ms INTEGER NOT NULL,
                ttl_ms INTEGER, poll_interval_ms INTEGER
            );
            INSERT INTO switchyard_tasks VALUES ('t_old', 'bob', 'working', NULL, NULL, 1000, 1000, NULL, 500);",
        )
        .expect("old schema");
    }
    let opened: Vec<_> = (0..6)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || SqliteTaskStore::open(&db))
        })
        .collect();
    let mut stores = Vec::new();
    for handle in opened {
        stores.push(handle.join().expect("no panic").expect("every handle opens and upgrades"));
    }
    let store = &stores[0];
    let old = store.get("t_old").await.expect("read").expect("kept");
    assert_eq!(
        (old.owner.as_deref(), old.state.clone(), old.lease_expires_at_ms),
        (Some("bob"), TaskState::Working, None)
    );
    assert!(store.renew_lease("t_old", Some(2_000)).await.expect("renew"));
    assert_eq!(stores[1].get("t_old").await.expect("read").expect("kept").lease_expires_at_ms, Some(2_000));
    let failed = stores[1].fail_expired_leases(2_000, TaskError::internal("worker died")).await.expect("sweep");
    assert_eq!(failed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t_old"]);
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}

/// Restart recovery clears the leases of the tasks it fails: a lease on a terminal task means
/// nothing.
#[tokio::test]
async fn restart_recovery_clears_leases() {
    let db = temp_db("recover-lease");
    {
        let store = SqliteTaskStore::open(&db).expect("opens");
        store
            .create(TaskRecord { lease_expires_at_ms: Some(9_999), ..record("t_leased", 1_000, None) })
            .await
            .expect("create");
    }
    let store = SqliteTaskStore::open_for_server(&db).expect("reopens");
    let t = store.get("t_leased").await.expect("read").expect("kept");
    assert!(matches!(t.state, TaskState::Failed(_)), "{t:?}");
    assert_eq!(t.lease_expires_at_ms, None);
    let _ = std::fs::remove_dir_all(db.parent().expect("dir"));
}
