//! The installed extension's state: store, settings, and the cancellation
//! registrations of the tasks running in this process.

use crate::model::{TaskError, TaskRecord, TaskState, now_ms};
use crate::progress::TaskStatus;
use crate::store::metered::StoreStats;
use crate::store::{PutInput, TaskStore, Transition};
use crate::{EXTENSION, TASK_IDS_KEY};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::subscriptions::{Event, Publisher};
use switchyard::{Alternate, CallToolResult, CancellationToken, McpError, RequestContext, Server};

/// What one running task holds in this process.
#[derive(Default)]
struct Running {
    cancel: Option<CancellationToken>,
    /// Set while the task waits for `tasks/update` answers: wakes it to read them from the store.
    wake: Option<Arc<tokio::sync::Notify>>,
}

/// The first pause before an outcome the store failed to record is written again; it doubles
/// up to [`OUTCOME_RETRY_MAX`].
const OUTCOME_RETRY_FIRST: Duration = Duration::from_millis(100);

/// The longest pause between two attempts to record an outcome.
const OUTCOME_RETRY_MAX: Duration = Duration::from_secs(5);

/// After this many attempts in a row in which the store refused the outcome but answered a
/// read of the task right after, the store is up and refuses this one write (a result too
/// large for it, say): the task is marked `failed` instead of retrying forever.
const OUTCOME_REFUSALS: u32 = 5;

/// The extension as installed on a server (kept in its shared state).
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl_ms: Option<u64>,
    pub(crate) poll_interval_ms: u64,
    /// How long a task's lease lasts (ms); see [`crate::maintenance`].
    pub(crate) lease_ms: u64,
    running: Mutex<HashMap<String, Running>>,
    /// Set once the background maintenance of this process runs.
    pub(crate) maintenance_started: AtomicBool,
    /// The store's call totals, and when it last failed or was slow, or this process began
    /// watching it (its maintenance started): see [`sweep_allowed`](Self::sweep_allowed).
    pub(crate) store_stats: Arc<StoreStats>,
    /// When (Unix ms) the maintenance last finished a round: see
    /// [`sweep_allowed`](Self::sweep_allowed).
    pub(crate) round_end_ms: std::sync::atomic::AtomicU64,
    /// Totals for the `switchyard.tasks.*` metrics.
    pub(crate) counts: Counts,
}

/// What the maintenance did since the process started (`switchyard.tasks.*` metrics).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Leases renewed.
    pub(crate) renewals: std::sync::atomic::AtomicU64,
    /// Sweeps for tasks of dead instances that ran (not deferred).
    pub(crate) sweeps: std::sync::atomic::AtomicU64,
    /// Tasks a sweep marked failed.
    pub(crate) swept: std::sync::atomic::AtomicU64,
    /// Tasks this process marked failed because it shut down while they ran.
    pub(crate) handed_back: std::sync::atomic::AtomicU64,
    /// The executor's queue length at the last maintenance period, once it reported one.
    pub(crate) queued: std::sync::OnceLock<std::sync::atomic::AtomicU64>,
}

/// The installed extension of `ctx`'s server, if any.
pub(crate) fn installed(ctx: &RequestContext) -> Option<Arc<Tasks>> {
    if !ctx.server().has_extension(EXTENSION) {
        return None;
    }
    ctx.state::<TasksState>().map(|s| s.0.clone())
}

/// The shared-state entry under which the extension keeps itself.
pub(crate) struct TasksState(pub(crate) Arc<Tasks>);

/// The `-32602` every lookup of an unknown, expired or foreign task gets (one answer for all
/// three, so ids of other callers are not revealed).
fn unknown(id: &str) -> McpError {
    // A task id is 34 characters; echo no more than a little beyond that of whatever came in.
    let shown: String = id.chars().take(64).collect();
    let more = if shown.len() < id.len() { "..." } else { "" };
    McpError::invalid_params(format!("unknown or expired task: {shown:?}{more}"))
}

/// Longest id any store is asked about: ids are 34 characters; a store-specific id scheme gets
/// generous room, an abusive one does not reach the store.
const MAX_ID_LEN: usize = 256;

/// True for ids no store can hold (too long, or with a NUL, which PostgreSQL text refuses):
/// answered as unknown without asking the store.
fn impossible_id(id: &str) -> bool {
    id.len() > MAX_ID_LEN || id.contains('\0')
}

pub(crate) fn store_error(what: &str, e: impl std::fmt::Display) -> McpError {
    tracing::error!(error = %e, "tasks: {what}");
    McpError::internal(format!(
        "the task store failed while trying to {what} (it may be down or not answering); try again shortly, \
         the server's log has the details"
    ))
}

/// The id of `ctx`'s caller as a task owner.
pub(crate) fn owner_of(ctx: &RequestContext) -> Option<String> {
    ctx.principal().map(|p| p.id.clone())
}

impl Tasks {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        store_stats: Arc<StoreStats>,
        ttl_ms: Option<u64>,
        poll_interval_ms: u64,
        lease_ms: u64,
    ) -> Self {
        Tasks {
            store,
            ttl_ms,
            poll_interval_ms,
            lease_ms,
            running: Mutex::new(HashMap::new()),
            maintenance_started: AtomicBool::new(false),
            store_stats,
            round_end_ms: std::sync::atomic::AtomicU64::new(0),
            counts: Counts::default(),
        }
    }

    /// Notes that the store failed (or this process began watching it) now.
    pub(crate) fn store_failed(&self) {
        self.store_stats.trouble();
    }

    /// Whether leases that passed may be judged at `now`: only once this process has watched
    /// the store answer for a whole lease, i.e. its maintenance (which calls the store every
    /// third of a lease) has run for a lease without a store failure. During a store outage
    /// nobody can renew, so a lease that ran out then says nothing about its runner; a live
    /// runner renews within a third of a lease once the store is back, and only then does a
    /// passed lease mean a dead runner. A process that was not watching (idle, or started just
    /// now) cannot tell whether an outage happened, so it waits too; so does one whose
    /// maintenance has not finished a round within two periods (its calls hang on a frozen
    /// store: a failure it has not seen yet).
    pub(crate) fn sweep_allowed(&self, now: u64) -> bool {
        use std::sync::atomic::Ordering::Acquire;
        let trouble = self.store_stats.trouble_ms.load(Acquire);
        let round_end = self.round_end_ms.load(Acquire);
        self.maintenance_started.load(Acquire)
            && now.saturating_sub(trouble) >= self.lease_ms
            && now.saturating_sub(round_end) <= self.lease_ms / 3 * 2
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        // Poisoning only follows a panic during a map update; the map is still consistent.
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers task `id` as run by this process: its lease is renewed, and `cancel` fires when
    /// it is cancelled or ends elsewhere.
    pub(crate) fn register(&self, id: &str, cancel: CancellationToken) {
        self.running().insert(id.to_owned(), Running { cancel: Some(cancel), wake: None });
    }

    pub(crate) fn unregister(&self, id: &str) {
        self.running().remove(id);
    }

    /// How many tasks this process runs (or holds queued) now.
    pub(crate) fn running_count(&self) -> usize {
        self.running().len()
    }

    /// The ids of the tasks this process runs (or holds queued) now.
    pub(crate) fn running_ids(&self) -> Vec<String> {
        self.running().keys().cloned().collect()
    }

    /// Fires the cancellation token of task `id` if this process runs it.
    pub(crate) fn stop_local(&self, id: &str) {
        let token = self.running().get(id).and_then(|r| r.cancel.clone());
        if let Some(token) = token {
            token.cancel();
        }
    }

    /// Wakes task `id` to read its stored input responses if it waits for input in this
    /// process; false otherwise.
    pub(crate) fn wake_local(&self, id: &str) -> bool {
        let Some(wake) = self.running().get(id).and_then(|r| r.wake.clone()) else { return false };
        wake.notify_one();
        true
    }

    /// Registers task `id` as run by this process, if it is not, so that the maintenance loop
    /// renews its lease; true when it was added (the caller then unregisters it).
    fn hold(&self, id: &str) -> bool {
        let mut running = self.running();
        if running.contains_key(id) {
            return false;
        }
        running.insert(id.to_owned(), Running::default());
        true
    }

    /// The task `id` if `ctx`'s caller may see it and it has not expired.
    ///
    /// Errors: `-32602` for an unknown, expired or foreign task; `-32603` when the store fails.
    pub(crate) async fn visible(&self, ctx: &RequestContext, id: &str) -> Result<TaskRecord, McpError> {
        if impossible_id(id) {
            return Err(unknown(id));
        }
        let now = now_ms();
        let mut record = self.store.get(id).await.map_err(|e| {
            self.store_failed();
            store_error("read a task", e)
        })?;
        if let Some(r) = &record
            && !r.state.is_terminal()
            && r.lease_expires_at_ms.is_some_and(|until| until <= now)
            && self.sweep_allowed(now)
        {
            // Its process died and no sweep has run since: fail it now rather than report it
            // `working` (docs/scaling.md: never `working` forever).
            self.fail_dead(&ctx.server(), now).await;
            record = self.store.get(id).await.map_err(|e| store_error("read a task", e))?;
        }
        match record {
            Some(r) if r.is_expired(now) => {
                if let Err(e) = self.store.purge_expired(now).await {
                    tracing::warn!(error = %e, "tasks: purging expired tasks failed");
                }
                Err(unknown(id))
            }
            Some(r) if r.owner == owner_of(ctx) => Ok(r),
            _ => Err(unknown(id)),
        }
    }

    /// Records the terminal `state` of task `id` on a request's path: one attempt before the
    /// request is answered; if the store fails, the retries of [`finish_with`](Self::finish_with)
    /// go on in the background instead of holding the request for as long as the store is away.
    pub(crate) async fn finish_before_answering(self: &Arc<Self>, server: &Server, id: &str, state: TaskState) {
        let message = match &state {
            TaskState::Failed(e) => Some(e.message.clone()),
            _ => None,
        };
        let publisher = server.publisher();
        match self.store.transition(id, state.clone(), message, now_ms()).await {
            Ok(t) => announce(&publisher, &t),
            Err(e) => {
                self.store_failed();
                tracing::warn!(task = id, error = %e, "tasks: recording the outcome failed; retrying in the background");
                let (tasks, id) = (self.clone(), id.to_owned());
                tokio::spawn(async move { tasks.finish_with(&publisher, &id, state).await });
            }
        }
    }

    /// Records what the background pipeline returned (see `TaskExecution::run_tool_pipeline`).
    pub(crate) async fn record_outcome(
        &self,
        server: &Server,
        id: &str,
        outcome: Result<Alternate<CallToolResult>, McpError>,
    ) {
        let state = match outcome {
            Ok(Alternate::Ordinary(result)) => match serde_json::to_value(result) {
                Ok(Value::Object(mut m)) => {
                    m.insert("resultType".into(), json!("complete"));
                    TaskState::Completed(Value::Object(m))
                }
                Ok(other) => TaskState::Completed(other),
                Err(e) => TaskState::Failed(TaskError::internal(format!("the tool result could not be encoded: {e}"))),
            },
            Ok(Alternate::Other(_)) => TaskState::Failed(TaskError::internal(
                "a filter inside the task returned an alternate result; only the Tasks filter may turn a call into a task",
            )),
            Err(e) => TaskState::Failed(TaskError::from(&e)),
        };
        self.finish(server, id, state).await;
    }

    /// Moves the task to a terminal `state`; see [`finish_with`](Self::finish_with).
    pub(crate) async fn finish(&self, server: &Server, id: &str, state: TaskState) {
        self.finish_with(&server.publisher(), id, state).await;
    }

    /// Records the terminal `state` of task `id` and announces it through `publisher`.
    ///
    /// While the store fails, the write is repeated after 100 ms, doubling up to 5 s, for as
    /// long as the process lives, and the task stays registered here so that its lease keeps
    /// being renewed and no sweep takes it for a dead instance's. It stops when the write
    /// succeeds or the task turns out unknown or terminal (cancelled meanwhile, or written by
    /// an attempt whose answer was lost). Only a store that answers reads but refuses this write
    /// [`OUTCOME_REFUSALS`] times in a row gets the task marked `failed` (-32603) instead.
    pub(crate) async fn finish_with(&self, publisher: &Publisher, id: &str, state: TaskState) {
        let message = match &state {
            TaskState::Failed(e) => Some(e.message.clone()),
            _ => None,
        };
        let mut delay = OUTCOME_RETRY_FIRST;
        let (mut attempt, mut refused, mut held) = (0u32, 0u32, false);
        loop {
            attempt += 1;
            let error = match self.store.transition(id, state.clone(), message.clone(), now_ms()).await {
                Ok(Transition::Terminal(r)) if r.state == state => {
                    // An earlier attempt was written after all and only its answer was lost
                    // (announcing a state twice is harmless; not announcing it is not).
                    announce_record(publisher, &r);
                    break;
                }
                Ok(t) => {
                    announce(publisher, &t);
                    break;
                }
                Err(e) => e,
            };
            self.store_failed();
            held = self.hold(id) || held;
            match self.store.get(id).await {
                Ok(None) => {
                    tracing::warn!(task = id, "tasks: the task is gone; its outcome is dropped");
                    break;
                }
                Ok(Some(r)) if r.state.is_terminal() => {
                    if r.state == state {
                        announce_record(publisher, &r);
                    } else {
                        tracing::warn!(
                            task = id,
                            status = r.state.status(),
                            "tasks: the task ended meanwhile; its outcome is dropped"
                        );
                    }
                    break;
                }
                Ok(Some(_)) => refused += 1,
                // A store that is down may come back and take the outcome; a record that cannot
                // be read will not get better, so it counts as a refusal.
                Err(e) if e.is_transient() => refused = 0,
                Err(_) => refused += 1,
            }
            if refused >= OUTCOME_REFUSALS {
                tracing::error!(task = id, error = %error, attempt, "tasks: the store keeps refusing the outcome; marking the task failed");
                let error = TaskError::internal(
                    "the task's outcome could not be recorded (the task store refused it); see the server log",
                );
                let msg = Some(error.message.clone());
                match self.store.transition(id, TaskState::Failed(error), msg, now_ms()).await {
                    Ok(t) => announce(publisher, &t),
                    Err(e) => tracing::error!(task = id, error = %e, "tasks: marking the task failed failed too"),
                }
                break;
            }
            tracing::warn!(task = id, error = %error, attempt, retry_in_ms = delay.as_millis() as u64,
                "tasks: recording the outcome failed; retrying");
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(OUTCOME_RETRY_MAX);
        }
        if held {
            self.unregister(id);
        }
    }

    /// `tasks/cancel`: `cancelled` in the store first, then the token fires. A terminal task is
    /// left as it is.
    pub(crate) async fn cancel(&self, ctx: &RequestContext, id: &str) -> Result<(), McpError> {
        let record = self.visible(ctx, id).await?;
        if record.state.is_terminal() {
            return Ok(());
        }
        let t = self
            .store
            .transition(id, TaskState::Cancelled, Some("cancelled by the client".into()), now_ms())
            .await
            .map_err(|e| store_error("cancel a task", e))?;
        // The announcement also reaches the instance running the task through a shared hub,
        // which stops it there (see `maintenance`).
        announce(&ctx.server().publisher(), &t);
        self.stop_local(id);
        Ok(())
    }

    /// `tasks/update`: stores the answers for outstanding keys, where the task's runner on any
    /// instance takes them, and wakes the runner; other keys are ignored
    /// ([task update requests](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-update-requests)).
    /// In the same step the answered keys leave `inputRequests` and, once none is left, the task
    /// is `working` again, so the next `tasks/get` lists only the keys still outstanding.
    ///
    /// Errors: `-32602` for an unknown, expired or foreign task; `-32603` when the store fails
    /// (nothing changed: the same `tasks/update` may be sent again).
    pub(crate) async fn update(
        &self,
        ctx: &RequestContext,
        id: &str,
        responses: Map<String, Value>,
    ) -> Result<(), McpError> {
        let record = self.visible(ctx, id).await?;
        let TaskState::InputRequired(outstanding) = &record.state else { return Ok(()) };
        let answered: Map<String, Value> = responses.into_iter().filter(|(k, _)| outstanding.contains_key(k)).collect();
        if answered.is_empty() {
            return Ok(());
        }
        let now = now_ms();
        let put = self.store.put_input_responses(id, answered, now).await.map_err(|e| {
            self.store_failed();
            tracing::error!(task = id, error = %e, "tasks: storing input responses failed");
            McpError::internal(
                "the task store failed while storing the input responses; nothing changed and the task still \
                 waits for them: send the same tasks/update again",
            )
        })?;
        match put {
            PutInput::Stored { record, .. } => {
                let publisher = ctx.server().publisher();
                announce_record(&publisher, &record);
                // The answers are in the store; the runner is only told to look. Elsewhere the hub
                // carries that hint, and without it the runner finds them when it next polls.
                if !self.wake_local(id) {
                    crate::hint::hint_input(&publisher, id);
                }
                Ok(())
            }
            // Another update answered these keys first, or the task moved on: ignored, as keys
            // that are not outstanding are.
            PutInput::Ignored(_) => Ok(()),
            PutInput::Unknown => Err(unknown(id)),
        }
    }

    /// The status of task `id`: its messages are written with
    /// [`TaskStore::set_status_message`] and announced with `notifications/tasks`.
    pub(crate) fn status_of(self: &Arc<Self>, server: &Server, id: &str) -> TaskStatus {
        let (tasks, publisher, id) = (self.clone(), server.publisher(), id.to_owned());
        TaskStatus::new(Arc::new(move |message| {
            let (tasks, publisher, id) = (tasks.clone(), publisher.clone(), id.clone());
            Box::pin(async move {
                let now = now_ms();
                match tasks.store.set_status_message(&id, Some(message), now).await {
                    // Not a status change: announced without the status-change event.
                    Ok(Some(record)) => publish(&publisher, &record),
                    // Not `working` (waiting for input, or ended), or a store without messages.
                    Ok(None) => {}
                    Err(e) => {
                        tasks.store_failed();
                        tracing::warn!(task = %id, error = %e, "tasks: writing the status message failed; it is dropped");
                    }
                }
            })
        }))
    }

    /// Registers the waker through which `tasks/update` tells task `id` that answers are stored.
    pub(crate) fn input_waker(&self, id: &str) -> Arc<tokio::sync::Notify> {
        let wake = Arc::new(tokio::sync::Notify::new());
        if let Some(running) = self.running().get_mut(id) {
            running.wake = Some(wake.clone());
        }
        wake
    }

    /// Removes the waker of task `id`: it no longer waits for input.
    pub(crate) fn drop_input_waker(&self, id: &str) {
        if let Some(running) = self.running().get_mut(id) {
            running.wake = None;
        }
    }

    /// How often a task waiting for input reads the store for answers when no wake-up comes:
    /// a third of a lease, at most a second.
    pub(crate) fn input_poll_interval(&self) -> Duration {
        Duration::from_millis((self.lease_ms / 3).clamp(1, 1000))
    }

    /// Moves a non-terminal task to `state` and announces it.
    ///
    /// Errors: `-32603` when the store fails; `-32602` when the task is unknown.
    pub(crate) async fn set_state(&self, server: &Server, id: &str, state: TaskState) -> Result<bool, McpError> {
        let t = self.store.transition(id, state, None, now_ms()).await.map_err(|e| store_error("update a task", e))?;
        announce(&server.publisher(), &t);
        match t {
            Transition::Applied(_) => Ok(true),
            Transition::Terminal(_) => Ok(false),
            Transition::Unknown => Err(unknown(id)),
        }
    }
}

/// Sends `notifications/tasks` (the full `DetailedTask`) to listen subscriptions granted this task
/// ([task status notifications](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-status-notifications))
/// after an applied change.
pub(crate) fn announce(publisher: &Publisher, t: &Transition) {
    if let Transition::Applied(record) = t {
        announce_record(publisher, record);
    }
}

/// Announces `record`, which has just changed.
fn announce_record(publisher: &Publisher, record: &TaskRecord) {
    // In the span of whoever changed it: the task's own work (in the caller's trace), or a
    // later tasks/cancel or tasks/update request (in that request's).
    tracing::event!(
        target: switchyard::context::SPAN_TARGET,
        tracing::Level::INFO,
        mcp.task.id = %record.id,
        mcp.task.status = record.state.status(),
        "task status changed"
    );
    publish(publisher, record);
}

/// Publishes `notifications/tasks` for `record` to the subscriptions granted its id.
pub(crate) fn publish(publisher: &Publisher, record: &TaskRecord) {
    publisher.publish(Event::Extension {
        key: TASK_IDS_KEY.to_owned(),
        item: json!(record.id),
        method: "notifications/tasks".to_owned(),
        params: Value::Object(record.detailed_json()),
    });
}
