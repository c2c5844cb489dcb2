//! Creating a task: the record stored first, then the work handed to the executor (the Tasks
//! filter for a task made before the tool runs, escalation for one made on the tool's final
//! round).

use crate::executor::{
    Body, ChosenExecutor, InProcessExecutor, RegisteredExecutor, StartError, TaskExecution, TaskExecutor, Work,
};
use crate::model::{TaskError, TaskRecord, TaskState, now_ms};
use crate::tasks::{Tasks, owner_of, store_error};
use serde_json::Value;
use std::sync::Arc;
use switchyard::{AltNext, CallToolParams, CallToolResult, CancellationToken, McpError, RequestContext, TypedRequest};

/// Creates a task for the `tools/call` in `req` and hands the rest of the pipeline to the
/// executor; returns the `CreateTaskResult`.
///
/// Errors: `-32603` when the store cannot create the task: nothing is started.
pub(crate) async fn create(
    tasks: &Arc<Tasks>,
    req: TypedRequest<CallToolParams>,
    next: AltNext<CallToolParams, CallToolResult>,
) -> Result<Value, McpError> {
    start(tasks, &req.ctx, req.params, Body::Pipeline(next)).await
}

/// Stores a new task for the `tools/call` of `request` and hands `body` to the executor
/// (the extension's own, else a [`RegisteredExecutor`], else [`InProcessExecutor`]); returns
/// the `CreateTaskResult`.
///
/// Errors: `-32603` when the store cannot create the task: nothing is started.
pub(crate) async fn start(
    tasks: &Arc<Tasks>,
    request: &RequestContext,
    params: CallToolParams,
    body: Body,
) -> Result<Value, McpError> {
    // Expired tasks are purged by the maintenance loop, not here: one statement per sweep
    // instead of one per created task.
    let now = now_ms();
    let record = TaskRecord {
        id: crate::id::new_task_id(),
        owner: owner_of(request),
        state: TaskState::Working,
        status_message: None,
        created_at_ms: now,
        last_updated_at_ms: now,
        ttl_ms: tasks.ttl_ms,
        poll_interval_ms: Some(tasks.poll_interval_ms),
        // This process vouches for the task from the start; the maintenance loop renews the
        // lease while the task is registered here, and an executor that hands the task to
        // another system clears it.
        lease_expires_at_ms: Some(now.saturating_add(tasks.lease_ms)),
    };
    let chosen = request.state::<ChosenExecutor>();
    tasks.ensure_maintenance(&request.server(), chosen.as_ref().map(|c| c.0.clone()));
    tasks.store.create(record.clone()).await.map_err(|e| store_error("create a task", e))?;
    let cancel = CancellationToken::new();
    let ctx = request.detach(cancel.clone());
    ctx.extensions().insert(crate::CurrentTask { id: record.id.clone() });
    // `ctx.input` inside the task asks through the task (`input_required` + tasks/update).
    ctx.set_input_channel(Arc::new(crate::input::TaskInputChannel));
    // Progress reports become the task's status message: the Tasks extension sends no progress
    // notifications for tasks, and the request's stream is closed anyway.
    let status = tasks.status_of(&request.server(), &record.id);
    ctx.extensions().insert(status.clone());
    ctx.set_progress_sink(Arc::new(status));
    tasks.register(&record.id, cancel.clone());
    let executor: Arc<dyn TaskExecutor> = match (chosen, request.state::<RegisteredExecutor>()) {
        (Some(e), _) => e.0.clone(),
        (None, Some(r)) => r.0.clone(),
        (None, None) => Arc::new(InProcessExecutor),
    };
    let server = request.server().clone();
    let execution = TaskExecution::new(tasks.clone(), record.clone(), cancel, Work { ctx, params, body });
    if let Err(e) = executor.start(execution.clone()).await {
        execution.dispose();
        // A store's words (its server's message, SQLSTATE) stay in the log, as for every store error.
        let error = match &e {
            StartError::Store(store) => {
                tracing::error!(task = %record.id, error = %store, "tasks: the executor could not hand the task off");
                TaskError::internal("the task could not be started: the task store failed; try again shortly")
            }
            other => TaskError::internal(format!("the task could not be started: {other}")),
        };
        tasks.finish_before_answering(&server, &record.id, TaskState::Failed(error)).await;
    }
    Ok(record.create_result_json())
}
