//! Compile-time validation of resource URI templates (RFC 6570 level 1: literal text and
//! `{var}` expressions).
//!
//! The rules match the runtime's `UriTemplate::parse`, so a template accepted here never fails
//! when the server is built; operators and variable lists are rejected with their own message
//! because they are the likely mistakes of someone who knows the full RFC.

/// True when `uri` is to be treated as a template rather than a static URI.
pub fn is_template(uri: &str) -> bool {
    uri.contains('{')
}

/// The variable names of `template`, in order.
///
/// Errors: an unclosed `{`, a stray `}`, an empty or non-identifier variable name, a level 2–4
/// operator or variable list, two adjacent variables, or a variable named twice.
pub fn variables(template: &str) -> Result<Vec<String>, String> {
    let mut vars: Vec<String> = Vec::new();
    let mut rest = template;
    loop {
        match (rest.find('{'), rest.find('}')) {
            (None, None) => return Ok(vars),
            (None, Some(_)) => return Err("`}` without a matching `{`".to_owned()),
            (Some(open), Some(close)) if close < open => return Err("`}` without a matching `{`".to_owned()),
            (Some(_), None) => return Err("unclosed `{`: every variable must end with `}`".to_owned()),
            (Some(open), Some(close)) => {
                let name = &rest[open + 1..close];
                check_var_name(name)?;
                if vars.iter().any(|v| v == name) {
                    return Err(format!("variable `{name}` appears twice"));
                }
                rest = &rest[close + 1..];
                // `{a}{b}` has no literal to tell where `a` ends when a URI is matched.
                if rest.starts_with('{') {
                    return Err(format!(
                        "variable `{name}` is directly followed by another variable; separate them with literal text"
                    ));
                }
                vars.push(name.to_owned());
            }
        }
    }
}

fn check_var_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty variable `{}`: name the variable, e.g. `{id}`".to_owned());
    }
    if let Some(op) = name.chars().next().filter(|c| "+#./;?&=,!@|".contains(*c)) {
        return Err(format!(
            "`{{{name}}}` uses the RFC 6570 operator `{op}`; only level-1 `{{var}}` expressions are supported"
        ));
    }
    if name.contains(',') {
        return Err(format!(
            "`{{{name}}}` is a variable list; only level-1 `{{var}}` expressions with one variable are supported"
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("variable name `{name}` must consist of ASCII letters, digits and `_`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_uri_has_no_variables() {
        assert!(!is_template("file:///etc/motd"));
        assert_eq!(variables("file:///etc/motd"), Ok(vec![]));
    }

    #[test]
    fn collects_variables_in_order() {
        assert!(is_template("users://{org}/{id}/profile"));
        assert_eq!(variables("users://{org}/{id}/profile"), Ok(vec!["org".to_owned(), "id".to_owned()]));
        assert_eq!(variables("{scheme}://x"), Ok(vec!["scheme".to_owned()]));
        assert_eq!(variables("x://{a_1}"), Ok(vec!["a_1".to_owned()]));
    }

    #[test]
    fn rejects_unbalanced_braces() {
        assert!(variables("x://{id").expect_err("must fail").contains("unclosed"));
        assert!(variables("x://id}").expect_err("must fail").contains("without a matching"));
        assert!(variables("x://}{id}").expect_err("must fail").contains("without a matching"));
        assert!(variables("x://{a}/{b").expect_err("must fail").contains("unclosed"));
    }

    #[test]
    fn rejects_bad_variable_names() {
        assert!(variables("x://{}").expect_err("must fail").contains("empty variable"));
        assert!(variables("x://{a-b}").expect_err("must fail").contains("ASCII letters"));
        assert!(variables("x://{ id }").expect_err("must fail").contains("ASCII letters"));
        assert!(variables("x://{+path}").expect_err("must fail").contains("operator `+`"));
        assert!(variables("x://{?q}").expect_err("must fail").contains("operator `?`"));
        assert!(variables("x://{a,b}").expect_err("must fail").contains("variable list"));
    }

    #[test]
    fn rejects_adjacent_and_repeated_variables() {
        assert!(variables("x://{a}{b}").expect_err("must fail").contains("separate them with literal text"));
        assert!(variables("x://{a}/{a}").expect_err("must fail").contains("appears twice"));
    }
}
