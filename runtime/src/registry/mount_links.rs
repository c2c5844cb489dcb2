//! Links out of a mounted group's results. A tool or prompt of the group that links to one of
//! the group's own resources (a `resource_link` block, or an embedded `resource`) writes the
//! URI it declared, which the client cannot read: the server serves it under the mount's
//! scheme prefix. The group's results are rewritten to the public URI, as its resource reads
//! already are, so that a client can follow the link with `resources/read`.
//!
//! Only URIs the group serves are rewritten (one of its resources exactly, or a match of one of
//! its URI templates); a link elsewhere (`https://...`, another group's resource) is left as
//! written. Built once at `build()`; groups without resources, and mounts that keep their URIs,
//! wrap nothing.

use super::mount::Mount;
use super::uri_template::UriTemplate;
use crate::model::Content;
use std::collections::HashSet;

/// The URIs one mounted group serves, as declared, and the mount that makes them public.
#[derive(Debug)]
pub(crate) struct GroupUris {
    mount: Mount,
    exact: HashSet<String>,
    templates: Vec<UriTemplate>,
}

impl GroupUris {
    pub(crate) fn new(mount: Mount) -> Self {
        GroupUris { mount, exact: HashSet::new(), templates: Vec::new() }
    }

    /// Adds a resource (`is_template` false) or URI template the group declared. A template
    /// that does not parse is left out: `build()` reports it with its resource.
    pub(crate) fn add(&mut self, uri: &str, is_template: bool) {
        if !is_template {
            self.exact.insert(uri.to_owned());
        } else if let Ok(t) = UriTemplate::parse(uri) {
            self.templates.push(t);
        }
    }

    /// Whether anything would ever be rewritten: the mount prefixes URIs and the group has some.
    pub(crate) fn rewrites(&self) -> bool {
        self.mount.rewrites_uris() && !(self.exact.is_empty() && self.templates.is_empty())
    }

    fn serves(&self, uri: &str) -> bool {
        self.exact.contains(uri) || self.templates.iter().any(|t| t.matches(uri).is_some())
    }

    /// `uri` made public when the group serves it.
    pub(crate) fn public(&self, uri: &mut String) {
        if self.serves(uri) {
            *uri = self.mount.public_uri(uri).into_owned();
        }
    }

    /// The links in `blocks` made public.
    pub(crate) fn public_blocks<'a>(&self, blocks: impl IntoIterator<Item = &'a mut Content>) {
        for uri in blocks.into_iter().filter_map(Content::link_uri_mut) {
            self.public(uri);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn billing() -> GroupUris {
        let mut uris = GroupUris::new(Mount::prefix("billing"));
        uris.add("invoice://latest", false);
        uris.add("invoice://{id}/pdf", true);
        uris
    }

    #[test]
    fn links_to_the_groups_resources_become_public_and_others_stay() {
        let uris = billing();
        let mut blocks = vec![
            Content::resource_link("invoice://latest", "latest", Map::new()),
            Content::resource_link("invoice://7/pdf", "seven", Map::new()),
            Content::resource_link("invoice://7/xml", "not served", Map::new()),
            Content::resource_link("https://example.com/invoice", "elsewhere", Map::new()),
            Content::text("invoice://latest"),
        ];
        uris.public_blocks(&mut blocks);
        let uris: Vec<_> = blocks.iter().map(|b| serde_json::to_value(b).expect("json")).collect();
        assert_eq!(uris[0]["uri"], json!("billing+invoice://latest"));
        assert_eq!(uris[1]["uri"], json!("billing+invoice://7/pdf"));
        assert_eq!(uris[2]["uri"], json!("invoice://7/xml"));
        assert_eq!(uris[3]["uri"], json!("https://example.com/invoice"));
        assert_eq!(uris[4]["text"], json!("invoice://latest"), "text is not a link");
    }

    #[test]
    fn a_mount_that_keeps_uris_rewrites_nothing() {
        let mut kept = GroupUris::new(Mount::prefix("crm").keep_uris());
        kept.add("contact://{id}", true);
        assert!(!kept.rewrites());
        assert!(billing().rewrites());
        assert!(!GroupUris::new(Mount::prefix("empty")).rewrites());
    }
}
