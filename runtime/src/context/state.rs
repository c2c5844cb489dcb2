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

    /// True when a value of the type `id` was registered.
    pub fn contains(&self, id: TypeId) -> bool {
        self.map.contains_key(&id)
    }

    /// The value of type `T`, if one was registered.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map.get(&TypeId::of::<T>()).and_then(|v| v.clone().downcast::<T>().ok())
    }
}

/// Extractor for shared state of type `T`: `async fn tool(args: A, db: State<Db>)`.
///
/// [`ServerBuilder::build`](crate::ServerBuilder::build) fails when a registered handler takes
/// `State<T>` and the builder was given no `T`, naming the handler and the type. (A handler
/// called some other way, such as a run-time tool's closure, still gets `-32603` at extraction,
/// with the type's name in the server's log, not sent to the client.)
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
