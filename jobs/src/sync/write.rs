//! The one writer of daily snapshots: a push, an upload, a CRM pull and the demo seed all store
//! their days through [`write_snapshots`], which upserts any number of days of one facility in a
//! handful of statements (column arrays through `UNNEST`), whatever the number of days.

use crate::error::Result;
use crate::facilities::Resolved;
use crate::sync::store::Source;
use chrono::NaiveDate;
use domain::ids::CompanyId;
use domain::sync::derive::{derive, rent_by_size};
use domain::sync::payload::SyncPayload;
use domain::values::Count;
use sqlx::PgConnection;
use std::collections::HashMap;
use uuid::Uuid;

/// One day of a facility to write: the parsed snapshot and the body as received, kept for audit
/// (already checked by [`super::store::check_storable`]).
pub struct Day<'a> {
    pub payload: &'a SyncPayload,
    pub raw_json: &'a str,
}

/// A written day.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    pub sync_id: Uuid,
    pub date: NaiveDate,
    /// False when the day had a record, now replaced.
    pub created: bool,
    /// What the day's rent roll changed, when it carried one.
    pub rent_roll: Option<crate::rent_roll::RollOutcome>,
}

/// Column arrays of the records, per-size rows, leads and competitor observations of the days.
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
    coverage: Vec<Option<f64>>,
    occupied_potential: Vec<Option<f64>>,
    leads_total: Vec<Option<i32>>,
    promotions: Vec<String>,
    tenant_rents: Vec<String>,
    rent_by_size: Vec<String>,
    raw: Vec<String>,
    // sync_unit_types, by the day's date until the record ids are known
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
    l_date: Vec<NaiveDate>,
    l_channel: Vec<String>,
    l_count: Vec<i32>,
    // competitor_rates
    c_date: Vec<NaiveDate>,
    c_name: Vec<String>,
    c_size: Vec<String>,
    c_rate: Vec<f64>,
    c_tier: Vec<Option<String>>,
    c_promo: Vec<Option<String>>,
    c_url: Vec<Option<String>>,
}

fn to_i32(v: Option<u32>) -> Option<i32> {
    v.map(|v| i32::try_from(v).unwrap_or(i32::MAX))
}

fn count(c: Option<Count>) -> Option<i32> {
    c.map(|c| c.as_i32())
}

fn encode<T: serde::Serialize>(what: &str, v: &T) -> Result<String> {
    serde_json::to_string(v)
        .map_err(|e| crate::Error::Internal(format!("{what} could not be encoded: {e}")))
}

/// The body kept for audit: as received, except a rent roll's tenants, which are kept once
/// per tenant and per change (`jobs::rent_roll`) rather than once per day; the cohorts derived
/// from the roll stand in their place.
fn stored_raw(p: &SyncPayload, raw_json: &str) -> Result<String> {
    if p.tenants.is_none() {
        return Ok(raw_json.to_owned());
    }
    let mut v: serde_json::Value = serde_json::from_str(raw_json)
        .map_err(|e| crate::Error::Internal(format!("the stored body does not read: {e}")))?;
    if let Some(o) = v.as_object_mut() {
        o.remove("tenants");
        if !p.tenant_rents.is_empty() {
            o.insert(
                "tenant_rents".to_owned(),
                serde_json::to_value(&p.tenant_rents)
                    .map_err(|e| crate::Error::Internal(format!("tenant rents: {e}")))?,
            );
        }
    }
    Ok(v.to_string())
}

impl Columns {
    fn push(&mut self, p: &SyncPayload, raw_json: &str, rentable_sqft: Option<f64>) -> Result<()> {
        let d = derive(p, rentable_sqft);
        let date = p.date.0;
        let mi = p.move_ins.clone().unwrap_or_default();
        let mo = p.move_outs.clone().unwrap_or_default();
        self.ids.push(Uuid::now_v7());
        self.dates.push(date);
        self.occupancy.push(p.occupancy_pct.map(|v| v.get()));
        self.mi_daily.push(count(mi.daily));
        self.mi_mtd.push(count(mi.mtd));
        self.mi_target.push(count(mi.target_monthly));
        self.mo_daily.push(count(mo.daily));
        self.mo_mtd.push(count(mo.mtd));
        self.type_count
            .push(i32::try_from(p.unit_types.len()).unwrap_or(i32::MAX));
        self.total_units.push(to_i32(d.total_units));
        self.occupied_units.push(to_i32(d.occupied_units));
        self.units_est.push(d.units_estimated);
        self.sqft.push(d.rentable_sqft);
        self.sqft_est.push(d.rentable_sqft_estimated);
        self.gpr.push(d.gross_potential_rent);
        self.actual.push(d.actual_rent);
        self.actual_est.push(d.actual_rent_estimated);
        self.coverage.push(d.actual_rent_coverage_pct);
        self.occupied_potential.push(d.occupied_potential_rent);
        self.leads_total.push(to_i32(d.leads_total));
        self.promotions.push(encode("promotions", &p.promotions)?);
        self.tenant_rents
            .push(encode("tenant rents", &p.tenant_rents)?);
        let by_size = rent_by_size(p.tenant_rents.iter().map(|r| {
            (
                r.size.to_string(),
                f64::from(r.tenant_count.get()),
                r.avg_rent.get(),
            )
        }));
        self.rent_by_size
            .push(encode("tenant rents by size", &by_size)?);
        self.raw.push(stored_raw(p, raw_json)?);
        for (u, c) in p.unit_types.iter().zip(&d.per_type) {
            self.u_date.push(date);
            self.u_size.push(u.size.to_string());
            self.u_width.push(u.size.width_ft());
            self.u_depth.push(u.size.depth_ft());
            self.u_tier.push(u.tier_str().to_owned());
            self.u_rate.push(u.street_rate.get());
            self.u_occ.push(u.occupancy_pct.map(|v| v.get()));
            self.u_mtd.push(count(u.move_ins_mtd));
            self.u_total.push(to_i32(c.total_units));
            self.u_occupied.push(to_i32(c.occupied_units));
        }
        for l in &p.leads {
            self.l_date.push(date);
            self.l_channel.push(l.channel.as_str().to_lowercase());
            self.l_count.push(l.count.as_i32());
        }
        for r in &p.competitor_rates {
            self.c_date.push(date);
            self.c_name.push(r.competitor.as_str().to_owned());
            self.c_size.push(r.size.to_string());
            self.c_rate.push(r.rate.get());
            self.c_tier
                .push(r.tier.as_ref().map(|t| t.as_str().to_owned()));
            self.c_promo
                .push(r.promo.as_ref().map(|t| t.as_str().to_owned()));
            self.c_url
                .push(r.source_url.as_ref().map(|u| u.as_str().to_owned()));
        }
        Ok(())
    }
}

/// Upserts days of one facility, each keyed on facility and date, with their per-size rows,
/// leads and competitor observations, on the caller's connection (so a caller writes all its
/// days, and whatever goes with them, in one transaction). A day that had a record keeps its id
/// and has its rows replaced. Where two days share a date the later one is written. Returns the
/// written days in date order. Concurrent writes of one facility and date serialise on the
/// record's row.
pub(crate) async fn write_snapshots(
    conn: &mut PgConnection,
    company_id: CompanyId,
    facility: &Resolved,
    days: &[Day<'_>],
    source: Source,
) -> Result<Vec<Written>> {
    let order = last_of_each_date(days);
    let mut cols = Columns::default();
    for &i in &order {
        cols.push(days[i].payload, days[i].raw_json, facility.rentable_sqft)?;
    }
    if cols.ids.is_empty() {
        return Ok(vec![]);
    }
    let fid = facility.id;
    lock_facility(&mut *conn, fid).await?;
    let mut written = upsert_records(&mut *conn, company_id, fid, source, &cols).await?;
    written.sort_by_key(|w| w.date);
    let replaced: Vec<Uuid> = written
        .iter()
        .filter(|w| !w.created)
        .map(|w| w.sync_id)
        .collect();
    if !replaced.is_empty() {
        delete_rows_of(&mut *conn, &replaced).await?;
    }
    let id_of: HashMap<NaiveDate, Uuid> = written.iter().map(|w| (w.date, w.sync_id)).collect();
    let ids = |dates: &[NaiveDate]| -> Vec<Uuid> { dates.iter().map(|d| id_of[d]).collect() };
    if !cols.u_date.is_empty() {
        insert_unit_types(&mut *conn, fid, &ids(&cols.u_date), &cols).await?;
    }
    if !cols.l_date.is_empty() {
        insert_leads(&mut *conn, fid, &ids(&cols.l_date), &cols).await?;
    }
    if !cols.c_date.is_empty() {
        insert_competitor_rates(&mut *conn, company_id, fid, &ids(&cols.c_date), &cols).await?;
    }
    apply_rolls(&mut *conn, company_id, fid, days, &order, &mut written).await?;
    Ok(written)
}

/// Takes the facility's row before any of its snapshot rows: writers of one facility's snapshots
/// (pushes of several days at once, an upload, a CRM pull, a held roll's confirmation) then take
/// their locks in one order, the facility first, and wait on each other instead of deadlocking
/// over its records, its rent roll or the rollups the records' triggers keep. `FOR NO KEY
/// UPDATE` leaves other facilities' writers and readers alone, and the key-share locks that
/// rows referring to the facility take do not conflict with it.
pub(crate) async fn lock_facility(conn: &mut PgConnection, fid: Uuid) -> Result<()> {
    sqlx::query_scalar!(
        "SELECT id FROM facilities WHERE id = $1 FOR NO KEY UPDATE",
        fid
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(())
}

/// The index of the last day of each date, in date order.
fn last_of_each_date(days: &[Day<'_>]) -> Vec<usize> {
    let mut last: HashMap<NaiveDate, usize> = HashMap::new();
    for (i, d) in days.iter().enumerate() {
        last.insert(d.payload.date.0, i);
    }
    let mut order: Vec<usize> = last.into_values().collect();
    order.sort_by_key(|&i| days[i].payload.date.0);
    order
}

/// Upserts the days' records; the written days, in the order the database returned them.
async fn upsert_records(
    conn: &mut PgConnection,
    company_id: CompanyId,
    fid: Uuid,
    source: Source,
    cols: &Columns,
) -> Result<Vec<Written>> {
    let rows = sqlx::query!(
        r#"INSERT INTO sync_records (
               id, company_id, facility_id, snapshot_date, source, occupancy_pct,
               move_ins_daily, move_ins_mtd, move_ins_target_monthly, move_outs_daily, move_outs_mtd,
               unit_type_count, total_units, occupied_units, units_estimated, rentable_sqft,
               rentable_sqft_estimated, gross_potential_rent, actual_rent, actual_rent_estimated,
               leads_total, promotions, tenant_rents, raw_payload, actual_rent_coverage_pct,
               occupied_potential_rent, tenant_rent_by_size)
           SELECT u.id, $1, $2, u.d, $3, u.occ, u.mid, u.mim, u.mit, u.mod, u.mom, u.tc, u.tu, u.ou,
                  u.ue, u.sq, u.se, u.gpr, u.ar, u.ae, u.lt, u.pr::jsonb, u.tr::jsonb, u.raw::jsonb,
                  u.cov, u.opr, u.rbs::jsonb
           FROM UNNEST($4::uuid[], $5::date[], $6::float8[], $7::int4[], $8::int4[], $9::int4[],
                       $10::int4[], $11::int4[], $12::int4[], $13::int4[], $14::int4[], $15::bool[],
                       $16::float8[], $17::bool[], $18::float8[], $19::float8[], $20::bool[],
                       $21::int4[], $22::text[], $23::text[], $24::text[], $25::float8[],
                       $26::float8[], $27::text[])
                AS u(id, d, occ, mid, mim, mit, mod, mom, tc, tu, ou, ue, sq, se, gpr, ar, ae, lt, pr,
                     tr, raw, cov, opr, rbs)
           ON CONFLICT (facility_id, snapshot_date) DO UPDATE SET
               source = EXCLUDED.source, occupancy_pct = EXCLUDED.occupancy_pct,
               move_ins_daily = EXCLUDED.move_ins_daily, move_ins_mtd = EXCLUDED.move_ins_mtd,
               move_ins_target_monthly = EXCLUDED.move_ins_target_monthly,
               move_outs_daily = EXCLUDED.move_outs_daily, move_outs_mtd = EXCLUDED.move_outs_mtd,
               unit_type_count = EXCLUDED.unit_type_count, total_units = EXCLUDED.total_units,
               occupied_units = EXCLUDED.occupied_units, units_estimated = EXCLUDED.units_estimated,
               rentable_sqft = EXCLUDED.rentable_sqft, rentable_sqft_estimated = EXCLUDED.rentable_sqft_estimated,
               gross_potential_rent = EXCLUDED.gross_potential_rent, actual_rent = EXCLUDED.actual_rent,
               actual_rent_estimated = EXCLUDED.actual_rent_estimated, leads_total = EXCLUDED.leads_total,
               actual_rent_coverage_pct = EXCLUDED.actual_rent_coverage_pct,
               occupied_potential_rent = EXCLUDED.occupied_potential_rent,
               promotions = EXCLUDED.promotions, tenant_rents = EXCLUDED.tenant_rents,
               tenant_rent_by_size = EXCLUDED.tenant_rent_by_size, raw_payload = EXCLUDED.raw_payload, updated_at = now()
           RETURNING id, snapshot_date, (xmax = 0) AS "created!""#,
        company_id.uuid(),
        fid,
        source.as_str(),
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
        &cols.coverage as &[Option<f64>],
        &cols.occupied_potential as &[Option<f64>],
        &cols.rent_by_size,
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Written {
            sync_id: r.id,
            date: r.snapshot_date,
            created: r.created,
            rent_roll: None,
        })
        .collect())
}

/// Deletes the per-size rows, leads and competitor observations of replaced records.
async fn delete_rows_of(conn: &mut PgConnection, replaced: &[Uuid]) -> Result<()> {
    sqlx::query!(
        "DELETE FROM sync_unit_types WHERE sync_id = ANY($1)",
        replaced
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("DELETE FROM sync_leads WHERE sync_id = ANY($1)", replaced)
        .execute(&mut *conn)
        .await?;
    sqlx::query!(
        "DELETE FROM competitor_rates WHERE sync_id = ANY($1)",
        replaced
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Inserts the days' per-size rows, `sync_ids` being the record of each.
async fn insert_unit_types(
    conn: &mut PgConnection,
    fid: Uuid,
    sync_ids: &[Uuid],
    cols: &Columns,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO sync_unit_types (sync_id, facility_id, snapshot_date, size, width_ft, depth_ft, tier,
             street_rate, occupancy_pct, move_ins_mtd, total_units, occupied_units)
         SELECT u.s, $1, u.d, u.size, u.w, u.dp, u.tier, u.rate, u.occ, u.mtd, u.tot, u.occd
         FROM UNNEST($2::uuid[], $3::date[], $4::text[], $5::float8[], $6::float8[], $7::text[],
                     $8::float8[], $9::float8[], $10::int4[], $11::int4[], $12::int4[])
              AS u(s, d, size, w, dp, tier, rate, occ, mtd, tot, occd)",
        fid,
        sync_ids,
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
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Inserts the days' leads, `sync_ids` being the record of each.
async fn insert_leads(
    conn: &mut PgConnection,
    fid: Uuid,
    sync_ids: &[Uuid],
    cols: &Columns,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO sync_leads (sync_id, facility_id, snapshot_date, channel, lead_count)
         SELECT u.s, $1, u.d, u.c, u.n FROM UNNEST($2::uuid[], $3::date[], $4::text[], $5::int4[]) AS u(s, d, c, n)",
        fid,
        sync_ids,
        &cols.l_date,
        &cols.l_channel,
        &cols.l_count,
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Inserts the days' competitor observations, `sync_ids` being the record of each.
async fn insert_competitor_rates(
    conn: &mut PgConnection,
    company_id: CompanyId,
    fid: Uuid,
    sync_ids: &[Uuid],
    cols: &Columns,
) -> Result<()> {
    sqlx::query!(
        "INSERT INTO competitor_rates (company_id, facility_id, sync_id, observed_on, source,
             competitor, size, rate, promo, source_url, tier)
         SELECT $1, $2, u.s, u.d, 'sync', u.c, u.size, u.rate, u.promo, u.url, u.tier
         FROM UNNEST($3::uuid[], $4::date[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::text[],
                     $10::text[])
              AS u(s, d, c, size, rate, promo, url, tier)",
        company_id.uuid(),
        fid,
        sync_ids,
        &cols.c_date,
        &cols.c_name,
        &cols.c_size,
        &cols.c_rate,
        &cols.c_promo as &[Option<String>],
        &cols.c_url as &[Option<String>],
        &cols.c_tier as &[Option<String>],
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Applies the days' rent rolls, oldest first, each against the roll the previous one left,
/// and notes each outcome on its written day.
async fn apply_rolls(
    conn: &mut PgConnection,
    company_id: CompanyId,
    fid: Uuid,
    days: &[Day<'_>],
    order: &[usize],
    written: &mut [Written],
) -> Result<()> {
    for &i in order {
        let p = days[i].payload;
        if let Some(roll) = &p.tenants {
            let guard = crate::rent_roll::Guard::Hold;
            let outcome =
                crate::rent_roll::apply_checked(&mut *conn, company_id, fid, p.date.0, roll, guard)
                    .await?;
            if let Some(w) = written.iter_mut().find(|w| w.date == p.date.0) {
                w.rent_roll = Some(outcome);
            }
        }
    }
    Ok(())
}

/// The company and facility of a stored snapshot; `None` when it no longer exists (its
/// facility was deleted).
pub(crate) async fn owner_of(
    conn: &mut PgConnection,
    sync_id: Uuid,
) -> Result<Option<(CompanyId, domain::ids::FacilityId)>> {
    Ok(sqlx::query!(
        "SELECT facility_id, company_id FROM sync_records WHERE id = $1",
        sync_id
    )
    .fetch_optional(&mut *conn)
    .await?
    .map(|r| (r.company_id.into(), r.facility_id.into())))
}
