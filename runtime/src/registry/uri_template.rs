use serde_json::{Map, Value};

/// A URI template of RFC 6570 level 1: literal text with `{name}` variables, e.g.
/// `test://template/{id}/data`. A variable matches one or more characters up to the next literal
/// (never across `/` unless the literal after it is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

impl UriTemplate {
    /// Parses a template. Errors: an unclosed `{`, an empty or non-identifier variable name, two
    /// adjacent variables, or a variable named twice; the message says which.
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            if start > 0 {
                parts.push(Part::Literal(rest[..start].to_owned()));
            } else if matches!(parts.last(), Some(Part::Var(_))) {
                return Err(format!("URI template {template:?}: two variables must be separated by literal text"));
            }
            if rest[..start].contains('}') {
                return Err(format!("URI template {template:?}: `}}` without a matching `{{`"));
            }
            let after = &rest[start + 1..];
            let end = after.find('}').ok_or_else(|| format!("URI template {template:?}: unclosed `{{`"))?;
            let name = &after[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "URI template {template:?}: variable name {name:?} must be a non-empty identifier"
                ));
            }
            if parts.iter().any(|p| matches!(p, Part::Var(v) if v == name)) {
                return Err(format!("URI template {template:?}: variable `{name}` appears twice"));
            }
            parts.push(Part::Var(name.to_owned()));
            rest = &after[end + 1..];
        }
        if rest.contains('}') {
            return Err(format!("URI template {template:?}: `}}` without a matching `{{`"));
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
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
}
