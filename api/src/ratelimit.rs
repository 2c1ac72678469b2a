//! Per-company rate limits shared by every api process: GCRA (generic cell rate algorithm) in
//! one Redis script, with the clock taken from Redis `TIME` so api hosts with skewed clocks
//! agree. A company may spend its whole per-minute budget at once; it then refills smoothly
//! (one request every 60/limit seconds), so there is no window edge at which twice the budget
//! can pass. The same script counts the company's API calls for the month.

use redis::aio::ConnectionManager;
use redis::Script;
use std::sync::{Arc, LazyLock};
use uuid::Uuid;

static GCRA: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = period / limit
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - period
if allow_at > now then
  return {0, 0, math.ceil(allow_at - now), math.ceil(tat - now)}
end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 1000)
redis.call('HINCRBY', KEYS[2], 'api_calls', 1)
redis.call('EXPIRE', KEYS[2], 3456000)
return {1, math.floor((period - (new_tat - now)) / interval + 0.000001), 0, math.ceil(new_tat - now)}
",
    )
});

/// Which budget a request draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bucket {
    General,
    Sync,
}

#[derive(Clone, Copy, Debug)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u64,
    /// Milliseconds until a denied request may be retried.
    pub retry_after_ms: u64,
    /// Milliseconds until the budget is full again.
    pub reset_ms: u64,
}

#[derive(Clone)]
pub struct RateLimiter {
    redis: ConnectionManager,
    prefix: Arc<str>,
    general_per_minute: u32,
    sync_per_minute: u32,
}

impl RateLimiter {
    pub fn new(
        redis: ConnectionManager,
        prefix: &str,
        general_per_minute: u32,
        sync_per_minute: u32,
    ) -> Self {
        Self {
            redis,
            prefix: prefix.into(),
            general_per_minute,
            sync_per_minute,
        }
    }

    /// Key of the monthly usage counters of a company (`month` as `YYYYMM`).
    pub fn usage_key(prefix: &str, company_id: Uuid, month: &str) -> String {
        format!("{prefix}:usage:{company_id}:{month}")
    }

    pub async fn check(
        &self,
        company_id: Uuid,
        bucket: Bucket,
        month: &str,
    ) -> redis::RedisResult<Decision> {
        let (name, limit) = match bucket {
            Bucket::General => ("general", self.general_per_minute),
            Bucket::Sync => ("sync", self.sync_per_minute),
        };
        let key = format!("{}:rl:{company_id}:{name}", self.prefix);
        let usage = Self::usage_key(&self.prefix, company_id, month);
        let (allowed, remaining, retry_after_ms, reset_ms): (i64, i64, i64, i64) = GCRA
            .key(key)
            .key(usage)
            .arg(limit)
            .arg(60_000)
            .invoke_async(&mut self.redis.clone())
            .await?;
        let non_neg = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(Decision {
            allowed: allowed == 1,
            limit,
            remaining: non_neg(remaining),
            retry_after_ms: non_neg(retry_after_ms),
            reset_ms: non_neg(reset_ms),
        })
    }
}

/// API calls counted this month for a company (0 when Redis has none).
pub async fn api_calls_this_month(
    redis: &ConnectionManager,
    prefix: &str,
    company_id: Uuid,
    month: &str,
) -> redis::RedisResult<u64> {
    let n: Option<u64> = redis::cmd("HGET")
        .arg(RateLimiter::usage_key(prefix, company_id, month))
        .arg("api_calls")
        .query_async(&mut redis.clone())
        .await?;
    Ok(n.unwrap_or(0))
}

/// Counts an event in a fixed window of `window_secs` that opens with its first event; returns
/// the count including this one. For silent limits where a plain counter is enough.
pub async fn count_in_window(
    redis: &ConnectionManager,
    key: &str,
    window_secs: u64,
) -> redis::RedisResult<u64> {
    let (count,): (u64,) = redis::pipe()
        .cmd("INCR")
        .arg(key)
        .cmd("EXPIRE")
        .arg(key)
        .arg(window_secs)
        .arg("NX")
        .ignore()
        .query_async(&mut redis.clone())
        .await?;
    Ok(count)
}
