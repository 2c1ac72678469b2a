//! PostgreSQL connection pool and migrations.

use secrecy::ExposeSecret;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use std::str::FromStr;
use std::time::Duration;

/// The migrations in `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// `application_name` of the api process's connections, as `pg_stat_activity` shows them.
pub const API_APPLICATION: &str = "self-storage-pricing-api";
/// `application_name` of a worker process's connections.
pub const WORKER_APPLICATION: &str = "self-storage-pricing-worker";
/// `application_name` of the one-shot admin commands (`api migrate`, `api admin ...`).
pub const ADMIN_APPLICATION: &str = "self-storage-pricing-admin";

/// Opens a pool; connections are made lazily so a process starts even while the database is
/// briefly away (readiness reports it). `application` names the process in `pg_stat_activity`.
pub fn pool(
    url: &secrecy::SecretString,
    max_connections: u32,
    application: &str,
) -> Result<PgPool, sqlx::Error> {
    let options = PgConnectOptions::from_str(url.expose_secret())?.application_name(application);
    Ok(PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(options))
}

/// Applied versions whose file was edited after landing, with the checksum (SHA-384) of the
/// edited bytes. The file is back to the bytes that landed first; a database that applied the
/// edited copy is told the restored checksum so `migrate` runs again. Only edits that changed
/// nothing but comments may be listed here.
const EDITED_AFTER_LANDING: &[(i64, &str)] = &[(
    // 0007: a comment was added to the backfill after it landed.
    20261122000007,
    "8a832f6b52048dc95bb89608c16618aabda297f0fee8a14ccd3dc1d6f316d20d01282d0222033287aaf2bf15fbb24f8f",
)];

pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    repair_edited_checksums(pool).await?;
    MIGRATOR.run(pool).await
}

/// Rewrites the stored checksum of a listed comment-only edit to the restored file's checksum.
/// sqlx's own table is not part of the schema the query macros check against, so these
/// statements are checked at run time.
async fn repair_edited_checksums(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    let exists: Option<String> = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text")
        .fetch_one(pool)
        .await?;
    if exists.is_none() {
        return Ok(());
    }
    for (version, edited) in EDITED_AFTER_LANDING {
        let Some(current) = MIGRATOR.iter().find(|m| m.version == *version) else {
            continue;
        };
        let edited = hex::decode(edited).expect("a listed checksum is hex");
        let fixed = sqlx::query(
            "UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2 AND checksum = $3",
        )
        .bind(current.checksum.as_ref())
        .bind(version)
        .bind(&edited)
        .execute(pool)
        .await?
        .rows_affected();
        if fixed > 0 {
            tracing::warn!(
                version,
                "stored checksum of a migration edited after landing repaired"
            );
        }
    }
    Ok(())
}
