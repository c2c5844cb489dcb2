//! [`RateLimit`]: calls counted per caller, address or tool against a [`Rate`], with the GCRA
//! of the `governor` crate over a key store of bounded size.

use super::{Methods, RATE_LIMITED_REASON, describe, primitive};
use crate::context::RequestContext;
use crate::jsonrpc::McpError;
use crate::pipeline::{RawFilter, RawNext, RawRequest, RawResponse};
use crate::registry::BoxFuture;
use governor::clock::{Clock, DefaultClock};
use governor::nanos::Nanos;
use governor::state::StateStore;
use governor::state::keyed::ShrinkableKeyedStateStore;
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A rate: `count` calls per `per`, with bursts of up to `count` calls at once (GCRA: one call
/// is allowed back every `per / count`).
///
/// Parsed from `"N/unit"` with unit `s`, `sec`, `second`, `m`, `min`, `minute`, `h`, `hour`,
/// `d` or `day` (e.g. `"10/min"`, `"5/s"`, `"1000/hour"`), as a declaration such as
/// `#[mcp_tool(rate_limit = "10/min")]` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    count: NonZeroU32,
    per: Duration,
    burst: Option<NonZeroU32>,
}

impl Rate {
    /// `count` calls per `per`.
    ///
    /// Errors: [`RateParseError`] when `count` is 0 or `per` is zero.
    pub fn new(count: u32, per: Duration) -> Result<Rate, RateParseError> {
        let count = NonZeroU32::new(count).ok_or_else(|| RateParseError(format!("{count} calls: at least 1")))?;
        if per.is_zero() {
            return Err(RateParseError("the period must be longer than 0".into()));
        }
        Ok(Rate { count, per, burst: None })
    }

    /// `count` calls per second (0 is taken as 1).
    pub fn per_second(count: u32) -> Rate {
        Rate { count: NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN), per: Duration::from_secs(1), burst: None }
    }

    /// `count` calls per minute (0 is taken as 1).
    pub fn per_minute(count: u32) -> Rate {
        Rate { count: NonZeroU32::new(count).unwrap_or(NonZeroU32::MIN), per: Duration::from_secs(60), burst: None }
    }

    /// Calls allowed at once before the rate applies (default: `count`; 0 is taken as 1).
    pub fn burst(mut self, burst: u32) -> Rate {
        self.burst = Some(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
        self
    }

    /// The calls per period.
    pub fn count(&self) -> u32 {
        self.count.get()
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.per
    }

    fn quota(&self) -> governor::Quota {
        // One call back every `per / count`, never faster than a nanosecond apart.
        let every = (self.per / self.count.get()).max(Duration::from_nanos(1));
        let quota = governor::Quota::with_period(every).unwrap_or_else(|| governor::Quota::per_second(self.count));
        quota.allow_burst(self.burst.unwrap_or(self.count))
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.per.as_secs() {
            1 if self.per.subsec_nanos() == 0 => "s".to_owned(),
            60 if self.per.subsec_nanos() == 0 => "min".to_owned(),
            3600 if self.per.subsec_nanos() == 0 => "hour".to_owned(),
            86400 if self.per.subsec_nanos() == 0 => "day".to_owned(),
            _ => format!("{} ms", self.per.as_millis()),
        };
        write!(f, "{}/{unit}", self.count)
    }
}

impl std::str::FromStr for Rate {
    type Err = RateParseError;

    /// `"10/min"`: see [`Rate`].
    fn from_str(s: &str) -> Result<Rate, RateParseError> {
        let bad = || RateParseError(format!("{s:?} is not a rate such as \"10/min\" (units: s, min, hour, day)"));
        let (count, unit) = s.split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let per = match unit.trim() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "m" | "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            "d" | "day" => Duration::from_secs(86400),
            _ => return Err(bad()),
        };
        Rate::new(count, per)
    }
}

/// A rate that does not parse, or a zero count or period; the message says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad rate: {0}")]
pub struct RateParseError(String);

/// What a [`RateLimit`] counts calls by. The parts combine: [`RateLimit::by_principal`] and
/// [`RateLimit::by_tool`] together give each caller its own quota per tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateKey {
    /// The principal's `id` (a token's `sub`); anonymous callers share one key.
    pub principal: bool,
    /// The client's IP address (an IPv6 address by its /64 network, which one client usually
    /// holds whole); requests without a known address share one key.
    pub address: bool,
    /// The primitive called (tool or prompt name, resource URI).
    pub tool: bool,
}

impl RateKey {
    /// The default: the caller, that is the principal when the request is authenticated, and
    /// its address otherwise.
    pub const CALLER: RateKey = RateKey { principal: true, address: true, tool: false };
}

/// The key of one quota.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// Every caller the store had no room for (see [`RateLimit::max_keys`]).
    Overflow,
    Of {
        principal: Option<String>,
        address: Option<IpAddr>,
        tool: Option<String>,
    },
}

/// Keys in use and their GCRA state (the theoretical arrival time, in nanoseconds from the
/// limiter's start); the limiter and the filter share it.
#[derive(Debug, Clone, Default)]
struct Store {
    map: Arc<Mutex<HashMap<Key, u64>>>,
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, u64>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl StateStore for Store {
    type Key = Key;

    fn measure_and_replace<T, F, E>(&self, key: &Key, f: F) -> Result<T, E>
    where
        F: Fn(Option<Nanos>) -> Result<(T, Nanos), E>,
    {
        let mut map = self.lock();
        let (out, tat) = f(map.get(key).map(|t| Nanos::from(*t)))?;
        match map.get_mut(key) {
            Some(t) => *t = tat.as_u64(),
            None => {
                map.insert(key.clone(), tat.as_u64());
            }
        }
        Ok(out)
    }
}

impl ShrinkableKeyedStateStore<Key> for Store {
    fn retain_recent(&self, drop_below: Nanos) {
        // A key whose arrival time has passed is as good as new: forgetting it changes nothing.
        self.lock().retain(|_, tat| *tat > drop_below.as_u64());
    }

    fn shrink_to_fit(&self) {
        self.lock().shrink_to_fit();
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

type Limiter = governor::RateLimiter<Key, Store, DefaultClock>;

/// Rate limiting of tool calls (or any method): each key (by default the caller: its
/// principal, or its address when anonymous) may make [`Rate`] calls, in bursts of up to the
/// rate's count; beyond that the call is refused until a call is allowed back. The spec's
/// tools page says servers MUST rate limit tool invocations
/// ([security considerations](https://modelcontextprotocol.io/specification/2025-11-25/server/tools#security-considerations)).
///
/// Counts `tools/call` by default ([`methods`](Self::methods) for others); with
/// [`tool`](Self::tool), only the calls of one tool, which is what a declaration
/// `#[mcp_tool(rate_limit = "10/min")]` means.
///
/// A refused call is never run. It is answered with the JSON-RPC error
///
/// ```json
/// {"code": -32600, "message": "rate limited: tools/call of \"search\" is limited to 10/min per caller; retry in 6000 ms",
///  "data": {"reason": "rate_limited", "retryAfterMs": 6000}}
/// ```
///
/// `-32600` because the request is refused as a whole, as the HTTP transport already refuses
/// an `initialize` over its session-creation rate. On a 2026-07-28 HTTP request answered with
/// JSON (the whole request refused before anything was streamed) the transport sends it with
/// HTTP 429 and `Retry-After` in whole seconds, rounded up (RFC 6585 §4); on stdio, on legacy
/// sessions (whose POSTs answer 200 whatever the JSON-RPC outcome) and inside an SSE stream
/// the client reads `data.retryAfterMs`.
///
/// Memory: one entry per key heard within the last period (about 100 bytes); keys that are as
/// good as new are dropped every 4096 calls, and every 64 while the store is full. At
/// [`max_keys`](Self::max_keys) (default 100,000) entries of callers still inside their period,
/// callers not yet in the store share one quota until room is made: a client rotating
/// addresses or tokens cannot grow memory without bound, and at worst slows other new callers.
///
/// Cost: one mutex-held hash lookup per counted call (about 1,600 instructions besides the raw
/// chain's own, see
/// `docs/filters.md`); calls of other methods, or of other tools with [`tool`](Self::tool), a
/// string comparison.
pub struct RateLimit {
    limiter: Limiter,
    store: Store,
    rate: Rate,
    key: RateKey,
    methods: Methods,
    tool: Option<String>,
    max_keys: usize,
    calls: AtomicU64,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("rate", &self.rate)
            .field("key", &self.key)
            .field("methods", &self.methods)
            .field("tool", &self.tool)
            .field("max_keys", &self.max_keys)
            .finish_non_exhaustive()
    }
}

/// How often the store is swept of keys that are as good as new, in counted calls.
const SWEEP_EVERY: u64 = 4096;

impl RateLimit {
    /// `rate` per caller ([`RateKey::CALLER`]) on `tools/call`.
    pub fn new(rate: Rate) -> RateLimit {
        let store = Store::default();
        RateLimit {
            limiter: governor::RateLimiter::new(rate.quota(), store.clone(), DefaultClock::default()),
            store,
            rate,
            key: RateKey::CALLER,
            methods: Methods::only(["tools/call"]),
            tool: None,
            max_keys: 100_000,
            calls: AtomicU64::new(0),
        }
    }

    /// `rate` per caller on the calls of tool `name` alone: what
    /// `#[mcp_tool(rate_limit = "10/min")]` declares.
    pub fn per_tool(name: impl Into<String>, rate: Rate) -> RateLimit {
        RateLimit::new(rate).tool(name)
    }

    /// Counts only the calls of this tool (or prompt, or resource URI, with
    /// [`methods`](Self::methods)); others pass uncounted.
    pub fn tool(mut self, name: impl Into<String>) -> RateLimit {
        self.tool = Some(name.into());
        self
    }

    /// Counts these methods (default `["tools/call"]`), e.g. `["tools/call", "resources/read"]`.
    pub fn methods<I, S>(mut self, methods: I) -> RateLimit
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.methods = Methods::only(methods);
        self
    }

    /// Counts every method, `initialize` and `ping` included.
    pub fn all_methods(mut self) -> RateLimit {
        self.methods = Methods::All;
        self
    }

    /// What calls are counted by (default [`RateKey::CALLER`]); `RateKey::default()` counts
    /// every call against one server-wide quota.
    pub fn key(mut self, key: RateKey) -> RateLimit {
        self.key = key;
        self
    }

    /// One quota per principal id (anonymous callers share one).
    pub fn by_principal(self) -> RateLimit {
        let key = RateKey { principal: true, address: false, ..self.key };
        self.key(key)
    }

    /// One quota per client address (see [`RateKey::address`]).
    pub fn by_address(self) -> RateLimit {
        let key = RateKey { principal: false, address: true, ..self.key };
        self.key(key)
    }

    /// One quota per tool (added to the other parts of the key).
    pub fn by_tool(self) -> RateLimit {
        let key = RateKey { tool: true, ..self.key };
        self.key(key)
    }

    /// The most keys held (default 100,000; at least 1); see the type's memory note.
    pub fn max_keys(mut self, max: usize) -> RateLimit {
        self.max_keys = max.max(1);
        self
    }

    /// The rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Keys held now (for metrics and tests).
    pub fn keys(&self) -> usize {
        self.store.len()
    }

    /// Whether a call of `method` to `name` is counted by this limit.
    pub fn counts(&self, method: &str, name: Option<&str>) -> bool {
        self.methods.contains(method) && self.tool.as_deref().is_none_or(|t| name == Some(t))
    }

    /// Counts one call of `name` (the tool, prompt or URI; `None` for methods without one) by
    /// the caller of `ctx`, whatever the method: the check a typed filter makes,
    /// `limit.check(&req.ctx, Some(&req.params.name))?`.
    ///
    /// Errors: the `-32600` `rate_limited` refusal (see the type) when the key's quota is spent.
    pub fn check(&self, ctx: &RequestContext, name: Option<&str>) -> Result<(), McpError> {
        let key = self.sweep(&self.key_of(ctx, name));
        match self.limiter.check_key(&key) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.limiter_clock_now());
                Err(self.refusal(ctx.method(), name, wait))
            }
        }
    }

    fn limiter_clock_now(&self) -> <DefaultClock as Clock>::Instant {
        DefaultClock::default().now()
    }

    /// The key of a call: a missing part (anonymous, no address) is a key of its own.
    fn key_of(&self, ctx: &RequestContext, name: Option<&str>) -> Key {
        let principal = ctx.principal().map(|p| p.id.clone());
        // The caller: the principal, or the address when there is none.
        let address = if self.key.address && !(self.key.principal && principal.is_some()) {
            ctx.connection().and_then(|c| c.peer()).map(|a| network(a.ip()))
        } else {
            None
        };
        Key::Of {
            principal: principal.filter(|_| self.key.principal),
            address,
            tool: name.filter(|_| self.key.tool).map(str::to_owned),
        }
    }

    /// Drops keys that are as good as new every [`SWEEP_EVERY`] calls, and when the store is
    /// full; then turns `key` into the overflow key if it is new and there is still no room.
    fn sweep(&self, key: &Key) -> Key {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let full = self.store.len() >= self.max_keys;
        // Full, a sweep every 64 calls: each one walks the whole store.
        if n % SWEEP_EVERY == SWEEP_EVERY - 1 || (full && n.is_multiple_of(64)) {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        if full && self.store.len() >= self.max_keys && !self.store.lock().contains_key(key) {
            return Key::Overflow;
        }
        key.clone()
    }

    fn refusal(&self, method: &str, name: Option<&str>, wait: Duration) -> McpError {
        let ms = millis_up(wait);
        let per = match (self.key.principal, self.key.address, self.key.tool) {
            (false, false, false) => "for this server",
            (true, true, _) => "per caller",
            (true, false, _) => "per principal",
            (false, true, _) => "per client address",
            (false, false, true) => "per tool",
        };
        McpError::invalid_request(format!(
            "rate limited: {} is limited to {} {per}; retry in {ms} ms",
            describe(method, name),
            self.rate
        ))
        .with_data(serde_json::json!({ "reason": RATE_LIMITED_REASON, "retryAfterMs": ms }))
    }
}

/// Milliseconds, rounded up, for `data.retryAfterMs` (never 0: a client told to retry in 0 ms
/// retries at once and is refused again).
fn millis_up(d: std::time::Duration) -> u64 {
    let ms = d.as_millis() + u128::from(!d.subsec_nanos().is_multiple_of(1_000_000));
    u64::try_from(ms).unwrap_or(u64::MAX).max(1)
}

/// The part of an address one client holds: the address itself for IPv4, the /64 network for
/// IPv6 (a host is routinely given a whole /64, and rotating within it is free).
fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(bits.into())
            }
        },
        v4 => v4,
    }
}

impl RawFilter for RateLimit {
    fn filter(&self, req: RawRequest, next: RawNext) -> BoxFuture<RawResponse> {
        let name = primitive(&req);
        if self.counts(req.ctx.method(), name)
            && let Err(refused) = self.check(&req.ctx, name)
        {
            return Box::pin(std::future::ready(Err(refused)));
        }
        Box::pin(next.run(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_from_their_declarations() {
        assert_eq!("10/min".parse::<Rate>().map(|r| (r.count(), r.period())), Ok((10, Duration::from_secs(60))));
        assert_eq!("5 / s".parse::<Rate>().map(|r| r.period()), Ok(Duration::from_secs(1)));
        assert_eq!("1000/hour".parse::<Rate>().map(|r| r.to_string()), Ok("1000/hour".to_owned()));
        for bad in ["", "10", "ten/min", "10/fortnight", "0/min", "-1/s"] {
            let err = bad.parse::<Rate>().expect_err(bad);
            assert!(err.to_string().starts_with("bad rate"), "{bad}: {err}");
        }
    }

    #[test]
    fn an_ipv6_client_is_keyed_by_its_network() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().expect("ip");
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().expect("ip");
        let other: IpAddr = "2001:db8:1:3::1".parse().expect("ip");
        assert_eq!(network(a), network(b));
        assert_ne!(network(a), network(other));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().expect("ip");
        assert_eq!(network(mapped), "192.0.2.7".parse::<IpAddr>().expect("ip"));
    }

    #[test]
    fn the_store_stays_bounded_and_overflow_shares_one_quota() {
        let limit = RateLimit::new(Rate::per_minute(1)).max_keys(4);
        for i in 0..100u32 {
            let key = Key::Of { principal: Some(format!("p{i}")), address: None, tool: None };
            let key = limit.sweep(&key);
            let _ = limit.limiter.check_key(&key);
        }
        // Four real keys and the overflow key at most.
        assert!(limit.keys() <= 5, "{} keys", limit.keys());
        assert!(limit.store.lock().contains_key(&Key::Overflow));
    }
}
