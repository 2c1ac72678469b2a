//! Wiring of the background process: the apalis workers (one per queue), the sweeper, the cron
//! tick, mail delivery, retention and metrics. The logic lives in `jobs`; this crate only wires
//! and runs it, until SIGTERM drains it.

mod metrics;
mod poll;

use anyhow::Context as _;
use apalis::prelude::*;
use jobs::config::{Config, LogFormat};
use jobs::handlers::{self, JobContext};
use jobs::queue::{JobRef, Kind, Queues};
use secrecy::ExposeSecret as _;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

pub use metrics::Metrics;

/// The queues this version has handlers for.
pub const QUEUES: [Kind; 6] = [
    Kind::Ingest,
    Kind::PricingRun,
    Kind::CrmPull,
    Kind::WebhookDelivery,
    Kind::EcriRun,
    Kind::EcriFit,
];

pub fn telemetry(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,apalis=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Pretty => builder.compact().try_init(),
    };
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM handler can be installed");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
    tracing::info!("shutdown signal received; draining");
}

/// A name unique to this process start: apalis refuses a name seen within its heartbeat window
/// and recovers a dead worker's tasks by name.
fn instance_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".to_owned());
    let short = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}-{}-{}", std::process::id(), &short[..8])
}

#[derive(Clone)]
struct HandlerData {
    ctx: JobContext,
    metrics: Arc<Metrics>,
}

async fn handle(job: JobRef, data: Data<HandlerData>) -> Result<(), BoxDynError> {
    // Every outcome is recorded in PostgreSQL; apalis is never asked to retry (its own retry is
    // fixed at 25 attempts a few seconds apart, see docs/jobs.md). Errors reaching here are
    // infrastructure errors: the row stays as it was and the sweeper delivers it again.
    match handlers::execute(&data.ctx, job.id).await {
        Ok(outcome) => data.metrics.record(outcome),
        Err(e) => {
            data.metrics.record_error();
            tracing::warn!(job_id = %job.id, error = %e, "job could not be run; the sweeper will retry");
        }
    }
    Ok(())
}

pub async fn run(config: Config) -> anyhow::Result<()> {
    let settings = config.jobs.clone();
    let db = jobs::db::pool(
        &config.database_url,
        config.database_max_connections,
        jobs::db::WORKER_APPLICATION,
    )?;
    jobs::versions::check_postgres(&db).await?;
    let redis = apalis_redis::connect(config.redis_url.expose_secret())
        .await
        .context("Redis is not reachable")?;
    jobs::versions::check_redis(&mut redis.clone()).await?;
    let queues = Queues::new(redis, &config.redis_key_prefix, settings.heartbeat);
    let instance = instance_name();
    let crm = jobs::crm::CrmClient::new(&config.outbound, &config.crm)
        .context("the CRM client could not be built (OUTBOUND_CA_FILE)")?;
    let webhooks = jobs::webhooks::client::WebhookClient::new(&config.outbound, &config.webhooks)
        .context("the webhook client could not be built (OUTBOUND_CA_FILE)")?;
    let ctx = JobContext {
        db: db.clone(),
        queues: queues.clone(),
        worker: instance.clone().into(),
        settings: settings.clone(),
        master_key: config.master_key.clone(),
        crm,
        webhooks,
    };
    let metrics = Arc::new(Metrics::default());
    let mailer = jobs::mail::Mailer::new(
        config.smtp_url.as_ref().map(|s| s.expose_secret()),
        &config.mail_from,
        config.mail_dir.clone(),
    )?;
    let stop = CancellationToken::new();
    let mut background = tokio::task::JoinSet::new();
    background.spawn(sweeper(ctx.clone(), stop.clone()));
    background.spawn(cron_loop(ctx.clone(), stop.clone()));
    background.spawn(mail_loop(
        db.clone(),
        mailer,
        config.master_key.clone(),
        config.public_base_url.clone(),
        stop.clone(),
    ));
    if let Some(port) = settings.metrics_port {
        background.spawn(metrics::serve(
            port,
            metrics.clone(),
            ctx.clone(),
            stop.clone(),
        ));
    }

    let mut monitor = Monitor::new();
    for kind in QUEUES {
        let data = HandlerData {
            ctx: ctx.clone(),
            metrics: metrics.clone(),
        };
        let (queues, instance, poll, concurrency) = (
            queues.clone(),
            instance.clone(),
            settings.poll_interval,
            settings.concurrency,
        );
        monitor = monitor.register(move |restarts| {
            WorkerBuilder::new(format!("{}-{instance}-{restarts}", kind.as_str()))
                .backend(
                    queues
                        .storage(kind)
                        .poll_with_strategy(poll::TickEvery::new(poll)),
                )
                .data(data.clone())
                .concurrency(concurrency)
                .parallelize(tokio::spawn)
                .build(handle)
        });
    }
    // A worker whose Redis connection broke ends with an error: start it again, with a short
    // pause so an outage does not become a busy loop.
    let monitor = monitor.should_restart(|worker, error| {
        let pause = Duration::from_millis((100 * worker.restarts() as u64).min(2_000));
        tracing::warn!(
            worker = worker.name(),
            ?error,
            ?pause,
            "worker stopped with an error; restarting"
        );
        std::thread::sleep(pause);
        true
    });
    tracing::info!(instance, queues = ?QUEUES.map(Kind::as_str), concurrency = settings.concurrency, "worker started");
    let signal_stop = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        signal_stop.cancel();
    });
    let monitor_stop = stop.clone();
    let result = monitor
        .shutdown_timeout(settings.shutdown_timeout)
        .run_with_signal(async move {
            monitor_stop.cancelled().await;
            Ok(())
        })
        .await;
    stop.cancel();
    while background.join_next().await.is_some() {}
    db.close().await;
    tracing::info!("worker stopped");
    result.map_err(|e| anyhow::anyhow!("worker monitor: {e}"))
}

/// Re-pushes due, lost and stuck jobs from PostgreSQL (one replica at a time), trims finished
/// jobs, and vacuums finished task data in Redis.
async fn sweeper(ctx: JobContext, stop: CancellationToken) {
    let mut tick = tokio::time::interval(ctx.settings.sweep_interval);
    let mut last_trim = std::time::Instant::now() - Duration::from_secs(3600);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        match sweep_once(&ctx).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(pushed = n, "sweeper pushed jobs"),
            Err(e) => tracing::warn!(error = %e, "sweep failed"),
        }
        if last_trim.elapsed() >= Duration::from_secs(60) {
            last_trim = std::time::Instant::now();
            if let Err(e) = retention(&ctx).await {
                tracing::warn!(error = %e, "retention pass failed");
            }
        }
    }
}

/// One sweep: under a transaction-scoped advisory lock (skipped when another replica holds it).
pub async fn sweep_once(ctx: &JobContext) -> anyhow::Result<usize> {
    let Some(due) = jobs::runs::take_due(&ctx.db, ctx.settings.repush_after, 5_000).await? else {
        return Ok(0);
    };
    for kind in Kind::ALL {
        let ids: Vec<uuid::Uuid> = due
            .iter()
            .filter(|(_, k)| *k == kind)
            .map(|(id, _)| *id)
            .collect();
        ctx.queues.push(kind, &ids).await?;
    }
    Ok(due.len())
}

async fn retention(ctx: &JobContext) -> anyhow::Result<()> {
    let trimmed = jobs::runs::trim_finished(&ctx.db, ctx.settings.retention, 10_000).await?;
    if trimmed > 0 {
        tracing::info!(trimmed, "finished jobs trimmed");
    }
    let purged = jobs::mail::purge_finished(&ctx.db, ctx.settings.retention, 10_000).await?;
    let expired = jobs::password_reset::purge_expired(&ctx.db).await?
        + jobs::sign_up::purge_expired(&ctx.db).await?;
    let sessions = jobs::sessions::purge_ended(&ctx.db).await?;
    let audit = jobs::audit::purge_expired(&ctx.db, 10_000).await?;
    if audit > 0 {
        tracing::info!(
            audit,
            "audit log entries past their company's retention purged"
        );
    }
    if purged + expired + sessions > 0 {
        tracing::info!(
            purged,
            expired,
            sessions,
            "sent mail, expired reset and sign-up links and ended sessions purged"
        );
    }
    for kind in QUEUES {
        let removed = jobs::queue::vacuum(&ctx.queues, kind, ctx.settings.retention).await?;
        if removed > 0 {
            tracing::info!(
                queue = kind.as_str(),
                removed,
                "finished task data trimmed in Redis"
            );
        }
    }
    Ok(())
}

async fn cron_loop(ctx: JobContext, stop: CancellationToken) {
    let mut tick = tokio::time::interval(ctx.settings.cron_interval);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        match jobs::cron::tick(&ctx.db, chrono::Utc::now(), ctx.settings.ecri_nightly).await {
            Ok(created) => {
                for (kind, id) in created {
                    tracing::info!(job_id = %id, kind = kind.as_str(), "scheduled job");
                    if let Err(e) = ctx.queues.push(kind, &[id]).await {
                        tracing::warn!(error = %e, "push failed; the sweeper will push it");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cron tick failed"),
        }
    }
}

/// Turns recorded password-reset and sign-up requests into mails, then sends what is due.
async fn mail_loop(
    db: sqlx::PgPool,
    mailer: jobs::mail::Mailer,
    key: jobs::config::MasterKey,
    public_base_url: String,
    stop: CancellationToken,
) {
    let mut tick = tokio::time::interval(Duration::from_secs(2));
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        if let Err(e) =
            jobs::password_reset::process_requests(&db, &key, &public_base_url, 100).await
        {
            tracing::warn!(error = %e, "password reset pass failed");
        }
        if let Err(e) = jobs::sign_up::process_requests(&db, &key, &public_base_url, 100).await {
            tracing::warn!(error = %e, "sign-up pass failed");
        }
        match jobs::mail::deliver_due(&db, &mailer, &key, 50).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(sent = n, "mail delivered"),
            Err(e) => tracing::warn!(error = %e, "mail delivery pass failed"),
        }
    }
}
