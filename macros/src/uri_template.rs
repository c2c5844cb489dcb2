//! Compile-time validation of resource URI templates, with the runtime's own parser
//! (`vocab/uri_template.rs`), so a template accepted here never fails when the server is built.

use crate::vocab::uri_template::{Part, parse};

/// True when `uri` is to be treated as a template rather than a static URI.
pub fn is_template(uri: &str) -> bool {
    uri.contains('{')
}

/// The variable names of `template`, in order.
///
/// Errors: as [`parse`](crate::vocab::uri_template::parse).
pub fn variables(template: &str) -> Result<Vec<String>, String> {
    Ok(parse(template)?
        .into_iter()
        .filter_map(|p| match p {
            Part::Var(v) => Some(v),
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
