//! What each process with the extension installed does in the background, so that tasks
//! behave as one set across every instance behind a load balancer (docs/scaling.md):
//!
//! - **Leases.** A task is created with a lease (`lease_ms`, default 15 s) held by the process
//!   that runs it; every `lease_ms / 3` that process renews the lease of each task it runs or
//!   holds queued. A renewal that finds the task terminal (another instance cancelled it, or
//!   failed it after a lease ran out) stops the local work.
//! - **Expiry.** Every `lease_ms / 3` each process deletes the tasks whose TTL has passed
//!   (`tasks/get` already answers `-32602` for them before that).
//! - **Dead instances.** Every `lease_ms / 3` each process fails the tasks whose lease has
//!   passed (`TaskStore::fail_expired_leases`) and announces them: a task whose process died
//!   (killed, no graceful stop) ends `failed` (-32603) at most `lease_ms * 4 / 3` after the
//!   last renewal, never `working` forever. `tasks/get` fails such a task at once when it
//!   sees the lease has passed. Neither judges leases until this process has watched the
//!   store answer for a whole lease (since its maintenance started, and since it last saw the
//!   store fail): an outage of the store stops every renewal, so a lease that ran out during
//!   it says nothing about its runner, and live runners renew first (a store outage never
//!   fails tasks whose processes are alive, also when judged by an instance that was idle
//!   during the outage).
//! - **Events from other instances** (through the server's hub; with the in-process hub only
//!   this process's own): a `notifications/tasks` saying `cancelled` or `failed` stops the
//!   local work at once, so a `tasks/cancel` answered by another instance stops the task here
//!   within the hub's delivery time rather than the next renewal; a `tasks/update` answered
//!   elsewhere for a task waiting here arrives as an internal event ([`INPUT_KEY`], which no
//!   listen subscription can be granted) that wakes the task to read the answers from the
//!   store. The event carries no answers: if it is lost, the task finds them at its next read
//!   of the store.
//! - **Outcomes** that the store failed to record are written again with backoff by the task's
//!   runner, which stays registered here meanwhile, so its lease keeps being renewed.
//!
//! The loop starts with the first task or `tasks/*` request the process handles and ends with
//! the server's shutdown. Then the tasks still running here are stopped and marked `failed`
//! with a message saying the instance shut down (a drain gives them its timeout to finish
//! first), while a shutdown hold keeps the process until that is written.

use crate::TASK_IDS_KEY;
use crate::executor::TaskExecutor;
use crate::hint::INPUT_KEY;
use crate::model::{TaskError, TaskState, now_ms};
use crate::store::Transition;
use crate::tasks::{Tasks, announce, publish};
use futures::StreamExt;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;
use switchyard::Server;
use switchyard::subscriptions::{Event, Publisher};

/// How long the event watcher waits before subscribing again after its stream ended or lost
/// events (a broker outage); the lease renewal covers what it missed meanwhile.
const RESUBSCRIBE_PAUSE: Duration = Duration::from_millis(500);

impl Tasks {
    /// Starts this process's background maintenance for `server` once.
    pub(crate) fn ensure_maintenance(self: &Arc<Self>, server: &Server, queue: Option<Arc<dyn TaskExecutor>>) {
        if self.maintenance_started.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Only reachable outside a runtime, where no task can run either; try again later.
            self.maintenance_started.store(false, Ordering::Release);
            return;
        };
        // Watching starts now: what happened to the store before is unknown here.
        self.store_failed();
        let publisher = server.publisher();
        let stop = server.shutdown_token().clone();
        // The process waits for the hand-back below before it exits.
        let hold = server.shutdown_hold();
        // Weak: the loop must not keep the extension (and through it the server's state)
        // alive after the server is dropped.
        let tasks = Arc::downgrade(self);
        let period = Duration::from_millis((self.lease_ms / 3).max(1));
        runtime.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = renew_and_sweep(tasks.clone(), publisher.clone(), period, queue) => {}
                _ = watch_events(tasks.clone(), publisher.clone()) => {}
            }
            if let Some(tasks) = tasks.upgrade() {
                hand_back(&tasks, &publisher).await;
            }
            drop(hold);
        });
    }

    /// Fails every task whose lease has passed at `now` and announces it.
    pub(crate) async fn fail_dead(&self, server: &Server, now: u64) {
        fail_dead(self, &server.publisher(), now).await;
    }
}

/// At shutdown: the tasks this process still runs cannot go on anywhere else (their work lives
/// in this process), so each is stopped and marked `failed` (-32603) at once with a message that
/// says why, rather than left `working` until its lease runs out and reported as a crash. A
/// task whose write fails is left to the lease sweep of another instance.
async fn hand_back(tasks: &Tasks, publisher: &Publisher) {
    let ids = tasks.running_ids();
    if ids.is_empty() {
        return;
    }
    tracing::info!(tasks = ids.len(), "tasks: shutting down; failing the tasks still running here");
    let error = TaskError::internal(
        "the server instance running the task shut down (a restart or deploy) before the task finished; run the tool again",
    );
    for id in ids {
        tasks.stop_local(&id);
        let failed = TaskState::Failed(error.clone());
        match tasks.store.transition(&id, failed, Some(error.message.clone()), now_ms()).await {
            Ok(t) => {
                if matches!(t, Transition::Applied(_)) {
                    tasks.counts.handed_back.fetch_add(1, Ordering::Relaxed);
                }
                announce(publisher, &t);
            }
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "tasks: could not mark the task failed at shutdown; its lease will run out")
            }
        }
    }
}

async fn fail_dead(tasks: &Tasks, publisher: &Publisher, now: u64) {
    if !tasks.sweep_allowed(now) {
        tracing::debug!(
            "tasks: lease sweep deferred: the store failed within the last lease, so live runners renew first"
        );
        return;
    }
    let error = TaskError::internal(
        "the server instance running the task stopped before it finished (its lease ran out); run the tool again",
    );
    match tasks.store.fail_expired_leases(now, error).await {
        Ok(failed) => {
            tasks.counts.sweeps.fetch_add(1, Ordering::Relaxed);
            tasks.counts.swept.fetch_add(failed.len() as u64, Ordering::Relaxed);
            for record in &failed {
                tracing::warn!(task = %record.id, "tasks: lease ran out; the task is marked failed");
                publish(publisher, record);
            }
        }
        Err(e) => {
            tasks.store_failed();
            tracing::warn!(error = %e, "tasks: failing tasks with expired leases failed");
        }
    }
}

/// Every `period`: renews the leases of this process's tasks (stopping those that ended
/// elsewhere), then fails the tasks of dead processes.
async fn renew_and_sweep(
    tasks: Weak<Tasks>,
    publisher: Publisher,
    period: Duration,
    queue: Option<Arc<dyn TaskExecutor>>,
) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(tasks) = tasks.upgrade() else { return };
        let now = now_ms();
        let until = now.saturating_add(tasks.lease_ms);
        for id in tasks.running_ids() {
            match tasks.store.renew_lease(&id, Some(until)).await {
                Ok(true) => {
                    tasks.counts.renewals.fetch_add(1, Ordering::Relaxed);
                }
                Ok(false) => tasks.stop_local(&id),
                Err(e) => {
                    tasks.store_failed();
                    tracing::warn!(task = %id, error = %e, "tasks: renewing a lease failed");
                }
            }
        }
        // Judged at the time the renewals ended: they may have waited on a slow store.
        fail_dead(&tasks, &publisher, now_ms()).await;
        if let Err(e) = tasks.store.purge_expired(now).await {
            tasks.store_failed();
            tracing::warn!(error = %e, "tasks: purging expired tasks failed");
        }
        if let Some(executor) = &queue
            && let Some(waiting) = executor.queued().await
        {
            tasks.counts.queued.get_or_init(Default::default).store(waiting, Ordering::Relaxed);
        }
        tasks.round_end_ms.store(now_ms(), Ordering::Release);
    }
}

/// Reacts to task events from every instance: stops local work that ended elsewhere and wakes
/// local tasks for which `tasks/update` stored answers.
async fn watch_events(tasks: Weak<Tasks>, publisher: Publisher) {
    loop {
        let mut events = publisher.subscribe();
        while let Some(Ok(event)) = events.next().await {
            let Some(tasks) = tasks.upgrade() else { return };
            let Event::Extension { key, item, params, .. } = event else { continue };
            let Some(id) = item.as_str() else { continue };
            if key == TASK_IDS_KEY {
                let status = params.get("status").and_then(Value::as_str);
                if matches!(status, Some("cancelled" | "failed")) {
                    tasks.stop_local(id);
                }
            } else if key == INPUT_KEY {
                tasks.wake_local(id);
            }
        }
        if tasks.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
    }
}
