use crate::jsonrpc::RequestId;
use crate::server::LegacySession;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// One legacy HTTP session: the protocol session plus what HTTP needs (in-flight requests for
/// `notifications/cancelled`, a cancellation token for DELETE).
pub(crate) struct HttpSession {
    pub(crate) legacy: Arc<LegacySession>,
    pub(crate) in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    pub(crate) closed: CancellationToken,
    pub(crate) streams: super::resume::Streams,
    /// The principal id that created the session (`None`: anonymous); only it may use it.
    pub(crate) owner: Option<String>,
    last_used: Mutex<Instant>,
}

impl HttpSession {
    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }
}

/// The legacy sessions of one HTTP endpoint, bounded: past `max` the least recently used
/// session is closed.
pub(crate) struct SessionStore {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
    max: usize,
}

impl SessionStore {
    pub(crate) fn new(max: usize) -> Self {
        SessionStore { map: Mutex::new(HashMap::new()), max: max.max(1) }
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let s = self.map.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned();
        if let Some(s) = &s {
            s.touch();
        }
        s
    }

    pub(crate) fn insert(
        &self,
        legacy: Arc<LegacySession>,
        parent: &CancellationToken,
        owner: Option<String>,
    ) -> Arc<HttpSession> {
        let session = Arc::new(HttpSession {
            legacy,
            in_flight: Mutex::new(HashMap::new()),
            closed: parent.child_token(),
            streams: Default::default(),
            owner,
            last_used: Mutex::new(Instant::now()),
        });
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.max {
            let oldest = map
                .iter()
                .min_by_key(|(_, s)| *s.last_used.lock().unwrap_or_else(|e| e.into_inner()))
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest
                && let Some(old) = map.remove(&k)
            {
                old.closed.cancel();
            }
        }
        map.insert(session.legacy.id.clone(), session.clone());
        session
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
