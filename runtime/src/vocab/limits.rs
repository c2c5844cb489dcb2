//! The bounds of the limits a tool may declare (`#[mcp_tool(timeout = "30s", rate_limit =
//! "10/min", max_concurrency = 4)]`, or the same setters of a run-time tool): the macro refuses
//! at compile time what the runtime refuses when a tool is added.

/// The longest `timeout` and rate-limit period: one day, in milliseconds. A longer bound is
/// almost certainly a unit mistake; a tool that needs more runs as a task.
pub const MAX_LIMIT_MS: u128 = 86_400_000;

/// A per-call `timeout` of `ms` milliseconds: 1 ms to one day.
///
/// Errors: a sentence naming the bound otherwise.
pub fn timeout(ms: u128) -> Result<(), String> {
    match ms {
        0 => Err("`timeout` must be at least 1 ms".to_owned()),
        ms if ms > MAX_LIMIT_MS => {
            Err(format!("`timeout` of {ms} ms is over the limit of one day ({MAX_LIMIT_MS} ms)"))
        }
        _ => Ok(()),
    }
}

/// A rate limit of `calls` calls per `per_ms` milliseconds: at least one call, a period of 1 ms
/// to one day, and no more calls than nanoseconds in the period (calls are spread over it).
///
/// Errors: a sentence naming the bound otherwise.
pub fn rate_limit(calls: u32, per_ms: u128) -> Result<(), String> {
    if calls == 0 {
        return Err("`rate_limit` must allow at least 1 call".to_owned());
    }
    if per_ms == 0 || per_ms > MAX_LIMIT_MS {
        return Err(format!("a `rate_limit` period must be 1 ms to one day ({MAX_LIMIT_MS} ms), not {per_ms} ms"));
    }
    if u128::from(calls) > per_ms * 1_000_000 {
        return Err(format!("`rate_limit` of {calls} calls per {per_ms} ms is more than one call per nanosecond"));
    }
    Ok(())
}

/// A `max_concurrency` of `n` calls running at once: at least 1.
///
/// Errors: a sentence otherwise.
pub fn max_concurrency(n: u32) -> Result<(), String> {
    if n == 0 { Err("`max_concurrency` must be at least 1".to_owned()) } else { Ok(()) }
}
