//! Counters kept in Redis that the api's limits and the use cases share: fixed-window counts for
//! silent per-client and per-account limits (password reset, login, sign-up), and the monthly
//! usage counters the api's rate limiter increments with each call. Each fails open at its
//! caller: an outage of Redis must not stop a reset, a login or a status page.

use redis::aio::ConnectionManager;
use uuid::Uuid;

/// Key of the monthly usage counters of a company (`month` as `YYYYMM`).
pub fn usage_key(prefix: &str, company_id: Uuid, month: &str) -> String {
    format!("{prefix}:usage:{company_id}:{month}")
}

/// API calls counted this month for a company (0 when Redis has none).
pub async fn api_calls_this_month(
    redis: &ConnectionManager,
    prefix: &str,
    company_id: Uuid,
    month: &str,
) -> redis::RedisResult<u64> {
    let n: Option<u64> = redis::cmd("HGET")
        .arg(usage_key(prefix, company_id, month))
        .arg("api_calls")
        .query_async(&mut redis.clone())
        .await?;
    Ok(n.unwrap_or(0))
}

/// Longest login address: no account has a longer one (`tenancy::check_email`), so a longer
/// one is a failed login without a lookup, and no key is made of it.
pub const MAX_LOGIN_EMAIL_BYTES: usize = 254;

/// The key of an address's failed dashboard logins (the address as the login form
/// lower-cases it); a password reset clears it. The address is hashed (SHA-256, hex): a key
/// has a fixed length whatever was typed, and Redis holds no addresses.
pub fn login_account_key(prefix: &str, email: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(email.trim().to_lowercase().as_bytes());
    format!("{prefix}:login:account:{}", hex::encode(digest))
}

/// Takes one back from a [`count_in_window`] count, while its window lasts (a key that has
/// expired is not brought back without an expiry).
pub async fn uncount(redis: &ConnectionManager, key: &str) -> redis::RedisResult<()> {
    let script = redis::Script::new(
        "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end return 0",
    );
    let _: i64 = script.key(key).invoke_async(&mut redis.clone()).await?;
    Ok(())
}

/// Drops a [`count_in_window`] count: its window closes now, and the next event opens a new one.
pub async fn clear(redis: &ConnectionManager, key: &str) -> redis::RedisResult<()> {
    redis::cmd("DEL")
        .arg(key)
        .query_async(&mut redis.clone())
        .await
}

/// Counts an event in a fixed window of `window_secs` that opens with its first event; returns
/// the count including this one. For silent limits where a plain counter is enough.
pub async fn count_in_window(
    redis: &ConnectionManager,
    key: &str,
    window_secs: u64,
) -> redis::RedisResult<u64> {
    // `SET ... NX EX` opens the window (INCR keeps its expiry); `EXPIRE ... NX` would need
    // Redis 7.
    let (count,): (u64,) = redis::pipe()
        .cmd("SET")
        .arg(key)
        .arg(0)
        .arg("EX")
        .arg(window_secs)
        .arg("NX")
        .ignore()
        .cmd("INCR")
        .arg(key)
        .query_async(&mut redis.clone())
        .await?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_login_key_is_the_hash_of_the_address_as_the_form_reads_it() {
        let key = super::login_account_key("ssp", " Ana@Example.com ");
        assert_eq!(key, super::login_account_key("ssp", "ana@example.com"));
        assert!(!key.contains("ana"), "{key}");
        let huge = "a".repeat(1_000_000);
        assert_eq!(
            super::login_account_key("ssp", &huge).len(),
            "ssp:login:account:".len() + 64
        );
    }
}
