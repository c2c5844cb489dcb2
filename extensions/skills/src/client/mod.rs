//! The host side of SEP-2640 (feature `client`): list a server's skills, load one when it is
//! needed, read its supporting files, and use nothing the server's own entry does not vouch for
//! (<https://modelcontextprotocol.io/seps/2640-skills-extension#integrity-and-verification>).
//!
//! Every call goes through a [`Caller`]: a `switchyard_client::Client` (crate
//! `switchyard-mcp-client`), or `switchyard::testing::TestClient` in tests.
//!
//! | step | sends | reads files? |
//! |---|---|---|
//! | [`list_skills`] | `skills/list {cursor?}`, every page | no |
//! | [`get_skill`] | `skills/get {uri}` | no |
//! | [`load_skill`] | `resources/read {uri}` of the entry's `SKILL.md` | that one |
//! | [`LoadedSkill::read`] | `resources/read` of one listed file | that one |
//!
//! Nothing is read ahead of need (SEP-2640: not on connection, not on listing, not at
//! approval). Each file read is checked against its entry before it is returned: its length
//! against `size`, its SHA-256 against `digest`, and for `SKILL.md` its frontmatter, field by
//! field, against the entry's `frontmatter`; a file the entry does not list is not read. A
//! failed check is an error ([`SkillError::is_verification_failure`]) and the content is
//! dropped. The digests come from the same server as the content, so a match proves
//! consistency, not trustworthiness: skill content stays untrusted model input.
//!
//! ```no_run
//! use switchyard::call::Caller;
//! use switchyard_skills::client::{SkillError, list_skills, load_skill};
//!
//! async fn use_pdf_skill<C: Caller>(client: &C) -> Result<(), SkillError<C::Error>> {
//!     let skills = list_skills(client).await?; // entries only: no file is read
//!     let Some(entry) = skills.iter().find(|s| s.name() == Some("pdf-processing")) else {
//!         return Ok(());
//!     };
//!     let skill = load_skill(client, entry).await?; // SKILL.md, verified
//!     println!("{}", skill.body());
//!     let forms = skill.read(client, "references/FORMS.md").await?; // verified too
//!     println!("{}", forms.text().unwrap_or_default());
//!     Ok(())
//! }
//! ```

mod entry;
mod error;
mod fetch;
mod loaded;
mod verify;

pub use entry::{SkillEntry, SkillResource};
pub use error::SkillError;
pub use fetch::VerifiedFile;
pub use loaded::{LoadedSkill, load_skill};

use crate::EXTENSION;
use serde_json::{Value, json};
use switchyard::call::Caller;

/// The most pages [`list_skills`] follows before it gives up on a server whose cursors never
/// end.
pub const MAX_LIST_PAGES: usize = 1000;

/// True when `capabilities` (the server's, from `server/discover` or `initialize`: for a
/// `switchyard_client::Client`, `client.capabilities()`) declare the Skills extension:
/// `{"extensions": {"io.modelcontextprotocol/skills": {..}}}`.
pub fn server_declares_skills(capabilities: &Value) -> bool {
    capabilities.get("extensions").and_then(|e| e.get(EXTENSION)).is_some_and(Value::is_object)
}

/// Every skill entry the server lists: `skills/list`, following `nextCursor` to the last page.
/// Reads no file. A server MAY list only some of its skills (or none); that proves nothing
/// about the others, which [`get_skill`] still finds by URI.
///
/// Errors: [`SkillError::Request`] (a server without the extension answers `-32601`);
/// [`SkillError::Malformed`] for a page that is not `{skills: [entry], nextCursor?}`, a
/// cursor handed out a second time (a listing that would go round forever), or more than
/// [`MAX_LIST_PAGES`] pages.
pub async fn list_skills<C: Caller>(caller: &C) -> Result<Vec<SkillEntry>, SkillError<C::Error>> {
    let mut skills = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_LIST_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let result = caller.request_value("skills/list", params).await.map_err(|source| SkillError::Request {
            method: "skills/list",
            uri: None,
            source,
        })?;
        let page: entry::ListPage =
            serde_json::from_value(result).map_err(|e| SkillError::malformed("skills/list result", e.to_string()))?;
        skills.extend(page.skills);
        match page.next_cursor {
            None => return Ok(skills),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(SkillError::malformed("skills/list result", format!("the cursor {next:?} came back")));
            }
            next => cursor = next,
        }
    }
    Err(SkillError::malformed("skills/list result", format!("more than {MAX_LIST_PAGES} pages")))
}

/// The entry of the skill whose `SKILL.md` is at `uri`: `skills/get {uri}` → `{skill: entry}`.
/// Reads no file. The way to load a skill known only by its URI, and to refresh one entry
/// after a verification failure caused by a skill that changed since it was listed.
///
/// Errors: [`SkillError::Request`] (`-32602` when the server serves no skill at `uri`);
/// [`SkillError::Malformed`] for a result that is not `{skill: entry}` or an entry for
/// another URI.
pub async fn get_skill<C: Caller>(caller: &C, uri: &str) -> Result<SkillEntry, SkillError<C::Error>> {
    let result = caller
        .request_value("skills/get", json!({ "uri": uri }))
        .await
        .map_err(|source| SkillError::Request { method: "skills/get", uri: Some(uri.to_owned()), source })?;
    let what = || format!("skills/get of {uri}");
    let result: entry::GetResult =
        serde_json::from_value(result).map_err(|e| SkillError::malformed(what(), e.to_string()))?;
    if result.skill.uri != uri {
        return Err(SkillError::malformed(what(), format!("the entry is for {}", result.skill.uri)));
    }
    Ok(result.skill)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use switchyard::CallToolResult;
    use switchyard::call::TypedCallError;

    /// A server whose `skills/list` cursors go round: `a`, `b`, `a`, ...
    struct GoingRound(AtomicUsize);

    impl Caller for GoingRound {
        type Error = TypedCallError;

        async fn call_tool_value(&self, _: &str, _: Value) -> Result<CallToolResult, TypedCallError> {
            unreachable!("listing calls no tool")
        }

        async fn request_value(&self, _: &str, _: Value) -> Result<Value, TypedCallError> {
            let page = self.0.fetch_add(1, Ordering::Relaxed);
            Ok(json!({ "skills": [], "nextCursor": if page.is_multiple_of(2) { "a" } else { "b" } }))
        }
    }

    #[tokio::test]
    async fn a_listing_whose_cursors_go_round_is_refused_when_one_comes_back() {
        let server = GoingRound(AtomicUsize::new(0));
        let refused = list_skills(&server).await;
        assert!(matches!(&refused, Err(SkillError::Malformed { .. })), "{refused:?}");
        assert_eq!(server.0.load(Ordering::Relaxed), 3, "the third page repeats the first cursor");
    }
}
