//! The rules for metadata every definition may carry: `_meta` key names
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/index#meta>), icons
//! (SEP-973, <https://modelcontextprotocol.io/specification/2025-11-25/basic/index#icons>) and
//! web URLs (`websiteUrl`). The macros check literals with them at
//! compile time and the runtime checks run-time definitions at `build()` and `add_*`, so both
//! refuse the same things with the same words.

/// Checks one `_meta` key: an optional prefix (dot-separated labels, each starting with a letter
/// and ending with a letter or digit, inner characters letters, digits or `-`; then `/`) and a
/// name (empty, or starting and ending with a letter or digit, inner characters letters, digits,
/// `-`, `_` or `.`).
///
/// Errors (a sentence naming the key): a malformed prefix or name, or a prefix the
/// specification reserves for itself, where keys are written by the protocol, never by a
/// server's declarations. A definition is sent to sessions of every revision, so both rules
/// apply: 2025-11-25 and later reserve a prefix whose second label is `modelcontextprotocol`
/// or `mcp` (`io.modelcontextprotocol/`, `dev.mcp/`, `com.mcp.tools/`); 2025-06-18 one with
/// such a label followed by another (`modelcontextprotocol.io/`, `tools.mcp.com/`). Neither
/// reserves `com.example.mcp/`.
pub fn check_meta_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.rfind('/') {
        Some(at) => (Some(&key[..at]), &key[at + 1..]),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let labels: Vec<&str> = prefix.split('.').collect();
        for label in &labels {
            let bytes = label.as_bytes();
            let well_formed = bytes.first().is_some_and(u8::is_ascii_alphabetic)
                && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
                && bytes.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-');
            if !well_formed {
                return Err(format!(
                    "`_meta` key {key:?} has a malformed prefix: labels start with a letter, end with a \
                     letter or digit and hold only letters, digits and `-`, e.g. `com.example/rank`"
                ));
            }
        }
        let reserved =
            |label: &&str| label.eq_ignore_ascii_case("modelcontextprotocol") || label.eq_ignore_ascii_case("mcp");
        let second_label = labels.get(1).is_some_and(reserved);
        let followed = labels[..labels.len() - 1].iter().any(reserved);
        if second_label || followed {
            return Err(format!(
                "`_meta` key {key:?} uses a prefix the MCP specification reserves for itself; \
                 use your own reverse-DNS prefix, e.g. `com.example/{name}`"
            ));
        }
    }
    let bytes = name.as_bytes();
    let well_formed = bytes.is_empty()
        || (bytes.first().is_some_and(u8::is_ascii_alphanumeric)
            && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
            && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b)));
    if !well_formed {
        return Err(format!(
            "`_meta` key {key:?} has a malformed name: it starts and ends with a letter or digit and \
             holds only letters, digits, `-`, `_` and `.`"
        ));
    }
    if prefix.is_none() && bytes.is_empty() {
        return Err("a `_meta` key may not be empty".to_owned());
    }
    Ok(())
}

/// Checks an icon's `src`: an `https:` or `http:` URL with a host, or a `data:` URI of an image
/// (`data:image/<type>[;...],...`). Whitespace and control characters are refused anywhere.
///
/// Errors (a sentence naming the value): any other scheme (`javascript:`, `file:`, `ftp:`, ...),
/// no scheme, an HTTP URL without a host, a `data:` URI whose media type is not `image/*`.
pub fn check_icon_src(src: &str) -> Result<(), String> {
    if src.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("icon src {src:?} holds whitespace or a control character"));
    }
    let lower = src.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        return check_web_url(src).map_err(|e| format!("icon src: {e}"));
    }
    if let Some(rest) = lower.strip_prefix("data:") {
        let media = rest.split([';', ',']).next().unwrap_or_default();
        if check_icon_mime_type(media).is_err() || !rest.contains(',') {
            return Err(format!(
                "icon src {src:?} is a `data:` URI of {media:?}, not of an image: write \
                 `data:image/png;base64,...`"
            ));
        }
        return Ok(());
    }
    Err(format!(
        "icon src {src:?} must be an `https:` (or `http:`) URL or a `data:image/...` URI; \
         other schemes (`javascript:`, `file:`, ...) are refused"
    ))
}

/// Checks a web URL (`websiteUrl`, an icon's `src`): `https://` or `http://`, a host, no
/// whitespace or control character.
///
/// Errors: a sentence naming the value.
pub fn check_web_url(url: &str) -> Result<(), String> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{url:?} holds whitespace or a control character"));
    }
    let lower = url.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://")) else {
        return Err(format!("{url:?} is not an `https:` or `http:` URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(format!("{url:?} has no host"));
    }
    Ok(())
}

/// Checks an icon's `mimeType`: `image/<subtype>` (`image/png`, `image/svg+xml`, ...).
///
/// Errors: a sentence naming the value when it is not an image type.
pub fn check_icon_mime_type(mime: &str) -> Result<(), String> {
    let subtype = mime.strip_prefix("image/").unwrap_or_default();
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
    if token(subtype) {
        Ok(())
    } else {
        Err(format!("icon mimeType {mime:?} is not an image type such as `image/png`"))
    }
}

/// Checks one of an icon's `sizes`: `<width>x<height>` in pixels (`48x48`) or `any`.
///
/// Errors: a sentence naming the value otherwise.
pub fn check_icon_size(size: &str) -> Result<(), String> {
    if size == "any" {
        return Ok(());
    }
    let digits =
        |s: &str| !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit()) && !s.starts_with('0');
    match size.split_once('x') {
        Some((w, h)) if digits(w) && digits(h) => Ok(()),
        _ => Err(format!("icon size {size:?} is not `<width>x<height>` (e.g. `48x48`) or `any`")),
    }
}

/// Checks an icon's `theme`: `light` or `dark`.
///
/// Errors: a sentence naming the value otherwise.
pub fn check_icon_theme(theme: &str) -> Result<(), String> {
    match theme {
        "light" | "dark" => Ok(()),
        other => Err(format!("icon theme {other:?} is neither `light` nor `dark`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_keys_follow_the_naming_rules() {
        for ok in ["rank", "com.example/rank", "ui", "a-b_c.d", "com.example/", "x1/y", "com.example.mcp/x", "mcp/x"] {
            assert!(check_meta_key(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "io.modelcontextprotocol/x",
            "dev.mcp/x",
            "com.mcp.tools/x",
            "modelcontextprotocol.io/x",
            "mcp.dev/x",
            "api.modelcontextprotocol.org/x",
            "x.y.mcp.dev/z",
            "/x",
            "a./x",
            "-x",
            "x-",
            "1com/x",
            "com..x/y",
            "a b",
        ] {
            assert!(check_meta_key(bad).is_err(), "{bad}");
        }
        assert!(check_meta_key("io.modelcontextprotocol/ui").expect_err("reserved").contains("reserves"));
    }

    #[test]
    fn icon_sources_are_web_urls_or_image_data() {
        for ok in ["https://example.com/i.png", "http://localhost:8080/a.svg", "data:image/png;base64,AAAA"] {
            assert!(check_icon_src(ok).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "JAVASCRIPT:alert(1)",
            "data:text/html,<script>",
            "data:image/;base64,AAAA",
            "https://",
            "https:///x",
            "icon.png",
            "https://a.com/ x",
            "ftp://a.com/i.png",
        ] {
            assert!(check_icon_src(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn icon_fields_are_checked() {
        assert!(check_icon_mime_type("image/svg+xml").is_ok());
        assert!(check_icon_mime_type("text/html").is_err());
        assert!(check_icon_mime_type("image/").is_err());
        assert!(check_icon_size("48x48").is_ok() && check_icon_size("any").is_ok());
        assert!(check_icon_size("48").is_err() && check_icon_size("0x4").is_err());
        assert!(check_icon_theme("dark").is_ok() && check_icon_theme("blue").is_err());
    }
}
