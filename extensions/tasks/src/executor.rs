//! Who runs a task: the [`TaskExecutor`] trait (delegation to an external runtime), the
//! per-task [`TaskExecution`] context, and the built-in executors.

use crate::model::TaskRecord;
use crate::tasks::Tasks;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use switchyard::McpError;
use switchyard::{AltNext, CallToolParams, CallToolResult, CancellationToken, RequestContext};

/// Why an executor could not take a task. The task is then marked `failed` with `-32603` and
/// this error's `Display` as its message before the `CreateTaskResult` is sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The executor has no room for the task now (its queue is full); later tasks may be taken.
    #[error("{0}")]
    Busy(String),
    /// The executor cannot take tasks at all (stopped, misconfigured, outside a Tokio runtime).
    #[error("{0}")]
    Unavailable(String),
    /// The durable hand-off failed in the store behind the executor (a job queue in the
    /// database, say); its source is the [`StoreError`](crate::StoreError).
    #[error("the task could not be handed off: {0}")]
    Store(#[from] crate::StoreError),
    /// Anything else, in the executor's own words.
    #[error("{0}")]
    Other(String),
}

impl StartError {
    /// [`StartError::Other`].
    pub fn other(message: impl Into<String>) -> Self {
        StartError::Other(message.into())
    }
}

/// Runs tasks: the framework calls [`start`](Self::start) once per task, after the task record is
/// stored and before the `CreateTaskResult` is sent.
///
/// `start` returns once execution is durably handed off; the response waits for it. It may run the
/// work itself ([`TaskExecution::run_tool_pipeline`]), queue it, or hand it to another system and
/// call [`TaskExecution::dispose`]: then the ordinary filters and the tool do not run in this
/// process at all, and whoever does the work records the outcome in the shared
/// [`TaskStore`](crate::TaskStore).
///
/// Selection: [`TasksExtension::executor`](crate::TasksExtension::executor), else a
/// [`RegisteredExecutor`] in the server's shared state, else [`InProcessExecutor`].
pub trait TaskExecutor: Send + Sync + 'static {
    /// Takes the task.
    ///
    /// Errors: [`StartError`] when the task could not be handed off.
    fn start(&self, execution: TaskExecution) -> BoxFuture<'static, Result<(), StartError>>;

    /// Tasks handed to this executor that wait for a runner now (a job queue's length), for the
    /// `switchyard.tasks.queued` metric; read once per maintenance period (a third of the
    /// lease) of the extension that was given this executor
    /// ([`TasksExtension::executor`](crate::TasksExtension::executor)). `None`: the executor
    /// has no queue (it runs what it takes at once), or it cannot tell now. Default `None`.
    fn queued(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async { None })
    }
}

/// An executor registered in the server's shared state (`ServerBuilder::state`), used when the
/// extension was not given one explicitly.
#[derive(Clone)]
pub struct RegisteredExecutor(pub Arc<dyn TaskExecutor>);

impl std::fmt::Debug for RegisteredExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RegisteredExecutor")
    }
}

/// The executor given to [`TasksExtension::executor`](crate::TasksExtension::executor), kept in
/// the server's shared state: it wins over a [`RegisteredExecutor`].
pub(crate) struct ChosenExecutor(pub(crate) Arc<dyn TaskExecutor>);

/// The default executor: runs each task in the background on the current Tokio runtime, in this
/// process.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcessExecutor;

impl TaskExecutor for InProcessExecutor {
    fn start(&self, execution: TaskExecution) -> BoxFuture<'static, Result<(), StartError>> {
        tokio::spawn(async move {
            execution.run_tool_pipeline().await;
        });
        Box::pin(async { Ok(()) })
    }
}

/// An executor with its own pool of `workers` Tokio tasks fed through a bounded queue of `queue`
/// tasks: at most `workers` tasks run at once, at most `queue` wait, and a task arriving at a full
/// queue fails to start instead of stalling the request.
#[derive(Debug, Clone)]
pub struct WorkerPoolExecutor {
    tx: tokio::sync::mpsc::Sender<TaskExecution>,
}

impl WorkerPoolExecutor {
    /// Starts the workers on the current Tokio runtime.
    ///
    /// Errors: [`StartError`] when called outside a Tokio runtime, or `workers` or `queue` is 0.
    pub fn new(workers: usize, queue: usize) -> Result<Self, StartError> {
        if workers == 0 || queue == 0 {
            return Err(StartError::Unavailable("a worker pool needs at least one worker and one queue slot".into()));
        }
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| StartError::Unavailable("a worker pool must be created inside a Tokio runtime".into()))?;
        let (tx, rx) = tokio::sync::mpsc::channel::<TaskExecution>(queue);
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        for _ in 0..workers {
            let rx = rx.clone();
            handle.spawn(async move {
                loop {
                    let next = rx.lock().await.recv().await;
                    match next {
                        Some(execution) => {
                            execution.run_tool_pipeline().await;
                        }
                        None => break,
                    }
                }
            });
        }
        Ok(WorkerPoolExecutor { tx })
    }
}

impl TaskExecutor for WorkerPoolExecutor {
    fn start(&self, execution: TaskExecution) -> BoxFuture<'static, Result<(), StartError>> {
        let sent = self.tx.try_send(execution).map_err(|e| match e {
            tokio::sync::mpsc::error::TrySendError::Full(_) => StartError::Busy("the task queue is full".into()),
            tokio::sync::mpsc::error::TrySendError::Closed(_) => {
                StartError::Unavailable("the worker pool has stopped".into())
            }
        });
        Box::pin(async move { sent })
    }

    /// Tasks in the pool's queue, not yet taken by a worker.
    fn queued(&self) -> BoxFuture<'_, Option<u64>> {
        let waiting = self.tx.max_capacity().saturating_sub(self.tx.capacity());
        Box::pin(async move { Some(waiting as u64) })
    }
}

/// The execution context of one task, handed to [`TaskExecutor::start`].
///
/// Cheap to clone; every clone is the same execution. It offers the task id and the record as
/// created, the matched `tools/call` request bound to a fresh request context (its own request
/// scope; see `RequestContext::detach`), [`run_tool_pipeline`](Self::run_tool_pipeline), the
/// cancellation token wired to `tasks/cancel`, and [`dispose`](Self::dispose).
#[derive(Clone)]
pub struct TaskExecution {
    inner: Arc<ExecutionInner>,
}

struct ExecutionInner {
    tasks: Arc<Tasks>,
    info: TaskRecord,
    cancel: CancellationToken,
    server: switchyard::Server,
    work: Mutex<Option<Work>>,
}

pub(crate) struct Work {
    pub(crate) ctx: RequestContext,
    pub(crate) params: CallToolParams,
    pub(crate) body: Body,
}

/// The part of a tool handed to a task: runs once, in the background, with the task's own
/// request context.
pub(crate) type Continuation =
    Box<dyn FnOnce(RequestContext) -> BoxFuture<'static, Result<CallToolResult, McpError>> + Send>;

/// What runs in the background: the rest of the pipeline (a task made before the tool ran), or
/// the part a tool handed over with [`escalate`](crate::escalate).
pub(crate) enum Body {
    Pipeline(AltNext<CallToolParams, CallToolResult>),
    Continuation(Continuation),
}

impl std::fmt::Debug for TaskExecution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskExecution").field("task_id", &self.inner.info.id).finish_non_exhaustive()
    }
}

impl TaskExecution {
    pub(crate) fn new(tasks: Arc<Tasks>, info: TaskRecord, cancel: CancellationToken, work: Work) -> Self {
        let server = work.ctx.server().clone();
        TaskExecution { inner: Arc::new(ExecutionInner { tasks, info, cancel, server, work: Mutex::new(Some(work)) }) }
    }

    fn work(&self) -> std::sync::MutexGuard<'_, Option<Work>> {
        // Poisoning only follows a panic between take() calls; the Option is still valid.
        self.inner.work.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The task id.
    pub fn task_id(&self) -> &str {
        &self.inner.info.id
    }

    /// The task as it was created (status `working`).
    pub fn info(&self) -> &TaskRecord {
        &self.inner.info
    }

    /// The fresh request context of the task's execution (same principal, params `_meta`,
    /// capabilities and server as the `tools/call`; its own request scope and cancellation);
    /// `None` once the pipeline ran or the execution was disposed.
    pub fn request(&self) -> Option<RequestContext> {
        self.work().as_ref().map(|w| w.ctx.clone())
    }

    /// The `tools/call` params the task runs (`{name, arguments}`); `None` once the pipeline ran
    /// or the execution was disposed.
    pub fn params(&self) -> Option<CallToolParams> {
        self.work().as_ref().map(|w| w.params.clone())
    }

    /// Fires when the client cancels the task with `tasks/cancel` (after the store says
    /// `cancelled`). Not tied to the HTTP request that created the task.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Runs the rest of the `tools/call` pipeline in this process (the alternate filters inside
    /// the Tasks filter, the ordinary filters and the tool; for a task made by
    /// [`escalate`](crate::escalate), the part of the tool it handed over), then records the outcome: a
    /// `CallToolResult` (also one with `isError: true`) makes the task `completed`, a JSON-RPC
    /// error makes it `failed`, an alternate result from an inner filter makes it `failed` with
    /// `-32603`. `tasks/cancel` stops the work (the task stays `cancelled`). The request scope is
    /// dropped when it returns.
    ///
    /// Runs at most once: returns false (doing nothing) when it ran before or the execution was
    /// disposed.
    pub async fn run_tool_pipeline(&self) -> bool {
        let Some(work) = self.work().take() else { return false };
        let span = work.ctx.span().clone();
        let status = crate::progress::TaskStatus::of(&work.ctx);
        let run = async move {
            match work.body {
                Body::Pipeline(next) => next.run(switchyard::TypedRequest { ctx: work.ctx, params: work.params }).await,
                // An alternate result signalled inside (a nested escalation, say) is recorded as
                // the pipeline's alternate results are.
                Body::Continuation(rest) => match rest(work.ctx).await {
                    Ok(result) => Ok(switchyard::Alternate::Ordinary(result)),
                    Err(e) => match e.as_alternate_result() {
                        Some(result) => Ok(switchyard::Alternate::Other(result.clone())),
                        None => Err(e),
                    },
                },
            }
        };
        // A panicking tool ends its task `failed` (-32603) instead of leaving it `working`.
        let run = async move {
            use futures::FutureExt;
            std::panic::AssertUnwindSafe(run).catch_unwind().await.unwrap_or_else(|_| {
                tracing::error!("tasks: the tool panicked");
                Err(switchyard::McpError::internal("the tool failed (it panicked); see the server log"))
            })
        };
        let shutdown = self.inner.server.shutdown_token().clone();
        let finish = async move {
            // Biased: what a tool returns because the server shut down under it (a
            // "cancelled" result, say) is not its outcome; the shutdown hand-back records an
            // honest failure instead.
            let outcome = tokio::select! {
                biased;
                _ = self.inner.cancel.cancelled() => None,
                _ = shutdown.cancelled() => return false,
                r = run => Some(r),
            };
            if let Some(outcome) = outcome {
                if let Some(status) = &status {
                    status.close().await;
                }
                self.inner.tasks.record_outcome(&self.inner.server, &self.inner.info.id, outcome).await;
            }
            true
        };
        // The work and its outcome's status change happen in the task's span (a child of the
        // request's in an exported trace).
        if tracing::Instrument::instrument(finish, span).await {
            self.inner.tasks.unregister(&self.inner.info.id);
        }
        // Stopped by the shutdown: still registered, so that the hand-back marks it failed.
        true
    }

    /// Releases what the execution holds in this process (the request scope, the rest of the
    /// pipeline, the `tasks/cancel` registration) without running anything: for executors that
    /// hand the work elsewhere. Idempotent.
    pub fn dispose(&self) {
        let work = self.work().take();
        drop(work);
        self.inner.tasks.unregister(&self.inner.info.id);
    }
}
