//! Benchmarks of the pricing endpoints against the real server:
//! - `GET /api/v1/facilities/:id/recommendations` (engine run and stored run) and
//!   `?regenerate=0` (read the latest run), p50/p99 over facilities with a year of history,
//!   and each phase's processor time a request, of this process (server and client) and of
//!   PostgreSQL (every `postgres` process of the machine, so run it on an otherwise idle one);
//! - `POST /api/v1/facilities/:id/upload` with a 50,000-row competitor-rates CSV and a
//!   50,000-row unit-rates CSV, against an `api` process of its own so its peak memory (VmHWM)
//!   can be read before and after.
//!
//! `cargo build --release --workspace --bins && target/release/bench_pricing 2>/dev/null`
//! (`--history-days 0`: the engine without the daily history, for comparison)

use clap::Parser;
use e2e::{workspace_bin, Server, World};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Facilities seeded (each with `days` of history, 10 unit types, competitor rates).
    #[arg(long, default_value_t = 20)]
    facilities: u32,
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Measured requests per endpoint phase.
    #[arg(long, default_value_t = 2_000)]
    requests: u64,
    /// Requests in flight.
    #[arg(long, default_value_t = 8)]
    concurrency: u64,
    /// Rows of each upload.
    #[arg(long, default_value_t = 50_000)]
    rows: usize,
    /// Sets every facility's `response_history_days` (pricing settings) before the runs: 0
    /// runs the engine without the daily history it reads by default.
    #[arg(long)]
    history_days: Option<u32>,
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    (h.value_at_quantile(q) as f64 / 10.0).round() / 100.0
}

async fn phase(
    http: &reqwest::Client,
    key: &str,
    urls: Arc<Vec<String>>,
    requests: u64,
    concurrency: u64,
) -> anyhow::Result<Value> {
    let start = Instant::now();
    let cpu_before = cpu_now();
    let mut tasks = Vec::new();
    for w in 0..concurrency {
        let (http, key, urls) = (http.clone(), key.to_owned(), urls.clone());
        tasks.push(tokio::spawn(async move {
            let mut h = Histogram::<u64>::new(3).expect("histogram");
            let mut errors = 0u64;
            let mut n = w;
            while n < requests {
                let t = Instant::now();
                let r = http
                    .get(&urls[n as usize % urls.len()])
                    .bearer_auth(&key)
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status().is_success() => {
                        let _ = r.bytes().await;
                        h.record(t.elapsed().as_micros() as u64).expect("record");
                    }
                    _ => errors += 1,
                }
                n += concurrency;
            }
            (h, errors)
        }));
    }
    let mut hist = Histogram::<u64>::new(3)?;
    let mut errors = 0;
    for t in tasks {
        let (h, e) = t.await?;
        hist.add(h)?;
        errors += e;
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu_after = cpu_now();
    // Clock ticks are hundredths of a second: milliseconds a request are ticks x 10 / requests.
    let per_request =
        |ticks: u64| (ticks as f64 * 10.0 / hist.len().max(1) as f64 * 100.0).round() / 100.0;
    Ok(json!({
        "requests": hist.len(), "errors": errors,
        "cpu_ms_per_request": {
            "server_and_client": per_request(cpu_after.0 - cpu_before.0),
            "postgres": per_request(cpu_after.1.saturating_sub(cpu_before.1)),
        },
        "per_second": (hist.len() as f64 / secs).round(),
        "p50_ms": ms(&hist, 0.5), "p99_ms": ms(&hist, 0.99), "max_ms": ms(&hist, 1.0),
    }))
}

/// Processor time (user and system, in clock ticks) of one process, from `/proc/<pid>/stat`.
fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// Processor time so far of this process (the server and its client) and of every PostgreSQL
/// process of the machine, in clock ticks (100 a second on Linux).
fn cpu_now() -> (u64, u64) {
    let postgres = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "postgres")
        })
        .map(|pid| cpu_ticks(&pid))
        .sum();
    (cpu_ticks("self"), postgres)
}

fn vm_hwm_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn competitor_csv(rows: usize) -> String {
    let sizes = ["5x5", "5x10", "10x10", "10x15", "10x20", "10x30"];
    let mut s = String::from("observed_on,competitor,size,rate,promo,source_url\n");
    let start = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
    for i in 0..rows {
        let day = start + chrono::Days::new((i / 300) as u64);
        s.push_str(&format!(
            "{day},Competitor {},{},{}.00,{},https://example.com/c{}\n",
            i % 50,
            sizes[(i / 50) % sizes.len()],
            80 + i % 120,
            if i % 4 == 0 { "First month free" } else { "" },
            i % 50
        ));
    }
    s
}

fn unit_csv(rows: usize) -> String {
    // 125 unit types a day over 400 days.
    let mut s =
        String::from("date,size,tier,street_rate,occupancy_pct,total_units,occupied_units\n");
    let start = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
    for i in 0..rows {
        let day = start + chrono::Days::new((i / 125) as u64);
        let t = i % 125;
        s.push_str(&format!(
            "{day},{}x{},tier{},{}.00,{}.5,100,{}\n",
            5 + t % 25,
            5 + t / 25,
            t % 3,
            60 + t,
            70 + t % 25,
            70 + t % 25
        ));
    }
    s
}

async fn upload(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    facility: &str,
    csv: String,
) -> anyhow::Result<(f64, Value)> {
    let t = Instant::now();
    let r = http
        .post(format!("{base}/api/v1/facilities/{facility}/upload"))
        .bearer_auth(key)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await?;
    let status = r.status();
    let body: Value = r.json().await?;
    anyhow::ensure!(status.is_success(), "upload failed: {status} {body}");
    Ok((t.elapsed().as_secs_f64(), body))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let world = World::new().await;
    let server = Server::start(&world, &[("DATABASE_MAX_CONNECTIONS", "16")]).await;
    let company = jobs::tenancy::create_company(
        &server.state.db,
        &server.state.hasher,
        jobs::tenancy::NewCompany {
            name: "Bench",
            email: &format!("pricing-{}@example.com", uuid::Uuid::new_v4().simple()),
            password: None,
            trial_days: 14,
        },
    )
    .await?;
    let t = Instant::now();
    let seeded = jobs::seed::seed(
        &server.state.db,
        company.company_id,
        args.facilities,
        args.days,
        chrono::Utc::now().date_naive(),
    )
    .await?;
    eprintln!(
        "seeded {} records in {:.1}s",
        seeded.records,
        t.elapsed().as_secs_f64()
    );
    // As autovacuum leaves a table that has stopped growing: the visibility map set, so the
    // history's index is read without visiting the table.
    sqlx::query("VACUUM (ANALYZE) sync_unit_types")
        .execute(&world.db)
        .await?;
    let ids: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT id FROM facilities WHERE company_id = $1")
            .bind(company.company_id.uuid())
            .fetch_all(&world.db)
            .await?;
    let http = reqwest::Client::builder().no_proxy().build()?;
    let run_urls: Arc<Vec<String>> = Arc::new(
        ids.iter()
            .map(|id| format!("{}/api/v1/facilities/{id}/recommendations", server.base))
            .collect(),
    );
    let latest_urls: Arc<Vec<String>> = Arc::new(
        run_urls
            .iter()
            .map(|u| format!("{u}?regenerate=0"))
            .collect(),
    );
    if let Some(days) = args.history_days {
        for u in run_urls.iter() {
            let r = http
                .put(u.replace("/recommendations", "/pricing-settings"))
                .bearer_auth(&company.api_key)
                .json(&json!({ "response_history_days": days }))
                .send()
                .await?;
            anyhow::ensure!(r.status().is_success(), "settings: {}", r.status());
        }
    }
    // Warm-up.
    phase(
        &http,
        &company.api_key,
        run_urls.clone(),
        100,
        args.concurrency,
    )
    .await?;
    let run = phase(
        &http,
        &company.api_key,
        run_urls,
        args.requests,
        args.concurrency,
    )
    .await?;
    let latest = phase(
        &http,
        &company.api_key,
        latest_urls,
        args.requests,
        args.concurrency,
    )
    .await?;
    let sample: Value = http
        .get(format!(
            "{}/api/v1/facilities/{}/recommendations?regenerate=0",
            server.base, ids[0]
        ))
        .bearer_auth(&company.api_key)
        .send()
        .await?
        .json()
        .await?;
    server.shutdown().await;

    // Uploads against an api process of its own.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut child = std::process::Command::new(workspace_bin("api"))
        .arg("serve")
        .env_clear()
        .env("APP_ENV", "test")
        .env("PORT", port.to_string())
        .env(
            "DATABASE_URL",
            format!("{}/{}", e2e::pg_server_url(), world.db_name),
        )
        .env("REDIS_URL", e2e::redis_url())
        .env("REDIS_KEY_PREFIX", &world.redis_prefix)
        .env("RATE_LIMIT_PER_MINUTE", "100000")
        .env("LOG_FORMAT", "json")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..200 {
        if http.get(format!("{base}/healthz")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let facility = ids[0].to_string();
    let (_, _) = upload(
        &http,
        &base,
        &company.api_key,
        &facility,
        competitor_csv(100),
    )
    .await?;
    let before = vm_hwm_kib(child.id());
    let comp_csv = competitor_csv(args.rows);
    let comp_bytes = comp_csv.len();
    let (comp_secs, comp_body) =
        upload(&http, &base, &company.api_key, &facility, comp_csv).await?;
    let after_comp = vm_hwm_kib(child.id());
    let other = ids[1].to_string();
    let unit = unit_csv(args.rows);
    let unit_bytes = unit.len();
    let (unit_secs, unit_body) = upload(&http, &base, &company.api_key, &other, unit).await?;
    let after_unit = vm_hwm_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();

    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "seeded": { "facilities": args.facilities, "days": args.days, "records": seeded.records },
            "response_history_days": args.history_days.map_or(json!("default"), |d| json!(d)),
            "unit_types_per_run": sample["per_size_count"],
            "recommendations_run_and_store": run,
            "recommendations_regenerate_0": latest,
            "upload_competitor_rates": {
                "rows": args.rows, "bytes": comp_bytes, "seconds": (comp_secs * 100.0).round() / 100.0,
                "rows_per_second": (args.rows as f64 / comp_secs).round(),
                "inserted": comp_body["inserted"],
                "api_peak_rss_mib_before": before / 1024, "api_peak_rss_mib_after": after_comp / 1024,
            },
            "upload_unit_rates": {
                "rows": args.rows, "bytes": unit_bytes, "seconds": (unit_secs * 100.0).round() / 100.0,
                "rows_per_second": (args.rows as f64 / unit_secs).round(),
                "snapshots": unit_body["snapshots"].as_array().map(Vec::len),
                "api_peak_rss_mib_after": after_unit / 1024,
            },
        }))?
    );
    Ok(())
}
