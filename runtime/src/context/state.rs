use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;

/// Shared application state registered with [`ServerBuilder::state`](crate::ServerBuilder::state),
/// keyed by type.
#[derive(Default, Clone)]
pub struct StateMap {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for StateMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateMap").field("entries", &self.map.len()).finish()
    }
}

impl StateMap {
    /// Stores `value`, replacing any earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one was registered.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map.get(&TypeId::of::<T>()).and_then(|v| v.clone().downcast::<T>().ok())
    }
}

/// Extractor for shared state of type `T`: `async fn tool(args: A, db: State<Db>)`.
///
/// Extraction fails with `-32603` when the builder was given no `T`: a server bug, so the
/// type's name goes to the server's log (`tracing`), not to the client.
#[derive(Debug)]
pub struct State<T>(pub Arc<T>);

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
