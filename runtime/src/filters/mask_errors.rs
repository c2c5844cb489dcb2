//! [`MaskErrors`]: internal errors reach the client as a correlation id, the log gets the rest.

use super::{RESULT_TOO_LARGE_REASON, TIMEOUT_REASON};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::jsonrpc::error::ErrorCode;
use crate::pipeline::{RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use serde_json::{Value, json};

/// The `tracing` target of the events of the ready filters ([`MaskErrors`]'s log entries,
/// [`Audit`](super::Audit)'s records unless configured otherwise).
pub(crate) const TARGET: &str = "switchyard::filters";

/// Internal errors reach the client as a generic message with a correlation id; the full error
/// goes to the server's log with the same id. A `-32603` from any method (a panicked handler,
/// a failing dependency whose message names a path, a host or a query) is answered with
///
/// ```json
/// {"code": -32603, "message": "internal error; the server's log has it under correlation id 5f0c2a9b13e4d871",
///  "data": {"correlationId": "5f0c2a9b13e4d871"}}
/// ```
///
/// and logged as one `ERROR` event, target `switchyard::filters`, message `internal error
/// masked`, fields `correlation_id`, `mcp.method.name`, `gen_ai.tool.name` (the primitive
/// called, for every method: tool, prompt or URI), `error.type` (the code), `error.message`
/// and `error.data` (JSON) — inside the request's span, so the span's fields are there too.
///
/// Passed unchanged: every other code (`-32602` bad params, `-32600` refusals, `-32601`, ...),
/// which describes the request, not the server; the input-required and alternate-result
/// signals (they are results); and the [`Timeout`](super::Timeout) and
/// [`MaxResultSize`](super::MaxResultSize) errors, which name a limit and nothing internal.
///
/// A tool failure (`isError: true` result) is meant for the model and passes unchanged too;
/// [`tool_errors`](Self::tool_errors) masks those as well, for tools whose error text may carry
/// internals (`?` on an `io::Error` names the path).
///
/// Cost: none on a success (a match on the outcome); on a masked error, one random id and
/// one log event.
#[derive(Debug, Clone, Default)]
pub struct MaskErrors {
    tool_errors: bool,
}

impl MaskErrors {
    /// Masks `-32603` errors.
    pub fn new() -> MaskErrors {
        MaskErrors::default()
    }

    /// Also masks the text of `tools/call` results with `isError: true`: the content becomes one
    /// text block `tool failed; the server's log has it under correlation id …`, and the result
    /// keeps `isError: true` (its `structuredContent`, if any, is dropped).
    pub fn tool_errors(mut self, mask: bool) -> MaskErrors {
        self.tool_errors = mask;
        self
    }

    /// `err` as the client should see it, logging the original under a new correlation id when
    /// it is masked: what a typed filter returns, `next.run(req).await.map_err(|e|
    /// mask.mask(&ctx, Some(&name), e))`.
    pub fn mask(&self, ctx: &RequestContext, name: Option<&str>, err: McpError) -> McpError {
        if !masks(&err) {
            return err;
        }
        let id = correlation_id();
        tracing::error!(
            target: TARGET,
            correlation_id = %id,
            mcp.method.name = ctx.method(),
            gen_ai.tool.name = name,
            error.type = err.code().0,
            error.message = err.message(),
            error.data = err.data().map(tracing::field::display),
            "internal error masked"
        );
        McpError::internal(format!("internal error; the server's log has it under correlation id {id}"))
            .with_data(json!({ "correlationId": id }))
    }

    /// A `tools/call` result with `isError: true` masked (see [`tool_errors`](Self::tool_errors));
    /// other results unchanged.
    fn mask_result(&self, ctx: &RequestContext, name: Option<&str>, result: Value) -> Value {
        if !self.tool_errors || ctx.method() != "tools/call" || result.get("isError") != Some(&Value::Bool(true)) {
            return result;
        }
        let id = correlation_id();
        let content = result.get("content").map(Value::to_string).unwrap_or_default();
        tracing::error!(
            target: TARGET,
            correlation_id = %id,
            mcp.method.name = ctx.method(),
            gen_ai.tool.name = name,
            error.type = "tool_error",
            error.content = content,
            "tool error masked"
        );
        json!({
            "content": [{ "type": "text", "text": format!("tool failed; the server's log has it under correlation id {id}") }],
            "isError": true,
        })
    }
}

/// Whether `err` is masked: a `-32603` that is neither a signal nor a limit's own error.
fn masks(err: &McpError) -> bool {
    if err.code() != ErrorCode::INTERNAL_ERROR
        || err.as_input_required().is_some()
        || err.as_alternate_result().is_some()
    {
        return false;
    }
    let reason = err.data().and_then(|d| d.get("reason")).and_then(Value::as_str);
    !matches!(reason, Some(TIMEOUT_REASON | RESULT_TOO_LARGE_REASON))
}

/// 16 hex digits from the thread's CSPRNG: unique enough to find one event in a log.
fn correlation_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

impl RawFilter for MaskErrors {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        let this = self.clone();
        Box::pin(async move {
            let ctx = req.ctx.clone();
            // The primitive as dispatch matched it, read only when needed: nothing to copy on
            // the way in.
            match next.run(req).await {
                Ok(result) => Ok(this.mask_result(&ctx, ctx.matched_primitive(), result)),
                Err(e) => Err(this.mask(&ctx, ctx.matched_primitive(), e)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_internal_errors_are_masked() {
        assert!(masks(&McpError::internal("db at 10.0.0.5 refused")));
        assert!(!masks(&McpError::invalid_params("bad")));
        assert!(!masks(&McpError::input_required(json!({ "resultType": "input_required" }))));
        assert!(!masks(&McpError::alternate_result(json!({ "resultType": "task" }))));
        assert!(!masks(&McpError::internal("timed out").with_data(json!({ "reason": "timeout" }))));
        assert!(masks(&McpError::internal("x").with_data(json!({ "reason": "other" }))));
        let id = correlation_id();
        assert_eq!(id.len(), 16);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
