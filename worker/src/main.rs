//! The background process: runs until SIGTERM. Today it delivers queued mail; the job queues,
//! cron schedule and sweeper are wired here as they land.

use anyhow::Context as _;
use secrecy::ExposeSecret as _;
use std::time::Duration;

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
    let mailer = jobs::mail::Mailer::new(
        config.smtp_url.as_ref().map(|s| s.expose_secret()),
        &config.mail_from,
        config.mail_dir.clone(),
    )?;
    tracing::info!("worker started");
    let shutdown = worker::shutdown_signal();
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            _ = tick.tick() => {
                match jobs::mail::deliver_due(&db, &mailer, 50).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(sent = n, "mail delivered"),
                    Err(e) => tracing::warn!(error = %e, "mail delivery pass failed"),
                }
            }
        }
    }
    db.close().await;
    tracing::info!("worker stopped");
    Ok(())
}
