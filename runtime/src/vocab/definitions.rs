//! The rules for the names and fields of tools, prompts and resources that the macros check at
//! compile time and the runtime checks when a definition is added at run time
//! (`Server::add_tool`, `add_prompt`, `add_resource_template`, ...), so both refuse the same
//! things with the same words.

use super::methods::{self, Owner};

/// MCP tool names: 1–128 characters of `[A-Za-z0-9_.-]`
/// (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names>), and not
/// a method name of MCP (a client that confuses the two namespaces would call MCP's method).
///
/// Errors: a sentence naming the tool and the first rule it breaks.
pub fn tool_name(name: &str) -> Result<(), String> {
    match methods::method_owner(name) {
        Some(Owner::Core) => {
            return Err(format!("`{name}` is a method of MCP itself; choose another tool name"));
        }
        Some(Owner::Namespace(ns)) => {
            return Err(format!("`{name}` is in MCP's `{ns}` namespace of method names; choose another tool name"));
        }
        None => {}
    }
    if name.is_empty() {
        return Err("tool names must not be empty".to_owned());
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Err(format!(
            "tool name `{name}` contains {bad:?}; tool names use only A-Z, a-z, 0-9, `_`, `.` and `-`"
        ));
    }
    let len = name.chars().count();
    if len > 128 {
        return Err(format!("tool name `{name}` is {len} characters long; the limit is 128"));
    }
    Ok(())
}

/// A MIME type of the form `type/subtype` (a resource's or template's `mimeType`).
///
/// Errors: a sentence naming the value otherwise.
pub fn mime_type(text: &str) -> Result<(), String> {
    match text.split_once('/') {
        Some((kind, sub)) if !kind.is_empty() && !sub.is_empty() && !text.contains(char::is_whitespace) => Ok(()),
        _ => Err(format!("`mime_type` {text:?} is not of the form `type/subtype`, e.g. `text/plain`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_tool_names_pass() {
        for name in ["echo", "get_weather", "files.read-v2", "A", &"x".repeat(128)] {
            assert_eq!(tool_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn invalid_tool_names_say_why() {
        assert!(tool_name("").expect_err("empty").contains("must not be empty"));
        assert!(tool_name("get weather").expect_err("space").contains("contains ' '"));
        assert!(tool_name("wetter/heute").expect_err("slash").contains("contains '/'"));
        assert!(tool_name("café").expect_err("accent").contains("contains 'é'"));
        assert!(tool_name(&"x".repeat(129)).expect_err("long").contains("129 characters"));
    }

    #[test]
    fn tool_names_cannot_be_mcp_method_names() {
        for name in ["tools/call", "initialize", "ping", "server/discover", "subscriptions/listen"] {
            let err = tool_name(name).expect_err("core");
            assert_eq!(err, format!("`{name}` is a method of MCP itself; choose another tool name"));
        }
        let err = tool_name("tasks/get").expect_err("namespace");
        assert!(err.contains("is in MCP's `tasks/` namespace of method names"), "{err}");
        assert_eq!(tool_name("tools"), Ok(()));
        assert_eq!(tool_name("pings"), Ok(()));
    }

    #[test]
    fn mime_types_are_type_slash_subtype() {
        assert_eq!(mime_type("text/plain"), Ok(()));
        for bad in ["text", "/plain", "text/", "text/ plain"] {
            assert!(mime_type(bad).is_err(), "{bad}");
        }
    }
}
