//! A running task's status message: what `ctx.progress().report(..)` and
//! [`set_status_message`] inside a task turn into. The Tasks extension forbids progress
//! notifications for tasks, so a report becomes the task's `statusMessage`, which `tasks/get`
//! and `notifications/tasks` carry.
//!
//! Writes are coalesced per task: the first report is written at once, later ones at most every
//! [`WRITE_INTERVAL`], each time the latest one, so a tool reporting in a tight loop costs the
//! store (and every listener) at most a few writes a second.

use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchyard::context::{ProgressFuture, ProgressSink};
use switchyard::{McpError, RequestContext};

/// The shortest time between two status writes of one task. A report inside it replaces the
/// one waiting, and the latest is written when it has passed.
pub(crate) const WRITE_INTERVAL: Duration = Duration::from_millis(250);

/// Writes one status message of the task (the store, then `notifications/tasks`); supplied by
/// the extension so that this module needs nothing else of it.
pub(crate) type Write = Arc<dyn Fn(String) -> BoxFuture<'static, ()> + Send + Sync>;

/// The status of one running task: its progress sink, also kept in the task's request scope
/// for [`set_status_message`]. Cheap to clone; every clone is the same status.
#[derive(Clone)]
pub(crate) struct TaskStatus {
    inner: Arc<Inner>,
}

struct Inner {
    write: Write,
    slot: Mutex<Slot>,
    /// Held while a message is written, so that [`TaskStatus::close`] can wait for that write.
    writing: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Slot {
    /// The latest message not yet written.
    pending: Option<String>,
    /// A writer runs (writing, or waiting out the interval after a write).
    flushing: bool,
    /// The work ended: nothing more is written.
    closed: bool,
}

impl std::fmt::Debug for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStatus").finish_non_exhaustive()
    }
}

impl TaskStatus {
    pub(crate) fn new(write: Write) -> Self {
        TaskStatus { inner: Arc::new(Inner { write, slot: Mutex::default(), writing: tokio::sync::Mutex::new(()) }) }
    }

    /// The status of the task `ctx` runs, if it is a task's context.
    pub(crate) fn of(ctx: &RequestContext) -> Option<TaskStatus> {
        ctx.extensions().get::<TaskStatus>().cloned()
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        // Poisoning only follows a panic between two field writes of plain values.
        self.inner.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets `message` as the next one to write: at once when no write happened within the
    /// interval, else when it has passed (unless a later message replaces it first).
    pub(crate) fn submit(&self, message: String) {
        {
            let mut slot = self.slot();
            if slot.closed {
                return;
            }
            slot.pending = Some(message);
            if slot.flushing {
                return;
            }
            slot.flushing = true;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Tasks run on Tokio; a report from elsewhere has nobody to write it.
            self.slot().flushing = false;
            tracing::warn!("tasks: a status message was reported outside a Tokio runtime and is dropped");
            return;
        };
        let status = self.clone();
        runtime.spawn(async move { status.flush().await });
    }

    /// Writes the pending message, waits out the interval, and again while messages come.
    async fn flush(self) {
        loop {
            let message = {
                let mut slot = self.slot();
                match slot.pending.take() {
                    Some(m) => m,
                    None => {
                        slot.flushing = false;
                        return;
                    }
                }
            };
            {
                let _writing = self.inner.writing.lock().await;
                if !self.slot().closed {
                    (self.inner.write)(message).await;
                }
            }
            tokio::time::sleep(WRITE_INTERVAL).await;
        }
    }

    /// Ends the status once the work returned, before its outcome is recorded: what is pending
    /// is dropped (the outcome replaces the status message anyway) and a write under way is
    /// waited for, so that its `notifications/tasks` never follows the outcome's.
    pub(crate) async fn close(&self) {
        {
            let mut slot = self.slot();
            slot.closed = true;
            slot.pending = None;
        }
        drop(self.inner.writing.lock().await);
    }
}

impl ProgressSink for TaskStatus {
    fn report<'a>(&'a self, progress: f64, total: Option<f64>, message: Option<&'a str>) -> ProgressFuture<'a> {
        self.submit(status_text(progress, total, message));
        Box::pin(std::future::ready(()))
    }
}

/// The `statusMessage` for a progress report: `"3 of 10 (30%)"` with a total (the percentage,
/// rounded down, only for a positive, finite total), `"progress 3"` without one, followed by
/// `": "` and the message when there is one: `"3 of 10 (30%): copying files"`. Numbers are
/// written as Rust writes an `f64`: `3`, `2.5`.
pub(crate) fn status_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut text = match total {
        Some(t) if t > 0.0 && t.is_finite() && progress.is_finite() => {
            let percent = (progress / t * 100.0).clamp(0.0, 100.0).floor();
            format!("{progress} of {t} ({percent}%)")
        }
        Some(t) => format!("{progress} of {t}"),
        None => format!("progress {progress}"),
    };
    if let Some(m) = message {
        text.push_str(": ");
        text.push_str(m);
    }
    text
}

/// Sets the `statusMessage` of the task `ctx` runs, which `tasks/get` and `notifications/tasks`
/// then carry while the task is `working`
/// ([`Task`](https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md#task-status)):
/// for task code that has no numbers to report with `ctx.progress().report(..)`, which sets the
/// same field.
///
/// Returns at once; the message is written as progress reports are: the first at once, then at
/// most one write every 250 ms per task, the latest message each time (intermediate ones may be
/// skipped). A message set while the task waits for input (`input_required`) or after it ended
/// is dropped, and one the store fails to write is logged and dropped (the next one is written
/// as usual). The task's outcome replaces the status message.
///
/// Errors: `-32600` when `ctx` is not the context of a running task.
pub fn set_status_message(ctx: &RequestContext, message: impl Into<String>) -> Result<(), McpError> {
    let Some(status) = TaskStatus::of(ctx) else {
        return Err(McpError::invalid_request("a status message needs a request that runs as a task"));
    };
    status.submit(message.into());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_texts_carry_the_numbers_and_the_message() {
        assert_eq!(status_text(3.0, Some(10.0), Some("copying files")), "3 of 10 (30%): copying files");
        assert_eq!(status_text(2.5, Some(3.0), None), "2.5 of 3 (83%)");
        assert_eq!(status_text(12.0, Some(10.0), None), "12 of 10 (100%)");
        assert_eq!(status_text(1.0, Some(0.0), None), "1 of 0");
        assert_eq!(status_text(f64::NAN, Some(1.0), None), "NaN of 1");
        assert_eq!(status_text(42.0, None, Some("bytes")), "progress 42: bytes");
        assert_eq!(status_text(0.0, None, None), "progress 0");
    }

    /// The first message is written at once, a burst inside the interval costs one more write
    /// (of its latest message), and nothing is written after `close`.
    #[tokio::test(start_paused = true)]
    async fn a_burst_of_reports_is_written_once_with_its_latest_message() {
        let written = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = written.clone();
        let status = TaskStatus::new(Arc::new(move |m| {
            log.lock().expect("log").push(m);
            Box::pin(async {})
        }));
        let seen = || written.lock().expect("log").clone();
        status.submit("1".into());
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(seen(), ["1"]);
        for n in 2..=100 {
            status.submit(n.to_string());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(seen(), ["1"], "inside the interval nothing more is written");
        tokio::time::sleep(WRITE_INTERVAL).await;
        assert_eq!(seen(), ["1", "100"]);
        tokio::time::sleep(WRITE_INTERVAL * 4).await;
        assert_eq!(seen(), ["1", "100"], "nothing pending, nothing written");
        status.submit("after a pause".into());
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(seen(), ["1", "100", "after a pause"], "written at once again");
        status.submit("pending".into());
        status.close().await;
        tokio::time::sleep(WRITE_INTERVAL * 4).await;
        status.submit("late".into());
        tokio::time::sleep(WRITE_INTERVAL * 4).await;
        assert_eq!(seen(), ["1", "100", "after a pause"], "nothing after close");
    }
}
