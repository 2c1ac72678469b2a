//! Facility-level figures derived from one snapshot at ingest, so analytics read them as columns.
//! Formulas (docs/data-model.md):
//! - units per type: as sent; else, when the facility's rentable area is known, the area split
//!   evenly across the types (n = area / sum of type areas); else unknown. Estimated when not sent.
//! - occupied per type: as sent; else units x occupancy (the type's, else the facility's). Estimated.
//! - rentable area: as sent for the facility; else sum of units x width x depth (flagged).
//! - gross potential rent: sum of units x street rate.
//! - actual rent: sum of tenant_count x avg_rent from tenant_rents; else occupied x street rate
//!   (flagged as estimated).

use super::payload::SyncPayload;
use crate::values::{round2, COUNT_MAX};

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
    pub leads_total: Option<u32>,
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn whole(v: f64) -> u32 {
    // Inputs are bounded counts and areas; the result fits a u32.
    v.round().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// `facility_sqft` is the rentable area sent in this payload or stored on the facility.
pub fn derive(p: &SyncPayload, facility_sqft: Option<f64>) -> Derived {
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
    let (actual_rent, actual_rent_estimated) = if p.tenant_rents.is_empty() {
        let est = occupied_units.map(|_| {
            round2(
                p.unit_types
                    .iter()
                    .zip(&per_type)
                    .map(|(u, c)| f64::from(c.occupied_units.unwrap_or(0)) * u.street_rate.get())
                    .sum(),
            )
        });
        (est, true)
    } else {
        let sum = p
            .tenant_rents
            .iter()
            .map(|r| f64::from(r.tenant_count.get()) * r.avg_rent.get())
            .sum();
        (Some(round2(sum)), false)
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
        leads_total,
    }
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
