//! PostgreSQL connection pool and migrations.

use secrecy::ExposeSecret;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use std::str::FromStr;
use std::time::Duration;

/// The migrations in `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Opens a pool; connections are made lazily so a process starts even while the database is
/// briefly away (readiness reports it).
pub fn pool(url: &secrecy::SecretString, max_connections: u32) -> Result<PgPool, sqlx::Error> {
    let options =
        PgConnectOptions::from_str(url.expose_secret())?.application_name("self-storage-pricing");
    Ok(PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(0)
        .acquire_timeout(Duration::from_secs(5))
        .connect_lazy_with(options))
}

pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    MIGRATOR.run(pool).await
}
