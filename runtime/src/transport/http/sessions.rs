use crate::jsonrpc::RequestId;
use crate::server::LegacySession;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// One legacy HTTP session: the protocol session plus what HTTP needs (in-flight requests for
/// `notifications/cancelled`, a cancellation token for DELETE).
pub(crate) struct HttpSession {
    pub(crate) legacy: Arc<LegacySession>,
    pub(crate) in_flight: Mutex<HashMap<RequestId, Arc<CancellationToken>>>,
    pub(crate) closed: CancellationToken,
    pub(crate) streams: super::resume::Streams,
    /// The principal id that created the session (`None`: anonymous); only it may use it.
    pub(crate) owner: Option<String>,
    last_used: Mutex<Instant>,
    /// Open server-to-client GET streams.
    listeners: AtomicUsize,
}

impl HttpSession {
    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_used.lock().unwrap_or_else(|e| e.into_inner()).elapsed()
    }

    /// A session with a request in flight or an open GET stream is in use: it is never
    /// evicted to make room, and never expires.
    fn busy(&self) -> bool {
        self.listeners.load(Ordering::Relaxed) > 0
            || !self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    /// Counts an open GET stream until the guard drops.
    pub(crate) fn listening(self: &Arc<Self>) -> ListenerGuard {
        self.listeners.fetch_add(1, Ordering::Relaxed);
        ListenerGuard(self.clone())
    }
}

/// Held by the task serving a session's GET stream.
pub(crate) struct ListenerGuard(Arc<HttpSession>);

impl Drop for ListenerGuard {
    fn drop(&mut self) {
        self.0.listeners.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// Every one of the `max` sessions is in use; `initialize` is refused rather than closing a
/// session somebody is using.
#[derive(Debug)]
pub(crate) struct Full {
    pub(crate) max: usize,
}

/// The legacy sessions of one HTTP endpoint, bounded.
///
/// A session unused for `idle_timeout` (no request, no open stream) expires. When `max`
/// sessions exist, a new one takes the place of the least recently used session that is not in
/// use; sessions in use are never closed to make room, so a flood of `initialize` requests can
/// only displace idle sessions (whose clients re-initialize after a 404, as the spec lets them).
pub(crate) struct SessionStore {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    max: usize,
    idle_timeout: Duration,
}

impl SessionStore {
    pub(crate) fn new(max: usize, idle_timeout: Duration) -> Self {
        SessionStore { map: Mutex::new(HashMap::new()), max: max.max(1), idle_timeout }
    }

    fn expired(&self, s: &HttpSession) -> bool {
        !s.busy() && s.idle_for() >= self.idle_timeout
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let s = map.get(id).cloned()?;
        if self.expired(&s) {
            map.remove(id);
            s.closed.cancel();
            return None;
        }
        s.touch();
        Some(s)
    }

    pub(crate) fn insert(
        &self,
        legacy: Arc<LegacySession>,
        parent: &CancellationToken,
        owner: Option<String>,
    ) -> Result<Arc<HttpSession>, Full> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.max {
            map.retain(|_, s| {
                let keep = !self.expired(s);
                if !keep {
                    s.closed.cancel();
                }
                keep
            });
        }
        if map.len() >= self.max {
            let oldest_idle =
                map.iter().filter(|(_, s)| !s.busy()).max_by_key(|(_, s)| s.idle_for()).map(|(k, _)| k.clone());
            match oldest_idle.and_then(|k| map.remove(&k)) {
                Some(old) => old.closed.cancel(),
                None => return Err(Full { max: self.max }),
            }
        }
        let session = Arc::new(HttpSession {
            legacy,
            in_flight: Mutex::new(HashMap::new()),
            closed: parent.child_token(),
            streams: Default::default(),
            owner,
            last_used: Mutex::new(Instant::now()),
            listeners: AtomicUsize::new(0),
        });
        map.insert(session.legacy.id.clone(), session.clone());
        Ok(session)
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        let s = self.map.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        if let Some(s) = &s {
            s.closed.cancel();
        }
        s
    }
}

/// A new session id: 128 random bits as 32 hex digits (visible ASCII, unguessable).
pub(crate) fn new_session_id() -> String {
    let bits: u128 = rand::random();
    format!("{bits:032x}")
}
