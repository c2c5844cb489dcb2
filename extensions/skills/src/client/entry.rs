//! Skill entries as `skills/list` and `skills/get` carry them: what a host holds for a skill
//! before (and while) it loads it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One skill as the server lists it (`skills/list`, `skills/get`):
/// `{"uri": "skill://pdf-processing/SKILL.md", "frontmatter": {"name": .., "description": .., ..},
/// "resources"?: [{"uri", "digest", "size"?}]}`
/// ([SEP-2640, Enumeration](https://modelcontextprotocol.io/seps/2640-skills-extension#enumeration-via-skillslist)).
///
/// Decoded without checks beyond the shape; [`load_skill`](super::load_skill) checks what a
/// load relies on. Fields the SEP may add later are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`, which identifies the skill on its server.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter rendered as JSON, every field the author wrote
    /// (`name` and `description` at least).
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill with its digest, `SKILL.md` included; `None` for a skill whose
    /// content is generated (no digests): such a skill cannot be verified, so it is not loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<SkillResource>>,
}

/// One file of a skill entry: `{"uri": "skill://pdf-processing/references/FORMS.md",
/// "digest": "sha256:<64 lowercase hex digits>", "size"?: 1234}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// SHA-256 of the file's raw bytes: `sha256:<64 lowercase hex digits>`.
    pub digest: String,
    /// The file's length in bytes, when the server lists it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl SkillEntry {
    /// The frontmatter `name` (the last segment of the skill path), if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter `description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }

    /// The listed file at `uri`.
    pub fn resource(&self, uri: &str) -> Option<&SkillResource> {
        self.resources.as_deref()?.iter().find(|r| r.uri == uri)
    }

    /// The skill's root directory: [`uri`](Self::uri) without `/SKILL.md`
    /// (`skill://pdf-processing`); `None` when the URI does not end so.
    pub fn root(&self) -> Option<&str> {
        self.uri.strip_suffix("/SKILL.md").filter(|root| !root.is_empty())
    }
}

/// A page of `skills/list`: `{"skills": [entry], "nextCursor"?: string}` (plus `ttlMs` and
/// `cacheScope` on 2026-07-28, which a one-shot listing has no use for).
#[derive(Debug, Deserialize)]
pub(crate) struct ListPage {
    pub(crate) skills: Vec<SkillEntry>,
    #[serde(rename = "nextCursor", default)]
    pub(crate) next_cursor: Option<String>,
}

/// The result of `skills/get`: `{"skill": entry}`.
#[derive(Debug, Deserialize)]
pub(crate) struct GetResult {
    pub(crate) skill: SkillEntry,
}
