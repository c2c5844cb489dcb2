//! What each protocol revision's schema has, for the objects whose keys grew over the
//! revisions: a definition is built once with every key of the newest schema, and an older
//! session is sent the keys its own schema has and nothing else.
//!
//! - 2025-03-26 (<https://modelcontextprotocol.io/specification/2025-03-26/server/tools>): no
//!   `title`, `_meta`, `icons` or `outputSchema`; `Annotations` without `lastModified`;
//!   `Implementation` is `{name, version}`.
//! - 2025-06-18: adds `title`, `_meta`, `outputSchema`, `lastModified`; `Implementation.title`.
//! - 2025-11-25 and 2026-07-28: adds `icons` (SEP-973) and `Implementation.description`,
//!   `websiteUrl`, `icons`.

use super::Era;
use serde_json::{Map, Value};

/// The kind of a listed object, which decides the keys a revision drops from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Definition {
    /// `Tool`.
    Tool,
    /// `Prompt` (with its `arguments`).
    Prompt,
    /// `Resource` or `ResourceTemplate`.
    Resource,
    /// `Implementation` (`serverInfo`).
    Implementation,
}

/// How far back a session's revision is, for the checks below.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Revision {
    R2025_03_26,
    R2025_06_18,
    Newest,
}

impl Revision {
    fn of(era: Era) -> Revision {
        match era.version() {
            "2025-03-26" | "2024-11-05" => Revision::R2025_03_26,
            "2025-06-18" => Revision::R2025_06_18,
            _ => Revision::Newest,
        }
    }
}

/// True when `era`'s schema has every key the server builds definitions with, so they are sent
/// as built (2025-11-25 and 2026-07-28).
pub(crate) fn has_every_key(era: Era) -> bool {
    Revision::of(era) == Revision::Newest
}

/// `definition` as `era`'s schema has it: the same object when it has every key, else a copy
/// without the keys it lacks.
pub(crate) fn fit_definition(kind: Definition, definition: &Value, era: Era) -> Value {
    let mut out = definition.clone();
    if let Some(obj) = out.as_object_mut() {
        fit_in_place(kind, obj, era);
    }
    out
}

/// [`fit_definition`] on an object the caller owns already.
pub(crate) fn fit_in_place(kind: Definition, obj: &mut Map<String, Value>, era: Era) {
    let revision = Revision::of(era);
    if revision == Revision::Newest {
        return;
    }
    obj.remove("icons");
    if kind == Definition::Implementation {
        obj.remove("description");
        obj.remove("websiteUrl");
    }
    if revision == Revision::R2025_03_26 {
        obj.remove("title");
        obj.remove("_meta");
        match kind {
            Definition::Tool => {
                obj.remove("outputSchema");
            }
            Definition::Prompt => {
                for arg in obj.get_mut("arguments").and_then(Value::as_array_mut).into_iter().flatten() {
                    if let Some(arg) = arg.as_object_mut() {
                        arg.remove("title");
                    }
                }
            }
            Definition::Resource => drop_last_modified(obj),
            Definition::Implementation => {}
        }
    }
}

/// Fits the content blocks and resource contents of a `tools/call`, `prompts/get` or
/// `resources/read` result to `era`: 2025-03-26 sessions get no `_meta` on a block or contents
/// and no `lastModified` in their annotations; 2025-06-18 and older no `icons` on a
/// `resource_link` block (a `Resource`, which gained `icons` in 2025-11-25); 2025-03-26, which
/// has no links, gets each as a text block naming the resource and its URI. Newer revisions
/// are left as they are.
pub(crate) fn fit_result(result: &mut Value, era: Era) {
    let revision = Revision::of(era);
    if revision == Revision::Newest {
        return;
    }
    let Some(obj) = result.as_object_mut() else { return };
    let mut blocks: Vec<&mut Value> = Vec::new();
    for (key, value) in obj.iter_mut() {
        match (key.as_str(), value) {
            ("content", Value::Array(items)) => blocks.extend(items.iter_mut()),
            ("messages", Value::Array(messages)) => {
                blocks.extend(messages.iter_mut().filter_map(|m| m.get_mut("content")))
            }
            _ => {}
        }
    }
    for block in blocks {
        let Some(b) = block.as_object_mut() else { continue };
        if b.get("type").and_then(Value::as_str) == Some("resource_link") {
            b.remove("icons");
            if revision == Revision::R2025_03_26 {
                link_as_text(b);
            }
        }
        if revision == Revision::R2025_03_26 {
            b.remove("_meta");
            drop_last_modified(b);
            if let Some(inner) = b.get_mut("resource").and_then(Value::as_object_mut) {
                inner.remove("_meta");
            }
        }
    }
    if revision != Revision::R2025_03_26 {
        return;
    }
    for contents in obj.get_mut("contents").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(c) = contents.as_object_mut() {
            c.remove("_meta");
        }
    }
}

/// A `resource_link` block as the text block a 2025-03-26 session can read (that revision has
/// no links): `"{title or name}: {uri}"`, then ` ({description})` when there is one; the
/// annotations stay, the rest of the link goes.
fn link_as_text(b: &mut Map<String, Value>) {
    let field = |key: &str| b.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let label = field("title").or(field("name")).unwrap_or("resource");
    let mut text = format!("{label}: {}", field("uri").unwrap_or_default());
    if let Some(description) = field("description") {
        text.push_str(&format!(" ({description})"));
    }
    let annotations = b.remove("annotations");
    b.clear();
    b.insert("type".into(), "text".into());
    b.insert("text".into(), text.into());
    if let Some(a) = annotations {
        b.insert("annotations".into(), a);
    }
}

fn drop_last_modified(obj: &mut Map<String, Value>) {
    if let Some(ann) = obj.get_mut("annotations").and_then(Value::as_object_mut) {
        ann.remove("lastModified");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_revision_gets_the_keys_its_schema_has() {
        let tool = json!({"name": "t", "title": "T", "icons": [{"src": "https://a/i.png"}], "_meta": {"x": 1},
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}});
        assert_eq!(fit_definition(Definition::Tool, &tool, Era::Modern), tool);
        assert_eq!(fit_definition(Definition::Tool, &tool, Era::Legacy("2025-11-25")), tool);
        let r0618 = fit_definition(Definition::Tool, &tool, Era::Legacy("2025-06-18"));
        assert!(r0618.get("icons").is_none() && r0618["title"] == "T" && r0618["_meta"]["x"] == 1);
        let r0326 = fit_definition(Definition::Tool, &tool, Era::Legacy("2025-03-26"));
        assert_eq!(r0326, json!({"name": "t", "inputSchema": {"type": "object"}}));

        let info = json!({"name": "s", "version": "1", "title": "S", "description": "d", "websiteUrl": "https://s",
            "icons": []});
        assert_eq!(
            fit_definition(Definition::Implementation, &info, Era::Legacy("2025-06-18")),
            json!({"name": "s", "version": "1", "title": "S"})
        );
        let prompt = json!({"name": "p", "arguments": [{"name": "a", "title": "A", "required": true}]});
        assert_eq!(
            fit_definition(Definition::Prompt, &prompt, Era::Legacy("2025-03-26")),
            json!({"name": "p", "arguments": [{"name": "a", "required": true}]})
        );
        let resource =
            json!({"uri": "u", "name": "n", "annotations": {"priority": 1, "lastModified": "2025-01-01T00:00:00Z"}});
        assert_eq!(
            fit_definition(Definition::Resource, &resource, Era::Legacy("2025-03-26")),
            json!({"uri": "u", "name": "n", "annotations": {"priority": 1}})
        );
    }

    #[test]
    fn results_lose_block_meta_on_2025_03_26_only() {
        let result = json!({"content": [{"type": "text", "text": "x", "_meta": {"a": 1},
            "annotations": {"audience": ["user"], "lastModified": "2025-01-01T00:00:00Z"}}]});
        let mut kept = result.clone();
        fit_result(&mut kept, Era::Legacy("2025-06-18"));
        assert_eq!(kept, result);
        let mut fitted = result;
        fit_result(&mut fitted, Era::Legacy("2025-03-26"));
        assert_eq!(fitted, json!({"content": [{"type": "text", "text": "x", "annotations": {"audience": ["user"]}}]}));
        let link = json!({"content": [{"type": "resource_link", "uri": "u", "name": "n", "title": "T",
            "icons": [{"src": "https://a/i.png"}]}]});
        let mut newest = link.clone();
        fit_result(&mut newest, Era::Legacy("2025-11-25"));
        assert_eq!(newest, link);
        let mut r0618 = link.clone();
        fit_result(&mut r0618, Era::Legacy("2025-06-18"));
        assert_eq!(r0618, json!({"content": [{"type": "resource_link", "uri": "u", "name": "n", "title": "T"}]}));
        let mut r0326 = link;
        fit_result(&mut r0326, Era::Legacy("2025-03-26"));
        assert_eq!(r0326, json!({"content": [{"type": "text", "text": "T: u"}]}), "2025-03-26 has no links");
        let mut described = json!({"content": [{"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs",
            "description": "the entry point", "mimeType": "text/x-rust", "annotations": {"priority": 0.5}}]});
        fit_result(&mut described, Era::Legacy("2025-03-26"));
        assert_eq!(
            described,
            json!({"content": [{"type": "text", "text": "a.rs: file:///a.rs (the entry point)", "annotations": {"priority": 0.5}}]})
        );
        let mut read = json!({"contents": [{"uri": "u", "text": "t", "_meta": {"ui": {}}}]});
        fit_result(&mut read, Era::Legacy("2025-03-26"));
        assert_eq!(read, json!({"contents": [{"uri": "u", "text": "t"}]}));
    }
}
