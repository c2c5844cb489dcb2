//! Reading one skill file with `resources/read` and verifying it against its entry before
//! anyone sees it.

use super::entry::SkillResource;
use super::error::SkillError;
use super::verify;
use base64::Engine;
use serde_json::json;
use switchyard::call::Caller;
use switchyard::{ReadResourceResult, ResourceContents};

/// A skill file whose bytes matched its entry's `size` and `digest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedFile {
    uri: String,
    mime_type: Option<String>,
    bytes: Vec<u8>,
}

impl VerifiedFile {
    /// The file's resource URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The MIME type the server read it with, if it named one.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The raw bytes (a text resource's UTF-8, a blob decoded from base64).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The raw bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Reads `listed.uri` and verifies it against `listed`.
///
/// Errors: [`SkillError::Request`], [`SkillError::Malformed`] for a result without contents for
/// the URI or with a blob that is not base64, and the verification errors of
/// [`verify::check_file`].
pub(crate) async fn read_verified<C: Caller>(
    caller: &C,
    listed: &SkillResource,
) -> Result<VerifiedFile, SkillError<C::Error>> {
    let uri = &listed.uri;
    let result = caller
        .request_value("resources/read", json!({ "uri": uri }))
        .await
        .map_err(|source| SkillError::Request { method: "resources/read", uri: Some(uri.clone()), source })?;
    let what = || format!("resources/read of {uri}");
    let result: ReadResourceResult =
        serde_json::from_value(result).map_err(|e| SkillError::malformed(what(), e.to_string()))?;
    let (mime_type, bytes) =
        contents_of(uri, result.contents).map_err(|reason| SkillError::malformed(what(), reason))?;
    verify::check_file(listed, &bytes)?;
    Ok(VerifiedFile { uri: uri.clone(), mime_type, bytes })
}

/// The MIME type and bytes of the item for `uri` in `contents`; a sole item stands for the
/// URI asked for whatever URI it names (the digest decides whether it is the file).
fn contents_of(uri: &str, contents: Vec<ResourceContents>) -> Result<(Option<String>, Vec<u8>), String> {
    let sole = contents.len() == 1;
    let item = contents
        .into_iter()
        .find(|c| sole || item_uri(c) == Some(uri))
        .ok_or_else(|| format!("the result holds no contents for {uri}"))?;
    match item {
        ResourceContents::Text { mime_type, text, .. } => Ok((mime_type, text.into_bytes())),
        ResourceContents::Blob { mime_type, blob, .. } => base64::engine::general_purpose::STANDARD
            .decode(blob.as_bytes())
            .map(|bytes| (mime_type, bytes))
            .map_err(|e| format!("the blob is not base64: {e}")),
        _ => Err("the contents are neither text nor a blob".to_owned()),
    }
}

fn item_uri(contents: &ResourceContents) -> Option<&str> {
    match contents {
        ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => Some(uri),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_item_for_the_uri_and_decodes_blobs() {
        let text = ResourceContents::text("skill://a/x.md", None, "x");
        let blob = ResourceContents::blob("skill://a/y.bin", Some("application/octet-stream"), &[0, 255]);
        let both = vec![text.clone(), blob.clone()];
        assert_eq!(contents_of("skill://a/y.bin", both.clone()).ok().map(|c| c.1), Some(vec![0, 255]));
        assert_eq!(contents_of("skill://a/x.md", both.clone()).ok().map(|c| c.1), Some(b"x".to_vec()));
        assert!(contents_of("skill://a/z.md", both).is_err());
        assert!(contents_of("skill://a/other", vec![text]).is_ok(), "a sole item answers the read");
        assert!(contents_of("skill://a/x.md", Vec::new()).is_err());
        let bad: ResourceContents =
            serde_json::from_value(serde_json::json!({"uri": "skill://a/y.bin", "blob": "%%"})).expect("contents");
        assert!(contents_of("skill://a/y.bin", vec![bad]).is_err());
    }
}
