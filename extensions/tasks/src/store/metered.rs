//! A store wrapped to count its calls, their time and their failures, for the
//! `switchyard.tasks.store.*` metrics (`Server::metrics`).

use super::{PutInput, StoreError, TaskStore, Transition};
use crate::model::{TaskError, TaskRecord, TaskState};
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Totals since the process started, and when the store last gave trouble.
#[derive(Debug, Default)]
pub(crate) struct StoreStats {
    pub(crate) calls: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) nanos: AtomicU64,
    /// When (Unix ms) a call last ended that failed or took longer than `slow_nanos`: the
    /// store was away, frozen or overloaded, so leases may have gone unrenewed meanwhile.
    pub(crate) trouble_ms: AtomicU64,
    /// A call this long counts as trouble (a third of the lease: renewals could not keep up).
    pub(crate) slow_nanos: u64,
}

impl StoreStats {
    /// Stats in which a call longer than `slow` counts as trouble.
    pub(crate) fn new(slow: std::time::Duration) -> Self {
        StoreStats { slow_nanos: u64::try_from(slow.as_nanos()).unwrap_or(u64::MAX), ..Default::default() }
    }

    /// Notes trouble with the store now.
    pub(crate) fn trouble(&self) {
        self.trouble_ms.fetch_max(crate::model::now_ms().max(1), Ordering::AcqRel);
    }
}

/// `inner`, counted in `stats`.
pub(crate) struct Metered {
    pub(crate) inner: Arc<dyn TaskStore>,
    pub(crate) stats: Arc<StoreStats>,
}

/// `call`, its time and outcome added to `stats`.
async fn timed<T>(stats: &StoreStats, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    let started = Instant::now();
    let result = call.await;
    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    stats.calls.fetch_add(1, Ordering::Relaxed);
    stats.nanos.fetch_add(nanos, Ordering::Relaxed);
    if result.is_err() {
        stats.errors.fetch_add(1, Ordering::Relaxed);
    }
    // Noted when the call ends, not when it began: a call that hung through an outage must
    // push the judging of leases past the outage's end.
    if result.is_err() || nanos > stats.slow_nanos {
        stats.trouble();
    }
    result
}

impl TaskStore for Metered {
    fn create(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(timed(&self.stats, self.inner.create(task)))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.get(id)))
    }

    fn transition<'a>(
        &'a self,
        id: &'a str,
        state: TaskState,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.transition(id, state, status_message, now_ms)))
    }

    fn purge_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.purge_expired(now_ms)))
    }

    fn renew_lease<'a>(&'a self, id: &'a str, until_ms: Option<u64>) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.renew_lease(id, until_ms)))
    }

    fn fail_expired_leases(&self, now_ms: u64, error: TaskError) -> BoxFuture<'_, Result<Vec<TaskRecord>, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.fail_expired_leases(now_ms, error)))
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a str,
        status_message: Option<String>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.set_status_message(id, status_message, now_ms)))
    }

    fn put_input_responses<'a>(
        &'a self,
        id: &'a str,
        responses: Map<String, Value>,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<PutInput, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.put_input_responses(id, responses, now_ms)))
    }

    fn input_responses<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Map<String, Value>, StoreError>> {
        Box::pin(timed(&self.stats, self.inner.input_responses(id)))
    }

    fn remove_input_responses<'a>(&'a self, id: &'a str, keys: &'a [String]) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(timed(&self.stats, self.inner.remove_input_responses(id, keys)))
    }
}
