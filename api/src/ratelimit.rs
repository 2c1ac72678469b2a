//! Per-company rate limits shared by every api process: a sliding-window log in one Redis
//! script, with the clock taken from Redis `TIME` so api hosts with skewed clocks agree.
//!
//! Semantics: "120 per minute" means at most 120 requests in ANY rolling 60 seconds. Each
//! allowed request is kept (as its time) in a sorted set for 60 s; a request passes while fewer
//! than `limit` are kept. A company may spend its whole budget at once; each request then frees
//! its slot exactly 60 s after it was made. (A GCRA with the whole budget as burst lets the
//! burst plus one request per 60/limit seconds through, about 1.5 times the budget in 32 s.)
//! The same script counts the company's API calls for the month (`jobs::counters` reads them).

use redis::aio::ConnectionManager;
use redis::Script;
use std::sync::{Arc, LazyLock};
use uuid::Uuid;

static SLIDING_WINDOW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  local newest = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
  return {0, 0, oldest + period - now, newest + period - now}
end
local calls = redis.call('HINCRBY', KEYS[2], 'api_calls', 1)
redis.call('EXPIRE', KEYS[2], 3456000)
redis.call('ZADD', KEYS[1], now, now .. ':' .. calls)
redis.call('PEXPIRE', KEYS[1], period + 1000)
return {1, limit - count - 1, 0, period}
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
    /// Milliseconds until the budget is full again (every kept request has left the window).
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
        let usage = jobs::counters::usage_key(&self.prefix, company_id, month);
        let (allowed, remaining, retry_after_ms, reset_ms): (i64, i64, i64, i64) = SLIDING_WINDOW
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
