//! Latency benchmark of the analytics endpoints on a large synthetic portfolio.
//!
//! `cargo run --release -p e2e --bin bench_analytics -- --facilities 1000 --days 730 --requests 200`
//!
//! Seeds (unless `--reuse`) one company with `facilities` x `days` of history through the bulk
//! generator (`jobs::seed::seed_bulk`) into the database `--database` (created and migrated if
//! missing; kept afterwards so a second run can `--reuse` it), starts the real api on it and
//! reads each endpoint `requests` times, one request at a time after a short warm-up, reporting
//! p50 / p99 / max per endpoint, the seeding time and the database size. Rate limits are raised
//! so they do not shape the run. Before the reads it does the nightly ECRI work in-process (one
//! fit, one stored run per facility), as the reads serve stored runs.

use clap::Parser;
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use std::time::Instant;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 1000)]
    facilities: u32,
    #[arg(long, default_value_t = 730)]
    days: u32,
    /// Measured requests per endpoint.
    #[arg(long, default_value_t = 200)]
    requests: u32,
    /// Database to seed and read (on the test PostgreSQL server).
    #[arg(long, default_value = "ssp_bench_analytics")]
    database: String,
    /// Use the company already seeded in `database` instead of seeding.
    #[arg(long)]
    reuse: bool,
    /// Facilities seeded at once (and ECRI runs computed at once).
    #[arg(long, default_value_t = 2)]
    parallel: usize,
}

/// The nightly ECRI work as the worker does it (one fit, then one stored run per facility),
/// in-process: its time and the per-run latencies.
async fn ecri_night(
    db: &sqlx::PgPool,
    company_id: uuid::Uuid,
    parallel: usize,
) -> anyhow::Result<Value> {
    let t = Instant::now();
    jobs::ecri::fit::fit_company(db, company_id.into()).await?;
    let fit_s = t.elapsed().as_secs_f64();
    let ids: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT id FROM facilities WHERE company_id = $1")
            .bind(company_id)
            .fetch_all(db)
            .await?;
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for id in ids {
        let permit = limit.clone().acquire_owned().await?;
        let db = db.clone();
        tasks.spawn(async move {
            let t = Instant::now();
            let f = jobs::ecri::facility(&db, company_id.into(), id.into()).await?;
            let mut tx = db.begin().await?;
            jobs::ecri::runs::store(
                &mut tx,
                company_id.into(),
                uuid::Uuid::now_v7(),
                jobs::ecri::runs::Trigger::Nightly,
                &f,
            )
            .await?;
            tx.commit().await?;
            drop(permit);
            anyhow::Ok(t.elapsed().as_micros() as u64)
        });
    }
    let mut hist = Histogram::<u64>::new(3)?;
    while let Some(done) = tasks.join_next().await {
        hist.record(done??)?;
    }
    let ms = |q: f64| (hist.value_at_quantile(q) as f64 / 10.0).round() / 100.0;
    Ok(json!({
        "fit_seconds": (fit_s * 100.0).round() / 100.0,
        "runs": hist.len(),
        "runs_seconds": (t.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        "run_p50_ms": ms(0.5), "run_p99_ms": ms(0.99),
    }))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let server_url = e2e::pg_server_url();
    let mut admin = PgConnection::connect(&format!("{server_url}/postgres")).await?;
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&args.database)
        .fetch_optional(&mut admin)
        .await?;
    if exists.is_none() {
        admin
            .execute(format!("CREATE DATABASE {}", args.database).as_str())
            .await?;
    }
    let prefix = format!("bench:{}", uuid::Uuid::new_v4().simple());
    let config = e2e::test_config(
        &args.database,
        &prefix,
        &[("DATABASE_MAX_CONNECTIONS", "8"), ("LOG_FORMAT", "json")],
    );
    let state = api::AppState::connect(config).await?;
    jobs::db::migrate(&state.db).await?;

    let (company_id, seed_report) = if args.reuse {
        let id: uuid::Uuid = sqlx::query_scalar(
            "SELECT company_id FROM facilities GROUP BY company_id ORDER BY count(*) DESC LIMIT 1",
        )
        .fetch_one(&state.db)
        .await?;
        (id, Value::Null)
    } else {
        let c = jobs::tenancy::create_company(
            &state.db,
            &state.hasher,
            jobs::tenancy::NewCompany {
                name: "Bench Storage",
                email: &format!("bench-{}@example.com", uuid::Uuid::new_v4().simple()),
                password: None,
                trial_days: 14,
            },
        )
        .await?;
        let t = Instant::now();
        let report = jobs::seed::seed_bulk(
            &state.db,
            c.company_id,
            args.facilities,
            args.days,
            chrono::Utc::now().date_naive(),
            args.parallel,
        )
        .await?;
        let seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        sqlx::query("VACUUM ANALYZE").execute(&state.db).await?;
        (
            c.company_id.uuid(),
            json!({ "records": report.records, "seconds": (seconds * 10.0).round() / 10.0,
                    "records_per_second": (report.records as f64 / seconds).round(),
                    "vacuum_analyze_seconds": (t.elapsed().as_secs_f64() * 10.0).round() / 10.0 }),
        )
    };
    let ecri = ecri_night(&state.db, company_id, args.parallel).await?;
    eprintln!("ecri night: {ecri}");
    let key = jobs::tenancy::create_api_key(
        &state.db,
        &state.hasher,
        &jobs::door::Who::system(company_id.into(), "benchmark"),
        "bench",
    )
    .await?
    .into_value();
    // One facility for the per-facility reads: one in lease-up when there is one.
    let facility: uuid::Uuid = sqlx::query_scalar(
        "SELECT id FROM facilities WHERE company_id = $1 ORDER BY mode = 'lease_up' DESC, name LIMIT 1",
    )
    .bind(company_id)
    .fetch_one(&state.db)
    .await?;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::server::serve(listener, state.clone(), async move {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::builder().no_proxy().build()?;
    let paths = [
        "/api/v1/analytics/portfolio".to_owned(),
        "/api/v1/analytics/revpas".to_owned(),
        format!("/api/v1/analytics/revpas?facility_id={facility}"),
        "/api/v1/analytics/seasonality".to_owned(),
        "/api/v1/analytics/seasonality?size=10x10".to_owned(),
        format!("/api/v1/analytics/seasonality?facility_id={facility}&size=10x10"),
        "/api/v1/analytics/leads?period=30d".to_owned(),
        "/api/v1/analytics/leads?period=90d".to_owned(),
        format!("/api/v1/analytics/leads?facility_id={facility}&period=90d"),
        "/api/v1/analytics/lease-up".to_owned(),
        format!("/api/v1/analytics/lease-up?facility_id={facility}"),
        "/api/v1/analytics/ecri".to_owned(),
        "/api/v1/analytics/ecri?limit=500".to_owned(),
        format!("/api/v1/analytics/ecri?facility_id={facility}"),
        format!("/api/v1/facilities/{facility}/ecri"),
        format!("/api/v1/facilities/{facility}/ecri?limit=100"),
    ];
    let mut results = Vec::new();
    for path in &paths {
        let url = format!("{base}{path}");
        let mut hist = Histogram::<u64>::new(3)?;
        let mut bytes = 0;
        let mut errors = 0;
        for i in 0..(args.requests + 5) {
            let t = Instant::now();
            let r = http.get(&url).bearer_auth(&key.api_key).send().await?;
            let ok = r.status().is_success();
            let body = r.bytes().await?;
            let us = t.elapsed().as_micros() as u64;
            if !ok {
                errors += 1;
            }
            if i >= 5 {
                hist.record(us)?;
                bytes = body.len();
            }
        }
        let ms = |q: f64| (hist.value_at_quantile(q) as f64 / 10.0).round() / 100.0;
        results.push(json!({
            "path": path.replace(&facility.to_string(), "{facility}"),
            "p50_ms": ms(0.5), "p99_ms": ms(0.99), "max_ms": (hist.max() as f64 / 10.0).round() / 100.0,
            "response_bytes": bytes, "errors": errors,
        }));
        eprintln!("{}", results.last().unwrap_or(&Value::Null));
    }
    let size: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
        .fetch_one(&state.db)
        .await?;
    let counts: (i64, i64, i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM facilities WHERE company_id = $1),
                (SELECT count(*) FROM sync_records WHERE company_id = $1),
                (SELECT count(*) FROM sync_unit_types),
                (SELECT count(*) FROM competitor_rates WHERE company_id = $1),
                (SELECT count(*) FROM facility_months WHERE company_id = $1)",
    )
    .bind(company_id)
    .fetch_one(&state.db)
    .await?;
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "seed": seed_report,
            "ecri_night": ecri,
            "database_bytes": size,
            "database_gib": ((size as f64 / 1024f64.powi(3)) * 100.0).round() / 100.0,
            "facilities": counts.0, "sync_records": counts.1, "sync_unit_types": counts.2,
            "competitor_rates": counts.3, "facility_months": counts.4,
            "requests_per_endpoint": args.requests,
            "endpoints": results,
        }))?
    );
    let _ = stop.send(());
    let _ = server.await;
    Ok(())
}
