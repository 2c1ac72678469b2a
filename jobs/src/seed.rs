//! A generator of realistic synthetic history: N facilities x D days of daily snapshots, sent
//! through the same parse-and-ingest path as a push. Deterministic for a given company and
//! sizes, so demos and benchmarks are repeatable.

mod competitors;

use crate::error::Result;
use crate::sync::write::{write_snapshots, Day};
use crate::sync::{self, Source};
use chrono::{Datelike, Duration, NaiveDate};
use domain::ids::CompanyId;
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde::Serialize;
use serde_json::{json, Value};
use sqlx::PgPool;

#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub company_id: CompanyId,
    pub facilities: u32,
    pub days: u32,
    pub records: u64,
    pub first_date: NaiveDate,
    pub last_date: NaiveDate,
}

/// (size, tier, base street rate, units) of a typical suburban facility.
const UNIT_MIX: [(&str, &str, f64, u32); 10] = [
    ("5x5", "climate", 55.0, 60),
    ("5x10", "climate", 79.0, 80),
    ("5x10", "drive-up", 69.0, 40),
    ("10x10", "climate", 129.0, 90),
    ("10x10", "drive-up", 115.0, 70),
    ("10x15", "drive-up", 149.0, 50),
    ("10x20", "drive-up", 189.0, 45),
    ("10x20", "climate", 215.0, 30),
    ("10x30", "drive-up", 259.0, 25),
    ("12x30", "drive-up", 299.0, 10),
];
const CHANNELS: [&str; 5] = ["web", "phone", "walk_in", "aggregator", "referral"];
/// National move-in seasonality (index, January first): weakest in winter, peak in summer.
const SEASON: [f64; 12] = [
    0.80, 0.85, 0.97, 1.05, 1.12, 1.18, 1.18, 1.12, 1.02, 0.95, 0.88, 0.82,
];

/// One facility's snapshot for `date`, day `day` of the history (0-based).
pub fn snapshot(
    facility: u32,
    day: u32,
    date: NaiveDate,
    rng: &mut StdRng,
    state: &mut FacilityState,
) -> Value {
    let season = SEASON[date.month0() as usize];
    let mtd_reset = date.day() == 1;
    if mtd_reset {
        state.move_ins_mtd = 0;
        state.move_outs_mtd = 0;
    }
    // Occupancy drifts toward the facility's target; lease-up facilities climb from low.
    let drift = (state.target_occupancy - state.occupancy) * 0.01;
    state.occupancy = (state.occupancy + drift + rng.gen_range(-0.3..0.3) + (season - 1.0) * 0.05)
        .clamp(20.0, 99.0);
    let move_ins =
        (f64::from(state.total_units) * 0.0035 * season * rng.gen_range(0.4..1.6)).round() as u32;
    let move_outs =
        (f64::from(state.total_units) * 0.0030 * rng.gen_range(0.4..1.6)).round() as u32;
    state.move_ins_mtd += move_ins;
    state.move_outs_mtd += move_outs;
    // Street rates move a little every couple of weeks.
    if day.is_multiple_of(14) && day > 0 {
        for r in &mut state.rates {
            *r = (*r * rng.gen_range(0.97..1.04)).round();
        }
    }
    let mut occupied_per_type: Vec<u32> = Vec::with_capacity(UNIT_MIX.len());
    let unit_types: Vec<Value> = UNIT_MIX
        .iter()
        .zip(&state.rates)
        .map(|((size, tier, _, units), rate)| {
            let occ = (state.occupancy + rng.gen_range(-6.0..6.0)).clamp(0.0, 100.0);
            let occupied = (f64::from(*units) * occ / 100.0).round() as u32;
            occupied_per_type.push(occupied.min(*units));
            json!({
                "size": size, "tier": tier, "street_rate": rate,
                "occupancy_pct": (occ * 10.0).round() / 10.0,
                "move_ins_mtd": state.move_ins_mtd / 10,
                "total_units": units, "occupied_units": occupied.min(*units),
            })
        })
        .collect();
    let competitor_rates = competitors::rates(rng);
    // Every occupied unit's tenant, in three cohorts per unit type as an operator's rent roll
    // reads: long-stayers due an increase below street, recent move-ins near it, and tenants
    // raised above it.
    let tenant_rents: Vec<Value> = UNIT_MIX
        .iter()
        .zip(&state.rates)
        .zip(&occupied_per_type)
        .flat_map(|(((size, _, _, _), rate), occupied)| {
            let due = (f64::from(*occupied) * 0.4).round() as u32;
            let recent = (f64::from(*occupied) * 0.4).round() as u32;
            let raised = occupied.saturating_sub(due + recent);
            [
                (due, 0.84..0.97, 10..20),
                (recent, 0.95..1.04, 1..9),
                (raised, 1.03..1.18, 2..8),
            ]
            .into_iter()
            .filter(|(n, _, _)| *n > 0)
            .map(|(n, share, months)| {
                json!({
                    "size": size, "avg_rent": (rate * rng.gen_range(share)).round(),
                    "tenant_count": n, "months_since_last_increase": rng.gen_range(months),
                    "original_rent": (rate * 0.8).round(),
                })
            })
            .collect::<Vec<_>>()
        })
        .collect();
    let leads: Vec<Value> = CHANNELS
        .iter()
        .map(|ch| json!({ "channel": ch, "count": (f64::from(move_ins) * rng.gen_range(0.2..1.2)).round() }))
        .collect();
    json!({
        "facility": {
            "external_id": format!("DEMO-{:04}", facility + 1), "source_system": "demo",
            "name": format!("Demo Storage {:04}", facility + 1),
            "address": format!("{} Main Street", 100 + facility),
        },
        "date": date.format("%Y-%m-%d").to_string(),
        "occupancy_pct": (state.occupancy * 10.0).round() / 10.0,
        "move_ins": { "daily": move_ins, "mtd": state.move_ins_mtd, "target_monthly": (f64::from(state.total_units) * 0.1).round() },
        "move_outs": { "daily": move_outs, "mtd": state.move_outs_mtd },
        "unit_types": unit_types,
        "promotions": [{ "name": "First month 50% off", "depth_pct": 50, "applies_to": "10x10" }],
        "competitor_rates": competitor_rates,
        "tenant_rents": tenant_rents,
        "leads": leads,
    })
}

/// Adds the tenant-level rent roll of a snapshot's cohorts (`tenant_rents`), as a real roll
/// reads: each tenant with its own rent drawn around its cohort's average (within 12 %), its
/// own tenure and last increase drawn around the cohort's months (within 4 months; a cohort
/// under 9 months moved in then, an older one was raised then after a stay of one to four
/// years, one in five of them never raised), a unit number, a customer's name and mailing
/// address; one tenant in 25 a business, one in 40 military, one in 33 delinquent, and one
/// customer in 30 renting two units (one letter for both). Deterministic per facility, so a
/// seed's figures do not depend on when it runs.
pub fn with_roll(body: &mut Value, facility: u32) {
    let Some(date) = body["date"]
        .as_str()
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(0x5eed_0000 + u64::from(facility));
    let mut tenants = Vec::new();
    let mut n = 0u32;
    for (c, cohort) in body["tenant_rents"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let (Some(size), Some(rent), Some(count), Some(months)) = (
            cohort["size"].as_str(),
            cohort["avg_rent"].as_f64(),
            cohort["tenant_count"].as_u64(),
            cohort["months_since_last_increase"].as_f64(),
        ) else {
            continue;
        };
        for _ in 0..count {
            n += 1;
            let own_rent = (rent * rng.gen_range(0.88..1.12_f64) * 100.0).round() / 100.0;
            let own_months = (months + rng.gen_range(-4.0..4.0_f64)).max(0.3);
            let set_on = date - Duration::days((own_months * 30.44).round() as i64);
            let (move_in, raised) = if own_months < 9.0 || rng.gen_bool(0.2) {
                (set_on, None)
            } else {
                (
                    set_on - Duration::days(rng.gen_range(365..1460)),
                    Some(set_on),
                )
            };
            let mut flags = Vec::new();
            if n.is_multiple_of(25) {
                flags.push("business");
            }
            if n.is_multiple_of(40) {
                flags.push("military");
            }
            if n.is_multiple_of(33) {
                flags.push("delinquent");
            }
            let customer = if n.is_multiple_of(30) { n - 1 } else { n };
            let mut t = json!({
                "tenant_id": format!("D{:04}-{n:05}", facility + 1),
                "unit_id": format!("{}{:03}", char::from(b'A' + (c % 26) as u8), n % 1000),
                "size": size, "rent": own_rent,
                "move_in_date": move_in.to_string(),
                "last_increase_date": raised.map(|d| d.to_string()),
                "customer_id": format!("C{:04}-{customer:05}", facility + 1),
                "flags": flags,
            });
            mailing(&mut t, customer);
            tenants.push(t);
        }
    }
    body["tenants"] = Value::Array(tenants);
}

const FIRST_NAMES: [&str; 16] = [
    "Alex", "Maria", "James", "Priya", "Daniel", "Grace", "Omar", "Linda", "Chen", "Rosa",
    "Michael", "Aisha", "David", "Sofia", "Kevin", "Hannah",
];
const LAST_NAMES: [&str; 16] = [
    "Johnson", "Garcia", "Nguyen", "Patel", "Smith", "Okafor", "Brown", "Kowalski", "Lee",
    "Martinez", "Davis", "Haddad", "Wilson", "Rossi", "Murphy", "Clark",
];
const STREETS: [&str; 8] = [
    "Maple Avenue",
    "Oak Street",
    "Cedar Lane",
    "Elm Drive",
    "Lakeview Road",
    "Pine Court",
    "Birch Way",
    "Willow Street",
];
const CITIES: [(&str, &str, u32); 4] = [
    ("Springfield", "IL", 62701),
    ("Riverton", "IL", 62561),
    ("Chatham", "IL", 62629),
    ("Rochester", "IL", 62563),
];

/// A made-up customer's name and mailing address, the same for every unit of the customer.
fn mailing(t: &mut Value, customer: u32) {
    let i = customer as usize;
    let (city, region, zip) = CITIES[(i / 7) % CITIES.len()];
    t["customer_name"] = json!(format!(
        "{} {}",
        FIRST_NAMES[(i * 7) % FIRST_NAMES.len()],
        LAST_NAMES[(i * 13 + i / 16) % LAST_NAMES.len()]
    ));
    t["address_line1"] = json!(format!(
        "{} {}",
        10 + (i * 37) % 980,
        STREETS[(i * 3) % STREETS.len()]
    ));
    if i.is_multiple_of(6) {
        t["address_line2"] = json!(format!("Apt {}", 1 + i % 24));
    }
    t["city"] = json!(city);
    t["region"] = json!(region);
    t["postal_code"] = json!(format!("{}", zip + (i % 9) as u32));
}

/// Evolving figures of one synthetic facility.
pub struct FacilityState {
    occupancy: f64,
    target_occupancy: f64,
    total_units: u32,
    rates: Vec<f64>,
    move_ins_mtd: u32,
    move_outs_mtd: u32,
}

impl FacilityState {
    pub fn new(facility: u32, rng: &mut StdRng) -> Self {
        // One facility in ten is a new build in lease-up.
        let lease_up = facility % 10 == 9;
        Self {
            occupancy: if lease_up {
                35.0
            } else {
                rng.gen_range(78.0..95.0)
            },
            target_occupancy: if lease_up {
                80.0
            } else {
                rng.gen_range(82.0..95.0)
            },
            total_units: UNIT_MIX.iter().map(|u| u.3).sum(),
            rates: UNIT_MIX
                .iter()
                .map(|u| (u.2 * rng.gen_range(0.9..1.15_f64)).round())
                .collect(),
            move_ins_mtd: 0,
            move_outs_mtd: 0,
        }
    }
}

/// Facility `f`'s random stream and starting state: the same for a company whichever seeding
/// path runs, so a per-day seed and a bulk seed write the same figures.
fn facility_start(company_id: CompanyId, f: u32) -> (StdRng, FacilityState) {
    let bytes = company_id.uuid().as_bytes()[..8]
        .try_into()
        .unwrap_or_default();
    let mut rng = StdRng::seed_from_u64(u64::from(f) ^ u64::from_le_bytes(bytes));
    let state = FacilityState::new(f, &mut rng);
    (rng, state)
}

/// Seeds `facilities` x `days` snapshots ending at `last_date`.
pub async fn seed(
    pool: &PgPool,
    company_id: CompanyId,
    facilities: u32,
    days: u32,
    last_date: NaiveDate,
) -> Result<SeedReport> {
    crate::tenancy::company(pool, company_id).await?;
    let days = days.max(1);
    let first_date = last_date - Duration::days(i64::from(days) - 1);
    let mut records = 0;
    for f in 0..facilities {
        let (mut rng, mut state) = facility_start(company_id, f);
        for day in 0..days {
            let date = first_date + Duration::days(i64::from(day));
            let mut body = snapshot(f, day, date, &mut rng, &mut state);
            // The latest day carries the whole rent roll, as a CRM's nightly push does.
            if day + 1 == days {
                with_roll(&mut body, f);
            }
            let body = body.to_string();
            let parsed = domain::sync::parse(body.as_bytes(), last_date)?;
            // The demo's history is the service's own doing, not a change anyone made: it is
            // stored without an audit entry.
            let mut tx = pool.begin().await?;
            sync::store::place(
                &mut tx,
                company_id,
                &crate::access::Scope::All,
                &parsed.payload,
                &body,
                Source::Push,
            )
            .await?;
            tx.commit().await?;
            records += 1;
        }
    }
    Ok(SeedReport {
        company_id,
        facilities,
        days,
        records,
        first_date,
        last_date,
    })
}

/// Seeds like [`seed`], but writes each facility's whole history with a handful of bulk
/// statements (the snapshot writer's column arrays) in one transaction per facility, `parallel` facilities
/// at a time: for large histories (1,000 facilities x 730 days). Each snapshot is generated,
/// parsed and validated exactly as a push is, and stored with the figures the ingest derives;
/// the lease-up history is evaluated the way the ingest job evaluates it. No ingest job is
/// recorded (there is nothing left for it to do). Days of the range that a facility already
/// has are replaced.
pub async fn seed_bulk(
    pool: &PgPool,
    company_id: CompanyId,
    facilities: u32,
    days: u32,
    last_date: NaiveDate,
    parallel: usize,
) -> Result<SeedReport> {
    crate::tenancy::company(pool, company_id).await?;
    let days = days.max(1);
    let first_date = last_date - Duration::days(i64::from(days) - 1);
    // Each facility on a task of its own (at most `parallel` at once): facilities sharing one
    // task through a buffered stream were seen to stall with a transaction left open.
    let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    let mut records = 0u64;
    for f in 0..facilities {
        let permit = limit
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let pool = pool.clone();
        tasks.spawn(async move {
            let n = seed_facility_bulk(&pool, company_id, f, days, first_date, last_date).await;
            drop(permit);
            n
        });
        // Surface a failure early instead of after every facility was started.
        while let Some(done) = tasks.try_join_next() {
            records +=
                done.map_err(|e| sqlx::Error::Protocol(format!("seed task failed: {e}")))??;
        }
    }
    while let Some(done) = tasks.join_next().await {
        records += done.map_err(|e| sqlx::Error::Protocol(format!("seed task failed: {e}")))??;
    }
    Ok(SeedReport {
        company_id,
        facilities,
        days,
        records,
        first_date,
        last_date,
    })
}

async fn seed_facility_bulk(
    pool: &PgPool,
    company_id: CompanyId,
    f: u32,
    days: u32,
    first_date: NaiveDate,
    last_date: NaiveDate,
) -> Result<u64> {
    let (mut rng, mut state) = facility_start(company_id, f);
    let mut payloads = Vec::with_capacity(days as usize);
    for day in 0..days {
        let date = first_date + Duration::days(i64::from(day));
        let mut body = snapshot(f, day, date, &mut rng, &mut state);
        if day + 1 == days {
            with_roll(&mut body, f);
        }
        let body = body.to_string();
        let p = domain::sync::parse(body.as_bytes(), last_date)?.payload;
        payloads.push((p, body));
    }
    let facility_ref = payloads
        .first()
        .and_then(|(p, _)| p.facility.clone())
        .unwrap_or_default();
    let mut tx = pool.begin().await?;
    let facility = crate::facilities::resolve_for_sync(&mut tx, company_id, &facility_ref).await?;
    let days: Vec<Day> = payloads
        .iter()
        .map(|(payload, raw_json)| Day { payload, raw_json })
        .collect();
    write_snapshots(&mut tx, company_id, &facility, &days, Source::Push).await?;
    crate::lease_up::record(&mut tx, company_id, facility.id.into()).await?;
    tx.commit().await?;
    Ok(days.len() as u64)
}

/// Records the `recommendations.ready` deliveries of one run's event, in its own transaction,
/// without a run: the webhook benchmark's load of deliveries. The jobs to push.
pub async fn recommendations_ready(
    pool: &PgPool,
    event: &crate::webhooks::RecommendationsReady,
) -> Result<crate::door::Jobs> {
    let mut tx = pool.begin().await?;
    let ids = crate::webhooks::record_recommendations_ready(&mut tx, event).await?;
    tx.commit().await?;
    Ok(crate::door::Jobs::of(
        crate::queue::Kind::WebhookDelivery,
        ids,
    ))
}
