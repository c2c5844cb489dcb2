use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The contents of a resource: text or base64 blob (schema `TextResourceContents` /
/// `BlobResourceContents`).
///
/// JSON: `{"uri":..,"mimeType"?:..,"text":..}` or `{"uri":..,"mimeType"?:..,"blob":"<base64>"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource URI.
        uri: String,
        /// MIME type, e.g. `text/plain`.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents, base64-encoded on the wire.
    Blob {
        /// The resource URI.
        uri: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Standard base64 of the bytes.
        blob: String,
    },
}

impl ResourceContents {
    /// Text contents for `uri`.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents::Text { uri: uri.into(), mime_type: mime_type.map(str::to_owned), text: text.into() }
    }

    /// Binary contents for `uri`; `bytes` are base64-encoded here.
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, bytes: &[u8]) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
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

/// A content block of a tool result or prompt message (schema `ContentBlock`).
///
/// JSON is tagged by `type`: `text`, `image`, `audio`, `resource`, `resource_link`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// `{"type":"text","text":..}`
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"image","data":"<base64>","mimeType":..}`
    Image {
        /// Standard base64 of the image bytes.
        data: String,
        /// MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// `{"type":"audio","data":"<base64>","mimeType":..}`
    Audio {
        /// Standard base64 of the audio bytes.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// `{"type":"resource","resource":{..}}`
    Resource {
        /// The embedded contents.
        resource: ResourceContents,
    },
    /// `{"type":"resource_link","uri":..,"name":..,...}`
    ResourceLink {
        /// The linked resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Further fields (`description`, `mimeType`, ...), passed through.
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// The text of a `text` block; `None` for other block types.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Image { data: base64::engine::general_purpose::STANDARD.encode(bytes), mime_type: mime_type.into() }
    }

    /// An audio block from raw bytes (base64-encoded here).
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Audio { data: base64::engine::general_purpose::STANDARD.encode(bytes), mime_type: mime_type.into() }
    }

    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource { resource: contents }
    }
}
