//! The YAML frontmatter of a `SKILL.md` and the rules the Agent Skills specification
//! (<https://agentskills.io/specification>) and SEP-2640 set on it.

use serde_json::{Map, Value};

/// The longest `description` the Agent Skills specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility` the Agent Skills specification allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The prefix of `metadata` keys that SEP-2640 reserves for MCP extensions (it defines none).
pub const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// Splits `---\n<yaml>\n---\n<body>` into the YAML and the body; `None` when the text does not
/// begin with a frontmatter block. A leading byte-order mark and CRLF line ends are accepted,
/// and the closing `---` may carry trailing blanks, as YAML-frontmatter readers commonly allow.
pub(crate) fn split(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']);
        if bare == "---" {
            let yaml = rest[..offset].trim_end_matches(['\n', '\r']);
            return Some((yaml, &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// Parses the frontmatter of a `SKILL.md` into the JSON object `skills/list` carries verbatim.
///
/// Errors: a sentence saying what is wrong (no frontmatter block, YAML that does not parse, a
/// document that is not a mapping).
pub(crate) fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let Some((yaml, _)) = split(text) else {
        return Err("SKILL.md must begin with YAML frontmatter: a line `---`, the YAML, then a line `---`".to_owned());
    };
    match serde_norway::from_str::<Value>(yaml) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Err("the frontmatter is empty; it needs at least `name` and `description`".to_owned()),
        Ok(_) => Err("the frontmatter must be a YAML mapping (`key: value` lines)".to_owned()),
        Err(e) => Err(format!("the frontmatter is not valid YAML: {e}")),
    }
}

/// True when `name` follows the Agent Skills naming rules: 1-64 characters of lowercase ASCII
/// letters, digits and hyphens, neither starting nor ending with a hyphen, without `--`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Checks the fields of a parsed frontmatter for the skill whose folder is named `dir_name`;
/// returns every problem found, each as a sentence.
pub(crate) fn check(frontmatter: &Map<String, Value>, dir_name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    match frontmatter.get("name") {
        None => problems.push("the frontmatter has no `name` (required)".to_owned()),
        Some(Value::String(name)) => {
            if !valid_name(name) {
                problems.push(format!(
                    "`name: {name}` breaks the naming rules: 1-64 characters of a-z, 0-9 and `-`, \
                     not starting or ending with `-`, no `--`"
                ));
            }
            if name != dir_name {
                problems.push(format!(
                    "`name: {name}` differs from the skill's folder `{dir_name}`; the folder must be named after the skill"
                ));
            }
        }
        Some(other) => problems.push(format!("`name` must be a string, not {}", kind(other))),
    }
    match frontmatter.get("description") {
        None => problems.push("the frontmatter has no `description` (required)".to_owned()),
        Some(Value::String(d)) if d.trim().is_empty() => problems.push("`description` is empty".to_owned()),
        Some(Value::String(d)) if d.chars().count() > MAX_DESCRIPTION_CHARS => problems.push(format!(
            "`description` has {} characters; at most {MAX_DESCRIPTION_CHARS} are allowed",
            d.chars().count()
        )),
        Some(Value::String(_)) => {}
        Some(other) => problems.push(format!("`description` must be a string, not {}", kind(other))),
    }
    match frontmatter.get("compatibility") {
        None | Some(Value::String(_)) => {}
        Some(other) => problems.push(format!("`compatibility` must be a string, not {}", kind(other))),
    }
    if let Some(Value::String(c)) = frontmatter.get("compatibility")
        && c.chars().count() > MAX_COMPATIBILITY_CHARS
    {
        problems.push(format!(
            "`compatibility` has {} characters; at most {MAX_COMPATIBILITY_CHARS} are allowed",
            c.chars().count()
        ));
    }
    match frontmatter.get("metadata") {
        None => {}
        Some(Value::Object(meta)) => {
            for key in meta.keys().filter(|k| k.starts_with(RESERVED_METADATA_PREFIX)) {
                problems.push(format!(
                    "`metadata` key `{key}` uses the prefix `{RESERVED_METADATA_PREFIX}`, reserved for MCP \
                     extensions (none defines keys yet); choose another key"
                ));
            }
        }
        Some(other) => problems.push(format!("`metadata` must be a mapping, not {}", kind(other))),
    }
    problems
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_frontmatter_from_body() {
        assert_eq!(split("---\nname: a\n---\nbody\n"), Some(("name: a", "body\n")));
        assert_eq!(split("\u{feff}---\r\nname: a\r\n--- \r\nbody"), Some(("name: a", "body")));
        assert_eq!(split("---\nname: a\n"), None, "no closing line");
        assert_eq!(split("# title\n---\nname: a\n---\n"), None, "not at the start");
    }

    #[test]
    fn parses_yaml_into_json() {
        let fm =
            parse("---\nname: pdf\ndescription: Read PDFs\nmetadata:\n  version: \"2\"\n  n: 3\n---\n").expect("valid");
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf", "description": "Read PDFs", "metadata": {"version": "2", "n": 3}})
        );
        assert!(parse("no frontmatter").is_err());
        assert!(parse("---\n---\n").is_err());
        assert!(parse("---\n- a\n- b\n---\n").is_err());
        assert!(parse("---\nname: [unclosed\n---\n").is_err());
        // A scalar key becomes its text, as JavaScript YAML readers (and JSON) have it.
        assert_eq!(Value::Object(parse("---\n1: one\n---\n").expect("valid")), json!({"1": "one"}));
    }

    #[test]
    fn naming_rules() {
        for good in ["a", "pdf-processing", "x1", &"a".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "Pdf", "a_b", "a b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn checks_fields() {
        let fm = |v: Value| v.as_object().cloned().expect("object");
        assert!(check(&fm(json!({"name": "pdf", "description": "d"})), "pdf").is_empty());
        let problems = check(&fm(json!({"name": "pdf"})), "other");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("differs from the skill's folder `other`"));
        assert!(problems[1].contains("no `description`"));
        let long = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
        assert_eq!(check(&fm(json!({"name": "a", "description": long})), "a").len(), 1);
        let reserved = json!({"name": "a", "description": "d", "metadata": {"io.modelcontextprotocol/x": "1"}});
        assert!(check(&fm(reserved), "a")[0].contains("reserved"));
        assert!(check(&fm(json!({"name": 3, "description": "d", "metadata": []})), "a").len() == 2);
    }
}
