//! The syntax of resource URI templates: RFC 6570 level 1, literal text and `{var}` expressions
//! (<https://www.rfc-editor.org/rfc/rfc6570#section-1.2>). The macros check a template with it
//! at compile time and the runtime builds its matcher from it, so a template the macro accepted
//! never fails when the server is built. Operators and variable lists are refused with their own
//! message: they are the likely mistakes of someone who knows the full RFC.

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text matched as it is.
    Literal(String),
    /// A `{name}` expression.
    Var(String),
}

/// Splits `template` into literal text and variables, in order.
///
/// Errors (a sentence without the template, for the caller to place): an unclosed `{`, a stray
/// `}`, an empty or non-identifier variable name, a level 2–4 operator or variable list, two
/// adjacent variables (nothing would tell where the first ends), or a variable named twice.
pub fn parse(template: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    loop {
        match (rest.find('{'), rest.find('}')) {
            (None, None) => {
                if !rest.is_empty() {
                    parts.push(Part::Literal(rest.to_owned()));
                }
                return Ok(parts);
            }
            (None, Some(_)) => return Err("`}` without a matching `{`".to_owned()),
            (Some(open), Some(close)) if close < open => return Err("`}` without a matching `{`".to_owned()),
            (Some(_), None) => return Err("unclosed `{`: every variable must end with `}`".to_owned()),
            (Some(open), Some(close)) => {
                let name = &rest[open + 1..close];
                check_var_name(name)?;
                if parts.iter().any(|p| matches!(p, Part::Var(v) if v == name)) {
                    return Err(format!("variable `{name}` appears twice"));
                }
                if open > 0 {
                    parts.push(Part::Literal(rest[..open].to_owned()));
                }
                parts.push(Part::Var(name.to_owned()));
                rest = &rest[close + 1..];
                if rest.starts_with('{') {
                    return Err(format!(
                        "variable `{name}` is directly followed by another variable; separate them with literal text"
                    ));
                }
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
