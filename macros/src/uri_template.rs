//! Compile-time validation of resource URI templates, with the runtime's own parser
//! (`vocab/uri_template.rs`), so a template accepted here never fails when the server is built.

use crate::vocab::uri_template::{Part, parse};

/// True when `uri` is to be treated as a template rather than a static URI.
pub fn is_template(uri: &str) -> bool {
    uri.contains('{')
}

/// The variable names of `template`, in order (`path` for `{+path}`).
///
/// Errors: as [`parse`](crate::vocab::uri_template::parse).
pub fn variables(template: &str) -> Result<Vec<String>, String> {
    Ok(parse(template)?
        .into_iter()
        .filter_map(|p| match p {
            Part::Var { name, .. } => Some(name),
            Part::Literal(_) => None,
        })
        .collect())
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
        assert_eq!(variables("repo://{+path}/raw"), Ok(vec!["path".to_owned()]));
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
        assert!(variables("x://{?q}").expect_err("must fail").contains("operator `?`"));
        assert!(variables("x://{#q}").expect_err("must fail").contains("operator `#`"));
        assert!(variables("x://{a,b}").expect_err("must fail").contains("variable list"));
        assert!(variables("x://{a:3}").expect_err("must fail").contains("prefix modifier"));
        assert!(variables("x://{a*}").expect_err("must fail").contains("explode modifier"));
    }

    #[test]
    fn checks_literal_text_and_length_of_templates_only() {
        assert!(variables("x://a b/{id}").expect_err("must fail").contains("cannot appear in a URI"));
        assert_eq!(variables("x://a b"), Ok(vec![]), "a static URI is an exact string");
        let long = "x".repeat(10_000);
        assert_eq!(variables(&long), Ok(vec![]), "a static URI has no length limit");
        assert!(variables(&format!("x://{{id}}/{long}")).expect_err("must fail").contains("at most"));
    }

    #[test]
    fn rejects_adjacent_and_repeated_variables() {
        assert!(variables("x://{a}{b}").expect_err("must fail").contains("separate them with literal text"));
        assert!(variables("x://{a}/{a}").expect_err("must fail").contains("appears twice"));
        assert!(variables("x://{+a}{b}").expect_err("must fail").contains("separate them with literal text"));
        assert!(variables("x://{a}/{+a}").expect_err("must fail").contains("appears twice"));
    }
}
