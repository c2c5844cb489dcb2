//! Which resource URIs this server instance's clients are subscribed to now: a legacy
//! session's `resources/subscribe`
//! ([2025-11-25](https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions))
//! or a `subscriptions/listen` filter's `resourceSubscriptions`
//! ([2026-07-28](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).
//!
//! Each subscription holds an [`InterestHold`] per URI; the set of held URIs is published on a
//! `watch` channel whenever a URI gains its first holder or loses its last, so that code that
//! produces updates (a gateway subscribing upstream, a file watcher) can follow only what is
//! asked for. Holds change only when subscriptions open and close, never per request.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The held URIs with their number of holders, and the watch of the set.
#[derive(Debug)]
pub(crate) struct ResourceInterest {
    holders: Mutex<HashMap<String, usize>>,
    uris: watch::Sender<BTreeSet<String>>,
}

impl Default for ResourceInterest {
    fn default() -> Self {
        ResourceInterest { holders: Mutex::default(), uris: watch::Sender::new(BTreeSet::new()) }
    }
}

impl ResourceInterest {
    /// One more holder of `uri`, until the hold is dropped.
    pub(crate) fn hold(self: &Arc<Self>, uri: &str) -> InterestHold {
        let mut holders = self.holders.lock().unwrap_or_else(|e| e.into_inner());
        let count = holders.entry(uri.to_owned()).or_insert(0);
        *count += 1;
        if *count == 1 {
            // Under the holders' lock, so that the watch sees the changes in their order.
            self.uris.send_modify(|uris| {
                uris.insert(uri.to_owned());
            });
        }
        InterestHold { interest: self.clone(), uri: uri.to_owned() }
    }

    fn release(&self, uri: &str) {
        let mut holders = self.holders.lock().unwrap_or_else(|e| e.into_inner());
        let Some(count) = holders.get_mut(uri) else { return };
        *count -= 1;
        if *count == 0 {
            holders.remove(uri);
            self.uris.send_modify(|uris| {
                uris.remove(uri);
            });
        }
    }

    /// The set of held URIs, changed as holds come and go.
    pub(crate) fn watch(&self) -> watch::Receiver<BTreeSet<String>> {
        self.uris.subscribe()
    }
}

/// One subscription's interest in one URI; released when dropped.
#[derive(Debug)]
pub(crate) struct InterestHold {
    interest: Arc<ResourceInterest>,
    uri: String,
}

impl Drop for InterestHold {
    fn drop(&mut self) {
        self.interest.release(&self.uri);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(interest: &ResourceInterest) -> Vec<String> {
        interest.watch().borrow().iter().cloned().collect()
    }

    #[test]
    fn a_uri_is_held_while_any_of_its_holds_lives() {
        let interest = Arc::new(ResourceInterest::default());
        let mut watch = interest.watch();
        let a = interest.hold("file:///a");
        let a_again = interest.hold("file:///a");
        let b = interest.hold("file:///b");
        assert!(watch.has_changed().expect("the sender lives"));
        assert_eq!(held(&interest), ["file:///a", "file:///b"]);
        watch.mark_unchanged();
        drop(a);
        assert!(!watch.has_changed().expect("the sender lives"), "a second holder keeps file:///a");
        drop(a_again);
        assert_eq!(held(&interest), ["file:///b"]);
        drop(b);
        assert!(held(&interest).is_empty());
        assert!(interest.holders.lock().expect("not poisoned").is_empty(), "no count is left behind");
    }
}
