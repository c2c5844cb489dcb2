use super::{DeliveryHub, Event};
use std::sync::Arc;

/// A cloneable handle that publishes events to the server's listen subscriptions, from any task
/// or thread, inside or outside a request. Get it with [`Server::publisher`](crate::Server::publisher).
#[derive(Clone)]
pub struct Publisher {
    pub(crate) hub: Arc<dyn DeliveryHub>,
    /// The mount whose URIs [`resource_updated`](Self::resource_updated) rewrites
    /// ([`Server::mounted_publisher`](crate::Server::mounted_publisher)); `None` for the
    /// server's own publisher.
    pub(crate) mount: Option<Arc<crate::registry::Mount>>,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher").finish_non_exhaustive()
    }
}

impl Publisher {
    /// `notifications/tools/list_changed` to subscriptions with `toolsListChanged`.
    pub fn tools_list_changed(&self) {
        self.hub.publish(Event::ToolsListChanged);
    }

    /// `notifications/prompts/list_changed` to subscriptions with `promptsListChanged`.
    pub fn prompts_list_changed(&self) {
        self.hub.publish(Event::PromptsListChanged);
    }

    /// `notifications/resources/list_changed` to subscriptions with `resourcesListChanged`.
    pub fn resources_list_changed(&self) {
        self.hub.publish(Event::ResourcesListChanged);
    }

    /// `notifications/resources/updated {uri}` to subscriptions whose `resourceSubscriptions`
    /// list `uri` exactly. A publisher of a mounted group
    /// ([`Server::mounted_publisher`](crate::Server::mounted_publisher)) takes the URI the group
    /// declared (`invoice://7`) and announces the public one (`billing+invoice://7`).
    pub fn resource_updated(&self, uri: impl Into<String>) {
        let uri = uri.into();
        let uri = match &self.mount {
            Some(mount) => mount.public_uri(&uri).into_owned(),
            None => uri,
        };
        self.hub.publish(Event::ResourceUpdated(uri));
    }

    /// Any event, e.g. an extension's.
    pub fn publish(&self, event: Event) {
        self.hub.publish(event);
    }

    /// Every event published from now on (through this server's hub, so with a hub shared by
    /// several instances, every instance's events), in publishing order; `Err(Lagged)` when
    /// events were lost (the reader fell behind, or a broker link dropped) and the reader
    /// should resynchronise from its source of truth. For extensions that react to events,
    /// e.g. the Tasks extension stopping a task that another instance cancelled.
    ///
    /// Experimental seam (docs/architecture.md: extensions use the public API only).
    pub fn subscribe(&self) -> super::EventStream {
        self.hub.subscribe()
    }
}
