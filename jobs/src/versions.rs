//! The oldest PostgreSQL and Redis this service supports (PostgreSQL 14, Redis 6.2), checked
//! when a process starts so an operator meets one clear message instead of a statement failing
//! later. Older servers are neither tested nor supported; commands newer than 6.2 (such as
//! `EXPIRE ... NX`, Redis 7) are not used.

use anyhow::{bail, Context};

/// PostgreSQL 14.0 as `server_version_num`.
pub const MIN_POSTGRES: i64 = 140_000;
/// Redis 6.2.0.
pub const MIN_REDIS: (u32, u32, u32) = (6, 2, 0);

/// Refuses a PostgreSQL older than [`MIN_POSTGRES`]; returns its version number.
pub async fn check_postgres(pool: &sqlx::PgPool) -> anyhow::Result<i64> {
    let num: String = sqlx::query_scalar("SHOW server_version_num")
        .fetch_one(pool)
        .await
        .context("PostgreSQL is not reachable")?;
    let num: i64 = num
        .trim()
        .parse()
        .with_context(|| format!("PostgreSQL reported an unreadable version '{num}'"))?;
    postgres_supported(num)?;
    Ok(num)
}

pub fn postgres_supported(server_version_num: i64) -> anyhow::Result<()> {
    if server_version_num < MIN_POSTGRES {
        bail!(
            "PostgreSQL {}.{} is too old: this service needs PostgreSQL 14 or later",
            server_version_num / 10_000,
            server_version_num % 10_000 / 100
        );
    }
    Ok(())
}

/// Refuses a Redis older than [`MIN_REDIS`]; returns its version.
pub async fn check_redis<C: redis::aio::ConnectionLike>(
    conn: &mut C,
) -> anyhow::Result<(u32, u32, u32)> {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(conn)
        .await
        .context("Redis is not reachable")?;
    let version = redis_version(&info).context("Redis did not report its version")?;
    if version < MIN_REDIS {
        bail!(
            "Redis {}.{}.{} is too old: this service needs Redis 6.2 or later",
            version.0,
            version.1,
            version.2
        );
    }
    Ok(version)
}

/// The `redis_version` line of `INFO server`.
pub fn redis_version(info: &str) -> Option<(u32, u32, u32)> {
    let v = info
        .lines()
        .find_map(|l| l.trim().strip_prefix("redis_version:"))?;
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_14_and_later_are_supported() {
        assert!(postgres_supported(140_000).is_ok());
        assert!(postgres_supported(150_019).is_ok());
        let old = postgres_supported(130_012).unwrap_err().to_string();
        assert_eq!(
            old,
            "PostgreSQL 13.0 is too old: this service needs PostgreSQL 14 or later"
        );
    }

    #[test]
    fn redis_version_is_read_from_info() {
        let info = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n";
        assert_eq!(redis_version(info), Some((7, 0, 15)));
        assert_eq!(redis_version("redis_version:6.2\r\n"), Some((6, 2, 0)));
        assert!(redis_version("redis_version:6.0.16").unwrap() < MIN_REDIS);
        assert!(redis_version("redis_version:6.2.0").unwrap() >= MIN_REDIS);
        assert_eq!(redis_version("# Server\r\n"), None);
    }
}
