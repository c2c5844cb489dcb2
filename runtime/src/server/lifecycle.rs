//! Stopping without dropping work, and telling a load balancer whether to send requests: the
//! drain of a rolling deploy, readiness checks, and holds that keep the process until work is
//! handed back (docs/scaling.md, "Rolling deploys").

use super::Server;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Longest a readiness check may take before it counts as failing.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// How [`Server::drain`] stops a server: first it keeps serving for `grace` while readiness
/// reports it draining (a load balancer's health check takes it out of rotation meanwhile;
/// HTTP/1.1 replies carry `Connection: close` so that pooled connections are not reused),
/// then it stops accepting connections and ends listen subscriptions and session streams with
/// their results (clients listen again elsewhere), and gives the requests in flight until
/// `timeout` to finish before cancelling what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drain {
    /// How long to keep serving after readiness turned false (default 5 s). Set it above the
    /// balancer's health check interval times its failure count.
    pub grace: Duration,
    /// How long requests in flight may take to finish once the server stopped accepting
    /// (default 20 s); then they are cancelled (a tool sees its cancellation token fire).
    pub timeout: Duration,
}

impl Default for Drain {
    fn default() -> Self {
        Drain { grace: Duration::from_secs(5), timeout: Duration::from_secs(20) }
    }
}

impl Drain {
    /// Sets [`grace`](Self::grace).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets [`timeout`](Self::timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// What [`Server::readiness`] found: whether the server is draining and how each readiness
/// check ([`ServerBuilder::readiness_check`](crate::ServerBuilder::readiness_check)) answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    /// The server is draining or shutting down: it should get no new requests.
    pub draining: bool,
    /// Each check's name and outcome (`Err(reason)` when failing or slower than 2 s), in the
    /// order the checks were added.
    pub checks: Vec<(String, Result<(), String>)>,
}

impl Readiness {
    /// True when the server is not draining and every check passed.
    pub fn is_ready(&self) -> bool {
        !self.draining && self.checks.iter().all(|(_, r)| r.is_ok())
    }

    /// The readiness probe's body: `{"status": "ready" | "draining" | "not ready", "checks":
    /// {name: "ok" | "failing"}}`. Reasons are left out (a probe may be reachable from outside);
    /// [`Server::readiness`] logs them.
    pub fn to_json(&self) -> serde_json::Value {
        let status = if self.draining {
            "draining"
        } else if self.is_ready() {
            "ready"
        } else {
            "not ready"
        };
        let checks: serde_json::Map<String, serde_json::Value> = self
            .checks
            .iter()
            .map(|(name, r)| (name.clone(), serde_json::Value::from(if r.is_ok() { "ok" } else { "failing" })))
            .collect();
        serde_json::json!({ "status": status, "checks": checks })
    }
}

/// Keeps the process from exiting after shutdown until it is dropped (or
/// [`Server::holds_released`] gives up waiting): held by work that must end or be handed
/// back first, such as the Tasks extension releasing the tasks this instance runs.
#[derive(Debug)]
pub struct ShutdownHold {
    _token: tokio_util::task::task_tracker::TaskTrackerToken,
}

impl Server {
    /// Begins a drain as `drain` says (see [`Drain`]) and returns at once; the stages follow on
    /// the current Tokio runtime (called outside one, it closes at once): draining now, closing after `drain.grace`, shut down after a
    /// further `drain.timeout` (or earlier by [`shutdown`](Self::shutdown)). A second call
    /// while draining changes nothing.
    ///
    /// [`transport::http::serve`](crate::transport::http::serve) returns once every connection
    /// has finished after closing; call [`shutdown`](Self::shutdown) then to cancel what else
    /// runs (tasks), and wait for [`holds_released`](Self::holds_released) before exiting.
    pub fn drain(&self, drain: Drain) {
        let lifecycle = &self.engine().lifecycle;
        if lifecycle.draining.is_cancelled() {
            return;
        }
        lifecycle.draining.cancel();
        tracing::info!(
            grace_s = drain.grace.as_secs_f64(),
            timeout_s = drain.timeout.as_secs_f64(),
            "draining: readiness is off; closing after the grace period"
        );
        let (closing, shutdown) = (lifecycle.closing.clone(), lifecycle.shutdown.clone());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No timer outside a runtime: close now; what serves this server stops accepting.
            tracing::warn!("drain called outside a Tokio runtime: closing without a grace period");
            closing.cancel();
            return;
        };
        runtime.spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(drain.grace) => {}
                _ = closing.cancelled() => {}
            }
            closing.cancel();
            tokio::select! {
                _ = tokio::time::sleep(drain.timeout) => {
                    if !shutdown.is_cancelled() {
                        tracing::warn!("drain timeout: cancelling the requests still in flight");
                    }
                }
                _ = shutdown.cancelled() => {}
            }
            shutdown.cancel();
        });
    }

    /// True once a drain or shutdown began.
    pub fn is_draining(&self) -> bool {
        self.engine().lifecycle.draining.is_cancelled()
    }

    /// A token cancelled when a drain begins ([`drain`](Self::drain)) or at shutdown.
    pub fn draining_token(&self) -> &CancellationToken {
        &self.engine().lifecycle.draining
    }

    /// A token cancelled when the server stops accepting connections and ends its streams:
    /// after a drain's grace period, or at shutdown.
    pub fn closing_token(&self) -> &CancellationToken {
        &self.engine().lifecycle.closing
    }

    /// Runs every readiness check at once, each within 2 s, and reports them with the drain
    /// state. A failing check is logged at `warn` with its reason.
    pub async fn readiness(&self) -> Readiness {
        let lifecycle = &self.engine().lifecycle;
        let runs = lifecycle.checks.iter().map(|(name, probe)| {
            let probe = probe();
            async move {
                let outcome = match tokio::time::timeout(CHECK_TIMEOUT, probe).await {
                    Ok(r) => r,
                    Err(_) => Err(format!("no answer within {} s", CHECK_TIMEOUT.as_secs())),
                };
                if let Err(reason) = &outcome {
                    tracing::warn!(check = %name, %reason, "readiness check failing");
                }
                (name.clone(), outcome)
            }
        });
        let checks = futures::future::join_all(runs).await;
        Readiness { draining: lifecycle.draining.is_cancelled(), checks }
    }

    /// A hold on the process: [`holds_released`](Self::holds_released) waits until it is
    /// dropped. Take it for work that must be finished or handed back after shutdown.
    pub fn shutdown_hold(&self) -> ShutdownHold {
        ShutdownHold { _token: self.engine().lifecycle.holds.token() }
    }

    /// Waits until every [`ShutdownHold`] is dropped, at most `within`; true when they all
    /// were. The CLI calls it after serving, before the process exits.
    pub async fn holds_released(&self, within: Duration) -> bool {
        let holds = &self.engine().lifecycle.holds;
        holds.close();
        tokio::time::timeout(within, holds.wait()).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(checks: bool) -> Server {
        let mut builder = Server::builder("lifecycle", "1").groups(["none"]);
        if checks {
            builder = builder
                .readiness_check("up", || async { Ok(()) })
                .readiness_check("down", || async { Err("refused".to_owned()) })
                .readiness_check("stuck", std::future::pending);
        }
        builder.build().expect("builds")
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_walks_its_stages_in_order() {
        let server = server(false);
        server.drain(Drain::default().grace(Duration::from_secs(5)).timeout(Duration::from_secs(20)));
        assert!(server.is_draining());
        assert!(!server.closing_token().is_cancelled());
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert!(!server.closing_token().is_cancelled(), "still within the grace period");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(server.closing_token().is_cancelled());
        assert!(!server.shutdown_token().is_cancelled(), "requests in flight get the timeout");
        tokio::time::sleep(Duration::from_secs(20)).await;
        assert!(server.shutdown_token().is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_ends_every_stage_at_once_and_a_second_drain_changes_nothing() {
        let server = server(false);
        server.drain(Drain::default().grace(Duration::from_secs(60)));
        server.drain(Drain::default().grace(Duration::ZERO));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!server.closing_token().is_cancelled(), "the first drain's grace holds");
        server.shutdown();
        assert!(server.closing_token().is_cancelled() && server.draining_token().is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn readiness_reports_each_check_and_a_slow_one_fails() {
        let server = server(true);
        let readiness = server.readiness().await;
        assert!(!readiness.is_ready());
        assert_eq!(readiness.checks[0], ("up".to_owned(), Ok(())));
        assert_eq!(readiness.checks[1], ("down".to_owned(), Err("refused".to_owned())));
        assert!(readiness.checks[2].1.is_err(), "a check slower than 2 s fails");
        assert_eq!(
            readiness.to_json(),
            serde_json::json!({ "status": "not ready", "checks": { "up": "ok", "down": "failing", "stuck": "failing" } })
        );
        let plain = self::server(false);
        plain.drain(Drain::default());
        assert_eq!(plain.readiness().await.to_json(), serde_json::json!({ "status": "draining", "checks": {} }));
    }

    #[tokio::test]
    async fn holds_keep_the_process_until_dropped() {
        let server = server(false);
        let hold = server.shutdown_hold();
        assert!(!server.holds_released(Duration::from_millis(10)).await);
        drop(hold);
        assert!(server.holds_released(Duration::from_secs(5)).await);
    }
}
