//! A generator of realistic synthetic history: N facilities x D days of daily snapshots, sent
//! through the same parse-and-ingest path as a push. Deterministic for a given company and
//! sizes, so demos and benchmarks are repeatable.

use crate::error::Result;
use crate::sync::{self, Source};
use chrono::{Datelike, Duration, NaiveDate};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde::Serialize;
use serde_json::{json, Value};
use sqlx::PgPool;
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct SeedReport {
    pub company_id: Uuid,
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
const COMPETITORS: [&str; 5] = [
    "Public Storage",
    "Extra Space",
    "CubeSmart",
    "Life Storage",
    "Local Lockers",
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
    let unit_types: Vec<Value> = UNIT_MIX
        .iter()
        .zip(&state.rates)
        .map(|((size, tier, _, units), rate)| {
            let occ = (state.occupancy + rng.gen_range(-6.0..6.0)).clamp(0.0, 100.0);
            let occupied = (f64::from(*units) * occ / 100.0).round() as u32;
            json!({
                "size": size, "tier": tier, "street_rate": rate,
                "occupancy_pct": (occ * 10.0).round() / 10.0,
                "move_ins_mtd": state.move_ins_mtd / 10,
                "total_units": units, "occupied_units": occupied.min(*units),
            })
        })
        .collect();
    let competitor_rates: Vec<Value> = COMPETITORS
        .iter()
        .flat_map(|c| {
            [("5x10", 79.0), ("10x10", 129.0), ("10x20", 199.0)].map(|(size, base)| {
                json!({
                    "competitor": c, "size": size,
                    "rate": (base * rng.gen_range(0.85..1.2_f64)).round(),
                    "promo": if rng.gen_bool(0.3) { Value::from("First month $1") } else { Value::Null },
                    "source_url": format!("https://example.com/{}", c.to_lowercase().replace(' ', "-")),
                })
            })
        })
        .collect();
    let tenant_rents: Vec<Value> = UNIT_MIX
        .iter()
        .zip(&state.rates)
        .map(|((size, _, _, units), rate)| {
            json!({
                "size": size, "avg_rent": (rate * rng.gen_range(0.82..1.02_f64)).round(),
                "tenant_count": (f64::from(*units) * state.occupancy / 100.0 / 2.0).round(),
                "months_since_last_increase": rng.gen_range(1..18), "original_rent": (rate * 0.8).round(),
            })
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

/// Seeds `facilities` x `days` snapshots ending at `last_date`.
pub async fn seed(
    pool: &PgPool,
    company_id: Uuid,
    facilities: u32,
    days: u32,
    last_date: NaiveDate,
) -> Result<SeedReport> {
    crate::tenancy::company(pool, company_id).await?;
    let days = days.max(1);
    let first_date = last_date - Duration::days(i64::from(days) - 1);
    let mut records = 0;
    for f in 0..facilities {
        let mut rng = StdRng::seed_from_u64(
            u64::from(f)
                ^ u64::from_le_bytes(company_id.as_bytes()[..8].try_into().unwrap_or_default()),
        );
        let mut state = FacilityState::new(f, &mut rng);
        for day in 0..days {
            let date = first_date + Duration::days(i64::from(day));
            let body = snapshot(f, day, date, &mut rng, &mut state).to_string();
            let parsed = domain::sync::parse(body.as_bytes(), last_date)?;
            sync::ingest(pool, company_id, &parsed.payload, &body, Source::Push).await?;
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
/// statements (UNNEST of column arrays) in one transaction per facility, `parallel` facilities
/// at a time: for large histories (1,000 facilities x 730 days). Each snapshot is generated,
/// parsed and validated exactly as a push is, and stored with the figures the ingest derives;
/// the lease-up history is evaluated the way the ingest job evaluates it. No ingest job is
/// recorded (there is nothing left for it to do). Days of the range that a facility already
/// has are replaced.
pub async fn seed_bulk(
    pool: &PgPool,
    company_id: Uuid,
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

/// Column arrays of one facility's history, in insertion order.
#[derive(Default)]
struct Columns {
    // sync_records
    ids: Vec<Uuid>,
    dates: Vec<NaiveDate>,
    occupancy: Vec<Option<f64>>,
    mi_daily: Vec<Option<i32>>,
    mi_mtd: Vec<Option<i32>>,
    mi_target: Vec<Option<i32>>,
    mo_daily: Vec<Option<i32>>,
    mo_mtd: Vec<Option<i32>>,
    type_count: Vec<i32>,
    total_units: Vec<Option<i32>>,
    occupied_units: Vec<Option<i32>>,
    units_est: Vec<bool>,
    sqft: Vec<Option<f64>>,
    sqft_est: Vec<bool>,
    gpr: Vec<Option<f64>>,
    actual: Vec<Option<f64>>,
    actual_est: Vec<bool>,
    leads_total: Vec<Option<i32>>,
    promotions: Vec<String>,
    tenant_rents: Vec<String>,
    raw: Vec<String>,
    // sync_unit_types
    u_sync: Vec<Uuid>,
    u_date: Vec<NaiveDate>,
    u_size: Vec<String>,
    u_width: Vec<f64>,
    u_depth: Vec<f64>,
    u_tier: Vec<String>,
    u_rate: Vec<f64>,
    u_occ: Vec<Option<f64>>,
    u_mtd: Vec<Option<i32>>,
    u_total: Vec<Option<i32>>,
    u_occupied: Vec<Option<i32>>,
    // sync_leads
    l_sync: Vec<Uuid>,
    l_date: Vec<NaiveDate>,
    l_channel: Vec<String>,
    l_count: Vec<i32>,
    // competitor_rates
    c_sync: Vec<Uuid>,
    c_date: Vec<NaiveDate>,
    c_name: Vec<String>,
    c_size: Vec<String>,
    c_rate: Vec<f64>,
    c_promo: Vec<Option<String>>,
    c_url: Vec<Option<String>>,
}

fn to_i32(v: Option<u32>) -> Option<i32> {
    v.map(|v| i32::try_from(v).unwrap_or(i32::MAX))
}

async fn seed_facility_bulk(
    pool: &PgPool,
    company_id: Uuid,
    f: u32,
    days: u32,
    first_date: NaiveDate,
    last_date: NaiveDate,
) -> Result<u64> {
    let mut rng = StdRng::seed_from_u64(
        u64::from(f)
            ^ u64::from_le_bytes(company_id.as_bytes()[..8].try_into().unwrap_or_default()),
    );
    let mut state = FacilityState::new(f, &mut rng);
    let mut payloads = Vec::with_capacity(days as usize);
    for day in 0..days {
        let date = first_date + Duration::days(i64::from(day));
        let body = snapshot(f, day, date, &mut rng, &mut state).to_string();
        let p = domain::sync::parse(body.as_bytes(), last_date)?.payload;
        payloads.push((date, p, body));
    }
    let facility_ref = payloads
        .first()
        .and_then(|p| p.1.facility.clone())
        .unwrap_or_default();
    let mut tx = pool.begin().await?;
    let facility = crate::facilities::resolve_for_sync(&mut tx, company_id, &facility_ref).await?;
    let mut cols = Columns::default();
    let count = |c: Option<domain::values::Count>| c.map(|c| c.as_i32());
    for (date, p, body) in payloads {
        let d = domain::sync::derive::derive(&p, facility.rentable_sqft);
        let id = Uuid::now_v7();
        let mi = p.move_ins.clone().unwrap_or_default();
        let mo = p.move_outs.clone().unwrap_or_default();
        cols.ids.push(id);
        cols.dates.push(date);
        cols.occupancy.push(p.occupancy_pct.map(|v| v.get()));
        cols.mi_daily.push(count(mi.daily));
        cols.mi_mtd.push(count(mi.mtd));
        cols.mi_target.push(count(mi.target_monthly));
        cols.mo_daily.push(count(mo.daily));
        cols.mo_mtd.push(count(mo.mtd));
        cols.type_count
            .push(i32::try_from(p.unit_types.len()).unwrap_or(i32::MAX));
        cols.total_units.push(to_i32(d.total_units));
        cols.occupied_units.push(to_i32(d.occupied_units));
        cols.units_est.push(d.units_estimated);
        cols.sqft.push(d.rentable_sqft);
        cols.sqft_est.push(d.rentable_sqft_estimated);
        cols.gpr.push(d.gross_potential_rent);
        cols.actual.push(d.actual_rent);
        cols.actual_est.push(d.actual_rent_estimated);
        cols.leads_total.push(to_i32(d.leads_total));
        cols.promotions
            .push(serde_json::to_string(&p.promotions).unwrap_or_else(|_| "[]".into()));
        cols.tenant_rents
            .push(serde_json::to_string(&p.tenant_rents).unwrap_or_else(|_| "[]".into()));
        cols.raw.push(body);
        for (u, c) in p.unit_types.iter().zip(&d.per_type) {
            cols.u_sync.push(id);
            cols.u_date.push(date);
            cols.u_size.push(u.size.to_string());
            cols.u_width.push(u.size.width_ft());
            cols.u_depth.push(u.size.depth_ft());
            cols.u_tier.push(u.tier_str().to_owned());
            cols.u_rate.push(u.street_rate.get());
            cols.u_occ.push(u.occupancy_pct.map(|v| v.get()));
            cols.u_mtd.push(count(u.move_ins_mtd));
            cols.u_total.push(to_i32(c.total_units));
            cols.u_occupied.push(to_i32(c.occupied_units));
        }
        for l in &p.leads {
            cols.l_sync.push(id);
            cols.l_date.push(date);
            cols.l_channel.push(l.channel.as_str().to_lowercase());
            cols.l_count.push(l.count.as_i32());
        }
        for r in &p.competitor_rates {
            cols.c_sync.push(id);
            cols.c_date.push(date);
            cols.c_name.push(r.competitor.as_str().to_owned());
            cols.c_size.push(r.size.to_string());
            cols.c_rate.push(r.rate.get());
            cols.c_promo
                .push(r.promo.as_ref().map(|t| t.as_str().to_owned()));
            cols.c_url
                .push(r.source_url.as_ref().map(|u| u.as_str().to_owned()));
        }
    }
    let fid = facility.id;
    sqlx::query!(
        "DELETE FROM sync_records WHERE facility_id = $1 AND snapshot_date BETWEEN $2 AND $3",
        fid,
        first_date,
        last_date
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        r#"INSERT INTO sync_records (
               id, company_id, facility_id, snapshot_date, source, occupancy_pct,
               move_ins_daily, move_ins_mtd, move_ins_target_monthly, move_outs_daily, move_outs_mtd,
               unit_type_count, total_units, occupied_units, units_estimated, rentable_sqft,
               rentable_sqft_estimated, gross_potential_rent, actual_rent, actual_rent_estimated,
               leads_total, promotions, tenant_rents, raw_payload)
           SELECT u.id, $1, $2, u.d, 'push', u.occ, u.mid, u.mim, u.mit, u.mod, u.mom, u.tc, u.tu, u.ou,
                  u.ue, u.sq, u.se, u.gpr, u.ar, u.ae, u.lt, u.pr::jsonb, u.tr::jsonb, u.raw::jsonb
           FROM UNNEST($3::uuid[], $4::date[], $5::float8[], $6::int4[], $7::int4[], $8::int4[],
                       $9::int4[], $10::int4[], $11::int4[], $12::int4[], $13::int4[], $14::bool[],
                       $15::float8[], $16::bool[], $17::float8[], $18::float8[], $19::bool[],
                       $20::int4[], $21::text[], $22::text[], $23::text[])
                AS u(id, d, occ, mid, mim, mit, mod, mom, tc, tu, ou, ue, sq, se, gpr, ar, ae, lt, pr, tr, raw)"#,
        company_id,
        fid,
        &cols.ids,
        &cols.dates,
        &cols.occupancy as &[Option<f64>],
        &cols.mi_daily as &[Option<i32>],
        &cols.mi_mtd as &[Option<i32>],
        &cols.mi_target as &[Option<i32>],
        &cols.mo_daily as &[Option<i32>],
        &cols.mo_mtd as &[Option<i32>],
        &cols.type_count,
        &cols.total_units as &[Option<i32>],
        &cols.occupied_units as &[Option<i32>],
        &cols.units_est,
        &cols.sqft as &[Option<f64>],
        &cols.sqft_est,
        &cols.gpr as &[Option<f64>],
        &cols.actual as &[Option<f64>],
        &cols.actual_est,
        &cols.leads_total as &[Option<i32>],
        &cols.promotions,
        &cols.tenant_rents,
        &cols.raw,
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "INSERT INTO sync_unit_types (sync_id, facility_id, snapshot_date, size, width_ft, depth_ft, tier,
             street_rate, occupancy_pct, move_ins_mtd, total_units, occupied_units)
         SELECT u.s, $1, u.d, u.size, u.w, u.dp, u.tier, u.rate, u.occ, u.mtd, u.tot, u.occd
         FROM UNNEST($2::uuid[], $3::date[], $4::text[], $5::float8[], $6::float8[], $7::text[],
                     $8::float8[], $9::float8[], $10::int4[], $11::int4[], $12::int4[])
              AS u(s, d, size, w, dp, tier, rate, occ, mtd, tot, occd)",
        fid,
        &cols.u_sync,
        &cols.u_date,
        &cols.u_size,
        &cols.u_width,
        &cols.u_depth,
        &cols.u_tier,
        &cols.u_rate,
        &cols.u_occ as &[Option<f64>],
        &cols.u_mtd as &[Option<i32>],
        &cols.u_total as &[Option<i32>],
        &cols.u_occupied as &[Option<i32>],
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "INSERT INTO sync_leads (sync_id, facility_id, snapshot_date, channel, lead_count)
         SELECT u.s, $1, u.d, u.c, u.n FROM UNNEST($2::uuid[], $3::date[], $4::text[], $5::int4[]) AS u(s, d, c, n)",
        fid,
        &cols.l_sync,
        &cols.l_date,
        &cols.l_channel,
        &cols.l_count,
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "INSERT INTO competitor_rates (company_id, facility_id, sync_id, observed_on, source,
             competitor, size, rate, promo, source_url)
         SELECT $1, $2, u.s, u.d, 'sync', u.c, u.size, u.rate, u.promo, u.url
         FROM UNNEST($3::uuid[], $4::date[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::text[])
              AS u(s, d, c, size, rate, promo, url)",
        company_id,
        fid,
        &cols.c_sync,
        &cols.c_date,
        &cols.c_name,
        &cols.c_size,
        &cols.c_rate,
        &cols.c_promo as &[Option<String>],
        &cols.c_url as &[Option<String>],
    )
    .execute(&mut *tx)
    .await?;
    // Lease-up: the facility's whole history evaluated in date order, as the ingest job does.
    let all: Vec<(NaiveDate, f64)> = sqlx::query!(
        r#"SELECT snapshot_date, occupancy_pct AS "occupancy_pct!" FROM sync_records
           WHERE facility_id = $1 AND occupancy_pct IS NOT NULL"#,
        fid
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.snapshot_date, r.occupancy_pct))
    .collect();
    let (mode, events) = domain::lease_up::history(&all);
    sqlx::query!("DELETE FROM lease_up_events WHERE facility_id = $1", fid)
        .execute(&mut *tx)
        .await?;
    let e_dates: Vec<NaiveDate> = events.iter().map(|e| e.date).collect();
    let e_from: Vec<String> = events.iter().map(|e| e.from.as_str().to_owned()).collect();
    let e_to: Vec<String> = events.iter().map(|e| e.to.as_str().to_owned()).collect();
    let e_occ: Vec<f64> = events.iter().map(|e| e.occupancy_pct).collect();
    sqlx::query!(
        "INSERT INTO lease_up_events (facility_id, company_id, snapshot_date, from_mode, to_mode, occupancy_pct)
         SELECT $1, $2, * FROM UNNEST($3::date[], $4::text[], $5::text[], $6::float8[])",
        fid,
        company_id,
        &e_dates,
        &e_from,
        &e_to,
        &e_occ,
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!(
        "UPDATE facilities SET mode = $2 WHERE id = $1",
        fid,
        mode.as_str()
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(u64::from(days))
}
