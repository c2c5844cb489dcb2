//! `skills/list`, `skills/get` and `resources/directory/read`
//! (<https://modelcontextprotocol.io/seps/2640-skills-extension>).
//!
//! All three are 2026-07-28 methods, served only while the extension is installed (`-32601`
//! otherwise). The extension defines no client declaration, so they are not gated on the
//! request's client capabilities.

use crate::catalog::SCHEME;
use crate::{EXTENSION, SkillLibrary};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use switchyard::prelude::*;

/// What [`SkillsExtension::install`](crate::SkillsExtension::install) keeps in the builder's
/// shared state.
pub(crate) struct SkillsState {
    pub(crate) library: SkillLibrary,
    pub(crate) directory_read: bool,
    pub(crate) page_size: usize,
    pub(crate) ttl_ms: u64,
}

/// Params of `skills/list`: `{"cursor"?: string}`.
#[derive(Debug, Default, Deserialize)]
pub struct SkillsListParams {
    /// Where to continue: the `nextCursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Params of `skills/get`: `{"uri": string}`, the URI of a skill's `SKILL.md`.
#[derive(Debug, Deserialize)]
pub struct SkillsGetParams {
    /// The skill's `SKILL.md` URI, e.g. `skill://pdf-processing/SKILL.md`.
    pub uri: String,
}

/// Params of `resources/directory/read`: `{"uri": string, "cursor"?: string}`.
#[derive(Debug, Deserialize)]
pub struct DirectoryReadParams {
    /// The directory's URI, without a trailing slash (e.g. `skill://pdf-processing/templates`).
    pub uri: String,
    /// Where to continue: the `nextCursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

fn installed(ctx: &RequestContext, method: &str) -> Result<Arc<SkillsState>, McpError> {
    if !ctx.server().has_extension(EXTENSION) {
        return Err(McpError::method_not_found(method));
    }
    ctx.state::<SkillsState>().ok_or_else(|| McpError::method_not_found(method))
}

/// The index where a page starts: cursors are the URI of the page's first item (so a page
/// boundary survives a reload that adds or removes items before it).
///
/// Errors: `-32602` for a cursor that is not a `skill://` URI.
fn page_start<'a>(uris: impl Iterator<Item = &'a str>, cursor: Option<&str>) -> Result<usize, McpError> {
    match cursor {
        None => Ok(0),
        Some(c) if c.starts_with(SCHEME) => {
            let mut count = 0;
            for (i, uri) in uris.enumerate() {
                if uri >= c {
                    return Ok(i);
                }
                count = i + 1;
            }
            Ok(count)
        }
        Some(c) => Err(McpError::invalid_params(format!("invalid cursor {c:?}; list again without one"))),
    }
}

/// `skills/list` → `{skills: [{uri, frontmatter, resources}], nextCursor?, ttlMs, cacheScope}`,
/// skills by URI, [`SkillsExtension::page_size`](crate::SkillsExtension::page_size) per page.
///
/// Errors: `-32602` for a cursor this server did not issue.
#[mcp_rpc(
    "skills/list",
    extension = "io.modelcontextprotocol/skills",
    client_declares = false,
    group = "io.modelcontextprotocol/skills"
)]
async fn skills_list(params: SkillsListParams, ctx: RequestContext) -> Result<Value, McpError> {
    let state = installed(&ctx, "skills/list")?;
    let catalog = state.library.catalog();
    let start = page_start(catalog.skills().map(|s| s.uri()), params.cursor.as_deref())?;
    let page: Vec<Value> = catalog.skills().skip(start).take(state.page_size).map(|s| s.entry()).collect();
    let mut result = json!({ "skills": page, "ttlMs": state.ttl_ms, "cacheScope": "public" });
    if let Some(next) = catalog.skills().nth(start + state.page_size) {
        result["nextCursor"] = json!(next.uri());
    }
    Ok(result)
}

/// `skills/get` → `{skill: {uri, frontmatter, resources}, ttlMs, cacheScope}`.
///
/// Errors: `-32602` (with `data.uri`) when `uri` is not the `SKILL.md` URI of a served skill.
#[mcp_rpc(
    "skills/get",
    extension = "io.modelcontextprotocol/skills",
    client_declares = false,
    group = "io.modelcontextprotocol/skills"
)]
async fn skills_get(params: SkillsGetParams, ctx: RequestContext) -> Result<Value, McpError> {
    let state = installed(&ctx, "skills/get")?;
    let catalog = state.library.catalog();
    let skill = catalog.skill(&params.uri).ok_or_else(|| {
        McpError::invalid_params(format!("no skill is served at {}", params.uri))
            .with_data(json!({ "uri": params.uri }))
    })?;
    Ok(json!({ "skill": skill.entry(), "ttlMs": state.ttl_ms, "cacheScope": "public" }))
}

/// `resources/directory/read` → `{resources: [Resource], nextCursor?}`: the direct children
/// of a directory resource by URI, subdirectories with `mimeType: "inode/directory"`.
///
/// Errors: `-32602` (with `data.uri`) when `uri` is not a directory of the skills namespace
/// (a file, or nothing), or for a cursor this server did not issue; `-32601` when the server
/// was installed with `directory_read(false)`.
#[mcp_rpc(
    "resources/directory/read",
    extension = "io.modelcontextprotocol/skills",
    client_declares = false,
    group = "io.modelcontextprotocol/skills"
)]
async fn directory_read(params: DirectoryReadParams, ctx: RequestContext) -> Result<Value, McpError> {
    let state = installed(&ctx, "resources/directory/read")?;
    if !state.directory_read {
        return Err(McpError::method_not_found("resources/directory/read"));
    }
    let catalog = state.library.catalog();
    let children = catalog.directory(&params.uri).ok_or_else(|| {
        McpError::invalid_params(format!("{} is not a directory", params.uri)).with_data(json!({ "uri": params.uri }))
    })?;
    let uris = children.iter().map(|c| c["uri"].as_str().unwrap_or_default());
    let start = page_start(uris, params.cursor.as_deref())?;
    let page: Vec<&Value> = children.iter().skip(start).take(state.page_size).collect();
    let mut result = json!({ "resources": page });
    if let Some(next) = children.get(start + state.page_size) {
        result["nextCursor"] = next["uri"].clone();
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_at_the_cursor_uri() {
        let uris = ["skill://a/SKILL.md", "skill://b/SKILL.md", "skill://c/SKILL.md"];
        let start = |c: Option<&str>| page_start(uris.iter().copied(), c);
        assert_eq!(start(None).ok(), Some(0));
        assert_eq!(start(Some("skill://b/SKILL.md")).ok(), Some(1));
        // The cursor's skill was removed by a reload: continue with the next one.
        assert_eq!(start(Some("skill://bb/SKILL.md")).ok(), Some(2));
        assert_eq!(start(Some("skill://z")).ok(), Some(3));
        assert_eq!(start(Some("garbage")).map_err(|e| e.code().0).err(), Some(-32602));
    }
}
