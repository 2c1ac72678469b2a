//! Load benchmark of `POST /api/v1/sync` against the real server, and in the same run the rate
//! at which PostgreSQL alone executes the same writes (the ingest transaction called directly).
//!
//! `cargo run --release -p e2e --bin bench_sync -- --seconds 20 --concurrency 32 --companies 300`
//!
//! The rate limits stay at their production values; the load is spread over many companies so
//! that they do not cap it. Each request carries a realistic payload (20 unit types,
//! 15 competitor rates, 20 tenant-rent rows) for a new facility-day, so every request writes.

use clap::Parser;
use e2e::{payload, Server, World};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser, Clone)]
struct Args {
    /// Measured seconds per phase (after a warm-up of a quarter of that).
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Companies the load is spread over.
    #[arg(long, default_value_t = 300)]
    companies: usize,
    /// Database connections of the api (and of the direct loop).
    #[arg(long, default_value_t = 16)]
    db_connections: u32,
}

struct Phase {
    requests: u64,
    errors: u64,
    seconds: f64,
    hist: Histogram<u64>,
}

impl Phase {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
    fn ms(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1000.0
    }
    fn report(&self, name: &str) -> Value {
        json!({
            "phase": name, "requests": self.requests, "errors": self.errors,
            "seconds": (self.seconds * 100.0).round() / 100.0,
            "per_second": self.rate().round(),
            "p50_ms": self.ms(0.5), "p99_ms": self.ms(0.99), "max_ms": self.hist.max() as f64 / 1000.0,
        })
    }
}

/// The body for request number `n` of worker `w`: a fresh facility-day each time.
fn body(template: &Value, company: usize, n: u64) -> (usize, Value) {
    let mut b = template.clone();
    let facility = n % 5;
    let day = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap()
        + chrono::Duration::days((n / 5) as i64 % 1000);
    b["facility"]["name"] = json!(format!("Facility {facility}"));
    b["date"] = json!(day.format("%Y-%m-%d").to_string());
    (company, b)
}

/// Runs `op` from `concurrency` tasks for warm-up + `seconds`; counts only the measured part.
async fn run_phase<F, Fut>(args: &Args, op: F) -> Phase
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let op = Arc::new(op);
    let counter = Arc::new(AtomicU64::new(0));
    let warmup = Duration::from_secs(args.seconds.div_ceil(4));
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + Duration::from_secs(args.seconds);
    let tasks: Vec<_> = (0..args.concurrency)
        .map(|w| {
            let op = op.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut hist = Histogram::<u64>::new(3).unwrap();
                let (mut ok, mut err) = (0u64, 0u64);
                loop {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    let t = Instant::now();
                    if t >= end {
                        break;
                    }
                    let success = op(w, n).await;
                    if t >= measure_from {
                        hist.record(t.elapsed().as_micros() as u64).unwrap();
                        if success {
                            ok += 1;
                        } else {
                            err += 1;
                        }
                    }
                }
                (hist, ok, err)
            })
        })
        .collect();
    let mut hist = Histogram::<u64>::new(3).unwrap();
    let (mut requests, mut errors) = (0, 0);
    for t in tasks {
        let (h, ok, err) = t.await.unwrap();
        hist.add(h).unwrap();
        requests += ok;
        errors += err;
    }
    Phase {
        requests,
        errors,
        seconds: args.seconds as f64,
        hist,
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Request logs are written as in production (send stderr to /dev/null when running).
    api::telemetry::init(jobs::config::LogFormat::Json);
    let world = World::new().await;
    let conns = args.db_connections.to_string();
    let server = Server::start(
        &world,
        &[
            ("RATE_LIMIT_PER_MINUTE", "120"),
            ("RATE_LIMIT_SYNC_PER_MINUTE", "60"),
            ("DATABASE_MAX_CONNECTIONS", conns.as_str()),
            ("LOG_FORMAT", "json"),
        ],
    )
    .await;
    let state = server.state.clone();
    let mut tenants = Vec::new();
    for i in 0..args.companies {
        let c = jobs::tenancy::create_company(
            &state.db,
            &state.hasher,
            jobs::tenancy::NewCompany {
                name: &format!("Bench {i}"),
                email: &format!("bench{i}-{}@example.com", uuid::Uuid::new_v4().simple()),
                password: None,
                trial_days: 14,
            },
        )
        .await?;
        tenants.push(c);
    }
    let template = payload("Facility", "2024-01-01", 20, 15, 20);
    let payload_bytes = serde_json::to_vec(&template)?.len();
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(args.concurrency)
        .build()?;
    let url = format!("{}/api/v1/sync", server.base);

    // Phase 1: the endpoint. Request n goes to company n % companies.
    let keys: Arc<Vec<String>> = Arc::new(tenants.iter().map(|t| t.api_key.clone()).collect());
    let limited = Arc::new(AtomicU64::new(0));
    let (t1, k1, l1) = (template.clone(), keys.clone(), limited.clone());
    let endpoint = run_phase(&args, move |_, n| {
        let (company, b) = body(&t1, (n as usize) % k1.len(), n / k1.len() as u64);
        let req = http.post(&url).bearer_auth(&k1[company]).json(&b);
        let limited = l1.clone();
        async move {
            match req.send().await {
                Ok(r) if r.status().is_success() => true,
                Ok(r) => {
                    if r.status() == 429 {
                        limited.fetch_add(1, Ordering::Relaxed);
                    }
                    false
                }
                Err(_) => false,
            }
        }
    })
    .await;

    // Phase 2: the same writes straight into PostgreSQL (same pool size, same concurrency),
    // for companies and dates the first phase did not touch.
    let db = jobs::db::pool(
        &state.config.database_url,
        args.db_connections,
        jobs::db::API_APPLICATION,
    )?;
    let ids: Arc<Vec<domain::ids::CompanyId>> =
        Arc::new(tenants.iter().map(|t| t.company_id).collect());
    let t2 = template.clone();
    let direct = run_phase(&args, move |_, n| {
        let (company, mut b) = body(&t2, (n as usize) % ids.len(), n / ids.len() as u64);
        b["facility"]["name"] = json!(format!("Direct {}", n % 5));
        let raw = b.to_string();
        let db = db.clone();
        let company_id = ids[company];
        async move {
            let parsed = match domain::sync::parse(raw.as_bytes(), chrono::Utc::now().date_naive())
            {
                Ok(p) => p,
                Err(_) => return false,
            };
            // The push as the route makes it, its audit entry included.
            let who = jobs::door::Who::system(company_id, "benchmark");
            jobs::sync::ingest(
                &db,
                &who,
                &jobs::access::Scope::All,
                &parsed.payload,
                &raw,
                jobs::sync::Source::Push,
            )
            .await
            .is_ok()
        }
    })
    .await;

    let ratio = endpoint.rate() / direct.rate();
    let report = json!({
        "payload_bytes": payload_bytes,
        "concurrency": args.concurrency, "companies": args.companies, "db_connections": args.db_connections,
        "endpoint": endpoint.report("POST /api/v1/sync"),
        "endpoint_rate_limited": limited.load(Ordering::Relaxed),
        "postgres_direct": direct.report("ingest transaction, direct"),
        "endpoint_to_direct_ratio": (ratio * 100.0).round() / 100.0,
        "sync_records": sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sync_records").fetch_one(&state.db).await?,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    server.shutdown().await;
    Ok(())
}
