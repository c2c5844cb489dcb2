//! The syntax of resource URI templates: literal text, `{var}` (simple string expansion,
//! RFC 6570 §3.2.2) and `{+var}` (reserved expansion, §3.2.3),
//! <https://www.rfc-editor.org/rfc/rfc6570>. The macros check a template with it at compile time
//! and the runtime builds its matcher from it, so a template the macro accepted never fails when
//! the server is built. The other operators, variable lists and modifiers are refused with their
//! own message: they are the likely mistakes of someone who knows the full RFC.
//!
//! The character classes below are the matcher's too: what each expansion can produce is what
//! its variable may match.

/// The longest template accepted, in bytes. The runtime compiles a template into a regular
/// expression under the `regex` crate's size limit; bounding the text here keeps every template
/// the macros accept (the worst case is a run of `{+vN}/` expressions) under that limit.
pub const MAX_TEMPLATE_LEN: usize = 8 * 1024;

/// What a variable may match, after the RFC 6570 expression that declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expansion {
    /// `{var}`, simple string expansion (RFC 6570 §3.2.2): unreserved characters,
    /// percent-encoded triplets and non-ASCII IRI characters; no reserved character.
    Simple,
    /// `{+var}`, reserved expansion (RFC 6570 §3.2.3): everything [`Simple`](Expansion::Simple)
    /// matches, and the reserved characters (`/` included).
    Reserved,
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text matched as it is.
    Literal(String),
    /// A `{name}` or `{+name}` expression.
    Var {
        /// The variable's name: ASCII letters, digits and `_`.
        name: String,
        /// Which expression declared it.
        expansion: Expansion,
    },
}

/// Splits `template` into literal text and variables, in order.
///
/// Errors (a sentence without the template, for the caller to place): an unclosed `{`, a stray
/// `}`, an empty or non-identifier variable name, an RFC 6570 operator other than `+`, a
/// variable list (`{a,b}`), a prefix (`{a:3}`) or explode (`{a*}`) modifier, two adjacent
/// variables (nothing would tell where the first ends), a variable named twice; and, in a
/// template with at least one variable, literal text holding a character that cannot appear in
/// a URI, or more than [`MAX_TEMPLATE_LEN`] bytes. A string without variables is a static URI,
/// compared as an exact string: only its braces are checked.
pub fn parse(template: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    loop {
        match (rest.find('{'), rest.find('}')) {
            (None, None) => {
                if !rest.is_empty() {
                    parts.push(Part::Literal(rest.to_owned()));
                }
                break;
            }
            (None, Some(_)) => return Err("`}` without a matching `{`".to_owned()),
            (Some(open), Some(close)) if close < open => return Err("`}` without a matching `{`".to_owned()),
            (Some(_), None) => return Err("unclosed `{`: every variable must end with `}`".to_owned()),
            (Some(open), Some(close)) => {
                let (name, expansion) = expression(&rest[open + 1..close])?;
                if parts.iter().any(|p| matches!(p, Part::Var { name: v, .. } if v == name)) {
                    return Err(format!("variable `{name}` appears twice"));
                }
                if open > 0 {
                    parts.push(Part::Literal(rest[..open].to_owned()));
                }
                parts.push(Part::Var { name: name.to_owned(), expansion });
                rest = &rest[close + 1..];
                if rest.starts_with('{') {
                    return Err(format!(
                        "variable `{name}` is directly followed by another variable; separate them with literal text"
                    ));
                }
            }
        }
    }
    if parts.iter().any(|p| matches!(p, Part::Var { .. })) {
        if template.len() > MAX_TEMPLATE_LEN {
            return Err(format!(
                "a template may be at most {MAX_TEMPLATE_LEN} bytes long, this one has {}",
                template.len()
            ));
        }
        for part in &parts {
            if let Part::Literal(text) = part {
                check_literal(text)?;
            }
        }
    }
    Ok(parts)
}

/// What the matcher can serve of RFC 6570, for every refusal to name.
const SUPPORTED: &str = "only `{var}` (simple string expansion) and `{+var}` (reserved expansion) are supported";

/// The variable name and expansion of the text between `{` and `}`.
fn expression(body: &str) -> Result<(&str, Expansion), String> {
    let (name, expansion) = match body.strip_prefix('+') {
        Some(name) => (name, Expansion::Reserved),
        None => (body, Expansion::Simple),
    };
    if let Some(op) = body.chars().next() {
        let what = match op {
            '#' => Some("the RFC 6570 operator `#` (fragment expansion)"),
            '.' => Some("the RFC 6570 operator `.` (label expansion)"),
            '/' => Some("the RFC 6570 operator `/` (path segment expansion)"),
            ';' => Some("the RFC 6570 operator `;` (path-style parameter expansion)"),
            '?' => Some("the RFC 6570 operator `?` (form-style query expansion)"),
            '&' => Some("the RFC 6570 operator `&` (form-style query continuation)"),
            '=' | ',' | '!' | '@' | '|' => Some("an operator RFC 6570 reserves for future extensions"),
            _ => None,
        };
        if let Some(what) = what {
            return Err(format!("`{{{body}}}` uses {what}; {SUPPORTED}"));
        }
    }
    if name.is_empty() {
        return Err(format!("empty variable `{{{body}}}`: name the variable, e.g. `{{id}}` or `{{+path}}`"));
    }
    if name.contains(',') {
        return Err(format!("`{{{body}}}` is a variable list; {SUPPORTED}, with one variable each"));
    }
    if name.ends_with('*') {
        return Err(format!("`{{{body}}}` uses the RFC 6570 explode modifier `*`; {SUPPORTED}, without modifiers"));
    }
    if name.contains(':') {
        return Err(format!(
            "`{{{body}}}` uses an RFC 6570 prefix modifier (`:` and a length); {SUPPORTED}, without modifiers"
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("variable name `{name}` must consist of ASCII letters, digits and `_`"));
    }
    Ok((name, expansion))
}

/// Literal text may hold what a URI (or IRI) may hold, so that a URI the template describes can
/// exist at all: unreserved and reserved characters, well-formed percent-encoded triplets and
/// non-ASCII IRI characters. RFC 6570 §2.1 also excludes `'`; it is a sub-delimiter of RFC 3986
/// that `{+var}` matches too, so literal text may hold it.
fn check_literal(text: &str) -> Result<(), String> {
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        if c == '%' {
            let triplet = text.as_bytes().get(at + 1..at + 3);
            if !triplet.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return Err("literal `%` must start a percent-encoded triplet such as `%25`".to_owned());
            }
            chars.nth(1);
        } else if !(is_unreserved(c) || is_reserved(c) || is_iri_char(c)) {
            return Err(literal_char_error(c));
        }
    }
    Ok(())
}

/// The refusal of `c` in literal text: its code point, and its percent-encoded UTF-8 to write
/// instead.
fn literal_char_error(c: char) -> String {
    let mut utf8 = [0; 4];
    let encoded: String = c.encode_utf8(&mut utf8).bytes().map(|b| format!("%{b:02X}")).collect();
    format!("U+{:04X} ({c:?}) cannot appear in a URI; write it percent-encoded, `{encoded}`", c as u32)
}

/// RFC 3986 §2.3 `unreserved`: `A-Z a-z 0-9 - . _ ~`.
pub fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

/// RFC 3986 §2.2 `reserved`: the `gen-delims` `: / ? # [ ] @` and the `sub-delims`
/// `! $ & ' ( ) * + , ; =`.
pub fn is_reserved(c: char) -> bool {
    RESERVED.contains(c)
}

/// The reserved characters of RFC 3986 §2.2, in one string.
pub const RESERVED: &str = ":/?#[]@!$&'()*+,;=";

/// The non-ASCII characters an IRI may hold unencoded: RFC 3987 §2.2 `ucschar` and `iprivate`
/// together (<https://www.rfc-editor.org/rfc/rfc3987#section-2.2>). Left out: the C1 controls
/// U+0080–U+009F, the noncharacters (U+FDD0–U+FDEF, U+xFFFE and U+xFFFF), the specials
/// U+FFF0–U+FFFD and the tags U+E0000–U+E0FFF. Inclusive ranges, in order.
pub const IRI_RANGES: &[(char, char)] = &[
    ('\u{A0}', '\u{FDCF}'),
    ('\u{FDF0}', '\u{FFEF}'),
    ('\u{10000}', '\u{1FFFD}'),
    ('\u{20000}', '\u{2FFFD}'),
    ('\u{30000}', '\u{3FFFD}'),
    ('\u{40000}', '\u{4FFFD}'),
    ('\u{50000}', '\u{5FFFD}'),
    ('\u{60000}', '\u{6FFFD}'),
    ('\u{70000}', '\u{7FFFD}'),
    ('\u{80000}', '\u{8FFFD}'),
    ('\u{90000}', '\u{9FFFD}'),
    ('\u{A0000}', '\u{AFFFD}'),
    ('\u{B0000}', '\u{BFFFD}'),
    ('\u{C0000}', '\u{CFFFD}'),
    ('\u{D0000}', '\u{DFFFD}'),
    ('\u{E1000}', '\u{EFFFD}'),
    ('\u{F0000}', '\u{FFFFD}'),
    ('\u{100000}', '\u{10FFFD}'),
];

/// True for a character of [`IRI_RANGES`].
pub fn is_iri_char(c: char) -> bool {
    IRI_RANGES.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}
