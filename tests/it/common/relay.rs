//! A TCP relay between server processes and PostgreSQL that the test can take down (open
//! connections closed, new ones refused: a database that stopped or fails over) or freeze (bytes
//! held, connections open: a frozen host or a partition). It runs on a thread and runtime of its
//! own, so it keeps relaying while the test blocks (e.g. while a process it starts waits for the
//! database).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

pub struct Relay {
    pub port: u16,
    frozen: Arc<AtomicBool>,
    down: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Relay {
    /// Relays `127.0.0.1:<port>` to `to` (`host:port`).
    pub fn start(to: &str) -> Relay {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the relay's runtime");
        // Bound here, made async inside the runtime: `block_on` would panic in the test's own.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port for the relay");
        listener.set_nonblocking(true).expect("non-blocking");
        let port = listener.local_addr().expect("an address").port();
        let frozen = Arc::new(AtomicBool::new(false));
        let down = Arc::new(AtomicBool::new(false));
        let links = Arc::new(Mutex::new(Vec::new()));
        let (gate, is_down, open, to) = (frozen.clone(), down.clone(), links.clone(), to.to_owned());
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            while let Ok((client, _)) = listener.accept().await {
                if is_down.load(Ordering::SeqCst) {
                    continue; // closed at once
                }
                let Ok(server) = tokio::net::TcpStream::connect(&to).await else { continue };
                // Checked again under the lock `set_down` takes: a connection made while the
                // relay goes down is closed with the others, never left open through the outage.
                let mut open = open.lock().expect("links");
                if is_down.load(Ordering::SeqCst) {
                    continue;
                }
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                open.push(tokio::spawn(pass(cr, sw, gate.clone())).abort_handle());
                open.push(tokio::spawn(pass(sr, cw, gate.clone())).abort_handle());
            }
        });
        Relay { port, frozen, down, links, runtime: Some(runtime) }
    }

    /// Holds every byte (`true`) or passes them on again.
    pub fn freeze(&self, frozen: bool) {
        self.frozen.store(frozen, Ordering::SeqCst);
    }

    /// Closes every open connection and refuses new ones (`true`), or accepts them again.
    pub fn set_down(&self, down: bool) {
        let mut links = self.links.lock().expect("links");
        self.down.store(down, Ordering::SeqCst);
        if down {
            for link in links.drain(..) {
                link.abort();
            }
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        // Dropped inside the test's runtime, where a blocking shutdown would panic.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Copies `from` to `to`, holding what it read while the gate is shut.
async fn pass(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, gate: Arc<AtomicBool>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while gate.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
