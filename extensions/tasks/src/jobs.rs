//! [`PostgresJobExecutor`]: tasks handed to worker processes through the PostgreSQL job queue
//! of [`PostgresTaskStore`] (feature `postgres`).

use crate::executor::{StartError, TaskExecution, TaskExecutor};
use crate::store::PostgresTaskStore;
use futures::future::BoxFuture;

/// An executor for many instances (docs/scaling.md): queues each task's `tools/call` in the
/// PostgreSQL job queue for external workers instead of running it here.
///
/// [`start`](TaskExecutor::start) queues the call (`name` and `arguments` of
/// [`TaskExecution::params`]) with [`PostgresTaskStore::enqueue`], which also clears the lease
/// the extension set when it created the task (the task waits in the queue; nobody runs it
/// yet), and [`dispose`](TaskExecution::dispose)s the execution: the ordinary filters and the
/// tool never run in this process, and `tasks/cancel` reaches the worker through the store
/// (its [`renew_lease`](crate::TaskStore::renew_lease) returns `false`). A worker takes the job with
/// [`PostgresTaskStore::claim`] and records the outcome with
/// [`transition`](crate::TaskStore::transition). The worker sees only the tool name and arguments:
/// the caller's principal was checked here, before the task was created.
///
/// Use the same database for the extension's store: `TasksExtension::new().store(store.clone())
/// .executor(PostgresJobExecutor::new(store))`.
#[derive(Debug, Clone)]
pub struct PostgresJobExecutor {
    store: PostgresTaskStore,
}

impl PostgresJobExecutor {
    /// Queues jobs in `store`'s database.
    pub fn new(store: PostgresTaskStore) -> Self {
        PostgresJobExecutor { store }
    }
}

impl TaskExecutor for PostgresJobExecutor {
    /// [`PostgresTaskStore::queued_jobs`]; `None` (the last reading stays) when the database
    /// fails.
    fn queued(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async move {
            match self.store.queued_jobs().await {
                Ok(n) => Some(n),
                Err(e) => {
                    tracing::debug!(error = %e, "tasks: counting queued jobs failed");
                    None
                }
            }
        })
    }

    /// Errors: [`StartError`] when the job could not be queued (the task then ends `failed`
    /// before the `CreateTaskResult` is sent), or the execution was already run or disposed.
    fn start(&self, execution: TaskExecution) -> BoxFuture<'static, Result<(), StartError>> {
        let store = self.store.clone();
        Box::pin(async move {
            let params = execution.params();
            // The work belongs to the workers from here on, or to nobody if queueing fails.
            execution.dispose();
            let Some(params) = params else {
                return Err(StartError::other("the task's tools/call was already run or handed off; nothing to queue"));
            };
            store
                .enqueue(execution.task_id(), &params.name, &params.arguments.into_value())
                .await
                .map_err(StartError::Store)
        })
    }
}
