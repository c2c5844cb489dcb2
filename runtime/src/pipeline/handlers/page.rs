use crate::jsonrpc::McpError;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

/// Cuts one page out of a sorted list: `{key: [..], nextCursor?}`. Cursors are opaque to the
/// client (base64 of the offset).
///
/// Errors: `-32602` for a cursor this server did not issue
/// ([pagination](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination#error-handling)).
pub(crate) fn page(
    key: &str,
    items: impl Iterator<Item = Value>,
    params: &Map<String, Value>,
    page_size: usize,
) -> Result<Value, McpError> {
    let offset = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => decode(c).ok_or_else(|| McpError::invalid_params(format!("invalid cursor {c:?}")))?,
        Some(_) => return Err(McpError::invalid_params("cursor must be a string")),
    };
    let mut items: Vec<Value> = items.skip(offset).take(page_size + 1).collect();
    if offset > 0 && items.is_empty() {
        // Cursors this server issues always point at an item; the list may also have shrunk.
        return Err(McpError::invalid_params("invalid or expired cursor; list again from the start"));
    }
    let more = items.len() > page_size;
    items.truncate(page_size);
    let mut result = json!({ key: items });
    if more {
        result["nextCursor"] = json!(URL_SAFE_NO_PAD.encode(format!("o{}", offset + page_size)));
    }
    Ok(result)
}

/// One definition as `ctx`'s client is listed it: the listing filters applied (`None` when one
/// leaves it out), then fitted to the client's revision.
pub(crate) fn listed(
    server: &crate::pipeline::Engine,
    ctx: &crate::context::RequestContext,
    kind: crate::registry::ListedKind,
    definition: &Value,
) -> Option<Value> {
    use crate::protocol::revision::{Definition, fit_in_place};
    use crate::registry::ListedKind;
    let mut out = definition.clone();
    let Value::Object(obj) = &mut out else { return Some(out) };
    for filter in &server.listing {
        if !filter.filter(ctx, kind, obj) {
            return None;
        }
    }
    let shape = match kind {
        ListedKind::Tool => Definition::Tool,
        ListedKind::Prompt => Definition::Prompt,
        _ => Definition::Resource,
    };
    fit_in_place(shape, obj, *ctx.era());
    Some(out)
}

fn decode(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    std::str::from_utf8(&bytes).ok()?.strip_prefix('o')?.parse().ok()
}
