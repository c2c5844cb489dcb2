//! The stages of a server's life that the transports and extensions watch: serving, draining
//! (readiness off, connections closed after their reply), closing (no new connections, listen
//! streams end) and shut down (what still runs is cancelled), with the readiness checks and the
//! holds that keep the process until work is handed back.

use futures::future::BoxFuture;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// A readiness check: its name and the probe that answers `Err(reason)` when what it checks
/// cannot be used now.
pub(crate) type ReadinessProbe = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// The tokens of a server's stages. Each later stage implies the earlier ones: cancelling
/// `shutdown` cancels `closing`, which cancels `draining`.
pub(crate) struct Lifecycle {
    /// Root: in-flight requests are cancelled (every request token is its child).
    pub(crate) shutdown: CancellationToken,
    /// No new connections; listen subscriptions and session streams end with their result.
    pub(crate) closing: CancellationToken,
    /// Readiness reports "draining"; HTTP/1.1 replies carry `Connection: close`.
    pub(crate) draining: CancellationToken,
    /// Named readiness checks, run by `Server::readiness`.
    pub(crate) checks: Vec<(String, ReadinessProbe)>,
    /// Work that must end or be handed back before the process exits (`Server::shutdown_hold`).
    pub(crate) holds: TaskTracker,
    /// Extensions' metric readings (`Server::metrics`).
    pub(crate) metrics: Vec<Arc<dyn Fn() -> Vec<crate::context::Metric> + Send + Sync>>,
}

impl Lifecycle {
    pub(crate) fn new(
        checks: Vec<(String, ReadinessProbe)>,
        metrics: Vec<Arc<dyn Fn() -> Vec<crate::context::Metric> + Send + Sync>>,
    ) -> Self {
        let shutdown = CancellationToken::new();
        let closing = shutdown.child_token();
        let draining = closing.child_token();
        Lifecycle { shutdown, closing, draining, checks, holds: TaskTracker::new(), metrics }
    }
}
