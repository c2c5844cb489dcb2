//! The extension's metric readings (`switchyard.tasks.*`), added to the server's with
//! `ServerBuilder::metrics_source`; docs/observability.md lists them.

use crate::store::metered::StoreStats;
use crate::tasks::Tasks;
use std::sync::atomic::Ordering;
use switchyard::server::Metric;

/// The readings now; only the store's once the extension is gone.
pub(crate) fn readings(tasks: Option<&Tasks>, store: &StoreStats) -> Vec<Metric> {
    let count = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed) as f64;
    let mut all = vec![
        Metric::counter("switchyard.tasks.store.calls", "Calls to the task store", "{call}", count(&store.calls)),
        Metric::counter(
            "switchyard.tasks.store.errors",
            "Task store calls that failed (store down, timed out, refused)",
            "{call}",
            count(&store.errors),
        ),
        Metric::counter(
            "switchyard.tasks.store.time",
            "Time spent in task store calls; divided by switchyard.tasks.store.calls, the mean latency",
            "s",
            store.nanos.load(Ordering::Relaxed) as f64 / 1e9,
        ),
    ];
    if let Some(tasks) = tasks {
        let counts = &tasks.counts;
        all.extend([
            Metric::gauge(
                "switchyard.tasks.running",
                "Tasks this instance runs or holds now (leases it renews)",
                "{task}",
                tasks.running_count() as f64,
            ),
            Metric::counter(
                "switchyard.tasks.lease.renewals",
                "Task leases renewed",
                "{renewal}",
                count(&counts.renewals),
            ),
            Metric::counter(
                "switchyard.tasks.sweeps",
                "Sweeps for tasks whose instance died (deferred ones not counted)",
                "{sweep}",
                count(&counts.sweeps),
            ),
            Metric::counter(
                "switchyard.tasks.swept",
                "Tasks a sweep marked failed because their lease ran out",
                "{task}",
                count(&counts.swept),
            ),
            Metric::counter(
                "switchyard.tasks.shutdown_failed",
                "Tasks this instance marked failed because it shut down while they ran",
                "{task}",
                count(&counts.handed_back),
            ),
        ]);
        if let Some(queued) = counts.queued.get() {
            all.push(Metric::gauge(
                "switchyard.tasks.queued",
                "Tasks waiting in the executor's queue for a runner (a job queue's length), at the last maintenance period",
                "{task}",
                count(queued),
            ));
        }
    }
    all
}
