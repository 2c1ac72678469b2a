//! The analytics answers: load from PostgreSQL, compute with the pure functions, shape.
//! Every query is scoped by company; a facility of another company is reported like an
//! unknown one.

pub mod competitors;
pub mod ecri;
pub mod leads;
pub mod lease_up;
pub mod portfolio;
pub mod revpas;
pub mod seasonality;

use crate::access::Scope;
use crate::error::{Error, Result};
use chrono::NaiveDate;
use domain::analytics::revenue::Figures;
use domain::ids::{CompanyId, FacilityId};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// A facility in the scope of a request.
#[derive(Clone, Debug, Serialize)]
pub struct FacilityRow {
    pub id: Uuid,
    pub name: String,
    pub mode: String,
}

/// The company's facilities that `allowed` sees, or the one asked for (404 when it is not the
/// company's or not in `allowed`, alike).
pub async fn scope(
    pool: &PgPool,
    company_id: CompanyId,
    facility: Option<FacilityId>,
    allowed: &Scope,
) -> Result<Vec<FacilityRow>> {
    let rows = sqlx::query_as!(
        FacilityRow,
        "SELECT id, name, mode FROM facilities
         WHERE company_id = $1 AND ($2::uuid IS NULL OR id = $2)
           AND ($3::uuid[] IS NULL OR id = ANY($3))
         ORDER BY lower(name), id",
        company_id.uuid(),
        facility.map(FacilityId::uuid),
        allowed.ids()
    )
    .fetch_all(pool)
    .await?;
    if let (Some(id), true) = (facility, rows.is_empty()) {
        return Err(Error::not_found(format!("no facility with id {id}")));
    }
    Ok(rows)
}

/// Runs a read on a task of its own: a report's independent reads then decode their rows on
/// every core at once. A read that panicked is an internal error.
pub async fn spawned<T: Send + 'static>(
    read: impl std::future::Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    tokio::spawn(read)
        .await
        .map_err(|e| Error::Internal(format!("a report read failed: {e}")))?
}

/// The facility list a company-wide query narrows to: `None` (every facility of the company)
/// unless the reader is limited to some, or one facility was asked for (which the query's own
/// facility filter handles).
pub fn narrowed(facility: Option<FacilityId>, allowed: &Scope) -> Option<Vec<Uuid>> {
    match facility {
        Some(_) => None,
        None => allowed.ids().map(<[Uuid]>::to_vec),
    }
}

pub fn ids(rows: &[FacilityRow]) -> Vec<Uuid> {
    rows.iter().map(|f| f.id).collect()
}

/// A facility's latest snapshot: the columns the analytics read.
#[derive(Clone, Debug)]
pub struct Latest {
    pub facility_id: Uuid,
    pub sync_id: Uuid,
    pub snapshot_date: NaiveDate,
    pub occupancy_pct: Option<f64>,
    pub move_ins_mtd: Option<i32>,
    pub move_outs_mtd: Option<i32>,
    pub move_ins_target_monthly: Option<i32>,
    pub figures: Figures,
    /// The snapshot's tenants and their rent per month, summed per size.
    pub in_place: BTreeMap<String, InPlace>,
}

/// The latest snapshot of each facility that has one (one index probe per facility).
pub async fn latest(pool: &PgPool, facility_ids: &[Uuid]) -> Result<BTreeMap<Uuid, Latest>> {
    let rows = sqlx::query!(
        r#"SELECT s.facility_id AS "facility_id!", s.id AS "sync_id!", s.snapshot_date AS "snapshot_date!",
                  s.occupancy_pct, s.move_ins_mtd, s.move_outs_mtd, s.move_ins_target_monthly,
                  s.total_units, s.occupied_units, s.units_estimated AS "units_estimated!",
                  s.rentable_sqft, s.rentable_sqft_estimated AS "rentable_sqft_estimated!",
                  s.gross_potential_rent, s.actual_rent, s.actual_rent_estimated AS "actual_rent_estimated!",
                  s.actual_rent_coverage_pct, s.occupied_potential_rent,
                  s.tenant_rent_by_size AS "by_size: sqlx::types::Json<RentBySize>",
                  CASE WHEN s.tenant_rent_by_size IS NULL THEN s.tenant_rents END
                      AS "tenant_rents: sqlx::types::Json<TenantRents>"
           FROM unnest($1::uuid[]) AS f(id)
           CROSS JOIN LATERAL (
               SELECT * FROM sync_records r WHERE r.facility_id = f.id
               ORDER BY r.snapshot_date DESC LIMIT 1
           ) s"#,
        facility_ids
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (
                r.facility_id,
                Latest {
                    facility_id: r.facility_id,
                    sync_id: r.sync_id,
                    snapshot_date: r.snapshot_date,
                    occupancy_pct: r.occupancy_pct,
                    move_ins_mtd: r.move_ins_mtd,
                    move_outs_mtd: r.move_outs_mtd,
                    move_ins_target_monthly: r.move_ins_target_monthly,
                    figures: Figures {
                        total_units: r.total_units.map(i64::from),
                        occupied_units: r.occupied_units.map(i64::from),
                        units_estimated: r.units_estimated,
                        rentable_sqft: r.rentable_sqft,
                        rentable_sqft_estimated: r.rentable_sqft_estimated,
                        gross_potential_rent: r.gross_potential_rent,
                        actual_rent: r.actual_rent,
                        actual_rent_estimated: r.actual_rent_estimated,
                        actual_rent_coverage_pct: r.actual_rent_coverage_pct,
                        occupied_potential_rent: r.occupied_potential_rent,
                    },
                    in_place: match (r.by_size, r.tenant_rents) {
                        (Some(b), _) => b.0 .0,
                        (None, Some(rows)) => summed_by_size(&rows.0 .0),
                        (None, None) => BTreeMap::new(),
                    },
                },
            )
        })
        .collect())
}

/// The latest snapshot of each facility that has one, and the unit types of those snapshots
/// (by snapshot id).
pub async fn latest_with_units(
    pool: &PgPool,
    facility_ids: &[Uuid],
) -> Result<(BTreeMap<Uuid, Latest>, BTreeMap<Uuid, Vec<UnitRow>>)> {
    let latest = latest(pool, facility_ids).await?;
    let sync_ids: Vec<Uuid> = latest.values().map(|l| l.sync_id).collect();
    let units = unit_types(pool, &sync_ids).await?;
    Ok((latest, units))
}

/// One unit type of a snapshot.
#[derive(Clone, Debug)]
pub struct UnitRow {
    pub size: String,
    pub tier: String,
    pub street_rate: f64,
    pub occupancy_pct: Option<f64>,
    pub total_units: Option<i32>,
}

/// The unit types of the given snapshots, by snapshot.
/// One index probe per snapshot, whatever the table's size (on a small table the planner
/// would otherwise scan all of it for a long id list).
pub async fn unit_types(pool: &PgPool, sync_ids: &[Uuid]) -> Result<BTreeMap<Uuid, Vec<UnitRow>>> {
    let rows = sqlx::query!(
        r#"SELECT s.id AS "sync_id!", u.size, u.tier, u.street_rate, u.occupancy_pct, u.total_units
           FROM unnest($1::uuid[]) AS s(id)
           CROSS JOIN LATERAL (
               SELECT x.size, x.tier, x.street_rate, x.occupancy_pct, x.total_units
               FROM sync_unit_types x WHERE x.sync_id = s.id ORDER BY x.size, x.tier
           ) u"#,
        sync_ids
    )
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<Uuid, Vec<UnitRow>> = BTreeMap::new();
    for r in rows {
        out.entry(r.sync_id).or_default().push(UnitRow {
            size: r.size,
            tier: r.tier,
            street_rate: r.street_rate,
            occupancy_pct: r.occupancy_pct,
            total_units: r.total_units,
        });
    }
    Ok(out)
}

/// The street rate of each size: the unit-weighted mean over its tiers when every tier has a
/// unit count, else the plain mean.
pub fn street_by_size(units: &[UnitRow]) -> BTreeMap<String, f64> {
    let mut groups: BTreeMap<String, Vec<&UnitRow>> = BTreeMap::new();
    for u in units {
        groups.entry(u.size.clone()).or_default().push(u);
    }
    groups
        .into_iter()
        .map(|(size, rows)| {
            let weighted = rows.iter().all(|r| r.total_units.is_some_and(|n| n > 0));
            let rate = if weighted {
                let n: f64 = rows
                    .iter()
                    .map(|r| f64::from(r.total_units.unwrap_or(0)))
                    .sum();
                rows.iter()
                    .map(|r| r.street_rate * f64::from(r.total_units.unwrap_or(0)))
                    .sum::<f64>()
                    / n
            } else {
                rows.iter().map(|r| r.street_rate).sum::<f64>() / rows.len() as f64
            };
            (size, domain::values::round2(rate))
        })
        .collect()
}

/// A tenant-rent row as stored on the record (normalised at ingest).
#[derive(Clone, Debug, Deserialize)]
pub struct StoredTenantRent {
    pub size: String,
    pub avg_rent: f64,
    pub tenant_count: u32,
    pub months_since_last_increase: Option<f64>,
    /// Tenants of the cohort the PMS flags as not to be increased.
    #[serde(default)]
    pub flagged_count: Option<u32>,
}

/// The tenant-rent rows of a record, read from its JSON without building a document tree.
/// Written by the ingest from validated payloads; a row that does not read is skipped (and
/// anything but an array reads as none) rather than failing the whole answer.
#[derive(Clone, Debug, Default)]
pub struct TenantRents(pub Vec<StoredTenantRent>);

impl<'de> Deserialize<'de> for TenantRents {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        Ok(Self(tenant_rents(raw.get())))
    }
}

/// The rows of a stored tenant-rent array (see [`TenantRents`]).
pub fn tenant_rents(json: &str) -> Vec<StoredTenantRent> {
    let rows: Vec<Box<serde_json::value::RawValue>> =
        serde_json::from_str(json).unwrap_or_default();
    rows.iter()
        .filter_map(|r| serde_json::from_str(r.get()).ok())
        .collect()
}

/// The tenant-rent rows of one snapshot (an empty list when it has none or is not found).
pub async fn tenant_rents_of(pool: &PgPool, sync_id: Uuid) -> Result<Vec<StoredTenantRent>> {
    let json = sqlx::query_scalar!(
        r#"SELECT tenant_rents AS "tenant_rents!: sqlx::types::Json<TenantRents>"
           FROM sync_records WHERE id = $1"#,
        sync_id
    )
    .fetch_optional(pool)
    .await?;
    Ok(json.map(|j| j.0 .0).unwrap_or_default())
}

pub use domain::sync::derive::InPlace;

/// A snapshot's sums per size as stored at ingest (`sync_records.tenant_rent_by_size`:
/// `{"10x10": [tenants, rent], ...}`); an entry that does not read is skipped.
#[derive(Clone, Debug, Default)]
pub struct RentBySize(pub BTreeMap<String, InPlace>);

impl<'de> Deserialize<'de> for RentBySize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let raw: BTreeMap<String, serde_json::Value> = BTreeMap::deserialize(d).unwrap_or_default();
        Ok(Self(
            raw.into_iter()
                .filter_map(|(size, v)| Some((size, serde_json::from_value::<InPlace>(v).ok()?)))
                .collect(),
        ))
    }
}

/// Stored tenant-rent rows summed per size (for snapshots stored before the sums were).
fn summed_by_size(rows: &[StoredTenantRent]) -> BTreeMap<String, InPlace> {
    domain::sync::derive::rent_by_size(
        rows.iter()
            .map(|r| (r.size.clone(), f64::from(r.tenant_count), r.avg_rent)),
    )
}

/// Tenant-weighted street / in-place rent - 1, percent, over the sizes with a street rate.
pub fn ecri_gap_pct(
    in_place: &BTreeMap<String, InPlace>,
    street: &BTreeMap<String, f64>,
) -> Option<f64> {
    let mut paid = 0.0;
    let mut at_street = 0.0;
    for (size, p) in in_place {
        if let Some(s) = street.get(size) {
            paid += p.rent;
            at_street += p.tenants * s;
        }
    }
    (paid > 0.0).then(|| (at_street / paid - 1.0) * 100.0)
}

/// A reason to show instead of figures.
pub fn no_sync_reason() -> String {
    "no sync has been received for this facility yet".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_rents_keep_the_rows_that_read_and_skip_the_rest() {
        let json = r#"[
            {"size": "10x10", "avg_rent": 120.5, "tenant_count": 40, "months_since_last_increase": 14},
            {"size": "5x5", "avg_rent": 60},
            {"size": "10x20", "avg_rent": "high", "tenant_count": 3},
            7,
            {"size": "5x10", "avg_rent": 80, "tenant_count": 12, "extra": true}
        ]"#;
        let rows = tenant_rents(json);
        let read: Vec<(&str, f64, u32, Option<f64>)> = rows
            .iter()
            .map(|r| {
                (
                    r.size.as_str(),
                    r.avg_rent,
                    r.tenant_count,
                    r.months_since_last_increase,
                )
            })
            .collect();
        assert_eq!(
            read,
            vec![("10x10", 120.5, 40, Some(14.0)), ("5x10", 80.0, 12, None)]
        );
        // Through the column's decoder, as the reports read it.
        let decoded: TenantRents = serde_json::from_str(json).unwrap();
        assert_eq!(decoded.0.len(), 2);
    }

    #[test]
    fn the_rent_gap_weighs_each_size_by_its_tenants_and_skips_sizes_without_a_street_rate() {
        let in_place = BTreeMap::from([
            (
                "10x10".to_owned(),
                InPlace {
                    tenants: 100.0,
                    rent: 80.0 * 115.0 + 20.0 * 140.0,
                },
            ),
            (
                "5x5".to_owned(),
                InPlace {
                    tenants: 30.0,
                    rent: 1_200.0,
                },
            ),
        ]);
        let street = BTreeMap::from([("10x10".to_owned(), 130.0)]);
        let gap = ecri_gap_pct(&in_place, &street).unwrap();
        assert!(
            (gap - (13_000.0 / 12_000.0 - 1.0) * 100.0).abs() < 1e-9,
            "{gap}"
        );
        assert_eq!(ecri_gap_pct(&in_place, &BTreeMap::new()), None);
        assert_eq!(ecri_gap_pct(&BTreeMap::new(), &street), None);
    }

    #[test]
    fn tenant_rents_that_are_not_an_array_read_as_none() {
        for json in ["{}", "null", "\"rents\"", "{\"size\": \"10x10\"}"] {
            assert!(tenant_rents(json).is_empty(), "{json}");
            let decoded: TenantRents = serde_json::from_str(json).unwrap();
            assert!(decoded.0.is_empty(), "{json}");
        }
    }
}
