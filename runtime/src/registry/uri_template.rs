use crate::vocab::uri_template::{Expansion, IRI_RANGES, Part, RESERVED};
use regex::Regex;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// A resource URI template (<https://www.rfc-editor.org/rfc/rfc6570>): literal text with
/// `{var}` (simple string expansion, RFC 6570 §3.2.2) and `{+var}` (reserved expansion, §3.2.3)
/// expressions, e.g. `notes://{name}` or `files://{+path}/raw`. Matching inverts expansion:
/// a variable matches one or more characters that its expansion can produce, and its value is
/// handed over percent-decoded.
///
/// | expression | matches | e.g. (`notes://{name}`, `files://{+path}`) |
/// |---|---|---|
/// | `{var}` | unreserved characters (`A-Za-z0-9-._~`), percent-encoded triplets, non-ASCII IRI characters (RFC 3987 `ucschar`/`iprivate`); no reserved character | `notes://a%2Fb` → `a/b`; `notes://caf%C3%A9` and `notes://café` → `café`; `notes://a/b` → no match |
/// | `{+var}` | all of the above and the reserved characters `:/?#[]@!$&'()*+,;=` | `files://docs/a%20b.md` → `docs/a b.md` |
///
/// Neither matches a character that cannot appear in a URI (space, ``"<>\^`{|}``, controls) nor a
/// `%` without two hex digits after it; a value whose percent-decoding is not UTF-8 does not
/// match. Literal text is matched exactly as written (no case folding, no percent-encoding
/// normalization). When a `{+var}` could end at several places, it takes as much as the rest of
/// the template leaves it (`repo://{+path}/raw` on `repo://a/b/raw` gives `path` = `a/b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
    matcher: Matcher,
}

/// The template as one anchored regular expression, a capture group per variable in order.
/// The `regex` crate searches in O(m·n) time for a pattern of size m and a URI of n bytes, so a
/// hostile URI (up to a request body's size) cannot make matching blow up, and its leftmost-first
/// semantics with greedy repetition give the longest value to earlier variables.
#[derive(Clone)]
struct Matcher(Regex);

/// The pattern spells out the IRI ranges once per variable: too long to be of use in a
/// dispatch table's debug output, and `parts` already says what it matches.
impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Matcher").finish_non_exhaustive()
    }
}

/// Two matchers compiled from the same pattern match the same URIs.
impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Eq for Matcher {}

impl UriTemplate {
    /// Parses `template` with the grammar the macros check at compile time and compiles its
    /// matcher.
    ///
    /// Errors: `URI template "..": ` and what is wrong: an unclosed `{`, a stray `}`, an empty
    /// or non-identifier variable name, an RFC 6570 operator other than `+` (`{#x}`, `{.x}`,
    /// `{/x}`, `{;x}`, `{?x}`, `{&x}`, ...), a variable list (`{a,b}`), a prefix or explode
    /// modifier (`{x:3}`, `{x*}`), two adjacent variables, a variable named twice, literal text
    /// with a character that cannot appear in a URI, or a template over 8 KiB.
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        let describe = |e: String| format!("URI template {template:?}: {e}");
        let parts = crate::vocab::uri_template::parse(template).map_err(describe)?;
        let matcher = Matcher(compile(&parts).map_err(describe)?);
        Ok(UriTemplate { parts, matcher })
    }

    /// The variable names, in order (without the `+` of a `{+var}`).
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Matches the whole of `uri` against the template and returns each variable as a JSON
    /// string, percent-decoded (RFC 3986 §2.1) as UTF-8: what RFC 6570 §3.2.2 (`{var}`) or §3.2.3
    /// (`{+var}`) expansion of that value could have produced. See the [type docs](UriTemplate)
    /// for what each expression matches.
    ///
    /// `None` when `uri` is not an expansion of the template: literal text differs, a variable
    /// would be empty or would need a character its expansion cannot produce, or a value does not
    /// decode to UTF-8. Takes time linear in `uri.len()` for a given template.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let captures = self.matcher.0.captures(uri)?;
        let mut vars = Map::new();
        for (i, name) in self.variables().enumerate() {
            let raw = captures.get(i + 1)?.as_str();
            vars.insert(name.to_owned(), Value::String(percent_decode(raw)?));
        }
        Some(vars)
    }
}

/// The anchored pattern of `parts`: literal text escaped, each variable one capture group of
/// the characters its expansion can produce.
fn compile(parts: &[Part]) -> Result<Regex, String> {
    let simple = value_pattern(Expansion::Simple);
    let reserved = value_pattern(Expansion::Reserved);
    let mut pattern = String::from(r"\A");
    for part in parts {
        match part {
            Part::Literal(text) => pattern.push_str(&regex::escape(text)),
            Part::Var { expansion: Expansion::Simple, .. } => pattern.push_str(&simple),
            Part::Var { expansion: Expansion::Reserved, .. } => pattern.push_str(&reserved),
        }
    }
    pattern.push_str(r"\z");
    // The parser bounds the template's length so that this stays under the default size limit
    // (see `MAX_TEMPLATE_LEN`); an error here would be a template the macros accepted.
    Regex::new(&pattern).map_err(|e| format!("cannot compile its matcher: {e}"))
}

/// One capture group: one or more characters of the expansion's set or percent-encoded
/// triplets. Every ASCII punctuation character in the class is escaped, so that `&&`, `--` and
/// `~~` never read as class operators.
fn value_pattern(expansion: Expansion) -> String {
    let mut class = String::from(r"[A-Za-z0-9\-\._\~");
    if expansion == Expansion::Reserved {
        for c in RESERVED.chars() {
            class.push('\\');
            class.push(c);
        }
    }
    for &(lo, hi) in IRI_RANGES {
        // Writing to a String cannot fail.
        let _ = write!(class, r"\x{{{:X}}}-\x{{{:X}}}", u32::from(lo), u32::from(hi));
    }
    class.push(']');
    format!("((?:{class}|%[0-9A-Fa-f]{{2}})+)")
}

/// `raw` with every `%HH` replaced by its byte; `None` when the bytes are not UTF-8 or a `%`
/// is not followed by two hex digits (the matcher lets no such value through).
fn percent_decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
            // Two ASCII hex digits: valid UTF-8 and a number below 256.
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::uri_template::MAX_TEMPLATE_LEN;

    fn template(t: &str) -> UriTemplate {
        UriTemplate::parse(t).unwrap_or_else(|e| panic!("{t} is valid: {e}"))
    }

    /// The value of the single variable `var` of `t` on `uri`, or `None` for no match.
    fn value(t: &str, uri: &str, var: &str) -> Option<String> {
        let vars = template(t).matches(uri)?;
        Some(vars[var].as_str().expect("a string").to_owned())
    }

    #[test]
    fn simple_variables_match_one_segment() {
        let t = template("test://template/{id}/data");
        assert_eq!(t.matches("test://template/123/data").expect("matches")["id"], "123");
        assert!(t.matches("test://template//data").is_none(), "one or more characters");
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template/1/data/x").is_none());
        assert!(t.matches("test://template/1/dat").is_none());
        assert_eq!(value("x://{a}", "x://A-z0.9_~", "a").as_deref(), Some("A-z0.9_~"), "every unreserved character");
    }

    #[test]
    fn simple_variables_are_percent_decoded() {
        assert_eq!(value("notes://{name}", "notes://a%2Fb", "name").as_deref(), Some("a/b"));
        assert_eq!(value("notes://{name}", "notes://a%2fb", "name").as_deref(), Some("a/b"), "lower-case hex");
        assert_eq!(value("notes://{name}", "notes://%2E%2E", "name").as_deref(), Some(".."));
        assert_eq!(value("notes://{name}", "notes://a%20b", "name").as_deref(), Some("a b"));
        assert_eq!(value("notes://{name}", "notes://a%25b", "name").as_deref(), Some("a%b"), "decoded once");
        assert_eq!(value("notes://{name}", "notes://..", "name").as_deref(), Some(".."), "unreserved dots");
    }

    #[test]
    fn both_spellings_of_a_non_ascii_value_agree() {
        assert_eq!(value("notes://{name}", "notes://caf%C3%A9", "name").as_deref(), Some("café"));
        assert_eq!(value("notes://{name}", "notes://café", "name").as_deref(), Some("café"));
        assert_eq!(value("notes://{name}", "notes://caf%c3%a9", "name").as_deref(), Some("café"));
        assert_eq!(value("notes://{name}", "notes://日本", "name").as_deref(), Some("日本"));
        assert_eq!(value("notes://{name}", "notes://\u{1F600}", "name").as_deref(), Some("\u{1F600}"));
    }

    #[test]
    fn simple_variables_match_no_reserved_character() {
        for c in RESERVED.chars() {
            let uri = format!("notes://a{c}b");
            assert_eq!(value("notes://{name}", &uri, "name"), None, "{uri}");
        }
        assert_eq!(value("notes://{name}", "notes://../../etc/passwd", "name"), None);
        assert_eq!(value("notes://{name}", "notes://a/b", "name"), None);
    }

    #[test]
    fn nothing_that_cannot_be_in_a_uri_matches() {
        let outside =
            [' ', '"', '<', '>', '\\', '^', '`', '{', '|', '}', '\0', '\n', '\t', '\x7F', '\u{85}', '\u{FFFE}'];
        for t in ["notes://{name}", "files://{+path}"] {
            for c in outside {
                let uri = format!("{}a{c}b", t.split('{').next().expect("a prefix"));
                assert!(template(t).matches(&uri).is_none(), "{t} on {uri:?}");
            }
        }
    }

    #[test]
    fn a_percent_sign_needs_two_hex_digits() {
        for uri in ["notes://a%", "notes://a%2", "notes://a%2G", "notes://%zz", "notes://100%"] {
            assert_eq!(value("notes://{name}", uri, "name"), None, "{uri}");
            let uri = uri.replacen("notes", "files", 1);
            assert_eq!(value("files://{+path}", &uri, "path"), None, "{uri}");
        }
    }

    #[test]
    fn values_that_do_not_decode_to_utf8_do_not_match() {
        for uri in ["notes://%FF", "notes://caf%C3", "notes://%C3%28", "notes://%ED%A0%80"] {
            assert_eq!(value("notes://{name}", uri, "name"), None, "{uri}");
        }
        assert_eq!(value("notes://{name}", "notes://%00", "name").as_deref(), Some("\0"), "NUL is UTF-8");
    }

    #[test]
    fn reserved_expansion_matches_paths() {
        assert_eq!(value("files://{+path}", "files://docs/a%20b.md", "path").as_deref(), Some("docs/a b.md"));
        assert_eq!(value("files://{+path}", "files://a/b", "path").as_deref(), Some("a/b"));
        assert_eq!(value("files://{+path}", "files://../../etc/passwd", "path").as_deref(), Some("../../etc/passwd"));
        assert_eq!(value("files://{+path}", "files://a%2Fb", "path").as_deref(), Some("a/b"));
        assert_eq!(value("files://{+path}", "files://x/caf%C3%A9", "path").as_deref(), Some("x/café"));
        let all = format!("files://{RESERVED}");
        assert_eq!(value("files://{+path}", &all, "path").as_deref(), Some(RESERVED));
        assert_eq!(value("files://{+path}", "files://", "path"), None, "one or more characters");
    }

    #[test]
    fn reserved_expansion_before_literal_text_is_greedy() {
        assert_eq!(value("repo://{+path}/raw", "repo://a/b/raw", "path").as_deref(), Some("a/b"));
        assert_eq!(value("repo://{+path}/raw", "repo://a/raw/b/raw", "path").as_deref(), Some("a/raw/b"));
        assert_eq!(value("repo://{+path}/raw", "repo://a/b/raw/", "path"), None);
        let t = template("x://{+a}/{+b}");
        let vars = t.matches("x://1/2/3").expect("matches");
        assert_eq!((vars["a"].as_str(), vars["b"].as_str()), (Some("1/2"), Some("3")));
        let t = template("x://{a}.{b}");
        let vars = t.matches("x://f.tar.gz").expect("`.` is unreserved: the first takes what it can");
        assert_eq!((vars["a"].as_str(), vars["b"].as_str()), (Some("f.tar"), Some("gz")));
    }

    #[test]
    fn several_variables_and_literal_text() {
        let t = template("users://{org}/{id}/profile");
        let vars = t.matches("users://acme/42/profile").expect("matches");
        assert_eq!((vars["org"].as_str(), vars["id"].as_str()), (Some("acme"), Some("42")));
        assert_eq!(t.variables().collect::<Vec<_>>(), ["org", "id"]);
        let t = template("{scheme}://x");
        assert_eq!(t.matches("https://x").expect("matches")["scheme"], "https");
        let t = template("x://a.b/{id}(1)");
        assert!(t.matches("x://a.b/7(1)").is_some(), "literal text is not a pattern");
        assert!(t.matches("x://aXb/71").is_none());
    }

    #[test]
    fn literal_text_is_matched_exactly() {
        let t = template("notes://caf%C3%A9/{name}");
        assert!(t.matches("notes://caf%C3%A9/x").is_some());
        assert!(t.matches("notes://café/x").is_none(), "literal text is not normalized");
        assert!(template("notes://café/{name}").matches("notes://café/x").is_some());
    }

    #[test]
    fn hostile_input_completes() {
        let t = template("x://{+a}/{+b}/end");
        let mut uri = String::from("x://");
        uri.push_str(&"a/".repeat(512 * 1024));
        assert_eq!(uri.len(), 4 + 1024 * 1024);
        assert!(t.matches(&uri).is_none(), "no `/end`");
        uri.push_str("end");
        let vars = t.matches(&uri).expect("matches");
        assert_eq!(vars["b"], "a", "greedy `a`");
        let t = template("notes://{name}");
        let uri = format!("notes://{}/", "%41".repeat(300 * 1024));
        assert!(t.matches(&uri).is_none());
    }

    #[test]
    fn the_longest_template_compiles() {
        let mut worst = String::from("x://");
        let mut i = 0;
        while worst.len() + 16 < MAX_TEMPLATE_LEN {
            let _ = write!(worst, "{{+v{i}}}/");
            i += 1;
        }
        let t = template(&worst);
        assert_eq!(t.variables().count(), i);
        let too_long = format!("x://{{a}}/{}", "b".repeat(MAX_TEMPLATE_LEN));
        assert!(UriTemplate::parse(&too_long).expect_err("too long").contains("at most"));
    }

    #[test]
    fn rejects_bad_templates() {
        for bad in
            ["x://{a}{b}", "x://{a}{+b}", "x://{a", "x://{}", "x://{+}", "x://{a}/{a}", "x://{a}/{+a}", "x://a}/{b}"]
        {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        assert!(UriTemplate::parse("x://{a}/b}").is_err());
    }

    #[test]
    fn refuses_the_other_operators_and_modifiers_naming_what_is_supported() {
        let supported = "only `{var}` (simple string expansion) and `{+var}` (reserved expansion) are supported";
        for (t, what) in [
            ("x://{#x}", "operator `#` (fragment expansion)"),
            ("x://{.x}", "operator `.` (label expansion)"),
            ("x://{/x}", "operator `/` (path segment expansion)"),
            ("x://{;x}", "operator `;` (path-style parameter expansion)"),
            ("x://{?x}", "operator `?` (form-style query expansion)"),
            ("x://{&x}", "operator `&` (form-style query continuation)"),
            ("x://{=x}", "reserves for future extensions"),
            ("x://{!x}", "reserves for future extensions"),
            ("x://{a,b}", "variable list"),
            ("x://{+a,b}", "variable list"),
            ("x://{x:3}", "prefix modifier"),
            ("x://{+x:3}", "prefix modifier"),
            ("x://{x*}", "explode modifier"),
        ] {
            let err = UriTemplate::parse(t).expect_err(t);
            assert!(err.contains(what) && err.contains(supported), "{t}: {err}");
        }
    }

    #[test]
    fn refuses_literal_text_that_cannot_be_in_a_uri() {
        let err = UriTemplate::parse("notes://my notes/{name}").expect_err("a space");
        assert_eq!(
            err,
            "URI template \"notes://my notes/{name}\": U+0020 (' ') cannot appear in a URI; write it \
             percent-encoded, `%20`"
        );
        for bad in ["x://\"/{a}", "x://</{a}", "x://^/{a}", "x://`/{a}", "x://|/{a}", "x://\\/{a}", "x://\u{80}/{a}"] {
            assert!(UriTemplate::parse(bad).expect_err(bad).contains("cannot appear in a URI"), "{bad}");
        }
        for bad in ["x://%/{a}", "x://%2/{a}", "x://{a}%zz"] {
            assert!(UriTemplate::parse(bad).expect_err(bad).contains("percent-encoded triplet"), "{bad}");
        }
        for good in ["x://%20/{a}", "x://a'b/{a}", "x://é/{a}", "x://a;b=c?d&e#f/{a}"] {
            assert!(UriTemplate::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn errors_name_the_template() {
        let err = UriTemplate::parse("x://{#frag}").expect_err("an operator");
        assert_eq!(
            err,
            "URI template \"x://{#frag}\": `{#frag}` uses the RFC 6570 operator `#` (fragment expansion); \
             only `{var}` (simple string expansion) and `{+var}` (reserved expansion) are supported"
        );
    }

    #[test]
    fn equal_templates_compare_equal() {
        assert_eq!(template("x://{a}"), template("x://{a}"));
        assert_ne!(template("x://{a}"), template("x://{+a}"));
    }

    #[test]
    fn the_template_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync + Unpin + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
        shareable::<UriTemplate>();
    }
}
