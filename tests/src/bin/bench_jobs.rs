//! End-to-end job throughput: `POST /api/v1/sync` (which records an `ingest` job and pushes it)
//! to the job row completed by `worker` processes, with 1, 2 and 4 worker processes; the pick-up
//! latency (push to claim) at a steady low rate; and, in the same run, the rate of a no-op
//! apalis-redis job, the ceiling the queue itself sets.
//!
//! `cargo build --release --workspace --bins && target/release/bench_jobs --jobs 3000`

use apalis::prelude::*;
use clap::Parser;
use e2e::{Server, WorkerProcess, World};
use futures::StreamExt;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Syncs (ingest jobs) pushed per throughput run.
    #[arg(long, default_value_t = 3000)]
    jobs: usize,
    /// Worker process counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    workers: Vec<usize>,
    /// No-op apalis jobs for the baseline.
    #[arg(long, default_value_t = 20_000)]
    noop_jobs: usize,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

async fn setup(companies: usize) -> anyhow::Result<(World, Server, Vec<String>)> {
    let world = World::new().await;
    let server = Server::start(&world, &[("DATABASE_MAX_CONNECTIONS", "16")]).await;
    let mut keys = Vec::new();
    for i in 0..companies {
        let c = jobs::tenancy::create_company(
            &server.state.db,
            &server.state.hasher,
            jobs::tenancy::NewCompany {
                name: &format!("Bench {i}"),
                email: &format!("jobs{i}-{}@example.com", uuid::Uuid::new_v4().simple()),
                password: None,
                trial_days: 14,
            },
        )
        .await?;
        keys.push(c.api_key);
    }
    Ok((world, server, keys))
}

fn body(n: usize, companies: usize) -> Value {
    let m = n / companies;
    let date = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap()
        + chrono::Duration::days((m / 10) as i64);
    json!({
        "facility": { "name": format!("Facility {}", m % 10) },
        "date": date.to_string(),
        "occupancy_pct": 50 + (n % 45),
        "unit_types": [{ "size": "10x10", "street_rate": 120, "total_units": 50, "occupied_units": 40 }],
    })
}

async fn push_all(
    server: &Server,
    keys: &[String],
    range: std::ops::Range<usize>,
    concurrency: usize,
) -> usize {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{}/api/v1/sync", server.base);
    futures::stream::iter(range)
        .map(|n| {
            let req = http
                .post(&url)
                .bearer_auth(&keys[n % keys.len()])
                .json(&body(n, keys.len()));
            async move {
                req.send()
                    .await
                    .map(|r| r.status().is_success())
                    .unwrap_or(false)
            }
        })
        .buffer_unordered(concurrency)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await
}

async fn open_jobs(db: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM job_runs WHERE status IN ('queued', 'running')")
        .fetch_one(db)
        .await
        .unwrap()
}

async fn throughput(args: &Args, workers: usize) -> anyhow::Result<Value> {
    let companies = 200;
    let (world, server, keys) = setup(companies).await?;
    let procs: Vec<WorkerProcess> = (0..workers)
        .map(|_| {
            WorkerProcess::start(
                &world,
                &[
                    ("WORKER_CONCURRENCY", "8"),
                    ("JOB_LEASE_SECS", "60"),
                    ("JOB_REPUSH_AFTER_MS", "5000"),
                    ("RUST_LOG", "warn"),
                ],
            )
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await; // let the workers register
    let start = Instant::now();
    let pushed = push_all(&server, &keys, 0..args.jobs, 32).await;
    let push_secs = start.elapsed().as_secs_f64();
    while open_jobs(&world.db).await > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = start.elapsed().as_secs_f64();
    let (ingest, pricing, failed): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE kind = 'ingest' AND status = 'succeeded'),
                count(*) FILTER (WHERE kind = 'pricing_run' AND status = 'succeeded'),
                count(*) FILTER (WHERE status = 'failed') FROM job_runs",
    )
    .fetch_one(&world.db)
    .await?;
    // Pick-up latency at a steady 40 jobs/s, well under capacity.
    let base = args.jobs;
    let paced = 200;
    for i in 0..paced {
        push_all(&server, &keys, base + i..base + i + 1, 1).await;
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    while open_jobs(&world.db).await > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut pickup: Vec<f64> = sqlx::query_scalar(
        "SELECT (extract(epoch FROM claimed_at - created_at) * 1000)::float8 FROM job_runs
         WHERE kind = 'ingest' ORDER BY created_at DESC LIMIT $1",
    )
    .bind(paced as i64)
    .fetch_all(&world.db)
    .await?;
    pickup.sort_by(f64::total_cmp);
    drop(procs);
    server.shutdown().await;
    Ok(json!({
        "workers": workers, "syncs_pushed": pushed, "push_seconds": (push_secs * 100.0).round() / 100.0,
        "seconds_to_drain": (secs * 100.0).round() / 100.0,
        "ingest_jobs": ingest, "pricing_jobs": pricing, "failed": failed,
        "jobs_per_second": ((ingest + pricing) as f64 / secs).round(),
        "ingest_per_second": (ingest as f64 / secs).round(),
        "pickup_ms_p50": (percentile(&pickup, 0.5) * 10.0).round() / 10.0,
        "pickup_ms_p99": (percentile(&pickup, 0.99) * 10.0).round() / 10.0,
    }))
}

#[derive(Clone)]
struct Counter(Arc<AtomicU64>);

async fn noop(_: jobs::queue::JobRef, c: Data<Counter>) -> Result<(), BoxDynError> {
    c.0 .0.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// The rate apalis-redis itself sustains with a handler that does nothing (one worker,
/// concurrency 8, in this process).
async fn noop_rate(n: usize) -> anyhow::Result<Value> {
    let world = World::new().await;
    let conn = apalis_redis::connect(e2e::redis_url()).await?;
    let queues = jobs::queue::Queues::new(conn, &world.redis_prefix, Duration::from_secs(5));
    let ids: Vec<uuid::Uuid> = (0..n).map(|_| uuid::Uuid::new_v4()).collect();
    let counter = Counter(Arc::new(AtomicU64::new(0)));
    let storage = queues.storage(jobs::queue::Kind::PricingRun);
    let worker = WorkerBuilder::new(format!("noop-{}", uuid::Uuid::new_v4().simple()))
        .backend(storage)
        .data(counter.clone())
        .concurrency(8)
        .parallelize(tokio::spawn)
        .build(noop);
    let measure = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let start = Instant::now();
        queues.push(jobs::queue::Kind::PricingRun, &ids).await?;
        while counter.0.load(Ordering::Relaxed) < n as u64 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        anyhow::Ok(start.elapsed().as_secs_f64())
    };
    let secs = tokio::select! {
        r = worker.run() => anyhow::bail!("no-op worker stopped: {r:?}"),
        secs = measure => secs?,
    };
    Ok(
        json!({ "noop_jobs": n, "seconds": (secs * 100.0).round() / 100.0, "per_second": (n as f64 / secs).round() }),
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    api::telemetry::init(jobs::config::LogFormat::Json);
    let mut runs = Vec::new();
    for &w in &args.workers {
        let r = throughput(&args, w).await?;
        eprintln!("{r}");
        runs.push(r);
    }
    let baseline = noop_rate(args.noop_jobs).await?;
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({ "runs": runs, "noop_apalis_baseline": baseline }))?
    );
    Ok(())
}
