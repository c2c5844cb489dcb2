//! A skill the host has loaded: its `SKILL.md` verified against the entry it was loaded from,
//! and its supporting files read on demand, each verified against the same entry.

use super::entry::{SkillEntry, SkillResource};
use super::error::SkillError;
use super::fetch::{self, VerifiedFile};
use super::verify;
use crate::frontmatter;
use serde_json::{Map, Value};
use switchyard::call::Caller;

/// A loaded skill: the entry it was loaded from and its verified `SKILL.md`. Holding one is
/// what SEP-2640 calls acting on the skill: reads of its files resolve only to the URIs its
/// entry lists, and each is verified before it is returned.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    entry: SkillEntry,
    /// The entry's `uri` without `/SKILL.md`, which relative paths resolve against.
    root: String,
    text: String,
}

impl LoadedSkill {
    /// The entry the skill was loaded from (its `frontmatter` equals the `SKILL.md`'s).
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// The `SKILL.md` URI.
    pub fn uri(&self) -> &str {
        &self.entry.uri
    }

    /// The skill's name (the frontmatter `name`, checked against the URI).
    pub fn name(&self) -> &str {
        self.entry.name().unwrap_or_default()
    }

    /// The frontmatter, as listed and as `SKILL.md` has it.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.entry.frontmatter
    }

    /// The whole `SKILL.md`, frontmatter included.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The instructions: `SKILL.md` after its frontmatter.
    pub fn body(&self) -> &str {
        frontmatter::split(&self.text).map_or(self.text.as_str(), |(_, body)| body)
    }

    /// The supporting files the entry lists (every listed file but `SKILL.md`), not read yet.
    pub fn files(&self) -> impl Iterator<Item = &SkillResource> {
        self.entry.resources.iter().flatten().filter(|r| r.uri != self.entry.uri && within(&self.root, &r.uri))
    }

    /// Reads the skill file `path` with `resources/read` and verifies it against the entry.
    /// `path` is relative to the skill's root as `SKILL.md` writes it (`references/FORMS.md`,
    /// `./scripts/run.py`; `..` may not climb above the root), or a full URI.
    ///
    /// Errors: [`SkillError::NotListed`] (nothing is read) when the path leaves the skill or
    /// its URI is not in the entry's `resources`; otherwise as the read of `SKILL.md` in
    /// [`load_skill`](super::load_skill): [`SkillError::Request`], [`SkillError::Malformed`],
    /// [`SkillError::SizeMismatch`], [`SkillError::DigestMismatch`].
    pub async fn read<C: Caller>(&self, caller: &C, path: &str) -> Result<VerifiedFile, SkillError<C::Error>> {
        let not_listed = |uri: &str| SkillError::NotListed { skill: self.entry.uri.clone(), uri: uri.to_owned() };
        let uri = resolve(&self.root, path).ok_or_else(|| not_listed(path))?;
        if uri != self.entry.uri && !within(&self.root, &uri) {
            return Err(not_listed(&uri));
        }
        let listed = self.entry.resource(&uri).ok_or_else(|| not_listed(&uri))?;
        fetch::read_verified(caller, listed).await
    }
}

/// Loads the skill `entry` describes: reads its `SKILL.md` (and nothing else), verifies the
/// bytes against the entry's `size` and `digest`, parses the YAML frontmatter and compares it
/// field by field with the entry's `frontmatter`
/// ([SEP-2640, Integrity and verification](https://modelcontextprotocol.io/seps/2640-skills-extension#integrity-and-verification)).
/// Content that fails any check is dropped, never returned.
///
/// Errors: [`SkillError::Malformed`] for an entry whose `uri` does not end in
/// `/<frontmatter.name>/SKILL.md` (nothing is read) or an answer of the wrong shape;
/// [`SkillError::NotListed`] when the entry lists no digest for its `SKILL.md` (or no
/// `resources` at all: a generated skill cannot be verified; nothing is read);
/// [`SkillError::Request`]; [`SkillError::SizeMismatch`], [`SkillError::DigestMismatch`],
/// [`SkillError::UnreadableSkillMd`], [`SkillError::FrontmatterMismatch`].
pub async fn load_skill<C: Caller>(caller: &C, entry: &SkillEntry) -> Result<LoadedSkill, SkillError<C::Error>> {
    let uri = &entry.uri;
    let root = entry.root().ok_or_else(|| SkillError::malformed(uri.clone(), "a skill URI ends in `/SKILL.md`"))?;
    let last_segment = root.rsplit('/').next().unwrap_or(root);
    if entry.name() != Some(last_segment) {
        return Err(SkillError::malformed(
            uri.clone(),
            format!(
                "the skill path ends in `{last_segment}` but frontmatter.name is {:?}",
                entry.frontmatter.get("name")
            ),
        ));
    }
    // SEP-2640 Resources: "Each `uri` MUST be the skill's `SKILL.md` or a file within the
    // skill's directory."
    if let Some(outside) = entry.resources.iter().flatten().find(|r| r.uri != *uri && !within(root, &r.uri)) {
        return Err(SkillError::malformed(uri.clone(), format!("the entry lists {} outside the skill", outside.uri)));
    }
    let listed = entry.resource(uri).ok_or_else(|| SkillError::NotListed { skill: uri.clone(), uri: uri.clone() })?;
    let file = fetch::read_verified(caller, listed).await?;
    let unreadable = |reason: String| SkillError::UnreadableSkillMd { uri: uri.clone(), reason };
    let text = String::from_utf8(file.into_bytes()).map_err(|_| unreadable("SKILL.md is not UTF-8".to_owned()))?;
    let fetched = frontmatter::parse(&text).map_err(unreadable)?;
    let fields = verify::frontmatter_differences(&entry.frontmatter, &fetched);
    if !fields.is_empty() {
        return Err(SkillError::FrontmatterMismatch { uri: uri.clone(), fields });
    }
    Ok(LoadedSkill { root: root.to_owned(), entry: entry.clone(), text })
}

/// Whether `uri` names a file below `root` (`<root>/<segments>`, no empty, `.` or `..` segment).
fn within(root: &str, uri: &str) -> bool {
    uri.strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| rest.split('/').all(|s| !matches!(s, "" | "." | "..")))
}

/// The URI of `path` in the skill rooted at `root`; `None` when it climbs above the root or
/// names no file. A full URI (with `://`) is returned as is: the entry's listing decides.
fn resolve(root: &str, path: &str) -> Option<String> {
    if path.contains("://") {
        return Some(path.to_owned());
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            name => segments.push(name),
        }
    }
    (!segments.is_empty()).then(|| format!("{root}/{}", segments.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_paths_inside_the_root_only() {
        let root = "skill://acme/refunds";
        let r = |p: &str| resolve(root, p);
        assert_eq!(r("references/A.md").as_deref(), Some("skill://acme/refunds/references/A.md"));
        assert_eq!(r("./references//A.md").as_deref(), Some("skill://acme/refunds/references/A.md"));
        assert_eq!(r("references/../SKILL.md").as_deref(), Some("skill://acme/refunds/SKILL.md"));
        assert_eq!(r("../billing/SKILL.md"), None, "above the root");
        assert_eq!(r("."), None);
        assert_eq!(r("skill://other/SKILL.md").as_deref(), Some("skill://other/SKILL.md"));
    }
}
