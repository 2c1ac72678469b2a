//! Facility-level figures derived from one snapshot at ingest, so analytics read them as columns.
//! Formulas (docs/data-model.md):
//! - units per type: as sent; else, when the facility's rentable area is known, the area split
//!   evenly across the types (n = area / sum of type areas); else unknown. Estimated when not sent.
//! - occupied per type: as sent; else units x occupancy (the type's, else the facility's). Estimated.
//! - rentable area: as sent for the facility; else sum of units x width x depth (flagged).
//! - gross potential rent: sum of units x street rate.
//! - occupied potential rent: sum of occupied x street rate per type (the street rent of the
//!   units in use); unknown when a type's occupied units are.
//! - actual rent, per size: the listed tenants (tenant_rents) at their rents; the occupied units
//!   of the size beyond them estimated at the listed tenants' average rent of that size when
//!   any are listed (tenants in place of one size are the best guide to the others' rents,
//!   which past increases have moved away from street), else at the size's street rate (the
//!   occupied-weighted rate of its tiers). Listed tenants of a size without unit types count at
//!   their rents. Estimated when any occupied unit was; `actual_rent_coverage_pct` is the share
//!   of occupied units whose rent was listed (0 without tenant_rents).

use super::payload::SyncPayload;
use crate::values::{round2, COUNT_MAX};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeCounts {
    pub total_units: Option<u32>,
    pub occupied_units: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    pub per_type: Vec<TypeCounts>,
    pub total_units: Option<u32>,
    pub occupied_units: Option<u32>,
    pub units_estimated: bool,
    pub rentable_sqft: Option<f64>,
    pub rentable_sqft_estimated: bool,
    pub gross_potential_rent: Option<f64>,
    pub actual_rent: Option<f64>,
    pub actual_rent_estimated: bool,
    /// Occupied units whose rent was sent, percent of occupied units (null when they are
    /// unknown).
    pub actual_rent_coverage_pct: Option<f64>,
    /// Street rent of the occupied units: sum of occupied x street rate per type.
    pub occupied_potential_rent: Option<f64>,
    pub leads_total: Option<u32>,
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn whole(v: f64) -> u32 {
    // Inputs are bounded counts and areas; the result fits a u32.
    v.round().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// `facility_sqft` is the rentable area sent in this payload or stored on the facility.
pub fn derive(p: &SyncPayload, facility_sqft: Option<f64>) -> Derived {
    let (per_type, estimated) = type_counts(p, facility_sqft);
    let all = |f: fn(&TypeCounts) -> Option<u32>| -> Option<u32> {
        if per_type.is_empty() {
            return None;
        }
        // Parsing keeps the counts sent under COUNT_MAX in total and the estimates are capped
        // as much; saturating all the same, for payloads stored before those checks.
        per_type
            .iter()
            .map(f)
            .try_fold(0u32, |sum, n| n.map(|n| sum.saturating_add(n)))
    };
    let total_units = all(|t| t.total_units);
    let occupied_units = all(|t| t.occupied_units);
    let gross_potential_rent = total_units.map(|_| {
        round2(
            p.unit_types
                .iter()
                .zip(&per_type)
                .map(|(u, c)| f64::from(c.total_units.unwrap_or(0)) * u.street_rate.get())
                .sum(),
        )
    });
    let (rentable_sqft, rentable_sqft_estimated) = match facility_sqft {
        Some(sqft) => (Some(sqft), false),
        None => (
            total_units.map(|_| {
                p.unit_types
                    .iter()
                    .zip(&per_type)
                    .map(|(u, c)| f64::from(c.total_units.unwrap_or(0)) * u.size.area_sqft())
                    .sum()
            }),
            true,
        ),
    };
    let occupied_potential_rent = occupied_units.map(|_| {
        round2(
            p.unit_types
                .iter()
                .zip(&per_type)
                .map(|(u, c)| f64::from(c.occupied_units.unwrap_or(0)) * u.street_rate.get())
                .sum(),
        )
    });
    let rents = actual_rents(p, &per_type, occupied_units.is_some());
    let actual_rent_coverage_pct = rents
        .occupied
        .filter(|o| *o > 0.0)
        .map(|o| round2(rents.covered / o * 100.0));
    let (actual_rent, actual_rent_estimated) = match (p.tenant_rents.is_empty(), rents.occupied) {
        // No tenant rents and no occupied units known: nothing to count or estimate from.
        (true, None) => (None, true),
        _ => (Some(round2(rents.actual)), rents.estimated),
    };
    let leads_total = (!p.leads.is_empty()).then(|| {
        p.leads
            .iter()
            .fold(0u32, |sum, l| sum.saturating_add(l.count.get()))
    });
    Derived {
        per_type,
        total_units,
        occupied_units,
        units_estimated: estimated,
        rentable_sqft,
        rentable_sqft_estimated,
        gross_potential_rent,
        actual_rent,
        actual_rent_estimated,
        actual_rent_coverage_pct,
        occupied_potential_rent,
        leads_total,
    }
}

/// Each unit type's units and occupied units, as sent or estimated (see the module's
/// formulas), and whether any was estimated.
fn type_counts(p: &SyncPayload, facility_sqft: Option<f64>) -> (Vec<TypeCounts>, bool) {
    let mut estimated = false;
    let type_area_sum: f64 = p.unit_types.iter().map(|u| u.size.area_sqft()).sum();
    let even_split = match facility_sqft {
        // An estimate, so it is capped where the facility's estimated units would pass the
        // largest count (an area far beyond the sizes sent, or sizes of a fraction of a foot).
        Some(sqft) if sqft > 0.0 && type_area_sum > 0.0 => Some(
            whole(sqft / type_area_sum)
                .min(COUNT_MAX / u32::try_from(p.unit_types.len()).unwrap_or(u32::MAX).max(1)),
        ),
        _ => None,
    };
    let per_type: Vec<TypeCounts> = p
        .unit_types
        .iter()
        .map(|u| {
            let total = match u.total_units {
                Some(t) => Some(t.get()),
                None => {
                    estimated |= even_split.is_some();
                    even_split
                }
            };
            let occupied = match (u.occupied_units, total) {
                (Some(o), _) => Some(o.get()),
                (None, Some(t)) => u.occupancy_pct.or(p.occupancy_pct).map(|pct| {
                    estimated = true;
                    whole(f64::from(t) * pct.get() / 100.0).min(t)
                }),
                (None, None) => None,
            };
            TypeCounts {
                total_units: total,
                occupied_units: occupied,
            }
        })
        .collect();
    (per_type, estimated)
}

/// Actual rent from the listed tenants and the estimate of the occupied units beyond them.
struct Rents {
    actual: f64,
    estimated: bool,
    /// Occupied units known (all types), and how many of them the listed tenants cover.
    occupied: Option<f64>,
    covered: f64,
}

fn actual_rents(p: &SyncPayload, per_type: &[TypeCounts], occupied_known: bool) -> Rents {
    /// Per size: occupied units, their street rent, listed tenants and their rent.
    #[derive(Default)]
    struct Size {
        occupied: f64,
        street_rent: f64,
        listed: f64,
        listed_rent: f64,
    }
    // Sizes in the order first seen; a payload has a few dozen at most.
    let mut sizes: Vec<(&crate::values::UnitSize, Size)> = Vec::new();
    fn slot<'a>(
        sizes: &mut Vec<(&'a crate::values::UnitSize, Size)>,
        size: &'a crate::values::UnitSize,
    ) -> usize {
        sizes
            .iter()
            .position(|(s, _)| *s == size)
            .unwrap_or_else(|| {
                sizes.push((size, Size::default()));
                sizes.len() - 1
            })
    }
    for (u, c) in p.unit_types.iter().zip(per_type) {
        let i = slot(&mut sizes, &u.size);
        let o = f64::from(c.occupied_units.unwrap_or(0));
        sizes[i].1.occupied += o;
        sizes[i].1.street_rent += o * u.street_rate.get();
    }
    for r in &p.tenant_rents {
        let i = slot(&mut sizes, &r.size);
        let n = f64::from(r.tenant_count.get());
        sizes[i].1.listed += n;
        sizes[i].1.listed_rent += n * r.avg_rent.get();
    }
    let mut out = Rents {
        actual: 0.0,
        // Without occupied units nothing beyond the listed tenants can be estimated (the
        // coverage is then unknown, not the rent).
        estimated: false,
        occupied: occupied_known.then_some(0.0),
        covered: 0.0,
    };
    for (_, s) in &sizes {
        out.actual += s.listed_rent;
        out.covered += s.listed.min(s.occupied);
        let missing = s.occupied - s.listed;
        if occupied_known && missing > 0.0 {
            let per_unit = if s.listed > 0.0 {
                s.listed_rent / s.listed
            } else {
                s.street_rent / s.occupied
            };
            out.actual += missing * per_unit;
            out.estimated = true;
        }
        if let Some(total) = out.occupied.as_mut() {
            *total += s.occupied;
        }
    }
    out
}

/// A size's tenants and their rent per month, summed over a day's tenant-rent rows; stored as
/// `[tenants, rent]` (`sync_records.tenant_rent_by_size`, which the portfolio's rent gap reads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "[f64; 2]", into = "[f64; 2]")]
pub struct InPlace {
    pub tenants: f64,
    pub rent: f64,
}

impl From<[f64; 2]> for InPlace {
    fn from([tenants, rent]: [f64; 2]) -> Self {
        Self { tenants, rent }
    }
}

impl From<InPlace> for [f64; 2] {
    fn from(p: InPlace) -> Self {
        [p.tenants, p.rent]
    }
}

/// Tenant-rent rows, each `(size, tenants, average rent)`, summed per size: at ingest from the
/// day's checked rows, and by readers from the stored rows of days kept before the sums were.
pub fn rent_by_size(
    rows: impl IntoIterator<Item = (String, f64, f64)>,
) -> BTreeMap<String, InPlace> {
    let mut out: BTreeMap<String, InPlace> = BTreeMap::new();
    for (size, tenants, avg_rent) in rows {
        let p = out.entry(size).or_default();
        p.tenants += tenants;
        p.rent += tenants * avg_rent;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::payload::parse;
    use chrono::NaiveDate;

    fn payload(json: &str) -> SyncPayload {
        parse(
            json.as_bytes(),
            NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(),
        )
        .unwrap()
        .payload
    }

    #[test]
    fn counts_as_sent() {
        // 10x10: 50 units at 100, 45 occupied; 5x5: 100 units at 50, 80 occupied.
        // GPR = 50*100 + 100*50 = 10,000. Area = 50*100 + 100*25 = 7,500 sq ft (derived).
        // Actual rent from tenant rents: 45*95 + 80*48 = 4,275 + 3,840 = 8,115.
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[
                {"size":"10x10","street_rate":100,"total_units":50,"occupied_units":45},
                {"size":"5x5","street_rate":50,"total_units":100,"occupied_units":80}],
              "tenant_rents":[{"size":"10x10","avg_rent":95,"tenant_count":45},{"size":"5x5","avg_rent":48,"tenant_count":80}]}"#,
        );
        let d = derive(&p, None);
        assert_eq!(d.total_units, Some(150));
        assert_eq!(d.occupied_units, Some(125));
        assert!(!d.units_estimated);
        assert_eq!(d.gross_potential_rent, Some(10_000.0));
        assert_eq!(d.rentable_sqft, Some(7_500.0));
        assert!(d.rentable_sqft_estimated);
        assert_eq!(d.actual_rent, Some(8_115.0));
        assert!(!d.actual_rent_estimated);
        assert_eq!(d.actual_rent_coverage_pct, Some(100.0));
        // Street rent of the occupied units: 45*100 + 80*50 = 8,500.
        assert_eq!(d.occupied_potential_rent, Some(8_500.0));
    }

    #[test]
    fn tenant_rents_are_summed_per_size_as_normalised() {
        // Two cohorts of 10x10 (one sent as "10 X 10") and one of 5x5.
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[],
              "tenant_rents":[{"size":"10x10","avg_rent":115,"tenant_count":80},
                              {"size":"10 X 10","avg_rent":140,"tenant_count":20},
                              {"size":"5x5","avg_rent":40,"tenant_count":30}]}"#,
        );
        let sums = rent_by_size(p.tenant_rents.iter().map(|r| {
            (
                r.size.to_string(),
                f64::from(r.tenant_count.get()),
                r.avg_rent.get(),
            )
        }));
        let stored = serde_json::to_value(&sums).unwrap();
        assert_eq!(
            stored,
            serde_json::json!({ "10x10": [100.0, 12_000.0], "5x5": [30.0, 1_200.0] })
        );
        let read: BTreeMap<String, InPlace> = serde_json::from_value(stored).unwrap();
        assert_eq!(read, sums);
        assert!(rent_by_size(Vec::new()).is_empty());
    }

    #[test]
    fn partial_tenant_rents_count_the_listed_and_estimate_the_rest() {
        // 10x10: 100 units at 130, 90 occupied; one cohort of 10 tenants at 120 is sent. The 80
        // others are estimated at the listed average (120): 1,200 + 9,600 = 10,800, not 1,200
        // (economic occupancy 10,800 / 13,000 = 83 %, not 9 %). 5x5: 40 units at 60, 30
        // occupied, no tenant listed: estimated at street, 1,800. Coverage 10 / 120 = 8.33 %.
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[
                {"size":"10x10","street_rate":130,"total_units":100,"occupied_units":90},
                {"size":"5x5","street_rate":60,"total_units":40,"occupied_units":30}],
              "tenant_rents":[{"size":"10x10","avg_rent":120,"tenant_count":10}]}"#,
        );
        let d = derive(&p, None);
        assert_eq!(d.actual_rent, Some(12_600.0));
        assert!(d.actual_rent_estimated);
        assert_eq!(d.actual_rent_coverage_pct, Some(8.33));
        assert_eq!(d.occupied_potential_rent, Some(90.0 * 130.0 + 30.0 * 60.0));
        // Two tiers of one size share its listed tenants; more tenants listed than occupied
        // units count at their rents and cover the size fully.
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[
                {"size":"10x10","tier":"climate","street_rate":140,"total_units":10,"occupied_units":8},
                {"size":"10x10","tier":"drive-up","street_rate":100,"total_units":10,"occupied_units":2}],
              "tenant_rents":[{"size":"10x10","avg_rent":110,"tenant_count":12},
                              {"size":"10x20","avg_rent":200,"tenant_count":3}]}"#,
        );
        let d = derive(&p, None);
        assert_eq!(d.actual_rent, Some(12.0 * 110.0 + 3.0 * 200.0));
        assert!(!d.actual_rent_estimated);
        assert_eq!(d.actual_rent_coverage_pct, Some(100.0));
        // Occupancy unknown: the listed rents as sent, coverage unknown.
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[{"size":"10x10","street_rate":100}],
              "tenant_rents":[{"size":"10x10","avg_rent":95,"tenant_count":4}]}"#,
        );
        let d = derive(&p, None);
        assert_eq!(d.actual_rent, Some(380.0));
        assert_eq!(d.actual_rent_coverage_pct, None);
        assert!(!d.actual_rent_estimated);
    }

    #[test]
    fn counts_estimated_from_area_and_occupancy() {
        // Area 12,500 sq ft over types of 100 + 25 = 125 sq ft: 100 units of each type.
        // Occupied: 10x10 at 90% -> 90; 5x5 at the facility's 80% -> 80.
        // Actual rent estimate: 90*100 + 80*50 = 13,000. GPR: 100*100 + 100*50 = 15,000.
        let p = payload(
            r#"{"date":"2026-11-01","occupancy_pct":80,"unit_types":[
                {"size":"10x10","street_rate":100,"occupancy_pct":90},
                {"size":"5x5","street_rate":50}]}"#,
        );
        let d = derive(&p, Some(12_500.0));
        assert_eq!(
            d.per_type[0],
            TypeCounts {
                total_units: Some(100),
                occupied_units: Some(90)
            }
        );
        assert_eq!(
            d.per_type[1],
            TypeCounts {
                total_units: Some(100),
                occupied_units: Some(80)
            }
        );
        assert!(d.units_estimated);
        assert_eq!(d.gross_potential_rent, Some(15_000.0));
        assert_eq!(d.actual_rent, Some(13_000.0));
        assert!(d.actual_rent_estimated);
        assert_eq!(d.actual_rent_coverage_pct, Some(0.0));
        assert_eq!(d.rentable_sqft, Some(12_500.0));
        assert!(!d.rentable_sqft_estimated);
    }

    #[test]
    fn unknown_without_counts_or_area() {
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[{"size":"10x10","street_rate":100}],"leads":[{"channel":"web","count":3},{"channel":"phone","count":2}]}"#,
        );
        let d = derive(&p, None);
        assert_eq!(d.total_units, None);
        assert_eq!(d.gross_potential_rent, None);
        assert_eq!(d.actual_rent, None);
        assert_eq!(d.leads_total, Some(5));
    }

    #[test]
    fn facility_totals_stay_counts_however_large_the_inputs() {
        // Each count at the limit: parsing leaves out whatever takes a total past it, so the
        // totals are the limit, not a sum that wraps.
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[
                {"size":"10x10","street_rate":100,"total_units":10000000,"move_ins_mtd":10000000},
                {"size":"10x10","tier":"cc","street_rate":100,"total_units":1,"move_ins_mtd":1}],
              "leads":[{"channel":"web","count":10000000},{"channel":"phone","count":1}]}"#,
        );
        assert_eq!(p.unit_types.len(), 1);
        assert_eq!(p.leads.len(), 1);
        let d = derive(&p, None);
        assert_eq!(d.total_units, Some(COUNT_MAX));
        assert_eq!(d.leads_total, Some(COUNT_MAX));
        // Units estimated from a vast area over tiny sizes: capped so the facility's estimate
        // is at most the limit (100,000,000 sq ft over 0.0003 sq ft of sizes is 3.3e11 each).
        let p = payload(
            r#"{"date":"2026-11-01","unit_types":[
                {"size":"0.01x0.01","street_rate":100},{"size":"0.01x0.02","street_rate":100}]}"#,
        );
        let d = derive(&p, Some(100_000_000.0));
        assert_eq!(d.per_type[0].total_units, Some(COUNT_MAX / 2));
        assert_eq!(d.total_units, Some(COUNT_MAX));
        assert!(d.units_estimated);
    }
}
