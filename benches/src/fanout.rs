//! Listen fan-out: N idle `subscriptions/listen` streams on one server, the memory each costs
//! and the time one event takes to reach them all, over HTTP/1.1 (one connection per stream)
//! and over HTTP/2 (streams multiplexed on shared connections).

use crate::Res;
use crate::load_http::{acknowledged, await_list_changed, listen, listen_request, split_url};
use crate::proc::{cpu_micros, spawn_http, start_profiler, status_bytes, stop_profiler};
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::io::Write;
use std::time::{Duration, Instant};

/// Events published per run, one after the other.
pub const EVENTS: usize = 5;

/// What one fan-out run measured.
pub struct FanOut {
    /// Server resident memory added per open subscription (connection included), bytes.
    pub bytes_per_subscription: f64,
    /// From publishing one event to the last of the N streams receiving it, milliseconds
    /// (median of [`EVENTS`]).
    pub deliver_ms: f64,
    /// Server CPU time (user + system) spent meanwhile, milliseconds per event (mean of
    /// [`EVENTS`]): steadier than the wall clock on a shared machine.
    pub deliver_cpu_ms: f64,
}

/// How the subscriptions reach the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// HTTP/1.1: each listen stream holds a connection of its own.
    Http1,
    /// HTTP/2 with prior knowledge: this many listen streams share each connection.
    Http2 {
        /// Streams per connection (at most the server's `max_concurrent_streams`, 200 in hyper).
        per_connection: usize,
    },
}

/// Opens `n` listen streams over HTTP/2, `per_connection` on each connection.
pub async fn open_h2(url: &str, n: usize, per_connection: usize) -> Res<Vec<hyper::body::Incoming>> {
    let (authority, _) = split_url(url)?;
    let mut streams = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let here = left.min(per_connection.max(1));
        let tcp = tokio::net::TcpStream::connect(&authority).await?;
        tcp.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp)).await?;
        tokio::spawn(conn);
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..here {
            let mut sender: hyper::client::conn::http2::SendRequest<Full<Bytes>> = sender.clone();
            let req = listen_request(url, "")?;
            set.spawn(async move {
                sender.ready().await?;
                acknowledged(sender.send_request(req).await?).await
            });
        }
        while let Some(r) = set.join_next().await {
            streams.push(r?.map_err(|e| e.to_string())?);
        }
        left -= here;
    }
    Ok(streams)
}

/// Opens `n` listen streams on server role `role` (HTTP) over `wire` and publishes one event.
pub async fn run(role: &str, n: usize, wire: Wire) -> Res<FanOut> {
    let mut server = spawn_http(role)?;
    let url = server.url.clone().ok_or("no URL")?;
    let pid = server.pid();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = status_bytes(pid, "VmRSS")?;
    let streams = match wire {
        Wire::Http1 => {
            // Opened 200 at a time so the accept backlog never overflows.
            let mut streams = Vec::with_capacity(n);
            for chunk in (0..n).collect::<Vec<_>>().chunks(200) {
                let mut set = tokio::task::JoinSet::new();
                for _ in chunk {
                    let url = url.clone();
                    set.spawn(async move { listen(&url).await.map_err(|e| e.to_string()) });
                }
                while let Some(r) = set.join_next().await {
                    streams.push(r??);
                }
            }
            streams
        }
        Wire::Http2 { per_connection } => open_h2(&url, n, per_connection).await?,
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = status_bytes(pid, "VmRSS")?;
    // One event is a short, noisy measurement here: publish several, one after the other,
    // and report the median wall time and the mean CPU time per event.
    let mut streams = streams;
    let mut walls = Vec::with_capacity(EVENTS);
    let mut cpu_total_us = 0;
    let profiler = start_profiler(pid, role)?;
    for _ in 0..EVENTS {
        let mut waiters = tokio::task::JoinSet::new();
        for body in streams.drain(..) {
            waiters.spawn(await_list_changed(body));
        }
        // Let every waiter reach its first poll before the clock starts.
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let cpu_before = cpu_micros(pid)?;
        let start = Instant::now();
        let stdin = server.child.stdin.as_mut().ok_or("no stdin")?;
        stdin.write_all(b"bump\n")?;
        stdin.flush()?;
        // Streams stay open until the clock stops: closing them as they get the event would
        // charge the server's teardown of each subscription to the delivery.
        while let Some(r) = tokio::time::timeout(Duration::from_secs(60), waiters.join_next())
            .await
            .map_err(|_| format!("only {} of {n} streams got the event within 60 s", streams.len()))?
        {
            streams.push(r??);
        }
        walls.push(start.elapsed().as_secs_f64() * 1000.0);
        cpu_total_us += cpu_micros(pid)?.saturating_sub(cpu_before);
    }
    stop_profiler(profiler)?;
    drop(streams);
    walls.sort_by(f64::total_cmp);
    let deliver_ms = walls[walls.len() / 2];
    let deliver_cpu_ms = cpu_total_us as f64 / 1000.0 / EVENTS as f64;
    Ok(FanOut { bytes_per_subscription: after.saturating_sub(before) as f64 / n as f64, deliver_ms, deliver_cpu_ms })
}
