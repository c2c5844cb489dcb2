//! Watch mode: reload a skills folder when its files change (feature `watch`).

use crate::SkillLibrary;
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::PathBuf;
use std::time::Duration;
use switchyard::Server;

/// How long changes are gathered before one reload: an editor's save (write, rename,
/// metadata) or a `git checkout` is then a single reload.
const SETTLE: Duration = Duration::from_millis(200);

/// Why [`SkillLibrary::watch`] could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The library was embedded in the binary: it cannot change.
    #[error("an embedded skills library cannot change; only a skills folder can be watched")]
    Embedded,
    /// `watch` was called outside a Tokio runtime.
    #[error("watching a skills folder needs a Tokio runtime; call watch from inside one")]
    NoRuntime,
    /// The operating system refused to watch the folder.
    #[error("cannot watch {}: {source}", path.display())]
    Notify {
        /// The skills folder.
        path: PathBuf,
        /// The watcher's error.
        source: notify::Error,
    },
}

/// A running watch of a skills folder; dropping it stops the watch.
pub struct SkillsWatcher {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for SkillsWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsWatcher").finish_non_exhaustive()
    }
}

impl Drop for SkillsWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) fn start(library: SkillLibrary, root: PathBuf, server: Server) -> Result<SkillsWatcher, WatchError> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| WatchError::NoRuntime)?;
    // One pending signal is enough: the reload reads the whole folder anyway.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    let notify_error = |source| WatchError::Notify { path: root.clone(), source };
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Reading a file changes nothing; errors still trigger a reload, which reports them.
        if let Ok(e) = &event
            && matches!(e.kind, EventKind::Access(_))
        {
            return;
        }
        let _ = tx.try_send(());
    })
    .map_err(notify_error)?;
    watcher.watch(&root, RecursiveMode::Recursive).map_err(notify_error)?;
    let shutdown = server.shutdown_token().clone();
    let task = runtime.spawn(async move {
        loop {
            tokio::select! {
                signal = rx.recv() => if signal.is_none() { return },
                _ = shutdown.cancelled() => return,
            }
            loop {
                match tokio::time::timeout(SETTLE, rx.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
            let (library, server) = (library.clone(), server.clone());
            // Reading and hashing the folder is blocking work.
            match tokio::task::spawn_blocking(move || library.reload(&server)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "the skills folder changed but does not validate; the previous skills stay served")
                }
                Err(e) => tracing::warn!(error = %e, "reloading the skills folder failed"),
            }
        }
    });
    Ok(SkillsWatcher { _watcher: watcher, task })
}
