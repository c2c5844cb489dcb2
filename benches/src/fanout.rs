//! Listen fan-out: N idle `subscriptions/listen` streams on one server, the memory each costs
//! and the time one event takes to reach them all.

use crate::Res;
use crate::load_http::{await_list_changed, listen};
use crate::proc::{spawn_http, status_bytes};
use std::io::Write;
use std::time::{Duration, Instant};

/// What one fan-out run measured.
pub struct FanOut {
    /// Server resident memory added per open subscription (connection included), bytes.
    pub bytes_per_subscription: f64,
    /// From publishing one event to the last of the N streams receiving it, milliseconds.
    pub deliver_ms: f64,
}

/// Opens `n` listen streams on server role `role` (HTTP) and publishes one event.
pub async fn run(role: &str, n: usize) -> Res<FanOut> {
    let mut server = spawn_http(role)?;
    let url = server.url.clone().ok_or("no URL")?;
    let pid = server.pid();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = status_bytes(pid, "VmRSS")?;
    // Opened 200 at a time so the accept backlog never overflows.
    let mut streams = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(200) {
        let mut set = tokio::task::JoinSet::new();
        for _ in chunk {
            let url = url.clone();
            set.spawn(async move { listen(&url).await });
        }
        while let Some(r) = set.join_next().await {
            streams.push(r??);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = status_bytes(pid, "VmRSS")?;
    let mut waiters = tokio::task::JoinSet::new();
    for body in streams {
        waiters.spawn(await_list_changed(body));
    }
    // Let every waiter reach its first poll before the clock starts.
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let start = Instant::now();
    let stdin = server.child.stdin.as_mut().ok_or("no stdin")?;
    stdin.write_all(b"bump\n")?;
    stdin.flush()?;
    let mut delivered = 0;
    while let Some(r) = tokio::time::timeout(Duration::from_secs(60), waiters.join_next())
        .await
        .map_err(|_| format!("only {delivered} of {n} streams got the event within 60 s"))?
    {
        r??;
        delivered += 1;
    }
    let deliver_ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok(FanOut { bytes_per_subscription: after.saturating_sub(before) as f64 / n as f64, deliver_ms })
}
