//! What reading skills from a server can fail with.

/// Why a skill could not be listed, loaded or read (feature `client`).
///
/// `E` is the error of the connection the calls go through (the [`Caller`](switchyard::call::Caller)'s
/// `Error`: `switchyard_client::ClientError` for a `switchyard_client::Client`).
///
/// | variant | meaning | verification failure? |
/// |---|---|---|
/// | [`Request`](Self::Request) | the call failed (the server's JSON-RPC error, a broken connection) | no |
/// | [`Malformed`](Self::Malformed) | the server answered, but not in the shape SEP-2640 and MCP give the answer (or the entry breaks a rule of its own) | no |
/// | [`SizeMismatch`](Self::SizeMismatch) | a file's byte length differs from its entry's `size` | yes |
/// | [`DigestMismatch`](Self::DigestMismatch) | a file's SHA-256 differs from its entry's `digest` | yes |
/// | [`FrontmatterMismatch`](Self::FrontmatterMismatch) | the fetched `SKILL.md`'s frontmatter differs from the entry's `frontmatter` | yes |
/// | [`UnreadableSkillMd`](Self::UnreadableSkillMd) | the fetched `SKILL.md` is not UTF-8 or has no frontmatter that parses | yes |
/// | [`NotListed`](Self::NotListed) | the file is not in the entry's `resources` (or the entry has none) | yes |
///
/// On a verification failure the content is dropped, never returned
/// ([SEP-2640, Integrity and verification](https://modelcontextprotocol.io/seps/2640-skills-extension#integrity-and-verification)):
/// fetch the entry again (`skills/get` or `skills/list`) and load from the fresh one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError<E> {
    /// The request `method` (for `resources/read`, of `uri`) failed.
    #[error("{method}{} failed: {source}", uri.as_deref().map(|u| format!(" of {u}")).unwrap_or_default())]
    Request {
        /// `skills/list`, `skills/get` or `resources/read`.
        method: &'static str,
        /// The URI the request was about, if any.
        uri: Option<String>,
        /// The connection's error.
        #[source]
        source: E,
    },
    /// The server's answer (or the entry a load was asked for) does not have the shape
    /// SEP-2640 and MCP give it.
    #[error("{what}: {reason}")]
    Malformed {
        /// What was malformed: `skills/list result`, `resources/read of skill://..`, a skill URI.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The file at `uri` has `actual` bytes where its entry lists `expected`.
    #[error("{uri}: the server sent {actual} bytes, the skill's entry lists {expected}; the content was refused")]
    SizeMismatch {
        /// The file's URI.
        uri: String,
        /// The entry's `size`.
        expected: u64,
        /// The length of what the server sent.
        actual: u64,
    },
    /// The file at `uri` hashes to `actual` where its entry lists `expected`.
    #[error("{uri}: the content's digest is {actual}, the skill's entry lists {expected}; the content was refused")]
    DigestMismatch {
        /// The file's URI.
        uri: String,
        /// The entry's `digest` (`sha256:<64 lowercase hex digits>`).
        expected: String,
        /// `sha256:<hex>` of what the server sent.
        actual: String,
    },
    /// The frontmatter of the fetched `SKILL.md` at `uri` differs from the entry's
    /// `frontmatter` in `fields` (listed on one side only, or with another value).
    #[error("{uri}: the frontmatter of SKILL.md differs from the skill's entry in {}; the skill was not loaded", fields.join(", "))]
    FrontmatterMismatch {
        /// The `SKILL.md` URI.
        uri: String,
        /// The names of the fields that differ, sorted.
        fields: Vec<String>,
    },
    /// The fetched `SKILL.md` at `uri` cannot be compared with its entry: it is not UTF-8, or
    /// its frontmatter does not parse.
    #[error("{uri}: {reason}; the skill was not loaded")]
    UnreadableSkillMd {
        /// The `SKILL.md` URI.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `uri` is not listed in the `resources` of the skill `skill` (or its entry lists no
    /// `resources`), so its content cannot be verified; nothing was fetched.
    #[error("{uri} is not listed in the resources of {skill}, so it cannot be verified; nothing was read")]
    NotListed {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// The file asked for.
        uri: String,
    },
}

impl<E> SkillError<E> {
    /// True for the kinds SEP-2640 calls verification failures (size, digest, frontmatter,
    /// an unreadable `SKILL.md`, an unlisted file): the server's content is not what its entry
    /// promised, or cannot be checked against it. Fetching the entry again may help when the
    /// skill changed since it was listed.
    pub fn is_verification_failure(&self) -> bool {
        matches!(
            self,
            SkillError::SizeMismatch { .. }
                | SkillError::DigestMismatch { .. }
                | SkillError::FrontmatterMismatch { .. }
                | SkillError::UnreadableSkillMd { .. }
                | SkillError::NotListed { .. }
        )
    }

    pub(crate) fn malformed(what: impl Into<String>, reason: impl Into<String>) -> Self {
        SkillError::Malformed { what: what.into(), reason: reason.into() }
    }
}
