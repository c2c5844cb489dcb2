use super::Annotations;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The contents of a resource: text or base64 blob (schema `TextResourceContents` /
/// `BlobResourceContents`).
///
/// JSON: `{"uri":..,"mimeType"?:..,"text":..,"_meta"?:{..}}` or
/// `{"uri":..,"mimeType"?:..,"blob":"<base64>","_meta"?:{..}}`. `_meta` reaches 2025-06-18 and
/// later clients only; set it with [`with_meta`](ResourceContents::with_meta).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    #[non_exhaustive]
    Text {
        /// The resource URI.
        uri: String,
        /// MIME type, e.g. `text/plain`.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Metadata of these contents (extensions read it, e.g. MCP Apps' `ui`).
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// Binary contents, base64-encoded on the wire.
    #[non_exhaustive]
    Blob {
        /// The resource URI.
        uri: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Standard base64 of the bytes.
        blob: String,
        /// Metadata of these contents.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
}

impl ResourceContents {
    /// Text contents for `uri`.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: text.into(),
            meta: None,
        }
    }

    /// Binary contents for `uri`; `bytes` are base64-encoded here.
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, bytes: &[u8]) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        }
    }

    /// Sets `_meta` (its keys are the server's to choose; MCP Apps reads `ui` here).
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        match &mut self {
            ResourceContents::Text { meta: m, .. } | ResourceContents::Blob { meta: m, .. } => *m = Some(meta),
        }
        self
    }

    /// The URI these contents are of.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// The URI these contents are of, to rewrite it (a server that serves them under another
    /// URI, such as a mount's prefix or a gateway's).
    pub fn uri_mut(&mut self) -> &mut String {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// The MIME type, when given.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => mime_type.as_deref(),
        }
    }

    /// `_meta`, when set.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => meta.as_ref(),
        }
    }
}

/// An embedded resource inside a content block: `{"type":"resource","resource":{..}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The embedded contents.
    pub resource: ResourceContents,
}

impl EmbeddedResource {
    /// Embeds `resource`.
    pub fn new(resource: ResourceContents) -> Self {
        EmbeddedResource { resource }
    }
}

/// A content block of a tool result or prompt message (schema `ContentBlock`,
/// <https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result>).
///
/// JSON is tagged by `type`: `text`, `image`, `audio`, `resource`, `resource_link`; every block
/// may carry `annotations` ([`Annotations`]: audience, priority, lastModified) and `_meta`, set
/// with [`with_annotations`](Content::with_annotations) and [`with_meta`](Content::with_meta).
/// Each protocol revision is sent only the keys its schema has: 2025-03-26 sessions get neither
/// `_meta` nor `lastModified` and read a `resource_link` as a text block (`"{title or name}:
/// {uri}"`), and a `resource_link`'s `icons` go to 2025-11-25 and later only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// `{"type":"text","text":..}`
    #[non_exhaustive]
    Text {
        /// The text.
        text: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Block metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"image","data":"<base64>","mimeType":..}`
    #[non_exhaustive]
    Image {
        /// Standard base64 of the image bytes.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Block metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"audio","data":"<base64>","mimeType":..}`
    #[non_exhaustive]
    Audio {
        /// Standard base64 of the audio bytes.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Block metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"resource","resource":{..}}`
    #[non_exhaustive]
    Resource {
        /// The embedded contents.
        resource: ResourceContents,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Block metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// `{"type":"resource_link","uri":..,"name":..,...}`
    #[non_exhaustive]
    ResourceLink {
        /// The linked resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Hints for the client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
        /// Block metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
        /// Further fields (`title`, `description`, `mimeType`, `size`, `icons`), passed through.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into(), annotations: None, meta: None }
    }

    /// The URI a block links to, to rewrite it: a `resource_link`'s `uri`, an embedded
    /// `resource`'s contents' `uri`; `None` for text, images, audio.
    pub fn link_uri_mut(&mut self) -> Option<&mut String> {
        match self {
            Content::ResourceLink { uri, .. } => Some(uri),
            Content::Resource { resource, .. } => Some(resource.uri_mut()),
            _ => None,
        }
    }

    /// The text of a `text` block; `None` for other block types.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource { resource: contents, annotations: None, meta: None }
    }

    /// A `resource_link` block pointing at `uri`, listed under `name`; further `Resource` fields
    /// (`title`, `description`, `mimeType`, `size`) go in `extra`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>, extra: Map<String, Value>) -> Self {
        Content::ResourceLink { uri: uri.into(), name: name.into(), annotations: None, meta: None, extra }
    }

    /// Sets the block's `annotations`.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        *self.slots().0 = Some(annotations);
        self
    }

    /// Sets the block's `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        *self.slots().1 = Some(meta);
        self
    }

    /// The block's `annotations`, when set.
    pub fn annotations(&self) -> Option<&Annotations> {
        match self {
            Content::Text { annotations, .. }
            | Content::Image { annotations, .. }
            | Content::Audio { annotations, .. }
            | Content::Resource { annotations, .. }
            | Content::ResourceLink { annotations, .. } => annotations.as_ref(),
        }
    }

    /// The block's `_meta`, when set.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        match self {
            Content::Text { meta, .. }
            | Content::Image { meta, .. }
            | Content::Audio { meta, .. }
            | Content::Resource { meta, .. }
            | Content::ResourceLink { meta, .. } => meta.as_ref(),
        }
    }

    fn slots(&mut self) -> (&mut Option<Annotations>, &mut Option<Map<String, Value>>) {
        match self {
            Content::Text { annotations, meta, .. }
            | Content::Image { annotations, meta, .. }
            | Content::Audio { annotations, meta, .. }
            | Content::Resource { annotations, meta, .. }
            | Content::ResourceLink { annotations, meta, .. } => (annotations, meta),
        }
    }
}
