//! Webhook delivery throughput and latency: deliveries recorded the way a pricing run records
//! them (`jobs::webhooks::record_recommendations_ready` in a transaction, pushed after commit),
//! delivered by `worker` processes over HTTPS to a local receiver (the test receiver: TLS with a
//! certificate authority made at start, answering 200 at once).
//!
//! For each worker count: the deliveries per second to drain a burst, then the time from an
//! event being recorded (the delivery row's `created_at`) to the receiver's 200 (the attempt's
//! `finished_at`) at a steady pace well under capacity.
//!
//! `cargo build --release --workspace --bins && target/release/bench_webhooks --deliveries 2000`

use clap::Parser;
use e2e::receiver::{Receiver, Reply, TestCa};
use e2e::{Server, WorkerProcess, World};
use jobs::webhooks::RecommendationsReady;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    /// Deliveries recorded per throughput run.
    #[arg(long, default_value_t = 2000)]
    deliveries: usize,
    /// Worker process counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    workers: Vec<usize>,
    /// Events recorded one by one for the latency figures.
    #[arg(long, default_value_t = 200)]
    paced: usize,
    /// Pause between paced events, in milliseconds.
    #[arg(long, default_value_t = 50)]
    pace_ms: u64,
    /// Jobs at once per queue per worker process.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Records `n` events for `company`, each in its own transaction as a run would, and pushes
/// their jobs after commit; returns how many deliveries were recorded.
async fn record(server: &Server, company: Uuid, facility: Uuid, n: usize) -> anyhow::Result<usize> {
    let mut recorded = 0;
    for i in 0..n {
        let event = RecommendationsReady {
            company_id: company.into(),
            facility_id: facility.into(),
            facility_name: "Bench facility".to_owned(),
            recommendation_id: Uuid::now_v7(),
            generated_at: chrono::Utc::now(),
            per_size_count: (i % 12) as i32,
        };
        let jobs = jobs::seed::recommendations_ready(&server.state.db, &event).await?;
        recorded += jobs.ids(jobs::queue::Kind::WebhookDelivery).len();
        server.state.queues.push_jobs(&jobs).await;
    }
    Ok(recorded)
}

async fn open_deliveries(db: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM webhook_deliveries WHERE status IN ('queued', 'retrying')",
    )
    .fetch_one(db)
    .await
    .unwrap()
}

async fn run(args: &Args, workers: usize) -> anyhow::Result<Value> {
    let ca = TestCa::new();
    let receiver = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let env: Vec<(&str, String)> = vec![
        ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.1".to_owned()),
        ("OUTBOUND_CA_FILE", ca.pem_path().to_owned()),
        ("DATABASE_MAX_CONNECTIONS", "16".to_owned()),
    ];
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let world = World::new().await;
    let server = Server::start(&world, &env_ref).await;
    // Ten companies with one subscription each: each event is one delivery.
    let mut companies = Vec::new();
    for i in 0..10 {
        let c = jobs::tenancy::create_company(
            &server.state.db,
            &server.state.hasher,
            jobs::tenancy::NewCompany {
                name: &format!("Bench {i}"),
                email: &format!("hooks{i}-{}@example.com", Uuid::new_v4().simple()),
                password: None,
                trial_days: 14,
            },
        )
        .await?;
        jobs::webhooks::create(
            &server.state.db,
            &server.state.config.master_key,
            &server.state.config.outbound.private_targets,
            &jobs::door::Who::system(c.company_id, "benchmark"),
            jobs::webhooks::NewSubscription {
                url: receiver.url("/bench"),
                events: None,
            },
        )
        .await?
        .into_value();
        let facility: Uuid = sqlx::query_scalar(
            "INSERT INTO facilities (id, company_id, name) VALUES (gen_random_uuid(), $1, 'Bench facility') RETURNING id",
        )
        .bind(c.company_id.uuid())
        .fetch_one(&server.state.db)
        .await?;
        companies.push((c.company_id.uuid(), facility));
    }
    let concurrency = args.concurrency.to_string();
    let mut worker_env = env_ref.clone();
    worker_env.extend([
        ("WORKER_CONCURRENCY", concurrency.as_str()),
        ("JOB_LEASE_SECS", "60"),
        ("JOB_REPUSH_AFTER_MS", "5000"),
        ("RUST_LOG", "warn"),
        ("DATABASE_MAX_CONNECTIONS", "8"),
    ]);
    let procs: Vec<WorkerProcess> = (0..workers)
        .map(|_| WorkerProcess::start(&world, &worker_env))
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await; // let the workers register

    // Burst: every company records its share at once (one task per company).
    let per_company = args.deliveries / companies.len();
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    let server = std::sync::Arc::new(server);
    for &(company, facility) in &companies {
        let server = server.clone();
        tasks.spawn(async move { record(&server, company, facility, per_company).await });
    }
    let mut recorded = 0;
    while let Some(r) = tasks.join_next().await {
        recorded += r??;
    }
    let record_secs = start.elapsed().as_secs_f64();
    while open_deliveries(&world.db).await > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    let (complete, failed, attempts): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status = 'complete'), count(*) FILTER (WHERE status = 'failed'),
                coalesce(sum(attempts), 0)::int8 FROM webhook_deliveries",
    )
    .fetch_one(&world.db)
    .await?;

    // Latency at a steady pace: recorded to the receiver's 200.
    let before = Uuid::now_v7();
    for i in 0..args.paced {
        let (company, facility) = companies[i % companies.len()];
        record(&server, company, facility, 1).await?;
        tokio::time::sleep(Duration::from_millis(args.pace_ms)).await;
    }
    while open_deliveries(&world.db).await > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut latency: Vec<f64> = sqlx::query_scalar(
        "SELECT (extract(epoch FROM a.finished_at - d.created_at) * 1000)::float8
         FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
         WHERE d.id > $1 AND a.http_status = 200",
    )
    .bind(before)
    .fetch_all(&world.db)
    .await?;
    latency.sort_by(f64::total_cmp);
    drop(procs);
    let hits = receiver.count();
    Ok(json!({
        "workers": workers,
        "worker_concurrency": args.concurrency,
        "deliveries_recorded": recorded,
        "record_seconds": round1(record_secs),
        "seconds_to_drain": (secs * 100.0).round() / 100.0,
        "complete": complete, "failed": failed, "attempts": attempts,
        "deliveries_per_second": (complete as f64 / secs).round(),
        "paced_events": args.paced, "paced_measured": latency.len(),
        "recorded_to_200_ms_p50": round1(percentile(&latency, 0.5)),
        "recorded_to_200_ms_p99": round1(percentile(&latency, 0.99)),
        "recorded_to_200_ms_max": round1(percentile(&latency, 1.0)),
        "receiver_requests": hits,
    }))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    api::telemetry::init(jobs::config::LogFormat::Json);
    let mut runs = Vec::new();
    for &w in &args.workers {
        let r = run(&args, w).await?;
        eprintln!("{r}");
        runs.push(r);
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({ "runs": runs }))?
    );
    Ok(())
}
