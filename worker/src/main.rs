//! The background process. It runs until SIGTERM; the job queues, cron schedule and sweeper
//! are wired here as they land.

use anyhow::Context as _;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let config = jobs::config::Config::from_env()?;
    worker::telemetry(config.log_format);
    let db = jobs::db::pool(&config.database_url, config.database_max_connections)?;
    sqlx::query("SELECT 1")
        .execute(&db)
        .await
        .context("PostgreSQL is not reachable")?;
    tracing::info!("worker started");
    worker::shutdown_signal().await;
    db.close().await;
    tracing::info!("worker stopped");
    Ok(())
}
