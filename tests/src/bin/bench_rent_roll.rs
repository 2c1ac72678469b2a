//! Load benchmark of `POST /api/v1/sync` carrying a tenant-level rent roll, against the real
//! server: what a nightly push of a 5,000-tenant roll costs, unchanged and with a normal day's
//! changes, in rows written and latency (docs/benchmarks.md, "Rent roll").
//!
//! `cargo run --release -p e2e --bin bench_rent_roll -- --tenants 5000 --days 30`
//!
//! One facility; day 0 loads the whole roll; then `days` syncs of the unchanged roll, then
//! `days` syncs each with `churn` move-outs, as many move-ins and `raises` rent increases.
//! Each sync is one request at a time (a CRM pushes one facility-day after the other). Rows
//! written are PostgreSQL's own counts (`pg_stat_user_tables`: inserted + updated + deleted)
//! per table, read after each phase.
//!
//! Then an ECRI batch of the whole roll: `POST .../ecri-batches` once (every suggestion with
//! an increase becomes a line), `GET` of the batch `reads` times, a `PATCH` of 100 lines and
//! the approval, each timed.

use clap::Parser;
use e2e::{Server, World};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Tenants in the roll.
    #[arg(long, default_value_t = 5000)]
    tenants: usize,
    /// Syncs per phase.
    #[arg(long, default_value_t = 30)]
    days: usize,
    /// Move-outs (and as many move-ins) per day of the changing phase.
    #[arg(long, default_value_t = 4)]
    churn: usize,
    /// Rent increases per day of the changing phase.
    #[arg(long, default_value_t = 15)]
    raises: usize,
    /// Reads of the ECRI batch.
    #[arg(long, default_value_t = 20)]
    reads: usize,
}

const SIZES: [(&str, f64); 10] = [
    ("5x5", 45.0),
    ("5x10", 70.0),
    ("5x15", 85.0),
    ("10x10", 120.0),
    ("10x15", 150.0),
    ("10x20", 185.0),
    ("10x25", 215.0),
    ("10x30", 250.0),
    ("15x20", 260.0),
    ("20x20", 320.0),
];

struct Tenant {
    id: String,
    size: usize,
    rent: f64,
    move_in: chrono::NaiveDate,
    raised: Option<chrono::NaiveDate>,
}

fn body(date: chrono::NaiveDate, roll: &[Tenant]) -> Value {
    let tenants: Vec<Value> = roll
        .iter()
        .map(|t| {
            json!({"tenant_id": t.id, "size": SIZES[t.size].0, "tier": "standard", "rent": t.rent,
                   "move_in_date": t.move_in.to_string(),
                   "last_increase_date": t.raised.map(|d| d.to_string())})
        })
        .collect();
    let unit_types: Vec<Value> = SIZES
        .iter()
        .map(|(size, rate)| {
            json!({"size": size, "tier": "standard", "street_rate": rate,
                                   "total_units": 560, "occupied_units": 500})
        })
        .collect();
    json!({"facility": {"name": "Roll Bench"}, "date": date.to_string(), "occupancy_pct": 89.3,
           "unit_types": unit_types, "tenants": tenants})
}

async fn rows_written(db: &sqlx::PgPool) -> anyhow::Result<BTreeMap<String, i64>> {
    // An idle backend reports its counts within 10 s (PostgreSQL 15's idle flush interval).
    tokio::time::sleep(Duration::from_millis(11_000)).await;
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT relname::text, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables
         WHERE relname IN ('rent_roll_tenants', 'rent_roll_events', 'sync_records',
                           'sync_unit_types', 'facilities')",
    )
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().collect())
}

fn diff(after: &BTreeMap<String, i64>, before: &BTreeMap<String, i64>, syncs: usize) -> Value {
    let per: BTreeMap<&String, f64> = after
        .iter()
        .map(|(k, v)| {
            let d = v - before.get(k).copied().unwrap_or(0);
            (k, (d as f64 / syncs as f64 * 10.0).round() / 10.0)
        })
        .collect();
    json!(per)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let world = World::new().await;
    let server = Server::start(
        &world,
        &[
            ("RATE_LIMIT_PER_MINUTE", "100000"),
            ("RATE_LIMIT_SYNC_PER_MINUTE", "100000"),
        ],
    )
    .await;
    let state = server.state.clone();
    let company = jobs::tenancy::create_company(
        &state.db,
        &state.hasher,
        jobs::tenancy::NewCompany {
            name: "Roll Bench",
            email: &format!("roll-{}@example.com", uuid::Uuid::new_v4().simple()),
            password: None,
            trial_days: 14,
        },
    )
    .await?;
    let http = reqwest::Client::builder().no_proxy().build()?;
    let url = format!("{}/api/v1/sync", server.base);
    let start = chrono::NaiveDate::from_ymd_opt(2025, 1, 1).unwrap();
    let mut roll: Vec<Tenant> = (0..args.tenants)
        .map(|i| Tenant {
            id: format!("T{i:06}"),
            size: i % SIZES.len(),
            rent: SIZES[i % SIZES.len()].1 * (0.85 + (i % 31) as f64 * 0.01),
            move_in: start - chrono::Duration::days(30 + (i % 1500) as i64),
            raised: None,
        })
        .collect();
    let mut next_id = args.tenants;
    let send = |date: chrono::NaiveDate, roll: &[Tenant]| {
        let b = body(date, roll);
        let req = http.post(&url).bearer_auth(&company.api_key).json(&b);
        async move {
            let t = Instant::now();
            let r = req.send().await.expect("sent");
            assert!(
                r.status().is_success(),
                "{}",
                r.text().await.unwrap_or_default()
            );
            let answer: Value = r.json().await.expect("json");
            (t.elapsed(), answer)
        }
    };
    let bytes = serde_json::to_vec(&body(start, &roll))?.len();
    let before = rows_written(&state.db).await?;
    let (first, answer) = send(start, &roll).await;
    let after_first = rows_written(&state.db).await?;
    assert_eq!(answer["rent_roll"]["moved_in"], args.tenants);

    let mut unchanged = Histogram::<u64>::new(3)?;
    let mut day = start;
    for _ in 0..args.days {
        day += chrono::Duration::days(1);
        let (t, a) = send(day, &roll).await;
        assert_eq!(a["rent_roll"]["rent_changed"], 0);
        unchanged.record(t.as_micros() as u64)?;
    }
    let after_unchanged = rows_written(&state.db).await?;
    let mut changing = Histogram::<u64>::new(3)?;
    for d in 0..args.days {
        day += chrono::Duration::days(1);
        for k in 0..args.churn {
            let at = (d * 97 + k * 13) % roll.len();
            let size = roll[at].size;
            roll.remove(at);
            roll.push(Tenant {
                id: format!("T{next_id:06}"),
                size,
                rent: SIZES[size].1,
                move_in: day,
                raised: None,
            });
            next_id += 1;
        }
        for k in 0..args.raises {
            let at = (d * 131 + k * 53) % roll.len();
            roll[at].rent = (roll[at].rent * 1.09).round();
            roll[at].raised = Some(day);
        }
        let (t, _) = send(day, &roll).await;
        changing.record(t.as_micros() as u64)?;
    }
    let after_changing = rows_written(&state.db).await?;
    let raw_bytes: i64 =
        sqlx::query_scalar("SELECT max(pg_column_size(raw_payload))::int8 FROM sync_records")
            .fetch_one(&state.db)
            .await?;
    let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    let batch = ecri_batch(&http, &server.base, &company.api_key, &answer, args.reads).await?;
    let report = json!({
        "tenants": args.tenants, "body_bytes": bytes, "syncs_per_phase": args.days,
        "stored_body_bytes_max": raw_bytes,
        "first_load": {"ms": first.as_secs_f64() * 1000.0, "rows": diff(&after_first, &before, 1)},
        "unchanged": {"p50_ms": ms(&unchanged, 0.5), "p99_ms": ms(&unchanged, 0.99),
                      "max_ms": unchanged.max() as f64 / 1000.0,
                      "rows_per_sync": diff(&after_unchanged, &after_first, args.days)},
        "changing": {"churn": args.churn, "raises": args.raises,
                     "p50_ms": ms(&changing, 0.5), "p99_ms": ms(&changing, 0.99),
                     "max_ms": changing.max() as f64 / 1000.0,
                     "rows_per_sync": diff(&after_changing, &after_unchanged, args.days)},
        "events": sqlx::query_scalar::<_, i64>("SELECT count(*) FROM rent_roll_events").fetch_one(&state.db).await?,
        "ecri_batch": batch,
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    server.shutdown().await;
    Ok(())
}

/// An ECRI batch of the whole roll, timed: create, read, edit 100 lines, approve.
async fn ecri_batch(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    first_answer: &Value,
    reads: usize,
) -> anyhow::Result<Value> {
    let facility = first_answer["facility"]["id"]
        .as_str()
        .expect("the sync names its facility");
    let url = format!("{base}/api/v1/facilities/{facility}/ecri-batches");
    let timed = |req: reqwest::RequestBuilder| async move {
        let t = Instant::now();
        let r = req.send().await.expect("sent");
        let status = r.status();
        let answer: Value = r.json().await.expect("json");
        assert!(status.is_success(), "{status}: {answer}");
        (t.elapsed().as_secs_f64() * 1000.0, answer)
    };
    let (create_ms, created) = timed(http.post(&url).bearer_auth(key).json(&json!({}))).await;
    let lines = created["lines"].as_array().map_or(0, Vec::len);
    let one = format!("{url}/{}", created["id"].as_str().expect("an id"));
    let mut read = Histogram::<u64>::new(3)?;
    for _ in 0..reads {
        let (t, _) = timed(http.get(&one).bearer_auth(key)).await;
        read.record((t * 1000.0) as u64)?;
    }
    let edits: Vec<Value> = (1..=lines.min(100))
        .map(|l| json!({"line": l, "excluded": true}))
        .collect();
    let (edit_ms, _) = timed(
        http.patch(&one)
            .bearer_auth(key)
            .json(&json!({ "lines": edits })),
    )
    .await;
    let (approve_ms, _) = timed(
        http.post(format!("{one}/approve"))
            .bearer_auth(key)
            .json(&json!({})),
    )
    .await;
    Ok(json!({
        "lines": lines, "create_ms": create_ms,
        "read_p50_ms": read.value_at_quantile(0.5) as f64 / 1000.0,
        "read_p99_ms": read.value_at_quantile(0.99) as f64 / 1000.0,
        "edit_100_lines_ms": edit_ms, "approve_ms": approve_ms,
    }))
}
