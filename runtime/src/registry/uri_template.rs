use crate::vocab::uri_template::Part;
use serde_json::{Map, Value};

/// A URI template of RFC 6570 level 1: literal text with `{name}` variables, e.g.
/// `test://template/{id}/data`. A variable matches one or more characters up to the next literal
/// (never across `/` unless the literal after it is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template with the grammar the macros check at compile time.
    ///
    /// Errors: `URI template "..": ` and what is wrong (an unclosed `{`, a stray `}`, an empty
    /// or non-identifier variable name, an RFC 6570 operator or variable list, two adjacent
    /// variables, or a variable named twice).
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        let parts =
            crate::vocab::uri_template::parse(template).map_err(|e| format!("URI template {template:?}: {e}"))?;
        Ok(UriTemplate { parts })
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Matches `uri` against the template, returning the variables as JSON strings.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut vars = Map::new();
        let mut rest = uri;
        let mut i = 0;
        while i < self.parts.len() {
            match &self.parts[i] {
                Part::Literal(l) => rest = rest.strip_prefix(l.as_str())?,
                Part::Var(name) => {
                    let value = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) => {
                            let at = rest.find(next.as_str())?;
                            &rest[..at]
                        }
                        _ => rest,
                    };
                    if value.is_empty() || (value.contains('/') && self.parts.get(i + 1).is_some()) {
                        return None;
                    }
                    vars.insert(name.clone(), Value::String(value.to_owned()));
                    rest = &rest[value.len()..];
                }
            }
            i += 1;
        }
        rest.is_empty().then_some(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_one_variable() {
        let t = UriTemplate::parse("test://template/{id}/data").expect("valid template");
        let vars = t.matches("test://template/123/data").expect("matches");
        assert_eq!(vars["id"], "123");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template/1/data/x").is_none());
    }

    #[test]
    fn trailing_variable_takes_the_rest() {
        let t = UriTemplate::parse("file:///{path}").expect("valid template");
        assert_eq!(t.matches("file:///a/b").expect("matches")["path"], "a/b");
    }

    #[test]
    fn rejects_bad_templates() {
        assert!(UriTemplate::parse("x://{a}{b}").is_err());
        assert!(UriTemplate::parse("x://{a").is_err());
        assert!(UriTemplate::parse("x://{}").is_err());
        assert!(UriTemplate::parse("x://{a}/{a}").is_err());
        assert!(UriTemplate::parse("x://a}/{b}").is_err());
        assert!(UriTemplate::parse("x://{a}/b}").is_err());
    }

    #[test]
    fn errors_name_the_template_in_the_macros_own_words() {
        let err = UriTemplate::parse("x://{+path}").expect_err("an operator");
        assert_eq!(
            err,
            "URI template \"x://{+path}\": `{+path}` uses the RFC 6570 operator `+`; only level-1 `{var}` \
             expressions are supported"
        );
    }
}
