//! One night of a large operator, end to end, on one machine.
//!
//! `cargo build --release -p e2e -p worker --bin bench_night --bin worker`
//! `target/release/bench_night --facilities 300 --days 365 --workers 1,2,4`
//!
//! Seeds (unless `--reuse`) one company of `facilities` facilities with their rent rolls and
//! `days` of daily history (`jobs::seed::seed_bulk`) into `--database`, does a first ECRI night
//! in-process (one fit, one stored run per facility), then plays one night per entry of
//! `--workers`: every facility's sync of the next day through the real api (its full roll, about
//! `--changed-pct` of the tenants changed: rents raised, move-outs, move-ins), then as many real
//! `worker` processes drain what the syncs caused (ingest, pricing run, ECRI run, and the webhook
//! delivery each pricing run causes to the company's one subscription: a local HTTPS receiver
//! answering 200). It reports per night the time to push the syncs, the time to drain, each job
//! kind's p50 / p99 (claim to finish), the deliveries the receiver took, each worker's peak
//! memory (VmHWM), the database's growth, and the rows written per tenant changed (from
//! `pg_stat_user_tables`). `--big-facility N` then adds one facility of N
//! tenants (or several, comma-separated) and reports one worker's peak memory for its ECRI
//! run.

use clap::Parser;
use e2e::receiver::{Receiver, Reply, TestCa};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection, PgPool};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use uuid::Uuid;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 300)]
    facilities: u32,
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Worker processes of each night, comma-separated (empty: no night).
    #[arg(long, default_value = "1,2,4")]
    workers: String,
    /// Share (%) of each roll's tenants changed in a night.
    #[arg(long, default_value_t = 3.0)]
    changed_pct: f64,
    #[arg(long, default_value = "ssp_bench_night")]
    database: String,
    #[arg(long)]
    reuse: bool,
    /// Facilities seeded at once.
    #[arg(long, default_value_t = 2)]
    parallel: usize,
    /// Syncs sent at once.
    #[arg(long, default_value_t = 4)]
    clients: usize,
    /// Tenants of extra facilities (comma-separated) whose ECRI run's worker memory is measured,
    /// each drained by a worker of its own.
    #[arg(long, default_value = "")]
    big_facility: String,
}

fn round(x: f64, d: i32) -> f64 {
    let s = 10f64.powi(d);
    (x * s).round() / s
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let server_url = e2e::pg_server_url();
    let mut admin = PgConnection::connect(&format!("{server_url}/postgres")).await?;
    if !args.reuse {
        admin
            .execute(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", args.database).as_str())
            .await?;
        admin
            .execute(format!("CREATE DATABASE {}", args.database).as_str())
            .await?;
    }
    let prefix = format!("bench:{}", Uuid::new_v4().simple());
    // Webhooks go to a local HTTPS receiver, which the outbound guard lets through only here.
    let ca = TestCa::new();
    let receiver = Receiver::start(&ca, |_, _| Reply::status(200)).await;
    let outbound = Outbound {
        ca_file: ca.pem_path().to_owned(),
    };
    let config = e2e::test_config(
        &args.database,
        &prefix,
        &[
            ("DATABASE_MAX_CONNECTIONS", "16"),
            ("LOG_FORMAT", "json"),
            ("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.1"),
            ("OUTBOUND_CA_FILE", &outbound.ca_file),
        ],
    );
    let state = api::AppState::connect(config).await?;
    jobs::db::migrate(&state.db).await?;
    let db = state.db.clone();
    let (company_id, seed) = seed(&args, &state).await?;
    let key = jobs::tenancy::create_api_key(
        &db,
        &state.hasher,
        &jobs::door::Who::system(company_id.into(), "benchmark"),
        "bench",
    )
    .await?
    .into_value()
    .api_key;
    subscribe(&state, company_id, receiver.url("/night")).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::server::serve(listener, state.clone(), async move {
        let _ = stopped.await;
    }));
    let mut nights = Vec::new();
    for (i, w) in args
        .workers
        .split(',')
        .filter(|w| !w.trim().is_empty())
        .enumerate()
    {
        let workers: usize = w.trim().parse()?;
        let hits = receiver.count();
        let mut night = night(
            &args, &db, &base, &key, &prefix, &outbound, company_id, i, workers,
        )
        .await?;
        night["webhooks_received"] = json!(receiver.count() - hits);
        eprintln!("{night}");
        nights.push(night);
    }
    let mut big = Vec::new();
    for n in args
        .big_facility
        .split(',')
        .filter(|n| !n.trim().is_empty())
    {
        let n: usize = n.trim().parse()?;
        let one = big_facility(&args, &db, &base, &key, &prefix, &outbound, n).await?;
        eprintln!("{one}");
        big.push(one);
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "seed": seed, "nights": nights, "big_facility": big,
        }))?
    );
    let _ = stop.send(());
    let _ = server.await;
    Ok(())
}

/// What a worker needs to reach the local receiver.
struct Outbound {
    ca_file: String,
}

/// The company's one webhook subscription, to `url` (one left by an earlier run on a reused
/// database pointed at a receiver that is gone, so it is replaced).
async fn subscribe(state: &api::AppState, company_id: Uuid, url: String) -> anyhow::Result<()> {
    let db = &state.db;
    sqlx::query("DELETE FROM webhook_subscriptions WHERE company_id = $1")
        .bind(company_id)
        .execute(db)
        .await?;
    jobs::webhooks::create(
        db,
        &state.config.master_key,
        &state.config.outbound.private_targets,
        &jobs::door::Who::system(company_id.into(), "benchmark"),
        jobs::webhooks::NewSubscription { url, events: None },
    )
    .await?
    .into_value();
    Ok(())
}

/// The company, seeded with its rolls and a first ECRI night (or found, with `--reuse`).
async fn seed(args: &Args, state: &api::AppState) -> anyhow::Result<(Uuid, Value)> {
    let db = &state.db;
    if args.reuse {
        let id: Uuid = sqlx::query_scalar(
            "SELECT company_id FROM facilities GROUP BY company_id ORDER BY count(*) DESC LIMIT 1",
        )
        .fetch_one(db)
        .await?;
        return Ok((id, Value::Null));
    }
    let c = jobs::tenancy::create_company(
        db,
        &state.hasher,
        jobs::tenancy::NewCompany {
            name: "Night Storage",
            email: &format!("night-{}@example.com", Uuid::new_v4().simple()),
            password: None,
            trial_days: 14,
        },
    )
    .await?;
    let t = Instant::now();
    let last = chrono::Utc::now().date_naive() - chrono::Duration::days(10);
    let report = jobs::seed::seed_bulk(
        db,
        c.company_id,
        args.facilities,
        args.days,
        last,
        args.parallel,
    )
    .await?;
    let seed_s = t.elapsed().as_secs_f64();
    sqlx::query("VACUUM ANALYZE").execute(db).await?;
    let t = Instant::now();
    jobs::ecri::fit::fit_company(db, c.company_id).await?;
    let ids: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM facilities WHERE company_id = $1")
        .bind(c.company_id.uuid())
        .fetch_all(db)
        .await?;
    for id in ids {
        let f = jobs::ecri::facility(db, c.company_id, id.into()).await?;
        let mut tx = db.begin().await?;
        let trigger = jobs::ecri::runs::Trigger::Nightly;
        jobs::ecri::runs::store(&mut tx, c.company_id, Uuid::now_v7(), trigger, &f).await?;
        tx.commit().await?;
    }
    let tenants: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM rent_roll_tenants WHERE company_id = $1 AND moved_out_on IS NULL",
    )
    .bind(c.company_id.uuid())
    .fetch_one(db)
    .await?;
    Ok((
        c.company_id.uuid(),
        json!({
            "records": report.records, "seed_seconds": round(seed_s, 1),
            "tenants_in_rolls": tenants,
            "first_ecri_night_seconds": round(t.elapsed().as_secs_f64(), 1),
        }),
    ))
}

/// Each facility's sync of the next day: its latest body as received with the day moved on and
/// its roll in force, `changed_pct` of the tenants changed. The bodies and the tenants changed.
async fn next_day(
    db: &PgPool,
    company_id: Uuid,
    night: usize,
    changed_pct: f64,
) -> anyhow::Result<(Vec<Value>, u64)> {
    let latest = sqlx::query_as::<_, (Uuid, chrono::NaiveDate, Value)>(
        "SELECT DISTINCT ON (facility_id) facility_id, snapshot_date, raw_payload
         FROM sync_records WHERE company_id = $1 ORDER BY facility_id, snapshot_date DESC",
    )
    .bind(company_id)
    .fetch_all(db)
    .await?;
    type Row = (
        Uuid,
        String,
        String,
        String,
        f64,
        chrono::NaiveDate,
        Option<chrono::NaiveDate>,
        Option<String>,
        Vec<String>,
        Value,
    );
    // The unit and the customer's mailing fields, sent back as a PMS sends them every night.
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT facility_id, tenant_id, size, tier, rent, move_in_date, last_increase_date,
                customer_id, flags,
                jsonb_strip_nulls(jsonb_build_object('unit_id', unit_id,
                    'customer_name', customer_name, 'address_line1', address_line1,
                    'address_line2', address_line2, 'city', city, 'region', region,
                    'postal_code', postal_code))
         FROM rent_roll_tenants WHERE company_id = $1 AND moved_out_on IS NULL
         ORDER BY facility_id, tenant_id",
    )
    .bind(company_id)
    .fetch_all(db)
    .await?;
    let mut rolls: BTreeMap<Uuid, Vec<Row>> = BTreeMap::new();
    for r in rows {
        rolls.entry(r.0).or_default().push(r);
    }
    let every = (100.0 / changed_pct.max(0.01)).round().max(1.0) as usize;
    let mut changed = 0u64;
    let mut bodies = Vec::new();
    for (fid, date, mut body) in latest {
        let day = date + chrono::Duration::days(1);
        let roll = rolls.remove(&fid).unwrap_or_default();
        let mut tenants = Vec::with_capacity(roll.len() + 2);
        for (i, t) in roll.iter().enumerate() {
            let mut rent = t.4;
            let mut last = t.6;
            // One in `every` changes: most are raised, one in three moves out (and is replaced).
            if (i + night).is_multiple_of(every) {
                changed += 1;
                if i.is_multiple_of(3) {
                    tenants.push(json!({
                        "tenant_id": format!("{}-n{night}", t.1), "size": t.2, "tier": t.3,
                        "rent": rent, "move_in_date": day,
                    }));
                    continue;
                }
                rent = round(rent * 1.06, 2);
                last = Some(day);
            }
            let mut tenant = json!({
                "tenant_id": t.1, "size": t.2, "tier": t.3, "rent": rent,
                "move_in_date": t.5, "last_increase_date": last, "customer_id": t.7,
                "flags": t.8,
            });
            if let (Some(to), Some(mailing)) = (tenant.as_object_mut(), t.9.as_object()) {
                to.extend(mailing.clone());
            }
            tenants.push(tenant);
        }
        body["date"] = json!(day);
        body["facility"] = json!({ "id": fid });
        body["tenants"] = Value::Array(tenants);
        if let Some(o) = body.as_object_mut() {
            o.remove("tenant_rents");
        }
        bodies.push(body);
    }
    Ok((bodies, changed))
}

/// Rows inserted and updated per table so far (the statistics collector's counts).
async fn writes(db: &PgPool) -> anyhow::Result<BTreeMap<String, i64>> {
    // Backends report their counts within a second of a transaction's end.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT relname::text, (n_tup_ins + n_tup_upd)::int8 FROM pg_stat_user_tables",
    )
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().collect())
}

#[allow(clippy::too_many_arguments)]
async fn night(
    args: &Args,
    db: &PgPool,
    base: &str,
    key: &str,
    prefix: &str,
    outbound: &Outbound,
    company_id: Uuid,
    index: usize,
    workers: usize,
) -> anyhow::Result<Value> {
    let (bodies, changed) = next_day(db, company_id, index, args.changed_pct).await?;
    // One sync per facility of the company (with `--reuse`, not `--facilities`).
    let facilities = bodies.len();
    let size_before: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
        .fetch_one(db)
        .await?;
    let before = writes(db).await?;
    let started = chrono::Utc::now();
    let t = Instant::now();
    send_all(base, key, bodies, args.clients).await?;
    let push_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut procs: Vec<Worker> = (0..workers)
        .map(|_| Worker::start(&args.database, prefix, outbound))
        .collect();
    let peaks = drain(db, &mut procs, Duration::from_secs(3600)).await?;
    let drain_s = t.elapsed().as_secs_f64();
    let after = writes(db).await?;
    let size_after: i64 = sqlx::query_scalar("SELECT pg_database_size(current_database())")
        .fetch_one(db)
        .await?;
    let mut delta: BTreeMap<String, i64> = BTreeMap::new();
    for (t, n) in &after {
        let d = n - before.get(t).copied().unwrap_or(0);
        if d > 0 {
            delta.insert(t.clone(), d);
        }
    }
    let total: i64 = delta.values().sum();
    Ok(json!({
        "workers": workers,
        "facilities": facilities,
        "tenants_changed": changed,
        "push_seconds": round(push_s, 1),
        "drain_seconds": round(drain_s, 1),
        "night_seconds": round(push_s + drain_s, 1),
        "jobs": job_latencies(db, started).await?,
        "worker_peak_mib": peaks,
        "database_growth_mb": round((size_after - size_before) as f64 / 1e6, 1),
        "rows_written": delta,
        "rows_written_per_tenant_changed": round(total as f64 / changed.max(1) as f64, 2),
    }))
}

/// Sends every body to `POST /api/v1/sync`, `clients` at once.
async fn send_all(base: &str, key: &str, bodies: Vec<Value>, clients: usize) -> anyhow::Result<()> {
    let http = reqwest::Client::builder().no_proxy().build()?;
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(clients.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for body in bodies {
        let permit = limit.clone().acquire_owned().await?;
        let (http, url, key) = (http.clone(), format!("{base}/api/v1/sync"), key.to_owned());
        tasks.spawn(async move {
            let r = http.post(&url).bearer_auth(&key).json(&body).send().await?;
            let status = r.status();
            let text = r.text().await?;
            drop(permit);
            anyhow::ensure!(status.is_success(), "sync answered {status}: {text}");
            anyhow::Ok(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    Ok(())
}

/// p50 / p99 (claim to finish) and count of each job kind finished since `since`.
async fn job_latencies(db: &PgPool, since: chrono::DateTime<chrono::Utc>) -> anyhow::Result<Value> {
    let rows: Vec<(String, f64)> = sqlx::query_as(
        "SELECT kind, extract(epoch FROM finished_at - claimed_at)::float8 * 1000 FROM job_runs
         WHERE created_at >= $1 AND status = 'succeeded'",
    )
    .bind(since)
    .fetch_all(db)
    .await?;
    let mut by: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for (kind, ms) in rows {
        by.entry(kind)
            .or_insert_with(|| Histogram::new(3).expect("a histogram"))
            .record((ms.max(0.0) * 1000.0) as u64)?;
    }
    Ok(by
        .into_iter()
        .map(|(k, h)| {
            let q = |p: f64| round(h.value_at_quantile(p) as f64 / 1000.0, 1);
            (
                k,
                json!({ "count": h.len(), "p50_ms": q(0.5), "p99_ms": q(0.99) }),
            )
        })
        .collect::<serde_json::Map<String, Value>>()
        .into())
}

/// A real worker process on the bench's database and Redis prefix.
struct Worker {
    child: std::process::Child,
}

impl Worker {
    fn start(database: &str, prefix: &str, outbound: &Outbound) -> Self {
        let mut cmd = std::process::Command::new(e2e::workspace_bin("worker"));
        cmd.env_clear()
            .env("APP_ENV", "test")
            .env(
                "DATABASE_URL",
                format!("{}/{database}", e2e::pg_server_url()),
            )
            .env("REDIS_URL", e2e::redis_url())
            .env("REDIS_KEY_PREFIX", prefix)
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "warn")
            .env("DATABASE_MAX_CONNECTIONS", "8")
            .env("METRICS_PORT", "0")
            .env("ECRI_NIGHTLY", "false")
            .env("WORKER_POLL_INTERVAL_MS", "50")
            .env("SWEEP_INTERVAL_MS", "500")
            .env("OUTBOUND_ALLOW_PRIVATE_TARGETS", "127.0.0.1")
            .env("OUTBOUND_CA_FILE", &outbound.ca_file);
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the worker starts (build it with --release)");
        Self { child }
    }

    /// Peak resident memory so far (MiB).
    fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| round(kb / 1024.0, 1))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until no job is queued or running, then stops the workers; each one's peak memory.
async fn drain(db: &PgPool, procs: &mut Vec<Worker>, limit: Duration) -> anyhow::Result<Vec<f64>> {
    let deadline = Instant::now() + limit;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        // One probe of each partial index: a count would read the whole backlog on every
        // poll, a cost that grows with the night (it did: 10.8 ms a poll at 3,000 facilities).
        let open: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM job_runs WHERE status = 'queued')
                 OR EXISTS (SELECT 1 FROM job_runs WHERE status = 'running')",
        )
        .fetch_one(db)
        .await?;
        if !open {
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "the night did not drain in time");
    }
    let peaks = procs.iter().map(Worker::peak_mib).collect();
    procs.clear();
    Ok(peaks)
}

/// One facility of `n` tenants synced, its ECRI run drained by one worker: that worker's peak
/// memory and the run's time.
async fn big_facility(
    args: &Args,
    db: &PgPool,
    base: &str,
    key: &str,
    prefix: &str,
    outbound: &Outbound,
    n: usize,
) -> anyhow::Result<Value> {
    let sizes = [
        ("5x5", 60.0),
        ("5x10", 85.0),
        ("10x10", 140.0),
        ("10x15", 175.0),
        ("10x20", 210.0),
    ];
    let day = chrono::Utc::now().date_naive() - chrono::Duration::days(1);
    let tenants: Vec<Value> = (0..n)
        .map(|i| {
            let (size, street) = sizes[i % sizes.len()];
            json!({
                "tenant_id": format!("B-{i}"), "size": size, "tier": "standard",
                "rent": round(street * (0.7 + 0.05 * (i % 8) as f64), 2),
                "move_in_date": day - chrono::Duration::days(40 + (i as i64 * 7) % 2500),
                "customer_id": format!("C-{}", i - i % 3),
            })
        })
        .collect();
    let body = json!({
        "facility": { "name": format!("Big Facility {n}") }, "date": day,
        "unit_types": sizes.iter().map(|(s, r)| json!({
            "size": s, "tier": "standard", "street_rate": r,
            "total_units": n / sizes.len() + 20, "occupied_units": n / sizes.len()
        })).collect::<Vec<_>>(),
        "tenants": tenants,
    });
    let started = chrono::Utc::now();
    send_all(base, key, vec![body], 1).await?;
    let mut procs = vec![Worker::start(&args.database, prefix, outbound)];
    let peaks = drain(db, &mut procs, Duration::from_secs(1800)).await?;
    let body_bytes: i64 = sqlx::query_scalar(
        "SELECT pg_column_size(r.body)::int8 FROM ecri_runs r JOIN facilities f ON f.id = r.facility_id
         WHERE f.name = $1 ORDER BY r.created_at DESC LIMIT 1",
    )
    .bind(format!("Big Facility {n}"))
    .fetch_one(db)
    .await?;
    Ok(json!({
        "tenants": n,
        "worker_peak_mib": peaks,
        "jobs": job_latencies(db, started).await?,
        "stored_body_bytes": body_bytes,
    }))
}
