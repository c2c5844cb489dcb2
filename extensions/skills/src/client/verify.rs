//! The checks SEP-2640 asks of a host before it uses a skill file
//! (<https://modelcontextprotocol.io/seps/2640-skills-extension#integrity-and-verification>):
//! the byte length against `size`, the SHA-256 against `digest`, and a `SKILL.md`'s
//! frontmatter against the entry's, field by field.

use super::entry::SkillResource;
use super::error::SkillError;
use crate::catalog;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Checks `bytes`, read from `listed.uri`, against the listed size and digest. The size is
/// checked first: a length mismatch is a failure of its own, whatever the digest says.
///
/// Errors: [`SkillError::Malformed`] for a digest that is not `sha256:<64 lowercase hex>`,
/// [`SkillError::SizeMismatch`], [`SkillError::DigestMismatch`].
pub(crate) fn check_file<E>(listed: &SkillResource, bytes: &[u8]) -> Result<(), SkillError<E>> {
    check_digest_format(&listed.uri, &listed.digest)?;
    let actual = bytes.len() as u64;
    if let Some(expected) = listed.size
        && expected != actual
    {
        return Err(SkillError::SizeMismatch { uri: listed.uri.clone(), expected, actual });
    }
    let digest = catalog::digest(bytes);
    if digest != listed.digest {
        return Err(SkillError::DigestMismatch {
            uri: listed.uri.clone(),
            expected: listed.digest.clone(),
            actual: digest,
        });
    }
    Ok(())
}

/// The SEP fixes one format, so anything else is a malformed entry rather than a digest
/// that merely fails to match (a server listing `SHA256:ABC..` has a bug to fix).
fn check_digest_format<E>(uri: &str, digest: &str) -> Result<(), SkillError<E>> {
    let hex = digest.strip_prefix("sha256:").unwrap_or_default();
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        Ok(())
    } else {
        Err(SkillError::malformed(
            format!("the digest of {uri}"),
            format!("{digest:?} is not `sha256:` followed by 64 lowercase hex digits"),
        ))
    }
}

/// The fields in which the fetched frontmatter differs from the listed one, sorted: present
/// on one side only, or with values that differ. Numbers compare by value (`2` and `2.0` are
/// one number in YAML and JSON alike, and JavaScript servers render both as `2`).
pub(crate) fn frontmatter_differences(listed: &Map<String, Value>, fetched: &Map<String, Value>) -> Vec<String> {
    let keys: BTreeSet<&String> = listed.keys().chain(fetched.keys()).collect();
    keys.into_iter()
        .filter(|key| match (listed.get(*key), fetched.get(*key)) {
            (Some(a), Some(b)) => !same_value(a, b),
            _ => true,
        })
        .cloned()
        .collect()
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same_value(a, b)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Error = SkillError<std::convert::Infallible>;

    fn listed(text: &str, size: Option<u64>) -> SkillResource {
        SkillResource { uri: "skill://a/SKILL.md".into(), digest: catalog::digest(text.as_bytes()), size }
    }

    #[test]
    fn accepts_matching_bytes_and_refuses_others_by_kind() {
        let file = listed("body", Some(4));
        assert!(check_file::<std::convert::Infallible>(&file, b"body").is_ok());
        let err: Error = check_file(&file, b"body!").expect_err("longer");
        assert!(matches!(err, SkillError::SizeMismatch { expected: 4, actual: 5, .. }), "{err}");
        let err: Error = check_file(&file, b"bodY").expect_err("same length, other bytes");
        assert!(matches!(err, SkillError::DigestMismatch { .. }), "{err}");
        assert!(err.is_verification_failure());
        // Without a listed size the digest still catches the longer content.
        let err: Error = check_file(&listed("body", None), b"body!").expect_err("longer");
        assert!(matches!(err, SkillError::DigestMismatch { .. }), "{err}");
    }

    #[test]
    fn refuses_digests_of_another_format() {
        let mut file = listed("body", None);
        file.digest = file.digest.to_uppercase();
        let err: Error = check_file(&file, b"body").expect_err("uppercase");
        assert!(matches!(err, SkillError::Malformed { .. }), "{err}");
        file.digest = "sha256:abc".into();
        assert!(matches!(check_file::<std::convert::Infallible>(&file, b"body"), Err(SkillError::Malformed { .. })));
    }

    #[test]
    fn compares_frontmatter_field_by_field() {
        let object = |v: Value| v.as_object().cloned().unwrap_or_default();
        let listed = object(json!({"name": "a", "description": "d", "metadata": {"v": 2, "tags": ["x"]}}));
        let same = object(json!({"name": "a", "description": "d", "metadata": {"v": 2.0, "tags": ["x"]}}));
        assert!(frontmatter_differences(&listed, &same).is_empty());
        let other =
            object(json!({"name": "a", "description": "e", "license": "MIT", "metadata": {"v": 3, "tags": ["x"]}}));
        assert_eq!(frontmatter_differences(&listed, &other), ["description", "license", "metadata"]);
        let fewer = object(json!({"name": "a"}));
        assert_eq!(frontmatter_differences(&listed, &fewer), ["description", "metadata"]);
    }
}
