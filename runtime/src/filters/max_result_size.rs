//! [`MaxResultSize`]: a cap on the bytes of a result's JSON.

use super::{Methods, RESULT_TOO_LARGE_REASON, describe};
use crate::jsonrpc::McpError;
use crate::pipeline::{RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use serde::Serialize;

/// A cap on the size of a result: a result whose JSON is longer than the cap is never sent,
/// in part or whole (cut JSON would not parse), and the call is answered with
///
/// ```json
/// {"code": -32603, "message": "the result of tools/call of \"dump\" is over this server's limit of 1048576 bytes of JSON",
///  "data": {"reason": "result_too_large", "limitBytes": 1048576}}
/// ```
///
/// Size is the bytes of the result object serialized as compact JSON (UTF-8, no whitespace:
/// what the transports write), before the era's stamping adds `resultType`, the server's
/// `_meta` entry and cache hints (a few hundred bytes); the envelope (`jsonrpc`, `id`) is not
/// counted. Counting stops at the cap, so an oversized result costs no more than the cap to
/// measure, and nothing is allocated. Errors pass unchanged.
///
/// Applies to `tools/call`, `prompts/get` and `resources/read`; [`methods`](Self::methods)
/// changes that. Cost: one serialization pass over each result it checks, without allocating
/// (about 2,000 instructions on a small tool result; `docs/filters.md`).
#[derive(Debug, Clone)]
pub struct MaxResultSize {
    limit: usize,
    methods: Methods,
}

impl MaxResultSize {
    /// Results up to `limit_bytes` bytes of JSON.
    pub fn new(limit_bytes: usize) -> MaxResultSize {
        MaxResultSize { limit: limit_bytes, methods: Methods::calls() }
    }

    /// The methods whose results are measured (default `tools/call`, `prompts/get`,
    /// `resources/read`).
    pub fn methods<I, S>(mut self, methods: I) -> MaxResultSize
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = Methods::only(methods);
        self
    }

    /// The cap in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Measures `result` (of a call of `method` to `name`): what a typed filter checks,
    /// `cap.check("tools/call", Some(&name), &result)?`.
    ///
    /// Errors: the `-32603` `result_too_large` error (see the type) when its JSON is longer
    /// than the cap, or does not serialize.
    pub fn check<T: Serialize + ?Sized>(&self, method: &str, name: Option<&str>, result: &T) -> Result<(), McpError> {
        check(self.limit, method, name, result)
    }
}

/// [`MaxResultSize::check`] with the cap `limit`.
fn check<T: Serialize + ?Sized>(limit: usize, method: &str, name: Option<&str>, result: &T) -> Result<(), McpError> {
    let mut counter = Counter { bytes: 0, limit };
    match serde_json::to_writer(&mut counter, result) {
        Ok(()) => Ok(()),
        Err(e) if e.is_io() => Err(McpError::internal(format!(
            "the result of {} is over this server's limit of {limit} bytes of JSON",
            describe(method, name)
        ))
        .with_data(serde_json::json!({ "reason": RESULT_TOO_LARGE_REASON, "limitBytes": limit }))),
        Err(e) => Err(McpError::internal(format!("the result of {} is not JSON: {e}", describe(method, name)))),
    }
}

/// Counts the bytes written and fails the write that goes over `limit`, which ends the
/// serialization there.
struct Counter {
    bytes: usize,
    limit: usize,
}

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes += buf.len();
        if self.bytes > self.limit {
            return Err(std::io::Error::other("over the limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl RawFilter for MaxResultSize {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        if !self.methods.contains(req.ctx.method()) {
            return Box::pin(next.run(req));
        }
        let limit = self.limit;
        Box::pin(async move {
            let ctx = req.ctx.clone();
            let result = next.run(req).await?;
            check(limit, ctx.method(), ctx.matched_primitive(), &result)?;
            Ok(result)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_cap_counts_compact_json_bytes() {
        let value = json!({ "text": "héllo" });
        let exact = serde_json::to_vec(&value).expect("json").len();
        assert!(MaxResultSize::new(exact).check("tools/call", None, &value).is_ok());
        let over = MaxResultSize::new(exact - 1).check("tools/call", Some("t"), &value).expect_err("over");
        assert_eq!(over.code(), crate::ErrorCode::INTERNAL_ERROR);
        assert_eq!(over.data().and_then(|d| d.get("limitBytes")), Some(&json!(exact - 1)));
        assert!(over.message().contains("tools/call of \"t\""), "{over}");
    }
}
