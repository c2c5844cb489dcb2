//! The registry of open built-in listen subscriptions: how many are being served right now.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the built-in listen subscriptions a server is serving (a subscription whose transport
/// broke leaves the registry). Subscriptions served by a replacement handler are the author's and
/// are not counted.
#[derive(Debug, Default)]
pub(crate) struct OpenSubscriptions(AtomicUsize);

impl OpenSubscriptions {
    /// Subscriptions open now.
    pub(crate) fn count(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Registers one subscription until the returned guard is dropped, which happens however
    /// the subscription ends: result, client cancellation, or its transport going away.
    pub(crate) fn open(self: &Arc<Self>) -> OpenGuard {
        self.0.fetch_add(1, Ordering::Relaxed);
        OpenGuard(self.clone())
    }
}

/// One open subscription in [`OpenSubscriptions`].
#[derive(Debug)]
pub(crate) struct OpenGuard(Arc<OpenSubscriptions>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Relaxed);
    }
}
